import type { EventFormat, FormatField } from '../event-format/event-format.js';
import { decodeCString, isFieldSigned } from '../event-format/field-read.js';
import { commonType, convert, int32, type IntType, intTypeOf, promote, sizeOfType, splitTypeText, uint32, uint64 } from './c-int-type.js';
import type { CTypeName, PrintExpr } from './print-fmt-tree.js';
import type { RenderEnv } from './render-env.js';

/** An integer with its C type; `value` is already converted to the type's range. */
export interface IntValue {
  k: 'int';
  value: bigint;
  type: IntType;
}
/** A string produced by a helper (`__get_str`, `__print_flags`, a string literal). */
export interface StrValue {
  k: 'str';
  value: string;
}
/** Bytes inside the record: an array field, a dynamic array (`__get_dynamic_array`). */
export interface MemValue {
  k: 'mem';
  /** Absolute offset in the record's bytes. */
  byteOffset: number;
  length: number;
  elemSize: number;
  elemSigned: boolean;
  isChar: boolean;
}
export type Value = IntValue | StrValue | MemValue;

/**
 * Why an expression could not be evaluated: `unsupported` (a construct trace-cmd cannot evaluate
 * either: an unknown function or identifier, a statement expression) or `bad-record` (the record's
 * bytes do not hold what the format says).
 */
export class RenderError extends Error {
  constructor(
    readonly reason: 'unsupported' | 'bad-record',
    message: string,
  ) {
    super(message);
  }
}

/** Everything evaluation reads. `format`/`bytes` are absent for constant expressions. */
export interface EvalContext {
  format: EventFormat | undefined;
  bytes: Uint8Array;
  view: DataView;
  /** Offset of the record (its `common_type`) in `bytes`. */
  recordOffset: number;
  recordLength: number;
  littleEndian: boolean;
  longSize: 4 | 8;
  env: RenderEnv;
}

const emptyBytes = new Uint8Array(0);
export function constantContext(longSize: 4 | 8, format?: EventFormat): EvalContext {
  return {
    format,
    bytes: emptyBytes,
    view: new DataView(emptyBytes.buffer),
    recordOffset: 0,
    recordLength: 0,
    littleEndian: true,
    longSize,
    env: {},
  };
}

export function intValue(value: bigint, type: IntType): IntValue {
  return { k: 'int', value: convert(value, type), type };
}

function unsupported(message: string): never {
  throw new RenderError('unsupported', message);
}
function badRecord(message: string): never {
  throw new RenderError('bad-record', message);
}

export function findFieldIn(format: EventFormat | undefined, name: string): FormatField | undefined {
  if (!format) return undefined;
  for (const f of format.fields) if (f.name === name) return f;
  for (const f of format.commonFields) if (f.name === name) return f;
  return undefined;
}

function requireField(ctx: EvalContext, name: string): FormatField {
  const f = findFieldIn(ctx.format, name);
  if (!f) unsupported(`no field '${name}'`);
  return f;
}

/** Size in bytes of one element of an array field. */
export function elementSize(field: FormatField, longSize: 4 | 8): number {
  if (field.array?.length !== undefined && field.array.length > 0 && field.size % field.array.length === 0) {
    return field.size / field.array.length;
  }
  const { words, pointerDepth } = splitTypeText(field.type);
  const t = intTypeOf(words, pointerDepth, longSize);
  if (t) return t.bits / 8;
  return 1;
}

function isCharType(type: string): boolean {
  return /^(unsigned |signed )?char$/.test(type.replace(/^const /, ''));
}

/** Reads `size` bytes at absolute `at` as an integer of the given signedness. */
export function readIntAt(ctx: EvalContext, at: number, size: number, signed: boolean): bigint {
  const v = ctx.view;
  const le = ctx.littleEndian;
  switch (size) {
    case 1:
      return BigInt(signed ? v.getInt8(at) : v.getUint8(at));
    case 2:
      return BigInt(signed ? v.getInt16(at, le) : v.getUint16(at, le));
    case 4:
      return BigInt(signed ? v.getInt32(at, le) : v.getUint32(at, le));
    case 8:
      return signed ? v.getBigInt64(at, le) : v.getBigUint64(at, le);
    default: {
      let r = 0n;
      for (let k = 0; k < size; k++) {
        const b = BigInt(ctx.bytes[at + (le ? size - 1 - k : k)]!);
        r = (r << 8n) | b;
      }
      return signed ? BigInt.asIntN(size * 8, r) : r;
    }
  }
}

function checkInRecord(ctx: EvalContext, relOffset: number, size: number, what: string): void {
  if (relOffset < 0 || relOffset + size > ctx.recordLength) {
    badRecord(`${what}: ${size} bytes at offset ${relOffset} are outside the record's ${ctx.recordLength} bytes`);
  }
}

/** The record bytes of a dynamic field: absolute offset and length, checked against the record. */
export function dynamicLocation(ctx: EvalContext, field: FormatField): { byteOffset: number; length: number } {
  checkInRecord(ctx, field.byteOffset, 4, `field '${field.name}'`);
  const word = ctx.view.getUint32(ctx.recordOffset + field.byteOffset, ctx.littleEndian);
  const length = word >>> 16;
  let offset = word & 0xffff;
  if (field.dynamic === 'rel_loc') offset += field.byteOffset + field.size;
  if (offset + length > ctx.recordLength) {
    badRecord(`${field.dynamic} of '${field.name}' points at ${length} bytes at offset ${offset}, past the record's ${ctx.recordLength} bytes`);
  }
  return { byteOffset: ctx.recordOffset + offset, length };
}

/** What evaluation needs of a field, computed once per field and long size. */
interface FieldInfo {
  signed: boolean;
  /** Integer type of a numeric field; undefined for arrays and odd sizes. */
  type: IntType | undefined;
  elemSize: number;
  elemSigned: boolean;
  isChar: boolean;
}

const fieldInfoCache = [new WeakMap<FormatField, FieldInfo>(), new WeakMap<FormatField, FieldInfo>()];

export function fieldInfo(field: FormatField, longSize: 4 | 8): FieldInfo {
  const cache = fieldInfoCache[longSize === 4 ? 0 : 1]!;
  let info = cache.get(field);
  if (info) return info;
  const signed = isFieldSigned(field);
  const { words, pointerDepth } = splitTypeText(field.type);
  const declared = intTypeOf(words, pointerDepth, longSize);
  // Trust size and signedness over the type text (syscall fields: `int dfd` with size 8).
  const size = field.size;
  const type: IntType | undefined = size === 1 || size === 2 || size === 4 || size === 8
    ? { bits: (size * 8) as IntType['bits'], unsigned: !signed, ...(declared?.pointer ? { pointer: true } : {}) }
    : undefined;
  const isChar = isCharType(field.type);
  info = { signed, type, elemSize: elementSize(field, longSize), elemSigned: signed && !isChar, isChar };
  cache.set(field, info);
  return info;
}

/** The value of `REC->name`. */
export function fieldValue(ctx: EvalContext, field: FormatField): Value {
  const info = fieldInfo(field, ctx.longSize);
  if (field.dynamic !== undefined) {
    const loc = dynamicLocation(ctx, field);
    return { k: 'mem', byteOffset: loc.byteOffset, length: loc.length, elemSize: info.elemSize, elemSigned: info.elemSigned, isChar: info.isChar };
  }
  checkInRecord(ctx, field.byteOffset, field.size, `field '${field.name}'`);
  const at = ctx.recordOffset + field.byteOffset;
  if (field.array !== undefined || field.size === 0) {
    // A zero-sized array (`char buf[]`, size 0) is the rest of the record.
    const length = field.size === 0 ? ctx.recordLength - field.byteOffset : field.size;
    return { k: 'mem', byteOffset: at, length, elemSize: info.elemSize, elemSigned: info.elemSigned, isChar: info.isChar };
  }
  const type = info.type ?? unsupported(`field '${field.name}' of ${field.size} bytes is not a number`);
  return { k: 'int', value: readIntAt(ctx, at, field.size, info.signed), type };
}

/** The integer an expression evaluates to; strings and arrays are an error. */
export function evalInt(expr: PrintExpr, ctx: EvalContext): IntValue {
  const v = evaluate(expr, ctx);
  if (v.k !== 'int') unsupported(`${v.k === 'str' ? 'a string' : 'an array'} used as a number`);
  return v;
}

function truthy(expr: PrintExpr, ctx: EvalContext): boolean {
  const v = evaluate(expr, ctx);
  if (v.k === 'int') return v.value !== 0n;
  return true; // a string or array is a non-null pointer
}

function fieldNameArg(expr: PrintExpr | undefined): string {
  if (!expr) unsupported('missing field argument');
  if (expr.kind === 'ident') return expr.name;
  if (expr.kind === 'field') return expr.name;
  if (expr.kind === 'type' && expr.type.words.length === 1 && expr.type.pointerDepth === 0) return expr.type.words[0]!;
  return unsupported('a helper expects a field name');
}

export function castType(type: CTypeName, ctx: EvalContext): IntType | undefined {
  return intTypeOf(type.words, type.pointerDepth, ctx.longSize);
}

/** Whether an expression reads nothing from the record (for `__builtin_constant_p`). */
function isConstantExpr(expr: PrintExpr): boolean {
  switch (expr.kind) {
    case 'number': case 'char': case 'string': case 'sizeof-type': case 'float':
      return true;
    case 'unary': return isConstantExpr(expr.operand);
    case 'binary': return isConstantExpr(expr.left) && isConstantExpr(expr.right);
    case 'cast': return isConstantExpr(expr.operand);
    case 'conditional': return isConstantExpr(expr.test) && isConstantExpr(expr.consequent) && isConstantExpr(expr.alternate);
    default: return false;
  }
}

/** Evaluates a print fmt expression against a record. Throws {@link RenderError}. */
export function evaluate(expr: PrintExpr, ctx: EvalContext): Value {
  switch (expr.kind) {
    case 'number':
      return intValue(expr.value, literalType(expr.value, expr.unsigned, expr.longs, !/^0./.test(expr.text), ctx.longSize));
    case 'char':
      return intValue(BigInt(expr.value), int32);
    case 'string':
      return { k: 'str', value: expr.value };
    case 'float':
      return unsupported(`floating constant ${expr.text}`);
    case 'ident':
      if (expr.name === 'true') return intValue(1n, int32);
      if (expr.name === 'false' || expr.name === 'NULL') return intValue(0n, int32);
      return unsupported(`unknown identifier '${expr.name}'`);
    case 'field':
      return fieldValue(ctx, requireField(ctx, expr.name));
    case 'member': {
      // `((ktime_t) { .tv64 = REC->expires }).tv64`
      const obj = expr.object;
      if (!expr.arrow && obj.kind === 'compound-literal' && obj.init.kind === 'init-list') {
        for (const el of obj.init.elements) {
          if (el.kind === 'designated' && el.designator === `.${expr.name}`) return evaluate(el.value, ctx);
        }
      }
      return unsupported(`member access '.${expr.name}'`);
    }
    case 'index': {
      const base = evaluate(expr.object, ctx);
      const index = evalInt(expr.index, ctx).value;
      if (base.k === 'str') {
        if (index < 0n || index >= BigInt(base.value.length + 1)) badRecord('string index out of range');
        return intValue(BigInt(base.value.charCodeAt(Number(index)) || 0), int32);
      }
      if (base.k !== 'mem') return unsupported('indexing a number');
      const byteOffset = Number(index) * base.elemSize;
      if (index < 0n || byteOffset + base.elemSize > base.length) {
        badRecord(`index ${index} is outside an array of ${base.length / base.elemSize} elements`);
      }
      const at = base.byteOffset + byteOffset;
      const bits = (base.elemSize * 8) as IntType['bits'];
      const type: IntType = base.elemSize === 1 || base.elemSize === 2 || base.elemSize === 4 || base.elemSize === 8
        ? { bits, unsigned: !base.elemSigned }
        : unsupported(`array element of ${base.elemSize} bytes`);
      return { k: 'int', value: readIntAt(ctx, at, base.elemSize, base.elemSigned), type };
    }
    case 'call':
      return evaluateCall(expr.callee, expr.args, ctx);
    case 'call-expr':
      return unsupported('call through an expression');
    case 'unary': {
      switch (expr.op) {
        case '!':
          return intValue(truthy(expr.operand, ctx) ? 0n : 1n, int32);
        case '-': case '+': case '~': {
          const v = evalInt(expr.operand, ctx);
          const t = promote(v.type);
          const x = convert(v.value, t);
          return intValue(expr.op === '-' ? -x : expr.op === '~' ? ~x : x, t);
        }
        case '&': {
          if (expr.operand.kind === 'field') {
            const f = requireField(ctx, expr.operand.name);
            if (f.dynamic === undefined && f.array === undefined && f.size > 0) {
              checkInRecord(ctx, f.byteOffset, f.size, `field '${f.name}'`);
              return { k: 'mem', byteOffset: ctx.recordOffset + f.byteOffset, length: f.size, elemSize: f.size, elemSigned: isFieldSigned(f), isChar: false };
            }
          }
          const v = evaluate(expr.operand, ctx);
          if (v.k === 'mem') return v;
          return unsupported('address of a value');
        }
        case '*': {
          const v = evaluate(expr.operand, ctx);
          if (v.k === 'mem') return evaluate({ kind: 'index', object: expr.operand, index: { kind: 'number', value: 0n, unsigned: false, longs: 0, text: '0' } }, ctx);
          return unsupported('dereference of a pointer outside the record');
        }
        default:
          return unsupported(`'${expr.op}' has side effects`);
      }
    }
    case 'postfix':
    case 'assign':
      return unsupported('assignment has side effects');
    case 'binary':
      return evaluateBinary(expr.op, expr.left, expr.right, ctx);
    case 'conditional':
      return truthy(expr.test, ctx) ? evaluate(expr.consequent, ctx) : evaluate(expr.alternate, ctx);
    case 'comma': {
      let last: Value = intValue(0n, int32);
      for (const e of expr.expressions) last = evaluate(e, ctx);
      return last;
    }
    case 'cast': {
      const v = evaluate(expr.operand, ctx);
      if (expr.type.typeofOperand) return v;
      const t = castType(expr.type, ctx);
      if (v.k !== 'int') {
        // `(void *)array`, `(char *)__get_dynamic_array(x)`: the bytes stay bytes.
        if (expr.type.pointerDepth > 0) return v;
        return unsupported(`cast of ${v.k === 'str' ? 'a string' : 'an array'} to ${expr.type.text}`);
      }
      if (!t) return v; // unknown typedef or struct: keep the value as it is
      return intValue(v.value, t);
    }
    case 'sizeof-type': {
      // BUILD_BUG_ON_ZERO / __must_be_array: `sizeof(struct { int:(-!!(e)); })` is 0 when it compiles.
      if (/^struct \{ int ?:/.test(expr.type.text)) return intValue(0n, ctx.longSize === 8 ? uint64 : uint32);
      const n = sizeOfType(expr.type, ctx.longSize);
      if (n === undefined) return unsupported(`sizeof(${expr.type.text})`);
      return intValue(BigInt(n), ctx.longSize === 8 ? uint64 : uint32);
    }
    case 'sizeof-expr': {
      const n = sizeOfExpr(expr.operand, ctx);
      return intValue(BigInt(n), ctx.longSize === 8 ? uint64 : uint32);
    }
    case 'type':
      return unsupported(`type '${expr.type.text}' used as a value`);
    case 'init-list':
    case 'designated':
    case 'compound-literal':
      return unsupported('initializer used as a value');
    case 'statement-expr':
      return unsupported('statement expression');
  }
}

/** The type of an integer constant: the first of C's candidate types that holds the value. */
function literalType(value: bigint, unsigned: boolean, longs: number, isDecimal: boolean, longSize: 4 | 8): IntType {
  const longBits = longSize === 8 ? 64 : 32;
  const candidates: IntType[] = [];
  const add = (bits: 32 | 64) => {
    if (!unsigned) candidates.push({ bits, unsigned: false });
    if (unsigned || !isDecimal) candidates.push({ bits, unsigned: true });
  };
  if (longs === 0) add(32);
  if (longs <= 1) add(longBits);
  add(64);
  for (const t of candidates) {
    const max = t.unsigned ? (1n << BigInt(t.bits)) - 1n : (1n << BigInt(t.bits - 1)) - 1n;
    if (value <= max) return t;
  }
  return uint64;
}

function sizeOfExpr(e: PrintExpr, ctx: EvalContext): number {
  if (e.kind === 'field') {
    const f = requireField(ctx, e.name);
    return f.size;
  }
  if (e.kind === 'index' && e.object.kind === 'field') {
    const f = requireField(ctx, e.object.name);
    return elementSize(f, ctx.longSize);
  }
  if (e.kind === 'cast') {
    const t = castType(e.type, ctx);
    if (t) return t.bits / 8;
  }
  if (e.kind === 'number' || e.kind === 'char') {
    const v = evalInt(e, ctx);
    return v.type.bits / 8;
  }
  return unsupported('sizeof of this expression');
}

function evaluateBinary(op: string, leftExpr: PrintExpr, rightExpr: PrintExpr, ctx: EvalContext): Value {
  if (op === '&&') return intValue(truthy(leftExpr, ctx) && truthy(rightExpr, ctx) ? 1n : 0n, int32);
  if (op === '||') return intValue(truthy(leftExpr, ctx) || truthy(rightExpr, ctx) ? 1n : 0n, int32);
  return binaryOp(op, evalInt(leftExpr, ctx), evalInt(rightExpr, ctx));
}

/** A C binary operator (not `&&`/`||`) on two integers, with the usual conversions. */
export function binaryOp(op: string, l: IntValue, r: IntValue): IntValue {
  if (op === '<<' || op === '>>') {
    const t = promote(l.type);
    const count = convert(r.value, promote(r.type));
    const x = convert(l.value, t);
    if (count < 0n) return unsupported(`negative shift count ${count}`);
    if (count >= BigInt(t.bits)) return intValue(op === '>>' && x < 0n ? -1n : 0n, t);
    return intValue(op === '<<' ? x << count : x >> count, t);
  }
  const t = commonType(l.type, r.type);
  const a = convert(l.value, t);
  const b = convert(r.value, t);
  switch (op) {
    case '+': return intValue(a + b, t);
    case '-': return intValue(a - b, t);
    case '*': return intValue(a * b, t);
    case '/':
      if (b === 0n) return badRecord('division by zero');
      return intValue(a / b, t);
    case '%':
      if (b === 0n) return badRecord('division by zero');
      return intValue(a % b, t);
    case '&': return intValue(a & b, t);
    case '|': return intValue(a | b, t);
    case '^': return intValue(a ^ b, t);
    case '<': return intValue(a < b ? 1n : 0n, int32);
    case '>': return intValue(a > b ? 1n : 0n, int32);
    case '<=': return intValue(a <= b ? 1n : 0n, int32);
    case '>=': return intValue(a >= b ? 1n : 0n, int32);
    case '==': return intValue(a === b ? 1n : 0n, int32);
    case '!=': return intValue(a !== b ? 1n : 0n, int32);
    default: return unsupported(`operator '${op}'`);
  }
}

function isNullPointer(e: PrintExpr): boolean {
  if (e.kind === 'cast') return isNullPointer(e.operand);
  return (e.kind === 'number' && e.value === 0n) || (e.kind === 'ident' && e.name === 'NULL');
}

/** Reads the `{ value, "name" }` entries of a `__print_flags`/`__print_symbolic` table. */
export function symbolTable(args: readonly PrintExpr[], from: number, ctx: EvalContext): { value: bigint; name: string }[] {
  const table: { value: bigint; name: string }[] = [];
  for (let k = from; k < args.length; k++) {
    const entry = args[k]!;
    if (entry.kind !== 'init-list' || entry.elements.length !== 2) return unsupported('a flag table entry is not { value, "name" }');
    const nameExpr = entry.elements[1]!;
    if (nameExpr.kind !== 'string') {
      if (isNullPointer(nameExpr)) continue; // `{ -1, ((void *)0) }`: a terminator
      return unsupported('a flag table name is not a string');
    }
    let value: bigint;
    try {
      value = BigInt.asUintN(64, evalInt(entry.elements[0]!, ctx).value);
    } catch (e) {
      // An enum name the kernel did not convert to a number: never match it rather than guess.
      if (e instanceof RenderError && e.reason === 'unsupported') continue;
      throw e;
    }
    table.push({ value, name: nameExpr.value });
  }
  return table;
}

const tableCache = new WeakMap<readonly PrintExpr[], { value: bigint; name: string }[]>();
function cachedTable(args: readonly PrintExpr[], from: number, ctx: EvalContext): { value: bigint; name: string }[] {
  let t = tableCache.get(args);
  if (!t) {
    t = symbolTable(args, from, ctx);
    tableCache.set(args, t);
  }
  return t;
}

/** `__print_flags`: names of the set flags joined by `delim`, leftover bits as `0x..`. */
export function printFlags(value: bigint, delim: string, table: readonly { value: bigint; name: string }[]): string {
  let v = value;
  let out = '';
  if (v === 0n) {
    for (const e of table) if (e.value === 0n) return e.name;
    return '';
  }
  for (const e of table) {
    if (e.value === 0n || (v & e.value) !== e.value) continue;
    if (out !== '') out += delim;
    out += e.name;
    v &= ~e.value;
    if (v === 0n) break;
  }
  if (v !== 0n) {
    if (out !== '') out += delim;
    out += `0x${v.toString(16)}`;
  }
  return out;
}

function memArg(expr: PrintExpr | undefined, ctx: EvalContext): MemValue {
  if (!expr) return unsupported('missing array argument');
  const v = evaluate(expr, ctx);
  if (v.k === 'mem') return v;
  if (v.k === 'str') return unsupported('a string where bytes were expected');
  return unsupported('a pointer outside the record');
}

/** Kernel bitmask text (`%*pb`): hex, most significant first, a comma every 32 bits. */
export function formatBitmask(bytes: Uint8Array, byteOffset: number, length: number, littleEndian: boolean): string {
  let out = '';
  for (let k = length - 1; k >= 0; k--) {
    const index = littleEndian ? k : length - 1 - k;
    out += (bytes[byteOffset + index] ?? 0).toString(16).padStart(2, '0');
    if (k % 4 === 0 && k > 0) out += ',';
  }
  return out;
}

function hexBytes(ctx: EvalContext, mem: MemValue, count: number, separator: string): string {
  const n = Math.min(count, mem.length);
  let out = '';
  for (let k = 0; k < n; k++) {
    if (k > 0) out += separator;
    out += ctx.bytes[mem.byteOffset + k]!.toString(16).padStart(2, '0');
  }
  return out;
}

function evaluateCall(callee: string, args: readonly PrintExpr[], ctx: EvalContext): Value {
  switch (callee) {
    case '__get_str':
    case '__get_rel_str': {
      const f = requireField(ctx, fieldNameArg(args[0]));
      const v = fieldValue(ctx, f);
      if (v.k !== 'mem') return unsupported(`__get_str of the number field '${f.name}'`);
      return { k: 'str', value: decodeCString(ctx.bytes, v.byteOffset, v.length) };
    }
    case '__get_dynamic_array':
    case '__get_rel_dynamic_array': {
      const f = requireField(ctx, fieldNameArg(args[0]));
      const v = fieldValue(ctx, f);
      if (v.k !== 'mem') return unsupported(`${callee} of the number field '${f.name}'`);
      return v;
    }
    case '__get_dynamic_array_len':
    case '__get_rel_dynamic_array_len': {
      const f = requireField(ctx, fieldNameArg(args[0]));
      const v = fieldValue(ctx, f);
      if (v.k !== 'mem') return unsupported(`${callee} of the number field '${f.name}'`);
      return intValue(BigInt(v.length), uint32);
    }
    case '__get_bitmask':
    case '__get_rel_bitmask':
    case '__get_cpumask':
    case '__get_rel_cpumask': {
      const f = requireField(ctx, fieldNameArg(args[0]));
      const v = fieldValue(ctx, f);
      if (v.k !== 'mem') return unsupported(`${callee} of the number field '${f.name}'`);
      return { k: 'str', value: formatBitmask(ctx.bytes, v.byteOffset, v.length, ctx.littleEndian) };
    }
    case '__print_flags':
    case '__print_flags_u64': {
      const v = evalInt(args[0]!, ctx);
      const delimExpr = args[1];
      const delim = delimExpr?.kind === 'string' ? delimExpr.value : unsupported('__print_flags delimiter is not a string');
      return { k: 'str', value: printFlags(BigInt.asUintN(64, v.value), delim, cachedTable(args, 2, ctx)) };
    }
    case '__print_symbolic':
    case '__print_symbolic_u64': {
      const v = BigInt.asUintN(64, evalInt(args[0]!, ctx).value);
      for (const e of cachedTable(args, 1, ctx)) if (e.value === v) return { k: 'str', value: e.name };
      return { k: 'str', value: `0x${v.toString(16)}` };
    }
    case '__print_hex':
    case '__print_hex_str': {
      const mem = memArg(args[0], ctx);
      const len = Number(evalInt(args[1]!, ctx).value);
      return { k: 'str', value: hexBytes(ctx, mem, len, callee === '__print_hex' ? ' ' : '') };
    }
    case '__print_array':
    case '__print_dynamic_array': {
      let mem: MemValue;
      let count: number;
      let elemSize: number;
      if (callee === '__print_dynamic_array') {
        const f = requireField(ctx, fieldNameArg(args[0]));
        const v = fieldValue(ctx, f);
        if (v.k !== 'mem') return unsupported('__print_dynamic_array of a number field');
        mem = v;
        elemSize = Number(evalInt(args[1]!, ctx).value);
        count = elemSize > 0 ? Math.floor(mem.length / elemSize) : 0;
      } else {
        mem = memArg(args[0], ctx);
        count = Number(evalInt(args[1]!, ctx).value);
        elemSize = Number(evalInt(args[2]!, ctx).value);
      }
      if (elemSize !== 1 && elemSize !== 2 && elemSize !== 4 && elemSize !== 8) return unsupported(`array element size ${elemSize}`);
      if (count < 0 || count * elemSize > mem.length) badRecord(`__print_array of ${count} elements of ${elemSize} bytes exceeds ${mem.length} bytes`);
      let out = '{';
      for (let k = 0; k < count; k++) {
        if (k > 0) out += ',';
        out += `0x${readIntAt(ctx, mem.byteOffset + k * elemSize, elemSize, false).toString(16)}`;
      }
      return { k: 'str', value: `${out}}` };
    }
    case '__builtin_expect':
    case 'likely':
    case 'unlikely':
      return evaluate(args[0]!, ctx);
    case '__builtin_constant_p':
      return intValue(args[0] && isConstantExpr(args[0]) ? 1n : 0n, int32);
    case '__ilog2_u32':
    case '__ilog2_u64':
    case 'ilog2': {
      const v = BigInt.asUintN(64, evalInt(args[0]!, ctx).value);
      return intValue(v === 0n ? -1n : BigInt(v.toString(2).length - 1), int32);
    }
    case 'jiffies_to_msecs':
      // trace-cmd's jbd2 plugin defines this helper as returning its argument unchanged.
      return intValue(evalInt(args[0]!, ctx).value, uint64);
    default:
      return unsupported(`function ${callee}() is not defined`);
  }
}
