import type { EventFormat, FormatField } from '../event-format/event-format.js';
import { decodeCString, isFieldSigned } from '../event-format/field-read.js';
import {
  type EvalContext,
  RenderError,
  evaluate,
  fieldInfo,
  fieldValue,
  findFieldIn,
  formatBitmask,
  type MemValue,
  readIntAt,
  type Value,
} from './evaluate.js';
import { type CompiledExpr, compileExpr } from './compile-expr.js';
import type { PrintExpr } from './print-fmt-tree.js';
import { type Conversion, conversionBits, type FormatSegment, formatDigits, formatInteger, formatSmallInteger, formatString, pad, parsePrintfFormat } from './printf.js';
import type { RenderEnv } from './render-env.js';
import { isBprint, renderBprint } from './bprint.js';
import { printFmtAfterPrefix, type TraceCmdHandler, traceCmdHandler } from './trace-cmd-handlers.js';

/** What rendering needs of a format, computed once per format. */
export interface CompiledFormat {
  segments: FormatSegment[];
  /** Per field name: the print fmt conversion that prints `REC->name` as it is (for `-R`). */
  rawConversions: Map<string, { conversion: Conversion; has0x: boolean }>;
  /** The print fmt arguments compiled for a 4-byte and an 8-byte long. */
  args: [CompiledExpr[] | undefined, CompiledExpr[] | undefined];
  /** trace-cmd's handler for the event, if it has one. */
  handler: TraceCmdHandler | undefined;
  /** Per argument, where it sits in the record when it is a plain integer read. */
  direct: [(DirectRead | undefined)[], (DirectRead | undefined)[]];
  /** An `ftrace/bprint` event (`trace_printk`). */
  bprint: boolean;
}

function compiledArgs(format: EventFormat, c: CompiledFormat, longSize: 4 | 8): CompiledExpr[] {
  const k = longSize === 4 ? 0 : 1;
  let args = c.args[k];
  if (!args) {
    args = (format.printFmt?.args ?? []).map((a) => compileExpr(a, format, longSize));
    c.args[k] = args;
    c.direct[k] = (format.printFmt?.args ?? []).map((a) => directRead(a, format, longSize));
  }
  return args;
}

/** A print fmt argument that is one integer at a fixed place of the record. */
export interface DirectRead {
  byteOffset: number;
  size: number;
  signed: boolean;
}

/** `REC->field` of a numeric field, or `REC->array[constant]`: read and printed without BigInt. */
export function directRead(e: PrintExpr, format: EventFormat, longSize: 4 | 8): DirectRead | undefined {
  const sized = (n: number) => n === 1 || n === 2 || n === 4 || n === 8;
  if (e.kind === 'field') {
    const f = findFieldIn(format, e.name);
    if (!f || f.dynamic !== undefined || f.array !== undefined || !sized(f.size)) return undefined;
    return { byteOffset: f.byteOffset, size: f.size, signed: fieldInfo(f, longSize).signed };
  }
  if (e.kind === 'index' && e.object.kind === 'field' && e.index.kind === 'number') {
    const f = findFieldIn(format, e.object.name);
    if (!f || f.dynamic !== undefined || f.array === undefined) return undefined;
    const info = fieldInfo(f, longSize);
    const at = Number(e.index.value) * info.elemSize;
    if (!sized(info.elemSize) || at + info.elemSize > f.size) return undefined;
    return { byteOffset: f.byteOffset + at, size: info.elemSize, signed: info.elemSigned };
  }
  return undefined;
}

const twoTo32 = 4294967296;

/**
 * The halves of the last 8-byte field {@link readDirectInt} read for an unsigned 64-bit
 * conversion (set whether or not the value fit): hex conversions print them as they are.
 */
export const directHalves = { hi: 0, lo: 0 };

/**
 * The integer at `at` (a {@link DirectRead} of `size` bytes) for an integer conversion of `bits`
 * bits, as a JS number without BigInt: an 8-byte field as two 32-bit halves. Undefined when it
 * needs BigInt (beyond ±2^53, or a negative value for an unsigned 64-bit conversion) or the
 * conversion is neither 32 nor 64 bits wide. The one 64-bit field read of `formatDirect` and
 * record-writer's `writeDirect`.
 */
export function readDirectInt(v: DataView, at: number, le: boolean, size: number, signed: boolean, bits: number, signedConv: boolean): number | undefined {
  let value: number;
  if (size === 8) {
    const lo = v.getUint32(at + (le ? 0 : 4), le);
    const hiAt = at + (le ? 4 : 0);
    if (bits === 32) return signedConv ? lo | 0 : lo;
    if (bits !== 64) return undefined;
    if (signedConv) {
      const hi = v.getInt32(hiAt, le);
      if (hi >= 0x200000 || hi < -0x200000) return undefined;
      return hi * twoTo32 + lo;
    }
    const hi = v.getUint32(hiAt, le);
    directHalves.hi = hi;
    directHalves.lo = lo;
    if (hi >= 0x200000) return undefined;
    return hi * twoTo32 + lo;
  }
  switch (size) {
    case 1: value = signed ? v.getInt8(at) : v.getUint8(at); break;
    case 2: value = signed ? v.getInt16(at, le) : v.getUint16(at, le); break;
    default: value = signed ? v.getInt32(at, le) : v.getUint32(at, le);
  }
  if (bits === 32) return signedConv ? value | 0 : value >>> 0;
  if (bits !== 64 || (!signedConv && value < 0)) return undefined;
  return value;
}

/**
 * Formats a {@link DirectRead} for an integer conversion with JS numbers, or returns undefined
 * when the value needs BigInt (then the general path prints it).
 */
function formatDirect(seg: Conversion, d: DirectRead, ctx: EvalContext): string | undefined {
  const bits = conversionBits(seg.length, ctx.longSize);
  const signedConv = seg.conversion === 'd' || seg.conversion === 'i';
  const width = seg.width as number | undefined;
  const precision = seg.precision as number | undefined;
  const value = readDirectInt(ctx.view, ctx.recordOffset + d.byteOffset, ctx.littleEndian, d.size, d.signed, bits, signedConv);
  if (value === undefined) {
    // an unsigned 64-bit value beyond 2^53 in hex: its two halves' digits
    if (d.size === 8 && bits === 64 && !signedConv && (seg.conversion === 'x' || seg.conversion === 'X')) {
      const { hi, lo } = directHalves;
      return formatDigits(false, hi.toString(16) + lo.toString(16).padStart(8, '0'), seg.conversion, seg.flags, width, precision);
    }
    return undefined;
  }
  return formatSmallInteger(value, seg.conversion, seg.flags, width, precision);
}

const compiled = new WeakMap<EventFormat, CompiledFormat>();

/** The per-format rendering data (parsed once per format object). */
export function compile(format: EventFormat): CompiledFormat {
  let c = compiled.get(format);
  if (c) return c;
  const segments = format.printFmt ? parsePrintfFormat(format.printFmt.format) : [];
  const rawConversions = new Map<string, { conversion: Conversion; has0x: boolean }>();
  if (format.printFmt) {
    const args = format.printFmt.args;
    let argIndex = 0;
    let previous = '';
    for (const seg of segments) {
      if (typeof seg === 'string') {
        previous = seg;
        continue;
      }
      if (seg.width === '*') argIndex++;
      if (seg.precision === '*') argIndex++;
      const arg = args[argIndex++];
      if (arg?.kind === 'field' && !rawConversions.has(arg.name)) {
        rawConversions.set(arg.name, { conversion: seg, has0x: previous.endsWith('0x') });
      }
      previous = '';
    }
  }
  c = { segments, rawConversions, args: [undefined, undefined], direct: [[], []], handler: traceCmdHandler(format), bprint: isBprint(format) };
  compiled.set(format, c);
  return c;
}

export function makeContext(format: EventFormat, record: Uint8Array, env: RenderEnv): EvalContext {
  return {
    format,
    bytes: record,
    view: new DataView(record.buffer, record.byteOffset, record.byteLength),
    recordOffset: 0,
    recordLength: record.byteLength,
    littleEndian: env.littleEndian ?? true,
    longSize: env.longSize ?? format.longSize ?? 8,
    env,
  };
}

function hex(v: bigint): string {
  return BigInt.asUintN(64, v).toString(16);
}

/** `%ps`/`%pS` (and `F`/`f`/`B`): symbol name, `+0x<offset>` for the capital forms. */
export function formatFunction(address: bigint, extension: string, ctx: EvalContext): string {
  const sym = ctx.env.lookupSymbol?.(address);
  if (!sym) return `0x${ctx.longSize === 4 ? BigInt.asUintN(32, address).toString(16) : hex(address)}`;
  const withOffset = extension.startsWith('S') || extension.startsWith('F') || extension.startsWith('B');
  return withOffset ? `${sym.name}+0x${sym.offset.toString(16)}` : sym.name;
}

function memBytes(ctx: EvalContext, mem: MemValue, count: number): number[] | undefined {
  if (mem.length < count) return undefined;
  const out: number[] = [];
  for (let k = 0; k < count; k++) out.push(ctx.bytes[mem.byteOffset + k]!);
  return out;
}

function ipv6Text(words: number[], compressed: boolean): string {
  const hexWords = words.map((w) => (compressed ? w.toString(16) : w.toString(16).padStart(4, '0')));
  if (!compressed) return hexWords.join(':');
  // Longest run (2 or more) of zero words becomes '::'.
  let bestAt = -1;
  let bestLen = 1;
  for (let k = 0; k < 8; ) {
    if (words[k] !== 0) {
      k++;
      continue;
    }
    let j = k;
    while (j < 8 && words[j] === 0) j++;
    if (j - k > bestLen) {
      bestAt = k;
      bestLen = j - k;
    }
    k = j;
  }
  if (bestAt < 0) return hexWords.join(':');
  return `${hexWords.slice(0, bestAt).join(':')}::${hexWords.slice(bestAt + bestLen).join(':')}`;
}

/** `%pIS[pc]`: a `struct sockaddr_in`/`sockaddr_in6` in the record (family 2 or 10). */
function formatSockaddr(ctx: EvalContext, mem: MemValue, ext: string): string | undefined {
  if (mem.length < 8) return undefined;
  const family = ctx.view.getUint16(mem.byteOffset, ctx.littleEndian);
  const port = ctx.view.getUint16(mem.byteOffset + 2, false);
  const withPort = ext.includes('p');
  if (family === 2) {
    const b = memBytes(ctx, { ...mem, byteOffset: mem.byteOffset + 4, length: mem.length - 4 }, 4)!;
    const ip = b.join('.');
    return withPort ? `${ip}:${port}` : ip;
  }
  if (family === 10 && mem.length >= 24) {
    const words: number[] = [];
    for (let k = 0; k < 8; k++) words.push(ctx.view.getUint16(mem.byteOffset + 8 + 2 * k, false));
    const ip = ipv6Text(words, ext.includes('c'));
    return withPort ? `[${ip}]:${port}` : ip;
  }
  return '(invalid address)'; // what the kernel's vsprintf prints for another family
}

/** `%*pbl`: the set bits of a bitmap as ranges, `0-3,8`. */
function formatBitList(ctx: EvalContext, mem: MemValue, nbits: number): string {
  const isSet = (bit: number): boolean => {
    // The kernel's bitmaps are arrays of longs: byte order within each long follows the machine.
    const word = ctx.longSize;
    const byteInWord = (bit >> 3) % word;
    const wordStart = (bit >> 3) - byteInWord;
    const index = ctx.littleEndian ? wordStart + byteInWord : wordStart + (word - 1 - byteInWord);
    return ((ctx.bytes[mem.byteOffset + index] ?? 0) & (1 << (bit & 7))) !== 0;
  };
  const parts: string[] = [];
  for (let bit = 0; bit < nbits; bit++) {
    if (!isSet(bit)) continue;
    let end = bit;
    while (end + 1 < nbits && isSet(end + 1)) end++;
    parts.push(end === bit ? String(bit) : `${bit}-${end}`);
    bit = end;
  }
  return parts.join(',');
}

function formatPointer(conv: Conversion, value: Value, width: number | undefined, ctx: EvalContext): string {
  const ext = conv.pointerExtension;
  const e0 = ext[0] ?? '';
  if (value.k === 'mem') {
    if (e0 === 'M' || e0 === 'm') {
      const b = memBytes(ctx, value, 6);
      if (b) {
        const parts = (ext.includes('R') ? b.reverse() : b).map((x) => x.toString(16).padStart(2, '0'));
        return pad(parts.join(e0 === 'M' ? ':' : ''), width, conv.flags);
      }
    } else if ((e0 === 'I' || e0 === 'i') && ext[1] === '4') {
      const b = memBytes(ctx, value, 4);
      if (b) return pad(b.map((x) => (e0 === 'i' ? String(x).padStart(3, '0') : String(x))).join('.'), width, conv.flags);
    } else if ((e0 === 'I' || e0 === 'i') && ext[1] === '6') {
      const b = memBytes(ctx, value, 16);
      if (b) {
        const words = [];
        for (let k = 0; k < 16; k += 2) words.push(((b[k]! << 8) | b[k + 1]!).toString(16).padStart(4, '0'));
        return pad(e0 === 'i' ? words.join('') : words.join(':'), width, conv.flags);
      }
    } else if (e0 === 'U') {
      const b = memBytes(ctx, value, 16);
      if (b) {
        const h = b.map((x) => x.toString(16).padStart(2, '0')).join('');
        const s = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
        return pad(ext.includes('B') || ext.includes('L') ? s.toUpperCase() : s, width, conv.flags);
      }
    } else if (e0 === 'h') {
      // `%*ph`: `width` bytes in hex, separated by ' ' (`C` ':', `D` '-', `N` nothing).
      const sep = ext === 'hC' ? ':' : ext === 'hD' ? '-' : ext === 'hN' ? '' : ' ';
      const count = Math.min(width ?? 1, value.length, 64);
      const b = memBytes(ctx, value, count) ?? [];
      return b.map((x) => x.toString(16).padStart(2, '0')).join(sep);
    } else if (e0 === 'a') {
      // `%pa`: a phys_addr_t / dma_addr_t passed by reference.
      const size = value.length >= 8 ? 8 : 4;
      if (value.length >= size) return `0x${readIntAt(ctx, value.byteOffset, size, false).toString(16).padStart(size * 2, '0')}`;
    } else if ((e0 === 'I' || e0 === 'i') && ext[1] === 'S') {
      const s = formatSockaddr(ctx, value, ext);
      if (s !== undefined) return pad(s, width, conv.flags);
    } else if (e0 === 'b') {
      // `%*pb` / `%*pbl`: a bitmap of `width` bits (all of the array without a width).
      const nbits = Math.min(width ?? value.length * 8, value.length * 8);
      if (ext === 'bl') return formatBitList(ctx, value, nbits);
      const bytes = Math.ceil(nbits / 8);
      return formatBitmask(ctx.bytes, value.byteOffset, bytes, ctx.littleEndian);
    }
    throw new RenderError('unsupported', `%p${ext} of an array`);
  }
  if (value.k === 'str') return formatString(value.value, conv.flags, width, undefined);
  if (e0 === 'S' || e0 === 's' || e0 === 'F' || e0 === 'f' || e0 === 'B') {
    return pad(formatFunction(value.value, ext, ctx), width, conv.flags);
  }
  const address = ctx.longSize === 4 ? BigInt.asUintN(32, value.value) : BigInt.asUintN(64, value.value);
  return pad(address === 0n ? '(nil)' : `0x${address.toString(16)}`, width, conv.flags);
}

export function formatValue(conv: Conversion, value: Value, width: number | undefined, precision: number | undefined, ctx: EvalContext): string {
  switch (conv.conversion) {
    case 's':
      if (value.k === 'str') return formatString(value.value, conv.flags, width, precision);
      if (value.k === 'mem') return formatString(decodeCString(ctx.bytes, value.byteOffset, value.length), conv.flags, width, precision);
      {
        const s = ctx.env.lookupPrintkFormat?.(BigInt.asUintN(64, value.value));
        return formatString(s ?? hex(value.value), conv.flags, width, precision);
      }
    case 'p':
      return formatPointer(conv, value, width, ctx);
    case 'c':
      if (value.k !== 'int') throw new RenderError('unsupported', '%c of a string');
      return pad(String.fromCharCode(Number(BigInt.asUintN(8, value.value))), width, conv.flags);
    default:
      if (value.k === 'str') return formatString(value.value, conv.flags, width, precision);
      if (value.k === 'mem') throw new RenderError('unsupported', `${conv.text} of an array`);
      return formatInteger(value.value, conv.conversion, conversionBits(conv.length, ctx.longSize), conv.flags, width, precision);
  }
}

function starArg(args: readonly CompiledExpr[], index: number, ctx: EvalContext): number {
  const e = args[index];
  if (!e) throw new RenderError('unsupported', 'not enough arguments for the format');
  const v = e(ctx);
  if (v.k !== 'int') throw new RenderError('unsupported', '* width of a non-number');
  return Number(BigInt.asIntN(32, v.value));
}

/** Widest field width or precision rendered (a hostile `%999999999d` must not allocate gigabytes). */
const maxWidth = 4096;

/** Evaluates the print fmt; throws {@link RenderError}. */
function renderPrintFmt(format: EventFormat, ctx: EvalContext, interpreted = false): string {
  const c = compile(format);
  const args = interpreted ? (format.printFmt?.args ?? []).map((a) => (x: EvalContext) => evaluate(a, x)) : compiledArgs(format, c, ctx.longSize);
  const direct = interpreted ? [] : c.direct[ctx.longSize === 4 ? 0 : 1];
  let out = '';
  let argIndex = 0;
  for (const seg of c.segments) {
    if (typeof seg === 'string') {
      out += seg;
      continue;
    }
    const d = direct[argIndex];
    if (d !== undefined && seg.width !== '*' && seg.precision !== '*' && d.byteOffset + d.size <= ctx.recordLength && 'diuxXo'.includes(seg.conversion)) {
      const text = formatDirect(seg, d, ctx);
      if (text !== undefined) {
        out += text;
        argIndex++;
        continue;
      }
    }
    let flags = seg.flags;
    let width = seg.width === '*' ? starArg(args, argIndex++, ctx) : seg.width;
    if (width !== undefined && width < 0) {
      flags += '-';
      width = -width;
    }
    let precision = seg.precision === '*' ? starArg(args, argIndex++, ctx) : seg.precision;
    if (precision !== undefined && precision < 0) precision = undefined;
    if ((width ?? 0) > maxWidth || (precision ?? 0) > maxWidth) {
      throw new RenderError('bad-record', `width or precision ${Math.max(width ?? 0, precision ?? 0)} exceeds ${maxWidth}`);
    }
    const e = args[argIndex++];
    if (!e) throw new RenderError('unsupported', 'not enough arguments for the format');
    const value = e(ctx);
    out += formatValue(flags === seg.flags ? seg : { ...seg, flags }, value, width, precision, ctx);
  }
  return out;
}

function isPrintable(bytes: Uint8Array, from: number, length: number): boolean {
  for (let k = from; k < from + length; k++) {
    const b = bytes[k]!;
    if (b === 0) return true;
    if (!((b >= 0x20 && b < 0x7f) || (b >= 0x09 && b <= 0x0d))) return false;
  }
  return true;
}

function isLongType(type: string): boolean {
  return type === 'long' || type === 'unsigned long';
}

/** One field as `trace-cmd report -R` prints its value. */
function rawFieldContent(field: FormatField, ctx: EvalContext, c: CompiledFormat): string {
  let v: Value;
  try {
    v = fieldValue(ctx, field);
  } catch (e) {
    if (e instanceof RenderError) return `[${e.message}]`;
    throw e;
  }
  if (v.k === 'mem') {
    const length = v.length;
    if (field.type.includes('char') && isPrintable(ctx.bytes, v.byteOffset, length)) {
      return decodeCString(ctx.bytes, v.byteOffset, length);
    }
    let out = 'ARRAY[';
    for (let k = 0; k < length; k++) {
      if (k > 0) out += ', ';
      out += ctx.bytes[v.byteOffset + k]!.toString(16).padStart(2, '0');
    }
    return `${out}]`;
  }
  if (v.k !== 'int') return '';
  const raw = readIntAt(ctx, ctx.recordOffset + field.byteOffset, field.size, false);
  const fromFmt = c.rawConversions.get(field.name);
  if (fromFmt && 'diouxXc'.includes(fromFmt.conversion.conversion)) {
    const conv = fromFmt.conversion;
    const width = typeof conv.width === 'number' && conv.width <= maxWidth ? conv.width : undefined;
    const precision = typeof conv.precision === 'number' && conv.precision <= maxWidth ? conv.precision : undefined;
    const text = conv.conversion === 'c'
      ? String.fromCharCode(Number(raw & 0xffn))
      : formatInteger(raw, conv.conversion, conversionBits(conv.length, ctx.longSize), conv.flags, width, precision);
    return fromFmt.has0x ? `0x${text}` : text;
  }
  if (field.type.includes('*')) return `0x${raw.toString(16)}`;
  if (isFieldSigned(field)) {
    switch (field.size) {
      case 4:
        return isLongType(field.type) ? `0x${raw.toString(16)}` : String(BigInt.asIntN(32, raw));
      case 2:
        return String(BigInt.asIntN(16, raw)).padStart(2);
      case 1:
        return String(BigInt.asIntN(8, raw));
      default:
        return String(BigInt.asIntN(64, raw));
    }
  }
  return isLongType(field.type) ? `0x${raw.toString(16)}` : raw.toString();
}

/**
 * `trace-cmd report -R`: every non-common field as ` name=value`, in the file's order. Each field
 * carries its leading space as trace-cmd prints it (so the line prefix is the same as for
 * {@link formatRecord}). Numbers use the print fmt's own conversion when the print fmt prints the
 * field as a plain `REC->field` (`target_cpu=%03d` gives `target_cpu=000`), like trace-cmd.
 */
export function formatRecordRaw(format: EventFormat, record: Uint8Array, env: RenderEnv = {}): string {
  const ctx = makeContext(format, record, env);
  const c = compile(format);
  let out = '';
  for (const f of format.fields) out += ` ${f.name}=${rawFieldContent(f, ctx, c)}`;
  return out;
}

/**
 * Renders a record the way `trace-cmd report` prints the part after `event_name: `: the event's
 * print fmt evaluated against the record, or one of trace-cmd's event handlers (see
 * {@link RenderEnv.handlers}). Never throws for bad record bytes: a print fmt trace-cmd cannot
 * evaluate gives `[FAILED TO PARSE]` and the raw fields, as trace-cmd prints it; a record too short
 * for its fields, or a `__data_loc` pointing outside it, gives `[bad record: <reason>]`.
 */
export function formatRecord(format: EventFormat, record: Uint8Array, env: RenderEnv = {}): string {
  return formatRecordWith(format, record, env, false);
}

/**
 * {@link formatRecord} with a choice of evaluator: `interpreted` walks the tree for every record
 * (the slow reference the compiled closures are tested against). Internal; not exported.
 */
export function formatRecordWith(format: EventFormat, record: Uint8Array, env: RenderEnv, interpreted: boolean): string {
  const ctx = makeContext(format, record, env);
  if (record.byteLength < format.fixedSize) {
    return `[bad record: ${record.byteLength} bytes, shorter than the ${format.fixedSize} bytes of the format's fixed fields]`;
  }
  const c = compile(format);
  try {
    if (c.bprint) return renderBprint(format, ctx, formatValue, formatFunction);
    if (env.handlers !== 'print-fmt') {
      const handler = c.handler;
      if (handler) {
        const r = handler(ctx);
        if (r !== undefined && !r.endsWith(printFmtAfterPrefix)) return r;
        if (r !== undefined && format.printFmt) return r.slice(0, -printFmtAfterPrefix.length) + renderPrintFmt(format, ctx, interpreted);
      }
    }
    if (!format.printFmt) return `[FAILED TO PARSE]${formatRecordRaw(format, record, env)}`;
    return renderPrintFmt(format, ctx, interpreted);
  } catch (e) {
    if (!(e instanceof RenderError)) throw e;
    if (e.reason === 'bad-record') return `[bad record: ${e.message}]`;
    return `[FAILED TO PARSE]${formatRecordRaw(format, record, env)}`;
  }
}

