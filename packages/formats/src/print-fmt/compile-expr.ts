import type { EventFormat } from '../event-format/event-format.js';
import { decodeCString } from '../event-format/field-read.js';
import { convert, int32, promote } from './c-int-type.js';
import {
  binaryOp,
  castType,
  constantContext,
  type EvalContext,
  RenderError,
  evaluate,
  fieldInfo,
  fieldValue,
  findFieldIn,
  type IntValue,
  intValue,
  printFlags,
  readIntAt,
  symbolTable,
  type Value,
} from './evaluate.js';
import type { PrintExpr } from './print-fmt-tree.js';

/** A print fmt expression turned into a function of the record. Throws {@link RenderError}. */
export type CompiledExpr = (ctx: EvalContext) => Value;

/** True when an expression reads nothing from the record (only the format and constants). */
function isRecordFree(e: PrintExpr): boolean {
  switch (e.kind) {
    case 'number': case 'char': case 'string': case 'sizeof-type':
      return true;
    case 'sizeof-expr':
      return true; // sizes come from the format
    case 'unary':
      return e.op !== '++' && e.op !== '--' && e.op !== '*' && e.op !== '&' && isRecordFree(e.operand);
    case 'binary':
      return isRecordFree(e.left) && isRecordFree(e.right);
    case 'cast':
      return isRecordFree(e.operand);
    case 'conditional':
      return isRecordFree(e.test) && isRecordFree(e.consequent) && isRecordFree(e.alternate);
    default:
      return false;
  }
}

function asInt(v: Value): IntValue {
  if (v.k !== 'int') throw new RenderError('unsupported', `${v.k === 'str' ? 'a string' : 'an array'} used as a number`);
  return v;
}

function truthy(v: Value): boolean {
  return v.k !== 'int' || v.value !== 0n;
}

/**
 * Compiles an expression for one format and long size: constant subtrees are folded once,
 * fields are looked up once, flag tables are read once. Behaves exactly like {@link evaluate}.
 */
export function compileExpr(expr: PrintExpr, format: EventFormat, longSize: 4 | 8): CompiledExpr {
  const fallback: CompiledExpr = (ctx) => evaluate(expr, ctx);
  if (isRecordFree(expr)) {
    try {
      const v = evaluate(expr, constantContext(longSize, format));
      return () => v;
    } catch (e) {
      if (e instanceof RenderError) return fallback;
      throw e;
    }
  }
  switch (expr.kind) {
    case 'field': {
      const f = findFieldIn(format, expr.name);
      if (!f) return fallback;
      const info = fieldInfo(f, longSize);
      const type = info.type;
      if (f.dynamic !== undefined || f.array !== undefined || type === undefined) return (ctx) => fieldValue(ctx, f);
      const { byteOffset, size } = f;
      const signed = info.signed;
      return (ctx) => {
        if (byteOffset + size > ctx.recordLength) return fieldValue(ctx, f); // throws the bad-record error
        return { k: 'int', value: readIntAt(ctx, ctx.recordOffset + byteOffset, size, signed), type };
      };
    }
    case 'binary': {
      const l = compileExpr(expr.left, format, longSize);
      const r = compileExpr(expr.right, format, longSize);
      const op = expr.op;
      if (op === '&&') return (ctx) => intValue(truthy(l(ctx)) && truthy(r(ctx)) ? 1n : 0n, int32);
      if (op === '||') return (ctx) => intValue(truthy(l(ctx)) || truthy(r(ctx)) ? 1n : 0n, int32);
      return (ctx) => binaryOp(op, asInt(l(ctx)), asInt(r(ctx)));
    }
    case 'unary': {
      const op = expr.op;
      if (op !== '-' && op !== '+' && op !== '~' && op !== '!') return fallback;
      const o = compileExpr(expr.operand, format, longSize);
      if (op === '!') return (ctx) => intValue(truthy(o(ctx)) ? 0n : 1n, int32);
      return (ctx) => {
        const v = asInt(o(ctx));
        const t = promote(v.type);
        const x = convert(v.value, t);
        return intValue(op === '-' ? -x : op === '~' ? ~x : x, t);
      };
    }
    case 'index': {
      const object = compileExpr(expr.object, format, longSize);
      const index = compileExpr(expr.index, format, longSize);
      return (ctx) => {
        const base = object(ctx);
        if (base.k !== 'mem') return evaluate(expr, ctx); // strings and errors: the slow path
        const i = asInt(index(ctx)).value;
        const { elemSize } = base;
        const byteOffset = Number(i) * elemSize;
        if (i < 0n || byteOffset + elemSize > base.length || (elemSize !== 1 && elemSize !== 2 && elemSize !== 4 && elemSize !== 8)) {
          return evaluate(expr, ctx); // throws the matching error
        }
        return {
          k: 'int',
          value: readIntAt(ctx, base.byteOffset + byteOffset, elemSize, base.elemSigned),
          type: { bits: (elemSize * 8) as 8 | 16 | 32 | 64, unsigned: !base.elemSigned },
        };
      };
    }
    case 'conditional': {
      const test = compileExpr(expr.test, format, longSize);
      const yes = compileExpr(expr.consequent, format, longSize);
      const no = compileExpr(expr.alternate, format, longSize);
      return (ctx) => (truthy(test(ctx)) ? yes(ctx) : no(ctx));
    }
    case 'cast': {
      if (expr.type.typeofOperand) return fallback;
      const t = castType(expr.type, constantContext(longSize, format));
      const o = compileExpr(expr.operand, format, longSize);
      const pointer = expr.type.pointerDepth > 0;
      const text = expr.type.text;
      return (ctx) => {
        const v = o(ctx);
        if (v.k !== 'int') {
          if (pointer) return v;
          throw new RenderError('unsupported', `cast of ${v.k === 'str' ? 'a string' : 'an array'} to ${text}`);
        }
        return t ? intValue(v.value, t) : v;
      };
    }
    case 'call': {
      const args = expr.args;
      switch (expr.callee) {
        case '__print_flags':
        case '__print_flags_u64':
        case '__print_symbolic':
        case '__print_symbolic_u64': {
          const flags = expr.callee.startsWith('__print_flags');
          const delimExpr = args[1];
          if (!args[0] || (flags && delimExpr?.kind !== 'string')) return fallback;
          let table: { value: bigint; name: string }[];
          try {
            table = symbolTable(args, flags ? 2 : 1, constantContext(longSize, format));
          } catch (e) {
            if (e instanceof RenderError) return fallback;
            throw e;
          }
          const value = compileExpr(args[0], format, longSize);
          if (flags) {
            const delim = delimExpr?.kind === 'string' ? delimExpr.value : '';
            return (ctx) => ({ k: 'str', value: printFlags(BigInt.asUintN(64, asInt(value(ctx)).value), delim, table) });
          }
          const names = new Map<bigint, string>();
          for (const e of table) if (!names.has(e.value)) names.set(e.value, e.name);
          return (ctx) => {
            const v = BigInt.asUintN(64, asInt(value(ctx)).value);
            return { k: 'str', value: names.get(v) ?? `0x${v.toString(16)}` };
          };
        }
        case '__get_str':
        case '__get_rel_str': {
          const a = args[0];
          const name = a?.kind === 'ident' || a?.kind === 'field' ? a.name : undefined;
          const f = name === undefined ? undefined : findFieldIn(format, name);
          if (!f) return fallback;
          return (ctx) => {
            const v = fieldValue(ctx, f);
            if (v.k !== 'mem') throw new RenderError('unsupported', `__get_str of the number field '${f.name}'`);
            return { k: 'str', value: decodeCString(ctx.bytes, v.byteOffset, v.length) };
          };
        }
        default:
          return fallback;
      }
    }
    default:
      return fallback;
  }
}
