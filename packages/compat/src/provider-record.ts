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

/** Reads what the script compiler reads from a field: an integer (sign- or zero-extended), an array element, or a string's bytes. */
function readField(f: FormatField, index: number | undefined, view: DataView, base: number, length: number): Value {
  const bytes = new Uint8Array(view.buffer, view.byteOffset + base, length);
  const text = (from: number, max: number): Uint8Array => {
    const start = Math.max(0, Math.min(from, length));
    const end = Math.max(start, Math.min(start + max, length));
    const s = bytes.subarray(start, end);
    const nul = s.indexOf(0);
    return nul < 0 ? s : s.subarray(0, nul);
  };
  if (f.dynamic !== undefined) {
    const loc = f.byteOffset + 4 <= length ? view.getUint32(base + f.byteOffset, true) : 0;
    const off = (loc & 0xffff) + (f.dynamic === 'rel_loc' ? f.byteOffset + f.size : 0);
    return text(off, loc >>> 16);
  }
  if (f.array !== undefined && isCharType(f.type) && index === undefined) return text(f.byteOffset, f.size);
  const elementSize = index === undefined ? f.size : f.size / (f.array?.length ?? 1);
  const at = f.byteOffset + (index ?? 0) * elementSize;
  if (at + elementSize > length || ![1, 2, 4, 8].includes(elementSize)) return 0n;
  const signed = f.type.includes('*') ? false : (f.signed ?? false);
  const p = base + at;
  switch (elementSize) {
    case 1:
      return BigInt(signed ? view.getInt8(p) : view.getUint8(p));
    case 2:
      return BigInt(signed ? view.getInt16(p, true) : view.getUint16(p, true));
    case 4:
      return BigInt(signed ? view.getInt32(p, true) : view.getUint32(p, true));
    default:
      return signed ? view.getBigInt64(p, true) : s64(view.getBigUint64(p, true));
  }
}

/** Builds a probe's arguments record from a raw record: `(bytes, byteOffset, length) → record`. */
export type ProviderRecordBuilder = (bytes: Uint8Array, byteOffset: number, length: number) => Uint8Array;

/**
 * The builder of a binding's arguments records from records of its raw event laid out as `raw`
 * (the kernel's format of `binding.system/binding.event`): the common header copied field by
 * field by name, each `int` argument a little-endian s64, each `string` argument's text (without
 * its NUL in the raw record) appended after the fixed part with a NUL, its `__data_loc` locator
 * `length << 16 | offset`. A field an expression names that `raw` lacks is `malformed` here
 * (resolution already checked it against the same format).
 */
export function providerRecordBuilder(binding: Pick<ProviderBinding, 'args' | 'format'>, raw: EventFormat): ProviderRecordBuilder {
  const fieldsByName = new Map([...raw.commonFields, ...raw.fields].map((f) => [f.name, f]));
  const args = binding.args.map((a) => {
    const out = binding.format.fields.find((f) => f.name === a.name);
    if (out === undefined) throw new CompatError('malformed', `arguments record of ${binding.format.name}: no field ${a.name}`);
    return { ...a, expr: parse(a.expression), byteOffset: out.byteOffset };
  });
  const check = (e: Expr): void => {
    if (e.kind === 'field' && !fieldsByName.has(e.name)) throw new CompatError('malformed', `${raw.system}/${raw.name} has no field ${e.name}`);
    if (e.kind === 'str') check(e.inner);
    if (e.kind === 'unary') check(e.operand);
    if (e.kind === 'binary') {
      check(e.left);
      check(e.right);
    }
  };
  for (const a of args) check(a.expr);
  const common = ['common_type', 'common_flags', 'common_preempt_count', 'common_pid'].map((name) => ({ from: fieldsByName.get(name), to: binding.format.commonFields.find((f) => f.name === name) }));
  const fixedSize = Math.max(binding.format.fixedSize, PROVIDER_COMMON_SIZE);
  return (bytes, byteOffset, length) => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const evaluate = (e: Expr): Value => {
      switch (e.kind) {
        case 'int':
          return e.value;
        case 'field':
          return readField(fieldsByName.get(e.name)!, e.index, view, byteOffset, length);
        case 'str': {
          const v = evaluate(e.inner);
          if (typeof v === 'bigint') return new Uint8Array(0);
          return e.length === undefined ? v : v.subarray(0, Math.max(0, e.length - 1));
        }
        case 'unary': {
          const v = evaluate(e.operand);
          const n = typeof v === 'bigint' ? v : 0n;
          return e.op === '-' ? s64(-n) : s64(~n);
        }
        case 'binary': {
          const a = evaluate(e.left);
          const b = evaluate(e.right);
          return binaryOp(e.op, typeof a === 'bigint' ? a : 0n, typeof b === 'bigint' ? b : 0n);
        }
      }
    };
    const values = args.map((a) => evaluate(a.expr));
    let size = fixedSize;
    for (const v of values) if (typeof v !== 'bigint') size += v.length + 1;
    const out = new Uint8Array(Math.min(size, 0xffff));
    const w = new DataView(out.buffer);
    for (const c of common) {
      if (c.from === undefined || c.to === undefined || c.from.byteOffset + c.from.size > length) continue;
      const v = readField(c.from, undefined, view, byteOffset, length);
      if (typeof v !== 'bigint') continue;
      if (c.to.size === 1) w.setUint8(c.to.byteOffset, Number(BigInt.asUintN(8, v)));
      else if (c.to.size === 2) w.setUint16(c.to.byteOffset, Number(BigInt.asUintN(16, v)), true);
      else w.setInt32(c.to.byteOffset, Number(BigInt.asIntN(32, v)), true);
    }
    let tail = fixedSize;
    for (const [i, a] of args.entries()) {
      const v = values[i]!;
      if (a.type === 'int') {
        w.setBigInt64(a.byteOffset, typeof v === 'bigint' ? v : 0n, true);
        continue;
      }
      const text = typeof v === 'bigint' ? new Uint8Array(0) : v.subarray(0, Math.max(0, out.length - tail - 1));
      out.set(text, tail);
      const len = tail < out.length ? text.length + 1 : 0;
      w.setUint32(a.byteOffset, ((len << 16) | Math.min(tail, 0xffff)) >>> 0, true);
      tail += len;
    }
    return out;
  };
}
