import type { SourceLine } from './line.js';

const numberRe = /^([+-])?\s*(0x[0-9a-f]+|\d+)$/i;

function parseMagnitude(text: string): { negative: boolean; value: bigint; hex: boolean } | undefined {
  const m = numberRe.exec(text.trim());
  if (!m) return undefined;
  const digits = m[2]!;
  return { negative: m[1] === '-', value: BigInt(digits), hex: digits.length > 1 && (digits[1] === 'x' || digits[1] === 'X') };
}

/** Small numbers (the common case) without BigInt: sign, magnitude and radix, or undefined if large. */
function parseSmall(text: string): { negative: boolean; value: number; hex: boolean } | undefined {
  const m = numberRe.exec(text.trim());
  if (!m) return undefined;
  const digits = m[2]!;
  const hex = digits.length > 1 && (digits[1] === 'x' || digits[1] === 'X');
  if (digits.length > (hex ? 12 : 15)) return undefined;
  return { negative: m[1] === '-', value: Number(digits), hex };
}

/** Whether the text is a number literal (decimal or 0x hex, with an optional sign). */
export function isNumber(text: string): boolean {
  return numberRe.test(text.trim());
}

/**
 * Parses a 32-bit immediate. Decimal must fit a signed 32-bit number; hex may use all 32 bits
 * (`0xffffffff` is -1). Errors name the line and column.
 */
export function parseImm32(text: string, src: SourceLine, column: number): number {
  const small = parseSmall(text);
  if (small) {
    const limit = small.negative ? 0x80000000 : small.hex ? 0xffffffff : 0x7fffffff;
    if (small.value <= limit) return (small.negative ? -small.value : small.value) | 0;
  }
  const n = parseMagnitude(text);
  if (!n) throw src.error('invalid-operand', `invalid immediate: '${text.trim()}' is not a number`, column);
  const limit = n.hex ? (n.negative ? 0x80000000n : 0xffffffffn) : n.negative ? 0x80000000n : 0x7fffffffn;
  if (n.value > limit) {
    throw src.error('out-of-range', `immediate out of range: ${text.trim()} does not fit in 32 bits`, column);
  }
  return Number(BigInt.asIntN(32, n.negative ? -n.value : n.value));
}

/** Parses a signed 16-bit offset (decimal or hex, -32768 to 32767). */
export function parseOffset(text: string, src: SourceLine, column: number): number {
  const small = parseSmall(text);
  if (small) {
    const v = small.negative ? -small.value : small.value;
    if (v >= -0x8000 && v <= 0x7fff) return v | 0; // | 0 turns -0 into 0
  }
  const n = parseMagnitude(text);
  if (!n) throw src.error('invalid-operand', `invalid offset: '${text.trim()}' is not a number`, column);
  const v = n.negative ? -n.value : n.value;
  if (v < -0x8000n || v > 0x7fffn) {
    throw src.error('out-of-range', `offset out of range: ${text.trim()} does not fit in 16 bits (-32768 to 32767)`, column);
  }
  return Number(v);
}

/** Parses a 64-bit immediate of `lddw` (signed or unsigned, decimal or hex) into a BigInt. */
export function parseImm64(text: string, src: SourceLine, column: number): bigint {
  const n = parseMagnitude(text);
  if (!n) throw src.error('invalid-operand', `invalid immediate: '${text.trim()}' is not a number`, column);
  const limit = n.negative ? 1n << 63n : (1n << 64n) - 1n;
  if (n.value > limit) throw src.error('out-of-range', `immediate out of range: ${text.trim()} does not fit in 64 bits`, column);
  return n.negative ? -n.value : n.value;
}

/** Parses a jump distance `+N` / `-N` (16-bit) or returns undefined when the text is a label. */
export function parseJumpOffset(text: string, src: SourceLine, column: number, bits: 16 | 32 = 16): number | undefined {
  const t = text.trim();
  if (!/^[+-]/.test(t)) return undefined;
  return bits === 16 ? parseOffset(t, src, column) : parseImm32(t, src, column);
}

const labelRe = /^[A-Za-z_.$][\w.$]*$/;

/** Whether the text can be a label name. */
export function isLabel(text: string): boolean {
  return labelRe.test(text);
}

/**
 * Parses a register: `r0`-`r10` (and `%r0`-`%r10` when `percent` allows it; `w0`-`w10` when `w` allows it).
 * Returns the number and whether it was written as a 32-bit `w` register.
 */
export function parseRegister(
  text: string,
  src: SourceLine,
  column: number,
  allow: { percent?: boolean; w?: boolean } = {},
): { reg: number; w: boolean } {
  const t = text.trim();
  const m = /^(%?)([rw])(\d+)$/.exec(t);
  if (!m || (m[1] === '%' && !allow.percent) || (m[2] === 'w' && !allow.w)) {
    throw src.error('invalid-register', `invalid register: '${t}'`, column);
  }
  const reg = Number(m[3]);
  if (reg > 10 || String(reg) !== m[3]) throw src.error('invalid-register', `invalid register: '${t}' (registers are r0-r10)`, column);
  return { reg, w: m[2] === 'w' };
}
