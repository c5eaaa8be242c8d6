import type { EventFormat, FormatField } from '@probeyard/formats';
import { isFieldSigned } from '@probeyard/formats';

/** One field of an {@link EventLayout}: what a program relies on from a format file's field line. */
export interface LayoutField {
  name: string;
  /** C type text as the format file prints it (`pid_t`, `char`, element type of arrays). */
  type: string;
  byteOffset: number;
  size: number;
  signed: boolean;
  /** Fixed array length, when the field is an inline array. */
  arrayLength?: number;
  /** `__data_loc` / `__rel_loc` locator (a u32 in the record). */
  dynamic?: 'data_loc' | 'rel_loc';
  isCommon: boolean;
}

/**
 * The record layout of one event (`events/<system>/<event>/format` without ID and print fmt):
 * the part of a format file that decides where a program's reads land. JSON-friendly.
 */
export interface EventLayout {
  system: string;
  event: string;
  fields: LayoutField[];
}

function layoutField(f: FormatField): LayoutField {
  const out: LayoutField = { name: f.name, type: f.type, byteOffset: f.byteOffset, size: f.size, signed: isFieldSigned(f), isCommon: f.isCommon };
  if (f.array !== undefined) out.arrayLength = f.array.length ?? 0;
  if (f.dynamic !== undefined) out.dynamic = f.dynamic;
  return out;
}

/** The layout of a parsed format. */
export function layoutOf(format: EventFormat): EventLayout {
  return { system: format.system, event: format.name, fields: [...format.commonFields, ...format.fields].map(layoutField) };
}

/**
 * A minimal {@link EventFormat} with this layout (id 0, no print fmt), for the verifier's
 * context checks when only a layout is known.
 */
export function formatOfLayout(layout: EventLayout): EventFormat {
  const toField = (f: LayoutField): FormatField => ({
    name: f.name,
    declaration: f.dynamic ? `__${f.dynamic} ${f.type}[] ${f.name}` : f.arrayLength !== undefined ? `${f.type} ${f.name}[${f.arrayLength}]` : `${f.type} ${f.name}`,
    type: f.type,
    byteOffset: f.byteOffset,
    size: f.size,
    signed: f.signed,
    array: f.arrayLength !== undefined ? { length: f.arrayLength, lengthText: String(f.arrayLength) } : undefined,
    dynamic: f.dynamic,
    isCommon: f.isCommon,
  });
  const commonFields = layout.fields.filter((f) => f.isCommon).map(toField);
  const fields = layout.fields.filter((f) => !f.isCommon).map(toField);
  let fixedSize = 0;
  for (const f of layout.fields) fixedSize = Math.max(fixedSize, f.byteOffset + f.size);
  return { system: layout.system, name: layout.event, id: 0, commonFields, fields, printFmt: undefined, printFmtText: '', fixedSize, longSize: undefined };
}

/** The field called `name` of a layout. */
export function layoutFieldOf(layout: EventLayout, name: string): LayoutField | undefined {
  return layout.fields.find((f) => f.name === name);
}

/**
 * Canonical text of a layout (one line a field: name, offset, size, signedness, array, dynamic),
 * the input of {@link layoutKey}: equal keys mean byte-identical record layouts, whatever the
 * event id and print fmt.
 */
export function layoutKey(layout: EventLayout): string {
  return layout.fields
    .map((f) => `${f.name} ${f.byteOffset} ${f.size} ${f.signed ? 1 : 0} ${f.arrayLength ?? '-'} ${f.dynamic ?? '-'}`)
    .join('\n');
}

/**
 * A short identity of a layout: FNV-1a 64 (hex) of {@link layoutKey}'s UTF-16 code units. Not
 * cryptographic; it tells layouts apart for `pinnedLayouts` (not a hot path, so BigInt is fine).
 */
export function layoutHash(layout: EventLayout): string {
  const text = layoutKey(layout);
  const mask = (1n << 64n) - 1n;
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * 0x100000001b3n) & mask;
  }
  return h.toString(16).padStart(16, '0');
}
