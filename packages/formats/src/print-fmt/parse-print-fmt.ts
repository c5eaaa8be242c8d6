import { FormatError } from '../errors.js';
import { decodeCEscapes, lexC, type Token, TokenKind } from './c-lexer.js';
import type { BinaryOp, CTypeName, PrintExpr, PrintFmt } from './print-fmt-tree.js';

/** Deepest expression nesting accepted; deeper input is hostile or broken. */
const maxDepth = 200;

const typeKeywords = new Set([
  'void', 'char', 'short', 'int', 'long', 'float', 'double', 'signed', 'unsigned', '_Bool', 'bool',
  'struct', 'union', 'enum', 'const', 'volatile', 'restrict', '__restrict', 'typeof', '__typeof__',
  '__typeof', '__signed__', '__unsigned__', '__volatile__', '__const',
]);

/** Typedef names the kernel uses in casts and sizeof (type-looking identifiers are also accepted). */
function isTypedefName(name: string): boolean {
  return (
    /^(__)?[us](8|16|32|64|128)$/.test(name) ||
    /^__(le|be)(16|32|64)$/.test(name) ||
    name.endsWith('_t') ||
    name === 'bool' ||
    name === 'uint' || name === 'ulong' || name === 'ushort' || name === 'uchar'
  );
}

const binaryPrecedence: Record<string, number> = {
  '||': 1, '&&': 2, '|': 3, '^': 4, '&': 5, '==': 6, '!=': 6,
  '<': 7, '>': 7, '<=': 7, '>=': 7, '<<': 8, '>>': 8, '+': 9, '-': 9, '*': 10, '/': 10, '%': 10,
};

const assignOps = new Set(['=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<=', '>>=']);

/** Parses an integer constant (`0x1fUL`, `017`, `1ULL`); undefined if the text is not one. */
export function parseIntegerLiteral(text: string): { value: bigint; unsigned: boolean; longs: number } | undefined {
  const m = /^(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)$/.exec(text);
  if (!m) return undefined;
  const suffix = m[2]!.toLowerCase();
  if (!/^(u?l{0,2}|l{1,2}u)$/.test(suffix)) return undefined;
  const digits = m[1]!;
  let value: bigint;
  if (/^0[0-7]+$/.test(digits)) value = BigInt(`0o${digits.slice(1)}`);
  else value = BigInt(digits);
  return { value, unsigned: suffix.includes('u'), longs: suffix.replace('u', '').length };
}

class Parser {
  private pos = 0;
  private depth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly source: string,
    private readonly firstLine: number,
  ) {}

  private lineAt(charOffset: number): number {
    let line = this.firstLine;
    for (let k = 0; k < charOffset && k < this.source.length; k++) if (this.source.charCodeAt(k) === 10) line++;
    return line;
  }

  fail(message: string, token: Token = this.peek()): never {
    const where = token.kind === TokenKind.End ? 'at end' : `at '${token.text}' (character ${token.charOffset})`;
    throw new FormatError('malformed', `${message} ${where}`, { line: this.lineAt(token.charOffset) });
  }

  peek(ahead = 0): Token {
    return this.tokens[Math.min(this.pos + ahead, this.tokens.length - 1)]!;
  }

  next(): Token {
    const t = this.peek();
    if (this.pos < this.tokens.length - 1) this.pos++;
    return t;
  }

  isPunct(text: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === TokenKind.Punct && t.text === text;
  }

  expect(text: string): Token {
    if (!this.isPunct(text)) this.fail(`expected '${text}'`);
    return this.next();
  }

  atEnd(): boolean {
    return this.peek().kind === TokenKind.End;
  }

  private enter(): void {
    if (++this.depth > maxDepth) this.fail(`expression nested deeper than ${maxDepth}`);
  }

  // --- types -------------------------------------------------------------------------------

  /** True when the tokens at `ahead` start a type name. */
  startsType(ahead = 0): boolean {
    const t = this.peek(ahead);
    if (t.kind !== TokenKind.Ident) return false;
    return typeKeywords.has(t.text) || isTypedefName(t.text);
  }

  /**
   * True when `( ... )` at the current `(` is a cast: a type keyword, or `(name *...)` / `(name)`
   * followed by something that can only start an operand.
   */
  looksLikeCast(): boolean {
    if (this.startsType(1)) return true;
    const t = this.peek(1);
    if (t.kind !== TokenKind.Ident) return false;
    let k = 2;
    while (this.isPunct('*', k)) k++;
    if (!this.isPunct(')', k)) return false;
    if (k > 2) return true;
    const after = this.peek(k + 1);
    return (
      after.kind === TokenKind.Ident ||
      after.kind === TokenKind.Number ||
      after.kind === TokenKind.String ||
      after.kind === TokenKind.Char ||
      (after.kind === TokenKind.Punct && (after.text === '(' || after.text === '~' || after.text === '!'))
    );
  }

  /** Skips a balanced `open ... close` group, returning its source text (with the delimiters). */
  balancedText(open: string, close: string): string {
    const start = this.expect(open);
    let level = 1;
    let last = start;
    while (level > 0) {
      if (this.atEnd()) this.fail(`unbalanced '${open}'`, start);
      last = this.next();
      if (last.kind === TokenKind.Punct) {
        if (last.text === open) level++;
        else if (last.text === close) level--;
      }
    }
    return this.source.slice(start.charOffset, last.charOffset + last.text.length);
  }

  parseTypeName(): CTypeName {
    const words: string[] = [];
    const parts: string[] = [];
    let typeofOperand: PrintExpr | undefined;
    let sawBase = false;
    for (;;) {
      const t = this.peek();
      if (t.kind !== TokenKind.Ident) break;
      if (t.text === 'typeof' || t.text === '__typeof__' || t.text === '__typeof') {
        this.next();
        this.expect('(');
        typeofOperand = this.startsType() ? { kind: 'type', type: this.parseTypeName() } : this.parseExpression();
        this.expect(')');
        parts.push(`${t.text}(...)`);
        words.push(t.text);
        sawBase = true;
        continue;
      }
      if (t.text === 'struct' || t.text === 'union' || t.text === 'enum') {
        this.next();
        words.push(t.text);
        parts.push(t.text);
        if (this.peek().kind === TokenKind.Ident) {
          const tag = this.next().text;
          words.push(tag);
          parts.push(tag);
        }
        if (this.isPunct('{')) parts.push(this.balancedText('{', '}'));
        sawBase = true;
        continue;
      }
      const isQualifierOrBase = typeKeywords.has(t.text);
      if (!isQualifierOrBase && sawBase) break;
      this.next();
      words.push(t.text);
      parts.push(t.text);
      if (!['const', 'volatile', 'restrict', '__restrict', '__volatile__', '__const'].includes(t.text)) sawBase = true;
    }
    if (words.length === 0) this.fail('expected a type name');
    let pointerDepth = 0;
    while (this.isPunct('*') || (this.peek().kind === TokenKind.Ident && (this.peek().text === 'const' || this.peek().text === 'volatile') && pointerDepth > 0)) {
      const t = this.next();
      if (t.text === '*') pointerDepth++;
      parts.push(t.text);
    }
    // Abstract array declarator `int [4]` in sizeof.
    while (this.isPunct('[')) parts.push(this.balancedText('[', ']'));
    const type: CTypeName = { text: parts.join(' '), words: words.filter((w) => !['const', 'volatile', '__const', '__volatile__'].includes(w)), pointerDepth };
    if (typeofOperand) type.typeofOperand = typeofOperand;
    return type;
  }

  // --- expressions -------------------------------------------------------------------------

  /** expression: assignment-expression (',' assignment-expression)* */
  parseExpression(): PrintExpr {
    const first = this.parseAssignment();
    if (!this.isPunct(',')) return first;
    const expressions = [first];
    while (this.isPunct(',')) {
      this.next();
      expressions.push(this.parseAssignment());
    }
    return { kind: 'comma', expressions };
  }

  parseAssignment(): PrintExpr {
    this.enter();
    try {
      const left = this.parseConditional();
      const t = this.peek();
      if (t.kind === TokenKind.Punct && assignOps.has(t.text)) {
        this.next();
        return { kind: 'assign', op: t.text, left, right: this.parseAssignment() };
      }
      return left;
    } finally {
      this.depth--;
    }
  }

  parseConditional(): PrintExpr {
    const test = this.parseBinary(1);
    if (!this.isPunct('?')) return test;
    this.next();
    this.enter();
    try {
      // GNU `a ?: b`
      const consequent = this.isPunct(':') ? test : this.parseExpression();
      this.expect(':');
      const alternate = this.parseConditional();
      return { kind: 'conditional', test, consequent, alternate };
    } finally {
      this.depth--;
    }
  }

  parseBinary(minPrecedence: number): PrintExpr {
    let left = this.parseUnary();
    for (;;) {
      const t = this.peek();
      if (t.kind !== TokenKind.Punct) return left;
      const p = binaryPrecedence[t.text];
      if (p === undefined || p < minPrecedence) return left;
      this.next();
      this.enter();
      try {
        const right = this.parseBinary(p + 1);
        left = { kind: 'binary', op: t.text as BinaryOp, left, right };
      } finally {
        this.depth--;
      }
    }
  }

  parseUnary(): PrintExpr {
    this.enter();
    try {
      const t = this.peek();
      if (t.kind === TokenKind.Punct) {
        switch (t.text) {
          case '-': case '+': case '!': case '~': case '*': case '&': case '++': case '--':
            this.next();
            return { kind: 'unary', op: t.text, operand: this.parseUnary() };
          case '(':
            if (this.isPunct('{', 1)) break; // statement expression: a primary
            if (this.looksLikeCast()) {
              this.next();
              const type = this.parseTypeName();
              this.expect(')');
              if (this.isPunct('{')) return this.parsePostfix({ kind: 'compound-literal', type, init: this.parseInitList() });
              return { kind: 'cast', type, operand: this.parseUnary() };
            }
            break;
        }
      }
      if (t.kind === TokenKind.Ident && (t.text === 'sizeof' || t.text === '__alignof__' || t.text === '_Alignof')) {
        this.next();
        if (this.isPunct('(') && (this.startsType(1) || (t.text !== 'sizeof'))) {
          this.next();
          const type = this.startsType() ? this.parseTypeName() : undefined;
          if (type) {
            this.expect(')');
            return { kind: 'sizeof-type', type };
          }
          const operand = this.parseExpression();
          this.expect(')');
          return { kind: 'sizeof-expr', operand };
        }
        return { kind: 'sizeof-expr', operand: this.parseUnary() };
      }
      return this.parsePostfix(this.parsePrimary());
    } finally {
      this.depth--;
    }
  }

  parsePostfix(expr: PrintExpr): PrintExpr {
    let e = expr;
    for (;;) {
      const t = this.peek();
      if (t.kind !== TokenKind.Punct) return e;
      if (t.text === '->' || t.text === '.') {
        this.next();
        const name = this.next();
        if (name.kind !== TokenKind.Ident) this.fail(`expected a member name after '${t.text}'`, name);
        if (t.text === '->' && e.kind === 'ident' && e.name === 'REC') e = { kind: 'field', name: name.text };
        else e = { kind: 'member', object: e, name: name.text, arrow: t.text === '->' };
      } else if (t.text === '[') {
        this.next();
        const index = this.parseExpression();
        this.expect(']');
        e = { kind: 'index', object: e, index };
      } else if (t.text === '(') {
        const args = this.parseArguments();
        e = e.kind === 'ident' ? { kind: 'call', callee: e.name, args } : { kind: 'call-expr', callee: e, args };
      } else if (t.text === '++' || t.text === '--') {
        this.next();
        e = { kind: 'postfix', op: t.text, operand: e };
      } else {
        return e;
      }
    }
  }

  parseArguments(): PrintExpr[] {
    this.expect('(');
    const args: PrintExpr[] = [];
    if (this.isPunct(')')) {
      this.next();
      return args;
    }
    for (;;) {
      args.push(this.parseArgument());
      if (this.isPunct(',')) {
        this.next();
        continue;
      }
      this.expect(')');
      return args;
    }
  }

  /** One argument of a call or initializer: an expression, an initializer list or a bare type. */
  parseArgument(): PrintExpr {
    if (this.isPunct('{')) return this.parseInitList();
    const t = this.peek().text;
    if (this.startsType() && (!this.isPunct('(', 1) || t === 'typeof' || t === '__typeof__' || t === '__typeof')) {
      const save = this.pos;
      const type = this.parseTypeName();
      if (this.isPunct(',') || this.isPunct(')')) return { kind: 'type', type };
      this.pos = save;
    }
    return this.parseAssignment();
  }

  parseInitList(): PrintExpr {
    this.enter();
    try {
      this.expect('{');
      const elements: PrintExpr[] = [];
      while (!this.isPunct('}')) {
        if (this.atEnd()) this.fail("expected '}'");
        if (this.isPunct('.') && this.peek(1).kind === TokenKind.Ident && this.isPunct('=', 2)) {
          this.next();
          const name = this.next().text;
          this.next();
          elements.push({ kind: 'designated', designator: `.${name}`, value: this.parseArgument() });
        } else if (this.isPunct('[')) {
          const text = this.balancedText('[', ']');
          this.expect('=');
          elements.push({ kind: 'designated', designator: text, value: this.parseArgument() });
        } else {
          elements.push(this.parseArgument());
        }
        if (this.isPunct(',')) this.next();
        else if (!this.isPunct('}')) this.fail("expected ',' or '}' in an initializer list");
      }
      this.next();
      return { kind: 'init-list', elements };
    } finally {
      this.depth--;
    }
  }

  parsePrimary(): PrintExpr {
    const t = this.peek();
    switch (t.kind) {
      case TokenKind.Number: {
        this.next();
        const lit = parseIntegerLiteral(t.text);
        if (lit) return { kind: 'number', ...lit, text: t.text };
        if (/^[0-9.][0-9a-zA-Z.]*$/.test(t.text)) return { kind: 'float', text: t.text };
        return this.fail('malformed number', t);
      }
      case TokenKind.String: {
        let value = '';
        while (this.peek().kind === TokenKind.String) value += this.next().value!;
        return { kind: 'string', value };
      }
      case TokenKind.Char: {
        this.next();
        return { kind: 'char', value: t.value!.length > 0 ? t.value!.charCodeAt(0) & 0xff : 0 };
      }
      case TokenKind.Ident:
        this.next();
        return { kind: 'ident', name: t.text };
      case TokenKind.Punct:
        if (t.text === '(') {
          if (this.isPunct('{', 1)) {
            const open = this.next();
            this.balancedText('{', '}');
            const close = this.expect(')');
            return { kind: 'statement-expr', text: this.source.slice(open.charOffset, close.charOffset + 1) };
          }
          this.next();
          const e = this.parseExpression();
          this.expect(')');
          return e;
        }
        if (t.text === '{') return this.parseInitList();
        return this.fail('expected an expression', t);
      default:
        return this.fail('expected an expression', t);
    }
  }
}

/**
 * Parses the text after `print fmt: ` into a {@link PrintFmt}. `firstLine` is the line of the
 * format file the text starts on (for error positions). Throws {@link FormatError} `malformed`.
 */
export function parsePrintFmt(text: string, firstLine = 1): PrintFmt {
  try {
    return parsePrintFmtStrict(text, firstLine);
  } catch (e) {
    const recovered = recoverUnescapedQuotes(text, firstLine);
    if (recovered) return recovered;
    throw e;
  }
}

/**
 * Some kernels print a format string with its inner quotes unescaped (`"warn="%s""`, from
 * `"warn=\"%s\""` in the source). Take the format to be everything up to the first `"` after which
 * the rest parses as `, args...`.
 */
function recoverUnescapedQuotes(text: string, firstLine: number): PrintFmt | undefined {
  if (!text.startsWith('"')) return undefined;
  let attempts = 0;
  for (let k = text.indexOf('"', 1); k > 0 && attempts < 16; k = text.indexOf('"', k + 1)) {
    const rest = text.slice(k + 1);
    if (!/^\s*(,|$)/.test(rest)) continue;
    attempts++;
    try {
      const tail = parsePrintFmtStrict(`""${rest}`, firstLine);
      return { format: decodeCEscapes(text.slice(1, k)), args: tail.args };
    } catch {
      // try the next quote
    }
  }
  return undefined;
}

function parsePrintFmtStrict(text: string, firstLine: number): PrintFmt {
  const tokens = lexC(text, firstLine);
  const p = new Parser(tokens, text, firstLine);
  if (p.peek().kind !== TokenKind.String) p.fail('print fmt: expected the format string');
  const head = p.parsePrimary();
  const format = head.kind === 'string' ? head.value : '';
  const args: PrintExpr[] = [];
  while (!p.atEnd()) {
    p.expect(',');
    args.push(p.parseArgument());
  }
  return { format, args };
}

/**
 * Parses a C constant expression such as an array length (`32 + 1`, `TASK_COMM_LEN`); the tree,
 * or undefined if the text is not an expression.
 */
export function parseCExpression(text: string): PrintExpr | undefined {
  try {
    const p = new Parser(lexC(text), text, 1);
    const e = p.parseExpression();
    return p.atEnd() ? e : undefined;
  } catch {
    return undefined;
  }
}
