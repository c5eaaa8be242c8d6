// printf of scripts (packages/script): bpftrace's printf dialect, parsed when a script compiles and
// rendered from a `printf` action's record when it runs. Browser-safe.
import { formatInteger } from '@probeyard/formats';
import type { ScriptAction, ScriptPrintfArg } from './script-spec.js';

/**
 * One conversion of a printf format in bpftrace's dialect: `%[flags][width][.precision][length]conv`
 * with `conv` one of `d i u o x X p c s` and length `hh h l ll j z t` (ignored for `s` and `c`).
 */
export interface PrintfConversion {
  /** As written: `%-16s`, `%lu`. */
  text: string;
  /** Any of `-+ #0`. */
  flags: string;
  width: number | undefined;
  precision: number | undefined;
  length: '' | 'hh' | 'h' | 'l' | 'll' | 'j' | 'z' | 't';
  conversion: 'd' | 'i' | 'u' | 'o' | 'x' | 'X' | 'p' | 'c' | 's';
  /** Offset of the `%` in the format. */
  at: number;
}

export type PrintfSegment = string | PrintfConversion;

const conversionRe = /%([-+ #0]*)(\d+)?(?:\.(\d*))?(hh|h|ll|l|j|z|t)?([diuoxXpcs])/y;

/**
 * Splits a format into literal text and conversions; `%%` is a literal `%`. Returns the offset of
 * the first `%` that starts no conversion (an error at compile time).
 */
export function parsePrintf(format: string): { segments: PrintfSegment[] } | { badAt: number; text: string } {
  const segments: PrintfSegment[] = [];
  let literal = '';
  let i = 0;
  while (i < format.length) {
    const pct = format.indexOf('%', i);
    if (pct < 0) {
      literal += format.slice(i);
      break;
    }
    literal += format.slice(i, pct);
    if (format[pct + 1] === '%') {
      literal += '%';
      i = pct + 2;
      continue;
    }
    conversionRe.lastIndex = pct;
    const m = conversionRe.exec(format);
    if (!m) return { badAt: pct, text: format.slice(pct, pct + 4) };
    if (literal !== '') segments.push(literal);
    literal = '';
    i = conversionRe.lastIndex;
    segments.push({
      text: m[0],
      flags: m[1]!,
      width: m[2] === undefined ? undefined : Number(m[2]),
      precision: m[3] === undefined ? undefined : Number(m[3] || '0'),
      length: (m[4] ?? '') as PrintfConversion['length'],
      conversion: m[5] as PrintfConversion['conversion'],
      at: pct,
    });
  }
  if (literal !== '') segments.push(literal);
  return { segments };
}

/** The C type width of a conversion on x86-64 Linux (what bpftrace's snprintf reads): `%d` 32 bits, `%ld` 64. */
function conversionBits(length: PrintfConversion['length']): 8 | 16 | 32 | 64 {
  switch (length) {
    case 'hh':
      return 8;
    case 'h':
      return 16;
    case '':
      return 32;
    default:
      return 64;
  }
}

function pad(body: string, width: number | undefined, flags: string): string {
  if (width === undefined || body.length >= width) return body;
  return flags.includes('-') ? body.padEnd(width) : body.padStart(width);
}

/** One conversion of an integer as glibc's snprintf prints it. */
export function formatIntegerConversion(c: PrintfConversion, value: bigint): string {
  if (c.conversion === 'c') return pad(String.fromCharCode(Number(BigInt.asUintN(8, value))), c.width, c.flags);
  if (c.conversion === 'p') {
    const v = BigInt.asUintN(64, value);
    if (v === 0n) return pad('(nil)', c.width, c.flags);
    return formatInteger(v, 'x', 64, `${c.flags.replace('#', '')}#`, c.width, c.precision);
  }
  const bits = conversionBits(c.length);
  return formatInteger(value, c.conversion === 'i' ? 'd' : c.conversion, bits, c.flags, c.width, c.precision);
}

/** `%s` of a string: precision cuts, width pads. */
export function formatStringConversion(c: PrintfConversion, s: string): string {
  return pad(c.precision !== undefined && s.length > c.precision ? s.slice(0, c.precision) : s, c.width, c.flags);
}

const decoder = new TextDecoder('utf-8');

/** A NUL-terminated string of a record. */
function cString(bytes: Uint8Array, at: number, size: number): string {
  const end = Math.min(bytes.length, at + size);
  let n = at;
  while (n < end && bytes[n] !== 0) n++;
  return decoder.decode(bytes.subarray(at, n));
}

const segmentCache = new WeakMap<object, PrintfSegment[]>();

function segmentsOf(action: Extract<ScriptAction, { kind: 'printf' }>): PrintfSegment[] {
  let s = segmentCache.get(action);
  if (s === undefined) {
    const parsed = parsePrintf(action.format);
    s = 'segments' in parsed ? parsed.segments : [action.format];
    segmentCache.set(action, s);
  }
  return s;
}

function readArg(record: Uint8Array, arg: ScriptPrintfArg): bigint | string {
  if (arg.type.kind === 'string') return cString(record, arg.byteOffset, arg.type.size);
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  if (arg.byteOffset + 8 > record.byteLength) return 0n;
  return arg.type.kind === 'int' && arg.type.signed ? view.getBigInt64(arg.byteOffset, true) : view.getBigUint64(arg.byteOffset, true);
}

/**
 * The text of one `printf` record of a script's output ring buffer (its first 8 bytes the action
 * index, then the arguments where `action.args` places them), as bpftrace prints it. Browser-safe.
 */
export function formatPrintf(action: Extract<ScriptAction, { kind: 'printf' }>, record: Uint8Array): string {
  let out = '';
  let argIndex = 0;
  for (const seg of segmentsOf(action)) {
    if (typeof seg === 'string') {
      out += seg;
      continue;
    }
    const arg = action.args[argIndex++];
    if (arg === undefined) {
      out += seg.text;
      continue;
    }
    const v = readArg(record, arg);
    out += typeof v === 'string' ? formatStringConversion(seg, v) : formatIntegerConversion(seg, v);
  }
  return out;
}
