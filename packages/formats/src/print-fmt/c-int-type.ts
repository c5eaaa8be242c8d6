import type { CTypeName } from './print-fmt-tree.js';

/** An integer C type as the evaluator needs it: width after promotion and signedness. */
export interface IntType {
  bits: 8 | 16 | 32 | 64;
  unsigned: boolean;
  /** `_Bool`/`bool`: conversion yields 0 or 1. */
  bool?: boolean;
  /** A pointer (printed as an address by `%p`, long-sized). */
  pointer?: boolean;
}

export const int32: IntType = { bits: 32, unsigned: false };
export const uint32: IntType = { bits: 32, unsigned: true };
export const int64: IntType = { bits: 64, unsigned: false };
export const uint64: IntType = { bits: 64, unsigned: true };

/** Kernel typedefs seen in print fmts and field types, as `[bytes (0 = long), unsigned]`. */
const typedefs: Record<string, [number, boolean]> = {
  u8: [1, true], u16: [2, true], u32: [4, true], u64: [8, true],
  s8: [1, false], s16: [2, false], s32: [4, false], s64: [8, false],
  __u8: [1, true], __u16: [2, true], __u32: [4, true], __u64: [8, true],
  __s8: [1, false], __s16: [2, false], __s32: [4, false], __s64: [8, false],
  __le16: [2, true], __le32: [4, true], __le64: [8, true], __be16: [2, true], __be32: [4, true], __be64: [8, true],
  uint8_t: [1, true], uint16_t: [2, true], uint32_t: [4, true], uint64_t: [8, true],
  int8_t: [1, false], int16_t: [2, false], int32_t: [4, false], int64_t: [8, false],
  bool: [1, true], _Bool: [1, true],
  pid_t: [4, false], uid_t: [4, true], gid_t: [4, true], kuid_t: [4, true], kgid_t: [4, true],
  gfp_t: [4, true], dev_t: [4, true], umode_t: [2, true], fmode_t: [4, true],
  sector_t: [8, true], blkcnt_t: [8, true], loff_t: [8, false], ktime_t: [8, false], time64_t: [8, false],
  size_t: [0, true], ssize_t: [0, false], uintptr_t: [0, true], intptr_t: [0, false], ptrdiff_t: [0, false],
  ino_t: [0, true], off_t: [0, false], clockid_t: [4, false], phys_addr_t: [8, true], dma_addr_t: [8, true],
  resource_size_t: [8, true], irq_hw_number_t: [0, true], atomic_t: [4, false], atomic64_t: [8, false],
  uint: [4, true], ulong: [0, true], ushort: [2, true], uchar: [1, true],
};

function bitsOf(bytes: number): IntType['bits'] | undefined {
  return bytes === 1 ? 8 : bytes === 2 ? 16 : bytes === 4 ? 32 : bytes === 8 ? 64 : undefined;
}

/**
 * The integer type named by C type words (`["unsigned", "long"]`, `["pid_t"]`) or undefined
 * when the words are not an integer type this evaluator knows (a struct, `float`, an unknown
 * typedef). Pointers are unsigned and long-sized.
 */
export function intTypeOf(words: readonly string[], pointerDepth: number, longSize: 4 | 8): IntType | undefined {
  if (pointerDepth > 0) return { bits: longSize === 4 ? 32 : 64, unsigned: true, pointer: true };
  let longs = 0;
  let base: string | undefined;
  let unsigned: boolean | undefined;
  for (const w of words) {
    switch (w) {
      case 'unsigned': case '__unsigned__': unsigned = true; break;
      case 'signed': case '__signed__': unsigned = false; break;
      case 'long': longs++; break;
      case 'const': case 'volatile': case 'restrict': case '__restrict': case '__const': case '__volatile__': break;
      default:
        if (base !== undefined) return undefined;
        base = w;
    }
  }
  if (base === undefined || base === 'int') {
    if (longs === 0) return { bits: 32, unsigned: unsigned ?? false };
    return { bits: longs >= 2 || longSize === 8 ? 64 : 32, unsigned: unsigned ?? false };
  }
  if (longs > 0) return undefined;
  if (base === 'char') return { bits: 8, unsigned: unsigned ?? false };
  if (base === 'short') return { bits: 16, unsigned: unsigned ?? false };
  if (base === 'void') return undefined;
  const t = typedefs[base];
  if (t === undefined || unsigned !== undefined) return undefined;
  const bits = bitsOf(t[0] === 0 ? longSize : t[0])!;
  const type: IntType = { bits, unsigned: t[1] };
  if (base === 'bool' || base === '_Bool') type.bool = true;
  return type;
}

/** Splits a field's C type text (`unsigned long`, `const char *`) into words and pointer depth. */
export function splitTypeText(type: string): { words: string[]; pointerDepth: number } {
  const pointerDepth = (type.match(/\*/g) ?? []).length;
  const words = type.replace(/\*/g, ' ').split(/\s+/).filter((w) => w !== '' && w !== 'const' && w !== 'volatile');
  return { words, pointerDepth };
}

/** `sizeof` of a type name, or undefined for a type whose size the text alone cannot give. */
export function sizeOfType(type: CTypeName, longSize: 4 | 8): number | undefined {
  if (type.text.includes('[')) return undefined;
  const t = intTypeOf(type.words, type.pointerDepth, longSize);
  if (t) return t.bits / 8;
  if (type.pointerDepth === 0 && type.words.length === 1) {
    if (type.words[0] === 'double') return 8;
    if (type.words[0] === 'float') return 4;
  }
  return undefined;
}

/** `value` converted to `type` (two's complement wrap, or 0/1 for bool). */
export function convert(value: bigint, type: IntType): bigint {
  if (type.bool) return value === 0n ? 0n : 1n;
  return type.unsigned ? BigInt.asUintN(type.bits, value) : BigInt.asIntN(type.bits, value);
}

/** Integer promotion: types narrower than int become int. */
export function promote(type: IntType): IntType {
  return type.bits < 32 ? int32 : type;
}

/** The usual arithmetic conversions of C for two promoted operand types. */
export function commonType(a: IntType, b: IntType): IntType {
  const pa = promote(a);
  const pb = promote(b);
  if (pa.bits !== pb.bits) {
    const wide = pa.bits > pb.bits ? pa : pb;
    return wide.bits === 64 ? (wide.unsigned ? uint64 : int64) : wide.unsigned ? uint32 : int32;
  }
  const unsigned = pa.unsigned || pb.unsigned;
  return pa.bits === 64 ? (unsigned ? uint64 : int64) : unsigned ? uint32 : int32;
}
