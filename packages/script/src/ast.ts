import type { SourceSpan } from './errors.js';

/** A whole script: its probes in source order. */
export interface ScriptAst {
  probes: ProbeNode[];
}

/** `attach[, attach…] [/predicate/] { statements }` */
export interface ProbeNode {
  attachPoints: AttachPointNode[];
  predicate: Expr | undefined;
  body: Stmt[];
  span: SourceSpan;
}

/** One attach point as written (`tracepoint:sched:sched_switch`, `t:syscalls:sys_enter_*`, `BEGIN`). */
export interface AttachPointNode {
  text: string;
  span: SourceSpan;
}

export type AssignOp = '=' | '+=' | '-=' | '*=' | '/=' | '%=' | '&=' | '|=' | '^=' | '<<=' | '>>=';

export type Stmt =
  | { kind: 'expr'; expr: Expr; span: SourceSpan }
  /** `@m[k] = v`, `@m[k] += v`; `@m = count()` (value is a call to an aggregation) */
  | { kind: 'map-assign'; map: MapExpr; op: AssignOp; value: Expr; span: SourceSpan }
  | { kind: 'var-assign'; name: string; nameSpan: SourceSpan; op: AssignOp; value: Expr; span: SourceSpan }
  /** `@m[k]++`, `$x--`, `++@m` */
  | { kind: 'incdec'; target: MapExpr | VarExpr; delta: 1 | -1; span: SourceSpan }
  | { kind: 'if'; cond: Expr; then: Stmt[]; else: Stmt[] | undefined; span: SourceSpan }
  | { kind: 'block'; body: Stmt[]; span: SourceSpan }
  /** `return;`: leave the probe */
  | { kind: 'return'; span: SourceSpan }
  /** `while (cond) { … }`: a bounded loop (a backward jump the verifier must see end) */
  | { kind: 'while'; cond: Expr; body: Stmt[]; span: SourceSpan }
  /** `unroll(N) { … }`: the body N times (1 ≤ N ≤ 100), no jump back */
  | { kind: 'unroll'; count: number; body: Stmt[]; span: SourceSpan }
  /** `break;` / `continue;` inside a `while` */
  | { kind: 'break' | 'continue'; span: SourceSpan };

export type UnaryOp = '!' | '~' | '-';

export type BinaryOp = '||' | '&&' | '|' | '^' | '&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '<<' | '>>' | '+' | '-' | '*' | '/' | '%';

/** `@name[keys]` (`@` alone: the anonymous map, name ''). */
export interface MapExpr {
  kind: 'map';
  name: string;
  keys: Expr[];
  /** Whether `[…]` was written (`@x[]` is not allowed, `@x` has no key). */
  span: SourceSpan;
  nameSpan: SourceSpan;
}

export interface VarExpr {
  kind: 'var';
  name: string;
  span: SourceSpan;
}

export type Expr =
  | { kind: 'int'; value: bigint; span: SourceSpan }
  | { kind: 'string'; value: string; span: SourceSpan }
  /** A bare word: a builtin (`pid`, `comm`, `nsecs`) or an unknown name. */
  | { kind: 'ident'; name: string; span: SourceSpan }
  /** `args.FIELD`, `args->FIELD` (`args.FIELD[i]` is an `index` of it). */
  | { kind: 'field'; field: string; fieldSpan: SourceSpan; span: SourceSpan }
  /** `e[i]` */
  | { kind: 'index'; base: Expr; index: Expr; span: SourceSpan }
  /** `e.name` / `e->name` on something that is not `args` (refused with a message) */
  | { kind: 'member'; base: Expr; name: string; span: SourceSpan }
  | MapExpr
  | VarExpr
  | { kind: 'positional'; index: number; span: SourceSpan }
  | { kind: 'call'; name: string; nameSpan: SourceSpan; args: Expr[]; span: SourceSpan }
  | { kind: 'unary'; op: UnaryOp; operand: Expr; span: SourceSpan }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr; span: SourceSpan }
  | { kind: 'ternary'; cond: Expr; then: Expr; else: Expr; span: SourceSpan }
  /** `(uint32)e` */
  | { kind: 'cast'; type: IntTypeName; operand: Expr; span: SourceSpan };

/** Integer type names of casts. */
export const intTypeNames = {
  int8: { size: 1, signed: true },
  uint8: { size: 1, signed: false },
  int16: { size: 2, signed: true },
  uint16: { size: 2, signed: false },
  int32: { size: 4, signed: true },
  uint32: { size: 4, signed: false },
  int64: { size: 8, signed: true },
  uint64: { size: 8, signed: false },
} as const;
export type IntTypeName = keyof typeof intTypeNames;
