import { FormatError } from '../errors.js';
import { ByteView } from '../elf/byte-view.js';
import { btfTrailingSize } from './btf-kind.js';

/**
 * One `struct btf_type` as it is on the wire, with where its trailing data lies. Nothing is
 * resolved: names are string offsets and references are type ids.
 */
export interface BtfRawType {
  id: number;
  /** Offset of the record in the type section. */
  byteOffset: number;
  /** `name_off`. */
  nameOffset: number;
  /** `info`: vlen (bits 0–15), kind (24–28), kind_flag (31). */
  info: number;
  kind: number;
  kindFlag: boolean;
  vlen: number;
  /** `size` (int, struct, union, enum, datasec, float) or `type` (everything else). */
  sizeOrType: number;
  /** Trailing data (`btf_member[]`, `btf_array`, …) length in bytes. */
  trailingSize: number;
}

/** Upper bound on types per blob (the kernel's `BTF_MAX_TYPE` is 0xfffff). */
export const BTF_MAX_TYPES = 0xfffff;

/**
 * The index of the type section: the byte offset of every record by id. Building it walks the
 * records once (checking each kind is known and its trailing data is inside the section);
 * decoding a record into a friendly type happens later, on demand.
 */
export class BtfRawTypes {
  readonly view: ByteView;
  /** `offsets[id - 1]` is the byte offset of type `id` in the type section. */
  readonly offsets: Uint32Array;

  constructor(view: ByteView, offsets: Uint32Array) {
    this.view = view;
    this.offsets = offsets;
  }

  /** Number of ids including void (id 0): valid ids are `0 .. count - 1`. */
  get count(): number {
    return this.offsets.length + 1;
  }

  /** The raw record of `id` (1-based); `out-of-range` for an unknown id. */
  get(id: number): BtfRawType {
    const byteOffset = this.offsets[id - 1];
    if (byteOffset === undefined || !Number.isInteger(id)) {
      throw new FormatError('out-of-range', `type id ${id}: past the ${this.offsets.length} types`, { byteOffset: this.view.baseOffset });
    }
    const info = this.view.u32(byteOffset + 4);
    const kind = (info >>> 24) & 0x1f;
    const vlen = info & 0xffff;
    return {
      id,
      byteOffset,
      nameOffset: this.view.u32(byteOffset),
      info,
      kind,
      kindFlag: info >>> 31 === 1,
      vlen,
      sizeOrType: this.view.u32(byteOffset + 8),
      trailingSize: btfTrailingSize(kind, vlen) ?? 0,
    };
  }

  /** Kind of `id` without building the record (0 for void). */
  kindOf(id: number): number {
    if (id === 0) return 0;
    return this.get(id).kind;
  }
}

/** Walks the type section once and indexes every record. */
export function indexBtfTypes(types: Uint8Array, littleEndian: boolean, baseOffset: number): BtfRawTypes {
  const v = new ByteView(types, littleEndian, 'type section', baseOffset);
  // Each record is at least 12 bytes, so the section bounds the count (and the memory used).
  const offsets = new Uint32Array(Math.floor(types.length / 12));
  let n = 0;
  let at = 0;
  while (at < types.length) {
    if (n >= BTF_MAX_TYPES) {
      throw new FormatError('out-of-range', `types: more than ${BTF_MAX_TYPES} types`, { byteOffset: baseOffset + at });
    }
    v.need(at, 12, `type ${n + 1}`);
    const info = v.u32(at + 4);
    const kind = (info >>> 24) & 0x1f;
    const trailing = btfTrailingSize(kind, info & 0xffff);
    if (trailing === undefined || kind === 0) {
      throw new FormatError('malformed', `type ${n + 1}: unknown kind ${kind}`, { byteOffset: baseOffset + at + 4 });
    }
    v.need(at + 12, trailing, `type ${n + 1} (kind ${kind}) trailing data`);
    offsets[n++] = at;
    at += 12 + trailing;
  }
  return new BtfRawTypes(v, offsets.slice(0, n));
}
