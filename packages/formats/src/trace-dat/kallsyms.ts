/**
 * Address → symbol lookup over the text of /proc/kallsyms (`ffffffff81000000 T _stext [module]`),
 * as a trace.dat stores it. Addresses are kept as two 32-bit halves in typed arrays, sorted; a
 * lookup is a binary search (BigInt only at the API edge).
 */
export class KallsymsTable {
  private readonly hi: Uint32Array;
  private readonly lo: Uint32Array;
  private readonly names: string[];

  private constructor(hi: Uint32Array, lo: Uint32Array, names: string[]) {
    this.hi = hi;
    this.lo = lo;
    this.names = names;
  }

  /** Number of symbols. */
  get size(): number {
    return this.names.length;
  }

  /** Parses kallsyms text; lines that do not fit are skipped. */
  static parse(text: string): KallsymsTable {
    // One pass over the character codes: the address becomes two halves without a substring.
    let capacity = 1024;
    let his = new Uint32Array(capacity);
    let los = new Uint32Array(capacity);
    const names: string[] = [];
    let n = 0;
    let sorted = true;
    let start = 0;
    const length = text.length;
    while (start < length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = length;
      const lineStart = start;
      start = end + 1;
      const s1 = text.indexOf(' ', lineStart);
      if (s1 <= lineStart || s1 > lineStart + 16 || s1 >= end) continue;
      const s2 = text.indexOf(' ', s1 + 1);
      if (s2 < 0 || s2 >= end) continue;
      let hi = 0;
      let lo = 0;
      let ok = true;
      for (let k = lineStart; k < s1; k++) {
        const c = text.charCodeAt(k);
        const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
        if (d < 0) {
          ok = false;
          break;
        }
        hi = ((hi << 4) | (lo >>> 28)) >>> 0;
        lo = ((lo << 4) | d) >>> 0;
      }
      if (!ok) continue;
      // The name ends at a tab (`\t[module]`) or the line end; searched within the line only.
      let nameEnd = s2 + 1;
      while (nameEnd < end && text.charCodeAt(nameEnd) !== 9) nameEnd++;
      const name = text.slice(s2 + 1, nameEnd);
      if (n === capacity) {
        capacity *= 2;
        const h = new Uint32Array(capacity);
        h.set(his);
        his = h;
        const l = new Uint32Array(capacity);
        l.set(los);
        los = l;
      }
      if (n > 0 && (his[n - 1]! > hi || (his[n - 1] === hi && los[n - 1]! > lo))) sorted = false;
      his[n] = hi;
      los[n] = lo;
      names.push(name);
      n++;
    }
    if (sorted) return new KallsymsTable(his.slice(0, n), los.slice(0, n), names);
    // Stable sort by address: for equal addresses the first listed name wins (as trace-cmd does).
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => his[a]! - his[b]! || los[a]! - los[b]! || a - b);
    const hi = new Uint32Array(n);
    const lo = new Uint32Array(n);
    const sortedNames: string[] = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const k = order[i]!;
      hi[i] = his[k]!;
      lo[i] = los[k]!;
      sortedNames[i] = names[k]!;
    }
    return new KallsymsTable(hi, lo, sortedNames);
  }

  /** The symbol containing `address` (the last one at or below it), with the offset into it. */
  lookup(address: bigint): { name: string; offset: number; address: bigint } | undefined {
    if (address < 0n || address >= 1n << 64n) return undefined;
    const ah = Number(address >> 32n);
    const al = Number(address & 0xffffffffn);
    let lo = 0;
    let hi = this.names.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const mh = this.hi[mid]!;
      const ml = this.lo[mid]!;
      if (mh < ah || (mh === ah && ml <= al)) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return undefined;
    // Among equal addresses, report the first.
    while (found > 0 && this.hi[found - 1] === this.hi[found] && this.lo[found - 1] === this.lo[found]) found--;
    const base = (BigInt(this.hi[found]!) << 32n) | BigInt(this.lo[found]!);
    return { name: this.names[found]!, offset: Number(address - base), address: base };
  }
}

/**
 * Address → format string of `printk_formats` (`0xffffffff8281a98f : "thaw_processes"`), used to
 * print `bprint` events and `%s` arguments that point into the kernel's format section.
 */
export function parsePrintkFormats(text: string): Map<bigint, string> {
  const out = new Map<bigint, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*0x([0-9a-fA-F]+)\s*:\s*"(.*)"\s*$/.exec(line);
    if (!m) continue;
    const addr = BigInt(`0x${m[1]}`);
    if (!out.has(addr)) out.set(addr, m[2]!.replace(/\\n/g, '\n').replace(/\\t/g, '\t').replace(/\\"/g, '"').replace(/\\\\/g, '\\'));
  }
  return out;
}
