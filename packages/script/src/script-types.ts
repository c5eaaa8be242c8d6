import type { FormatField } from '@probeyard/formats';

/**
 * The type of a value of the language. Integers are 64-bit in registers (a field's narrower
 * width only decides its load and sign extension); strings are NUL-padded byte buffers whose size
 * is always a multiple of 8 (so every copy, key and record member stays aligned).
 */
export type ScriptType = { kind: 'int'; signed: boolean } | { kind: 'string'; size: number } | { kind: 'none' };

export const u64: ScriptType = { kind: 'int', signed: false };
export const s64: ScriptType = { kind: 'int', signed: true };
export const none: ScriptType = { kind: 'none' };

/** Strings the script makes (`str()`, a `__data_loc` field, a map value) hold up to 63 bytes and a NUL, as bpftrace's default. */
export const STRING_SIZE = 64;

/** `n` rounded up to a multiple of 8 (at least 8). */
export const pad8 = (n: number) => Math.max(8, (n + 7) & ~7);

export const stringType = (bytes: number): ScriptType => ({ kind: 'string', size: pad8(bytes) });

export function typeName(t: ScriptType): string {
  return t.kind === 'int' ? (t.signed ? 'int64' : 'uint64') : t.kind === 'string' ? `string[${t.size}]` : 'no value';
}

/** How a format field can be read by `args.FIELD`. */
export type FieldShape =
  /** An integer (or pointer) of 1, 2, 4 or 8 bytes, loaded and sign- or zero-extended. */
  | { kind: 'int'; size: 1 | 2 | 4 | 8; signed: boolean; pointer: boolean }
  /** `char name[N]`: a string, copied whole. */
  | { kind: 'char-array'; length: number }
  /** `unsigned long args[6]`: elements read one at a time by a constant index. */
  | { kind: 'int-array'; elementSize: 1 | 2 | 4 | 8; length: number; signed: boolean }
  /** `__data_loc char[] name`: a string inside the record, found through its locator. */
  | { kind: 'data-loc-string' }
  /** Anything else, with the reason. */
  | { kind: 'unreadable'; why: string };

const isPow2 = (n: number): n is 1 | 2 | 4 | 8 => n === 1 || n === 2 || n === 4 || n === 8;
const isCharType = (type: string) => /^(?:(?:un)?signed\s+)?char$|^(?:const\s+)?char$/.test(type.trim());

/** The shape of a format field (its type text, size, signedness, array and `__data_loc`). */
export function fieldShape(f: FormatField): FieldShape {
  if (f.dynamic === 'rel_loc') return { kind: 'unreadable', why: `${f.name} is a __rel_loc field, which is not supported yet` };
  if (f.dynamic === 'data_loc') {
    if (isCharType(f.type)) return { kind: 'data-loc-string' };
    return { kind: 'unreadable', why: `${f.name} is __data_loc ${f.type}[], not a string` };
  }
  if (f.array !== undefined) {
    const length = f.array.length;
    if (length === undefined || length === 0) return { kind: 'unreadable', why: `${f.name} is an array of unknown length (${f.array.lengthText})` };
    if (isCharType(f.type) && f.size === length) return { kind: 'char-array', length };
    const elementSize = f.size / length;
    if (!isPow2(elementSize)) return { kind: 'unreadable', why: `${f.name} is an array of ${elementSize}-byte elements` };
    return { kind: 'int-array', elementSize, length, signed: f.signed ?? false };
  }
  if (!isPow2(f.size)) return { kind: 'unreadable', why: `${f.name} is ${f.size} bytes (${f.declaration}), not an integer` };
  const pointer = f.type.includes('*');
  return { kind: 'int', size: f.size, signed: pointer ? false : (f.signed ?? false), pointer };
}
