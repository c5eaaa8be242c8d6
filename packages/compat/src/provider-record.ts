// The arguments record of a provider probe, built per event: each argument's expression of the
// chosen implementation evaluated over the raw record (its kernel's format), written where the
// probe's arguments record format (provider-program.ts) puts it. What a compiled program of a
// provider probe reads as its context; the same values packages/script's code computes from the
// same expressions (64-bit integers, unsigned `/` `%` and `>>` as BPF's div, mod and rsh).
import type { EventFormat, FormatField } from '@probeyard/formats';
import { CompatError } from './errors.js';
import type { ProviderBinding } from './provider-program.js';
import { PROVIDER_COMMON_SIZE } from './provider-program.js';

/** An argument expression ready to evaluate. */
type Expr =
  | { kind: 'int'; value: bigint }
  | { kind: 'field'; name: string; index: number | undefined }
  | { kind: 'str'; inner: Expr; length: number | undefined }
  | { kind: 'unary'; op: '-' | '~'; operand: Expr }
  | { kind: 'binary'; op: string; left: Expr; right: Expr };

// script's precedence, lowest first (packages/script parser): | ^ & << >> + - * / %
const levels: readonly (readonly string[])[] = [['|'], ['^'], ['&'], ['<<', '>>'], ['+', '-'], ['*', '/', '%']];

function parse(text: string): Expr {
  const tokens = text.match(/args(?:\.|->)[A-Za-z_][A-Za-z0-9_]*|0x[0-9a-fA-F]+|[0-9]+|[A-Za-z_][A-Za-z0-9_]*|<<|>>|\S/g) ?? [];
  let pos = 0;
  const fail = (why: string): never => {
    throw new CompatError('malformed', `argument expression '${text}': ${why}`);
  };
  const take = (t: string) => {
    if (tokens[pos] !== t) fail(`expected '${t}'`);
    pos++;
  };
  const intAt = (): number => {
    const t = tokens[pos++];
    if (t === undefined || !/^(?:0x[0-9a-fA-F]+|[0-9]+)$/.test(t)) return fail('expected an integer');
    return Number(BigInt(t));
  };
  const primary = (): Expr => {
    const t = tokens[pos++];
    if (t === undefined) return fail('unexpected end');
    if (/^(?:0x[0-9a-fA-F]+|[0-9]+)$/.test(t)) return { kind: 'int', value: BigInt.asIntN(64, BigInt(t)) };
    const field = /^args(?:\.|->)(.+)$/.exec(t);
    if (field) {
      if (tokens[pos] !== '[') return { kind: 'field', name: field[1]!, index: undefined };
      pos++;
      const index = intAt();
      take(']');
      return { kind: 'field', name: field[1]!, index };
    }
    if (t === 'str') {
      take('(');
      const inner = binary(0);
      let length: number | undefined;
      if (tokens[pos] === ',') {
        pos++;
        length = intAt();
      }
      take(')');
      return { kind: 'str', inner, length };
    }
    if (t === '(') {
      const inner = binary(0);
      take(')');
      return inner;
    }
    if (t === '-' || t === '~') return { kind: 'unary', op: t, operand: primary() };
    return fail(`unexpected '${t}'`);
  };
  const binary = (level: number): Expr => {
    if (level === levels.length) return primary();
    let left = binary(level + 1);
    while (tokens[pos] !== undefined && levels[level]!.includes(tokens[pos]!)) {
      const op = tokens[pos++]!;
      left = { kind: 'binary', op, left, right: binary(level + 1) };
    }
    return left;
  };
  const e = binary(0);
  if (pos !== tokens.length) fail(`unexpected '${tokens[pos]}'`);
  return e;
}

type Value = bigint | Uint8Array;

const u64 = (v: bigint) => BigInt.asUintN(64, v);
const s64 = (v: bigint) => BigInt.asIntN(64, v);

function binaryOp(op: string, a: bigint, b: bigint): bigint {
  switch (op) {
    case '+':
      return s64(a + b);
    case '-':
      return s64(a - b);
    case '*':
      return s64(a * b);
    // BPF's div and mod are unsigned; a zero divisor gives 0 (div) or the dividend (mod)
    case '/':
      return u64(b) === 0n ? 0n : s64(u64(a) / u64(b));
    case '%':
      return u64(b) === 0n ? a : s64(u64(a) % u64(b));
    case '&':
      return s64(a & b);
    case '|':
      return s64(a | b);
    case '^':
      return s64(a ^ b);
    case '<<':
      return s64(a << (u64(b) & 63n));
    case '>>':
      return s64(u64(a) >> (u64(b) & 63n));
  }
  throw new CompatError('malformed', `argument expression: operator ${op}`);
}

const isCharType = (type: string) => /^(?:(?:un)?signed\s+)?char$|^(?:const\s+)?char$/.test(type.trim());

/** The record an expression reads: `bytes[base .. base + length]`. */
interface RecordView {
  bytes: Uint8Array;
  view: DataView;
  base: number;
  length: number;
}

type Evaluate = (r: RecordView) => Value;

const empty = new Uint8Array(0);

/** The text of `bytes[base + from ..]`, at most `max` bytes, up to its first NUL, clipped to the record. */
function textAt(r: RecordView, from: number, max: number): Uint8Array {
  const start = Math.max(0, Math.min(from, r.length));
  const end = Math.max(start, Math.min(start + max, r.length));
  const s = r.bytes.subarray(r.base + start, r.base + end);
  const nul = s.indexOf(0);
  return nul < 0 ? s : s.subarray(0, nul);
}

/** How a field is read, as the script compiler reads it: an integer (sign- or zero-extended), an array element, or a string's bytes. */
function fieldReader(f: FormatField, index: number | undefined): Evaluate {
  if (f.dynamic !== undefined) {
    const rel = f.dynamic === 'rel_loc' ? f.byteOffset + f.size : 0;
    return (r) => {
      const loc = f.byteOffset + 4 <= r.length ? r.view.getUint32(r.base + f.byteOffset, true) : 0;
      return textAt(r, (loc & 0xffff) + rel, loc >>> 16);
    };
  }
  if (f.array !== undefined && isCharType(f.type) && index === undefined) return (r) => textAt(r, f.byteOffset, f.size);
  const elementSize = index === undefined ? f.size : f.size / (f.array?.length ?? 1);
  const at = f.byteOffset + (index ?? 0) * elementSize;
  const signed = f.type.includes('*') ? false : (f.signed ?? false);
  const fits = (r: RecordView) => at + elementSize <= r.length;
  switch (elementSize) {
    case 1:
      return (r) => (fits(r) ? BigInt(signed ? r.view.getInt8(r.base + at) : r.view.getUint8(r.base + at)) : 0n);
    case 2:
      return (r) => (fits(r) ? BigInt(signed ? r.view.getInt16(r.base + at, true) : r.view.getUint16(r.base + at, true)) : 0n);
    case 4:
      return (r) => (fits(r) ? BigInt(signed ? r.view.getInt32(r.base + at, true) : r.view.getUint32(r.base + at, true)) : 0n);
    case 8:
      return (r) => (fits(r) ? (signed ? r.view.getBigInt64(r.base + at, true) : s64(r.view.getBigUint64(r.base + at, true))) : 0n);
    default:
      return () => 0n;
  }
}

/**
 * The fast path of an `int` argument that is a plain integer field (the common case): written as
 * an s64 without BigInt — a 1-, 2- or 4-byte field sign- or zero-extended by Number, an 8-byte
 * field copied (its bits are the s64's either way).
 */
function intFieldWriter(e: Expr, fields: ReadonlyMap<string, FormatField>): ((r: RecordView, out: Uint8Array, w: DataView, byteOffset: number) => void) | undefined {
  if (e.kind !== 'field') return undefined;
  const f = fields.get(e.name);
  if (f === undefined || f.dynamic !== undefined || (f.array !== undefined && e.index === undefined)) return undefined;
  const elementSize = e.index === undefined ? f.size : f.size / (f.array?.length ?? 1);
  const at = f.byteOffset + (e.index ?? 0) * elementSize;
  const signed = f.type.includes('*') ? false : (f.signed ?? false);
  const put = (w: DataView, byteOffset: number, v: number) => {
    w.setInt32(byteOffset, v, true);
    w.setInt32(byteOffset + 4, signed && v < 0 ? -1 : 0, true);
  };
  switch (elementSize) {
    case 1:
      return (r, _out, w, o) => put(w, o, at + 1 <= r.length ? (signed ? r.view.getInt8(r.base + at) : r.view.getUint8(r.base + at)) : 0);
    case 2:
      return (r, _out, w, o) => put(w, o, at + 2 <= r.length ? (signed ? r.view.getInt16(r.base + at, true) : r.view.getUint16(r.base + at, true)) : 0);
    case 4:
      // an unsigned 32-bit value above 2^31 written by setInt32 keeps its bits; the high half is 0
      return (r, _out, w, o) => put(w, o, at + 4 <= r.length ? r.view.getInt32(r.base + at, true) : 0);
    case 8:
      return (r, out, _w, o) => {
        if (at + 8 <= r.length) out.set(r.bytes.subarray(r.base + at, r.base + at + 8), o);
      };
    default:
      return undefined;
  }
}

/**
 * The fast path of a `string` argument that is a string field or `str()` of one (the common case):
 * where its text starts and ends in `bytes` (absolute), without allocating.
 */
function stringFieldSpan(e: Expr, fields: ReadonlyMap<string, FormatField>): ((r: RecordView, span: Int32Array) => void) | undefined {
  let max = Number.POSITIVE_INFINITY;
  let inner = e;
  if (inner.kind === 'str') {
    if (inner.length !== undefined) max = Math.max(0, inner.length - 1);
    inner = inner.inner;
  }
  if (inner.kind !== 'field' || inner.index !== undefined) return undefined;
  const f = fields.get(inner.name);
  if (f === undefined) return undefined;
  const span = (r: RecordView, out: Int32Array, from: number, limit: number) => {
    const start = Math.max(0, Math.min(from, r.length));
    const end = Math.max(start, Math.min(start + Math.min(limit, max), r.length));
    let i = r.base + start;
    const stop = r.base + end;
    const b = r.bytes;
    while (i < stop && b[i] !== 0) i++;
    out[0] = r.base + start;
    out[1] = i;
  };
  if (f.dynamic !== undefined) {
    const rel = f.dynamic === 'rel_loc' ? f.byteOffset + f.size : 0;
    return (r, out) => {
      const loc = f.byteOffset + 4 <= r.length ? r.view.getUint32(r.base + f.byteOffset, true) : 0;
      span(r, out, (loc & 0xffff) + rel, loc >>> 16);
    };
  }
  if (f.array !== undefined && isCharType(f.type)) return (r, out) => span(r, out, f.byteOffset, f.size);
  return undefined;
}

/** An expression as a function of the record, compiled once per binding. */
function compile(e: Expr, fields: ReadonlyMap<string, FormatField>, where: string): Evaluate {
  switch (e.kind) {
    case 'int': {
      const v = e.value;
      return () => v;
    }
    case 'field': {
      const f = fields.get(e.name);
      if (f === undefined) throw new CompatError('malformed', `${where} has no field ${e.name}`);
      return fieldReader(f, e.index);
    }
    case 'str': {
      const inner = compile(e.inner, fields, where);
      const max = e.length === undefined ? undefined : Math.max(0, e.length - 1);
      return (r) => {
        const v = inner(r);
        if (typeof v === 'bigint') return empty;
        return max === undefined ? v : v.subarray(0, max);
      };
    }
    case 'unary': {
      const operand = compile(e.operand, fields, where);
      return e.op === '-' ? (r) => s64(-asInt(operand(r))) : (r) => s64(~asInt(operand(r)));
    }
    case 'binary': {
      const left = compile(e.left, fields, where);
      const right = compile(e.right, fields, where);
      const op = e.op;
      return (r) => binaryOp(op, asInt(left(r)), asInt(right(r)));
    }
  }
}

const asInt = (v: Value): bigint => (typeof v === 'bigint' ? v : 0n);

/**
 * Builds a probe's arguments record from a raw record: `(bytes, byteOffset, length) → record`. The
 * record is a view of the builder's own buffer, valid until its next call (the runtime copies it
 * into the VM's context before that).
 */
export type ProviderRecordBuilder = (bytes: Uint8Array, byteOffset: number, length: number) => Uint8Array;

/**
 * The builder of a binding's arguments records from records of its raw event laid out as `raw`
 * (the kernel's format of `binding.system/binding.event`): the common header copied field by
 * field by name, each `int` argument a little-endian s64, each `string` argument's text (without
 * its NUL in the raw record) appended after the fixed part with a NUL, its `__data_loc` locator
 * `length << 16 | offset`. A field an expression names that `raw` lacks is `malformed` here
 * (resolution already checked it against the same format). The expressions are compiled once;
 * plain fields and strings are read and written without allocating.
 */
export function providerRecordBuilder(binding: Pick<ProviderBinding, 'args' | 'format'>, raw: EventFormat): ProviderRecordBuilder {
  const fieldsByName = new Map([...raw.commonFields, ...raw.fields].map((f) => [f.name, f]));
  const where = `${raw.system}/${raw.name}`;
  const args = binding.args.map((a) => {
    const out = binding.format.fields.find((f) => f.name === a.name);
    if (out === undefined) throw new CompatError('malformed', `arguments record of ${binding.format.name}: no field ${a.name}`);
    const expr = parse(a.expression);
    const evaluate = compile(expr, fieldsByName, where);
    return {
      isInt: a.type === 'int',
      evaluate,
      write: a.type === 'int' ? intFieldWriter(expr, fieldsByName) : undefined,
      span: a.type === 'string' ? stringFieldSpan(expr, fieldsByName) : undefined,
      byteOffset: out.byteOffset,
    };
  });
  // the common header, read and written as numbers (their sizes are 1, 2 and 4 bytes on every kernel)
  const common = ['common_type', 'common_flags', 'common_preempt_count', 'common_pid'].flatMap((name) => {
    const from = fieldsByName.get(name);
    const to = binding.format.commonFields.find((f) => f.name === name);
    if (from === undefined || to === undefined || from.array !== undefined || from.dynamic !== undefined || ![1, 2, 4].includes(from.size)) return [];
    return [{ at: from.byteOffset, size: from.size, to: to.byteOffset, toSize: to.size }];
  });
  const fixedSize = Math.max(binding.format.fixedSize, PROVIDER_COMMON_SIZE);
  const values: Value[] = args.map(() => 0n);
  const spans = args.map(() => new Int32Array(2));
  let scratch = new Uint8Array(Math.max(256, fixedSize));
  let scratchView = new DataView(scratch.buffer);
  const r: RecordView = { bytes: empty, view: new DataView(empty.buffer), base: 0, length: 0 };
  return (bytes, byteOffset, length) => {
    // a feed hands one page's bytes for many records: a view per array, not per record
    if (r.bytes !== bytes) r.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    r.bytes = bytes;
    r.base = byteOffset;
    r.length = length;
    let size = fixedSize;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a.write !== undefined) continue;
      if (a.span !== undefined) {
        const sp = spans[i]!;
        a.span(r, sp);
        size += sp[1]! - sp[0]! + 1;
        continue;
      }
      const v = a.evaluate(r);
      values[i] = v;
      if (typeof v !== 'bigint') size += v.length + 1;
    }
    // one scratch buffer, grown by doubling: the record lives until the next call
    const want = Math.min(size, 0xffff);
    if (scratch.length < want) {
      scratch = new Uint8Array(Math.max(want, scratch.length * 2));
      scratchView = new DataView(scratch.buffer);
    }
    const out = scratch.subarray(0, want);
    const w = scratchView;
    out.fill(0, 0, fixedSize);
    for (const c of common) {
      if (c.at + c.size > length) continue;
      const p = byteOffset + c.at;
      const v = c.size === 1 ? r.view.getUint8(p) : c.size === 2 ? r.view.getUint16(p, true) : r.view.getInt32(p, true);
      if (c.toSize === 1) w.setUint8(c.to, v);
      else if (c.toSize === 2) w.setUint16(c.to, v, true);
      else w.setInt32(c.to, v, true);
    }
    let tail = fixedSize;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a.write !== undefined) {
        a.write(r, out, w, a.byteOffset);
        continue;
      }
      if (a.span !== undefined) {
        const sp = spans[i]!;
        const n = Math.max(0, Math.min(sp[1]! - sp[0]!, out.length - tail - 1));
        for (let j = 0; j < n; j++) out[tail + j] = bytes[sp[0]! + j]!;
        const len = tail < out.length ? n + 1 : 0;
        if (len > 0) out[tail + n] = 0;
        w.setUint32(a.byteOffset, ((len << 16) | Math.min(tail, 0xffff)) >>> 0, true);
        tail += len;
        continue;
      }
      const v = values[i]!;
      if (a.isInt) {
        w.setBigInt64(a.byteOffset, typeof v === 'bigint' ? v : 0n, true);
        continue;
      }
      const text = typeof v === 'bigint' ? empty : v.subarray(0, Math.max(0, out.length - tail - 1));
      out.set(text, tail);
      const len = tail < out.length ? text.length + 1 : 0;
      if (len > 0) out[tail + text.length] = 0;
      w.setUint32(a.byteOffset, ((len << 16) | Math.min(tail, 0xffff)) >>> 0, true);
      tail += len;
    }
    return out;
  };
}
