import type { EventFormat } from '../event-format/event-format.js';
import { decodeCString } from '../event-format/field-read.js';
import { type EvalContext, RenderError, findFieldIn, readIntAt, type Value } from './evaluate.js';
import { type Conversion, parsePrintfFormat } from './printf.js';

/**
 * Arguments of a `trace_printk()` record (`ftrace/bprint`), unpacked the way the kernel's
 * `vbin_printf()` packed them into `buf`: integers at their size (8-byte ones aligned to 4,
 * others to their size), `%s` strings copied inline with their NUL, pointers long-sized, and an
 * int for each `*` width or precision; `%p` with an extension other than `S s x K e` arrives as
 * the string the kernel rendered when the event was recorded.
 */
function unpackArgs(ctx: EvalContext, segments: readonly (string | Conversion)[], from: number, end: number): Value[] {
  const values: Value[] = [];
  let at = from;
  const readInt = (size: number, signed: boolean): Value => {
    at = size === 8 ? (at + 3) & ~3 : (at + size - 1) & ~(size - 1);
    if (at + size > end) throw new RenderError('bad-record', `bprint arguments run past the record (${size} bytes at ${at - ctx.recordOffset})`);
    const value = readIntAt(ctx, at, size, signed);
    at += size;
    return { k: 'int', value, type: { bits: (size * 8) as 8 | 16 | 32 | 64, unsigned: !signed } };
  };
  for (const seg of segments) {
    if (typeof seg === 'string') continue;
    if (seg.width === '*') values.push(readInt(4, true));
    if (seg.precision === '*') values.push(readInt(4, true));
    // The kernel saves functions and plain pointers as pointers, and renders every other
    // pointer extension (`%pI4`, `%pM`, ...) to a string at record time.
    const conversion = seg.conversion === 'p' && seg.pointerExtension !== '' && !'SsxKe'.includes(seg.pointerExtension[0]!) ? 's' : seg.conversion;
    switch (conversion) {
      case 'p':
        values.push(readInt(ctx.longSize, false));
        break;
      case 's': {
        if (at > end) throw new RenderError('bad-record', 'bprint string past the record');
        const s = decodeCString(ctx.bytes, at, end - at);
        let len = 0;
        while (at + len < end && ctx.bytes[at + len] !== 0) len++;
        at += len + 1;
        values.push({ k: 'str', value: s });
        break;
      }
      case 'c':
        values.push(readInt(1, false));
        break;
      default: {
        const signed = seg.conversion === 'd' || seg.conversion === 'i';
        const size = seg.length === 'hh' ? 1 : seg.length === 'h' ? 2 : seg.length === '' ? 4
          : seg.length === 'l' || seg.length === 'z' || seg.length === 't' ? ctx.longSize : 8;
        values.push(readInt(size, signed));
      }
    }
  }
  return values;
}

/** True for the `ftrace/bprint` event (`trace_printk` with a format in `printk_formats`). */
export function isBprint(format: EventFormat): boolean {
  return format.name === 'bprint' && (format.system === 'ftrace' || format.system === '')
    && findFieldIn(format, 'fmt') !== undefined && findFieldIn(format, 'buf') !== undefined && findFieldIn(format, 'ip') !== undefined;
}

/**
 * Renders a `bprint` record as trace-cmd does: `%ps: ` of `ip`, then the printk format (found
 * through `lookupPrintkFormat`) applied to the packed arguments, one trailing newline dropped.
 * `formatValue`/`formatFunction` are passed in to share the printf code of the renderer.
 */
export function renderBprint(
  format: EventFormat,
  ctx: EvalContext,
  formatValue: (conv: Conversion, value: Value, width: number | undefined, precision: number | undefined, ctx: EvalContext) => string,
  formatFunction: (address: bigint, extension: string, ctx: EvalContext) => string,
): string {
  const ip = findFieldIn(format, 'ip')!;
  const fmt = findFieldIn(format, 'fmt')!;
  const buf = findFieldIn(format, 'buf')!;
  for (const f of [ip, fmt]) {
    if (f.byteOffset + f.size > ctx.recordLength || (f.size !== 4 && f.size !== 8)) throw new RenderError('bad-record', `bprint field '${f.name}' is outside the record`);
  }
  const ipText = formatFunction(readIntAt(ctx, ctx.recordOffset + ip.byteOffset, ip.size, false), 's', ctx);
  const fmtAddress = readIntAt(ctx, ctx.recordOffset + fmt.byteOffset, fmt.size, false);
  const text = ctx.env.lookupPrintkFormat?.(fmtAddress);
  if (text === undefined) return `${ipText}: (NO FORMAT FOUND at ${fmtAddress.toString(16)})`;
  const segments = parsePrintfFormat(text);
  const values = unpackArgs(ctx, segments, ctx.recordOffset + buf.byteOffset, ctx.recordOffset + ctx.recordLength);
  let out = '';
  let k = 0;
  for (const seg of segments) {
    if (typeof seg === 'string') {
      out += seg;
      continue;
    }
    let flags = seg.flags;
    let width = seg.width === '*' ? Number((values[k++] as { value: bigint }).value) : seg.width;
    if (width !== undefined && width < 0) {
      flags += '-';
      width = -width;
    }
    const precision = seg.precision === '*' ? Number((values[k++] as { value: bigint }).value) : seg.precision;
    if ((width ?? 0) > 4096 || (precision ?? 0) > 4096) throw new RenderError('bad-record', 'bprint width beyond 4096');
    out += formatValue(flags === seg.flags ? seg : { ...seg, flags }, values[k++]!, width, precision !== undefined && precision < 0 ? undefined : precision, ctx);
  }
  return `${ipText}: ${out.endsWith('\n') ? out.slice(0, -1) : out}`;
}
