/**
 * Expression tree of a tracefs `print fmt:` line: the format string and the C expressions the
 * kernel stringified from `TP_printk(fmt, args...)`.
 */
export interface PrintFmt {
  /** The format string, adjacent literals concatenated and escapes decoded. */
  format: string;
  /** The arguments, one tree each. */
  args: PrintExpr[];
}

/** A C type name as written in a cast, `sizeof(...)` or a builtin argument. */
export interface CTypeName {
  /** Tokens joined by single spaces: `unsigned long`, `struct page *`, `typeof(x)`. */
  text: string;
  /** Words before the pointer stars: `["unsigned", "long"]`, `["struct", "page"]`. */
  words: string[];
  /** Number of `*` in the declarator. */
  pointerDepth: number;
  /** `typeof(expr)` / `__typeof__(expr)` operand, when the type is one. */
  typeofOperand?: PrintExpr;
}

export type PrintExpr =
  /** Integer constant; `unsigned`/`longs` from its suffix (`1UL`: unsigned, 1 long). */
  | { kind: 'number'; value: bigint; unsigned: boolean; longs: number; text: string }
  /** Floating constant (printed only, never evaluated exactly). */
  | { kind: 'float'; text: string }
  /** One or more adjacent string literals, concatenated. */
  | { kind: 'string'; value: string }
  | { kind: 'char'; value: number }
  | { kind: 'ident'; name: string }
  /** `REC->name`: a field of the record. */
  | { kind: 'field'; name: string }
  | { kind: 'member'; object: PrintExpr; name: string; arrow: boolean }
  | { kind: 'index'; object: PrintExpr; index: PrintExpr }
  | { kind: 'call'; callee: string; args: PrintExpr[] }
  /** A call through an expression that is not a plain name: `(*fn)(x)`. */
  | { kind: 'call-expr'; callee: PrintExpr; args: PrintExpr[] }
  | { kind: 'unary'; op: '-' | '+' | '!' | '~' | '*' | '&' | '++' | '--'; operand: PrintExpr }
  | { kind: 'postfix'; op: '++' | '--'; operand: PrintExpr }
  | { kind: 'binary'; op: BinaryOp; left: PrintExpr; right: PrintExpr }
  | { kind: 'assign'; op: string; left: PrintExpr; right: PrintExpr }
  | { kind: 'conditional'; test: PrintExpr; consequent: PrintExpr; alternate: PrintExpr }
  | { kind: 'comma'; expressions: PrintExpr[] }
  | { kind: 'cast'; type: CTypeName; operand: PrintExpr }
  | { kind: 'sizeof-type'; type: CTypeName }
  | { kind: 'sizeof-expr'; operand: PrintExpr }
  /** A type name standing as an argument (`__builtin_types_compatible_p(typeof(a), int)`). */
  | { kind: 'type'; type: CTypeName }
  /** `{ a, b }`: the tables of `__print_flags`/`__print_symbolic`, initializers. */
  | { kind: 'init-list'; elements: PrintExpr[] }
  /** `.name = value` or `[index] = value` inside an initializer list. */
  | { kind: 'designated'; designator: string; value: PrintExpr }
  /** GNU statement expression `({ ... })`, kept as its source text (never evaluated). */
  | { kind: 'statement-expr'; text: string }
  /** `(type){ ... }` compound literal. */
  | { kind: 'compound-literal'; type: CTypeName; init: PrintExpr };

export type BinaryOp =
  | '*' | '/' | '%' | '+' | '-' | '<<' | '>>' | '<' | '>' | '<=' | '>='
  | '==' | '!=' | '&' | '^' | '|' | '&&' | '||';
