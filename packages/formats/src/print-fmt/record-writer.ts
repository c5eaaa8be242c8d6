import type { EventFormat } from '../event-format/event-format.js';
import { compile, type DirectRead, directHalves, directRead, readDirectInt } from './format-record.js';
import { conversionBits, type Conversion, formatDigits, formatSmallInteger } from './printf.js';
import type { RenderEnv } from './render-env.js';
import { encodeText, type TextWriter } from './text-writer.js';

/**
 * Writes one record's text (what {@link formatRecord} returns) into `out`, or returns false,
 * having written nothing that counts, when this record needs the general renderer (a value that
 * needs BigInt, a record shorter than its fields). The caller then truncates `out` to where it
 * was and renders the record with `formatRecord`.
 */
export type RecordWriter = (view: DataView, recordOffset: number, recordLength: number, out: TextWriter) => boolean;

/** One print fmt argument printed from a fixed place of the record. */
interface DirectConversion {
  read: DirectRead;
  /** Bits of the conversion's C type (`%ld` on a 64-bit kernel: 64). */
  bits: number;
  signedConv: boolean;
  conversion: string;
  /** No flags, width or precision: digits only, written without a string. */
  plain: boolean;
  seg: Conversion;
}

/**
 * Compiles a format's print fmt, once, into a {@link RecordWriter} when every conversion prints a
 * plain integer field (`REC->field`, `REC->array[k]` with `%d %i %u %x %X %o`): the common case of
 * high-rate events (`sys_enter`/`sys_exit`, irq, timer ids). Returns undefined for anything else
 * (strings, flags and symbolic tables, `%p`, trace-cmd's own handlers, `trace_printk`): those
 * records go through {@link formatRecord}. The output is byte for byte what `formatRecord` gives:
 * the same integer reads and the same fallbacks, written as bytes.
 */
export function compileRecordWriter(format: EventFormat, env: RenderEnv = {}): RecordWriter | undefined {
  const pf = format.printFmt;
  if (!pf) return undefined;
  const c = compile(format);
  if (c.bprint) return undefined;
  if (env.handlers !== 'print-fmt' && c.handler) return undefined;
  const longSize = env.longSize ?? format.longSize ?? 8;
  const le = env.littleEndian ?? true;
  const ops: (Uint8Array | DirectConversion)[] = [];
  let argIndex = 0;
  for (const seg of c.segments) {
    if (typeof seg === 'string') {
      ops.push(encodeText(seg));
      continue;
    }
    if (seg.width === '*' || seg.precision === '*' || !'diuxXo'.includes(seg.conversion)) return undefined;
    const arg = pf.args[argIndex++];
    const read = arg === undefined ? undefined : directRead(arg, format, longSize);
    if (read === undefined) return undefined;
    const signedConv = seg.conversion === 'd' || seg.conversion === 'i';
    ops.push({
      read,
      bits: conversionBits(seg.length, longSize),
      signedConv,
      conversion: seg.conversion,
      plain: seg.flags === '' && seg.width === undefined && seg.precision === undefined && seg.conversion !== 'o',
      seg,
    });
  }
  const fixedSize = format.fixedSize;
  const count = ops.length;
  return (view, recordOffset, recordLength, out) => {
    if (recordLength < fixedSize) return false;
    for (let k = 0; k < count; k++) {
      const op = ops[k]!;
      if (op instanceof Uint8Array) {
        out.bytes(op);
        continue;
      }
      const d = op.read;
      if (d.byteOffset + d.size > recordLength) return false;
      if (!writeDirect(op, view, recordOffset + d.byteOffset, le, out)) return false;
    }
    return true;
  };
}

/** The integer of a {@link DirectConversion}, as format-record's `formatDirect` reads and prints it. */
function writeDirect(op: DirectConversion, v: DataView, at: number, le: boolean, out: TextWriter): boolean {
  const d = op.read;
  const bits = op.bits;
  const signedConv = op.signedConv;
  let value = readDirectInt(v, at, le, d.size, d.signed, bits, signedConv);
  if (d.size === 8 && bits === 64 && !signedConv && (op.conversion === 'x' || op.conversion === 'X')) {
    const { hi, lo } = directHalves;
    if (op.plain) {
      out.hex64(hi, lo, op.conversion === 'X');
      return true;
    }
    if (value === undefined) {
      const seg = op.seg;
      out.text(formatDigits(false, hi.toString(16) + lo.toString(16).padStart(8, '0'), seg.conversion, seg.flags, seg.width as number | undefined, seg.precision as number | undefined));
      return true;
    }
  }
  if (value === undefined) return false;
  if (!op.plain) {
    const seg = op.seg;
    out.text(formatSmallInteger(value, seg.conversion, seg.flags, seg.width as number | undefined, seg.precision as number | undefined));
    return true;
  }
  if (op.conversion === 'x' || op.conversion === 'X') {
    if (value < 0) {
      out.byte(45);
      value = -value;
    }
    out.hexNumber(value, op.conversion === 'X');
  } else {
    out.decimal(value);
  }
  return true;
}
