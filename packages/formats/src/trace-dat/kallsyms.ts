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
    const entries: { hi: number; lo: number; name: string }[] = [];
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const line = text.slice(start, end);
      start = end + 1;
      const s1 = line.indexOf(' ');
      if (s1 <= 0 || s1 > 16) continue;
      const s2 = line.indexOf(' ', s1 + 1);
      if (s2 < 0) continue;
      const addr = line.slice(0, s1);
      if (!/^[0-9a-fA-F]+$/.test(addr)) continue;
      const padded = addr.padStart(16, '0');
      let name = line.slice(s2 + 1);
      const tab = name.indexOf('\t');
      if (tab >= 0) name = name.slice(0, tab);
      entries.push({ hi: parseInt(padded.slice(0, 8), 16), lo: parseInt(padded.slice(8), 16), name });
    }
    // Stable sort by address: for equal addresses the first listed name wins (as trace-cmd does).
    entries.sort((a, b) => a.hi - b.hi || a.lo - b.lo);
    const hi = new Uint32Array(entries.length);
    const lo = new Uint32Array(entries.length);
    const names: string[] = new Array<string>(entries.length);
    entries.forEach((e, i) => {
      hi[i] = e.hi;
      lo[i] = e.lo;
      names[i] = e.name;
    });
    return new KallsymsTable(hi, lo, names);
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
