/** One `%` conversion of a printf format (the kernel's `vsprintf` dialect). */
export interface Conversion {
  /** The conversion as written: `%-08lx`, `%pS`. */
  text: string;
  /** Any of `-+ #0`. */
  flags: string;
  width: number | '*' | undefined;
  precision: number | '*' | undefined;
  length: '' | 'hh' | 'h' | 'l' | 'll' | 'z' | 'j' | 't' | 'L' | 'q';
  /** `d i u x X o c s p`. */
  conversion: string;
  /** For `%p`: the kernel extension after it (`S`, `s`, `M`, `I4`, `bl`, ...), else ''. */
  pointerExtension: string;
}

/** A printf format split into literal text and conversions. */
export type FormatSegment = string | Conversion;

const conversionRe = /%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|z|j|t|L|q)?([diouxXcsp%])/y;

/**
 * Splits a format string into literal text and {@link Conversion}s. `%%` becomes a literal `%`;
 * anything after `%` that is not a conversion stays literal text.
 */
export function parsePrintfFormat(format: string): FormatSegment[] {
  const segments: FormatSegment[] = [];
  let literal = '';
  let i = 0;
  while (i < format.length) {
    const pct = format.indexOf('%', i);
    if (pct < 0) {
      literal += format.slice(i);
      break;
    }
    literal += format.slice(i, pct);
    conversionRe.lastIndex = pct;
    const m = conversionRe.exec(format);
    if (!m) {
      literal += '%';
      i = pct + 1;
      continue;
    }
    i = conversionRe.lastIndex;
    if (m[5] === '%') {
      literal += '%';
      continue;
    }
    let pointerExtension = '';
    if (m[5] === 'p') {
      const ext = /^(?:[Ii][46S][a-z]*|[Mm][RF]?|[SsFfB][Rb]?|U[bBlL]?|bl?|h[CDN]?|a[pd]?|[KEdDgGVNxre])/.exec(format.slice(i));
      if (ext) {
        pointerExtension = ext[0];
        i += ext[0].length;
      }
    }
    if (literal !== '') segments.push(literal);
    literal = '';
    const width = m[2] === undefined ? undefined : m[2] === '*' ? '*' : Number(m[2]);
    const precision = m[3] === undefined ? undefined : m[3] === '*' ? '*' : Number(m[3] || '0');
    segments.push({
      text: format.slice(pct, i),
      flags: m[1]!,
      width,
      precision,
      length: (m[4] ?? '') as Conversion['length'],
      conversion: m[5]!,
      pointerExtension,
    });
  }
  if (literal !== '') segments.push(literal);
  return segments;
}

/** Bits of the C type a conversion's length modifier names (`%lx` → long). */
export function conversionBits(length: Conversion['length'], longSize: 4 | 8): 8 | 16 | 32 | 64 {
  switch (length) {
    case 'hh': return 8;
    case 'h': return 16;
    case '': return 32;
    case 'l': case 'z': case 't': return longSize === 8 ? 64 : 32;
    default: return 64;
  }
}

/** Pads `body` to `width` (left-justified with the `-` flag). */
export function pad(body: string, width: number | undefined, flags: string): string {
  if (width === undefined || body.length >= width) return body;
  return flags.includes('-') ? body.padEnd(width) : body.padStart(width);
}

/**
 * Formats an integer as C's printf does for `d i u x X o` with flags, width and precision. The
 * value is first converted to the conversion's C type (`bits` wide; signed for `d`/`i`).
 */
export function formatInteger(value: bigint, conversion: string, bits: number, flags: string, width: number | undefined, precision: number | undefined): string {
  const signedConv = conversion === 'd' || conversion === 'i';
  const v = signedConv ? BigInt.asIntN(bits, value) : BigInt.asUintN(bits, value);
  const negative = v < 0n;
  const magnitude = negative ? -v : v;
  const radix = conversion === 'x' || conversion === 'X' ? 16 : conversion === 'o' ? 8 : 10;
  return formatDigits(negative, magnitude.toString(radix), conversion, flags, width, precision);
}

/**
 * {@link formatInteger} for a value that is exact as a JS number: no BigInt. `value` must already
 * be converted to the conversion's type (the caller checks it is a safe integer).
 */
export function formatSmallInteger(value: number, conversion: string, flags: string, width: number | undefined, precision: number | undefined): string {
  const negative = value < 0;
  const radix = conversion === 'x' || conversion === 'X' ? 16 : conversion === 'o' ? 8 : 10;
  return formatDigits(negative, (negative ? -value : value).toString(radix), conversion, flags, width, precision);
}

/** Sign, precision, `#`, zero padding and width around the digits of a magnitude. */
export function formatDigits(negative: boolean, magnitudeDigits: string, conversion: string, flags: string, width: number | undefined, precision: number | undefined): string {
  const isZero = magnitudeDigits === '0';
  let digits = precision === 0 && isZero ? '' : magnitudeDigits;
  if (flags === '' && width === undefined && precision === undefined) {
    if (conversion === 'X') digits = digits.toUpperCase();
    return negative ? `-${digits}` : digits;
  }
  const signedConv = conversion === 'd' || conversion === 'i';
  if (conversion === 'X') digits = digits.toUpperCase();
  if (precision !== undefined && digits.length < precision) digits = digits.padStart(precision, '0');
  let prefix = '';
  if (signedConv) {
    if (negative) prefix = '-';
    else if (flags.includes('+')) prefix = '+';
    else if (flags.includes(' ')) prefix = ' ';
  }
  if (flags.includes('#')) {
    if ((conversion === 'x' || conversion === 'X') && !isZero) prefix = conversion === 'X' ? '0X' : '0x';
    else if (conversion === 'o' && !digits.startsWith('0')) digits = `0${digits}`;
  }
  if (width !== undefined && flags.includes('0') && !flags.includes('-') && precision === undefined) {
    const fill = width - prefix.length - digits.length;
    if (fill > 0) digits = '0'.repeat(fill) + digits;
  }
  return pad(prefix + digits, width, flags);
}

/** Formats a string for `%s` with width and precision. */
export function formatString(s: string, flags: string, width: number | undefined, precision: number | undefined): string {
  return pad(precision !== undefined && s.length > precision ? s.slice(0, precision) : s, width, flags);
}
