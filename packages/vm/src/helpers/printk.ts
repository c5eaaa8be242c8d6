import type { HelperHost } from './helper-fn.js';

/**
 * Formats a `bpf_trace_printk` line: the format string at `bytes[offset..offset+size)` (up to
 * its NUL) with up to three arguments from r3..r5. Supports the kernel's conversions for this
 * helper: `%d %i %u %x %X %c %s %p %%` with `l`/`ll` length and a width/`-`/`0` flag. Returns
 * undefined for a format the kernel refuses (more than three arguments, unknown conversion).
 */
export function format(vm: HelperHost, bytes: Uint8Array, offset: number, size: number): string | undefined {
  let end = offset;
  while (end < offset + size && bytes[end] !== 0) end++;
  const fmt = new TextDecoder().decode(bytes.subarray(offset, end));
  let out = '';
  let arg = 0;
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i] as string;
    if (c !== '%') {
      out += c;
      continue;
    }
    i++;
    if (fmt[i] === '%') {
      out += '%';
      continue;
    }
    let flags = '';
    while (fmt[i] === '-' || fmt[i] === '0' || fmt[i] === '+' || fmt[i] === ' ') flags += fmt[i++];
    let width = '';
    while (fmt[i] !== undefined && /[0-9]/.test(fmt[i] as string)) width += fmt[i++];
    let longs = 0;
    while (fmt[i] === 'l') {
      longs++;
      i++;
    }
    if (fmt[i] === 'h') i++;
    const conv = fmt[i];
    if (conv === undefined || arg >= 3) return undefined;
    const reg = 3 + arg++;
    const lo = vm.regLo[reg] as number;
    const hi = vm.regHi[reg] as number;
    const u64 = (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
    let text: string;
    switch (conv) {
      case 'd':
      case 'i':
        text = longs > 0 ? BigInt.asIntN(64, u64).toString() : String(lo | 0);
        break;
      case 'u':
        text = longs > 0 ? u64.toString() : String(lo >>> 0);
        break;
      case 'x':
      case 'X':
        text = (longs > 0 ? u64 : BigInt(lo >>> 0)).toString(16);
        if (conv === 'X') text = text.toUpperCase();
        break;
      case 'p':
        text = `0x${u64.toString(16)}`;
        break;
      case 'c':
        text = String.fromCharCode(lo & 0xff);
        break;
      case 's': {
        const at = vm.resolve(lo, hi, 1);
        if (at < 0) text = '(efault)';
        else {
          const src = vm.regionBytes[hi] as Uint8Array;
          const limit = vm.regionLength[hi] as number;
          let e = at;
          while (e < limit && src[e] !== 0) e++;
          text = new TextDecoder().decode(src.subarray(at, e));
        }
        break;
      }
      default:
        return undefined;
    }
    const w = width === '' ? 0 : Number(width);
    if (text.length < w) {
      if (flags.includes('-')) text = text.padEnd(w, ' ');
      else if (flags.includes('0') && conv !== 's' && conv !== 'c') {
        const neg = text.startsWith('-');
        text = (neg ? '-' : '') + (neg ? text.slice(1) : text).padStart(w - (neg ? 1 : 0), '0');
      } else text = text.padStart(w, ' ');
    }
    out += text;
  }
  return out;
}
