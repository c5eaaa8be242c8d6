import type { AssignOp, AttachPointNode, BinaryOp, Expr, IntTypeName, MapExpr, ProbeNode, ScriptAst, Stmt, VarExpr } from './ast.js';
import { intTypeNames } from './ast.js';
import { fail, type SourceSpan } from './errors.js';
import { Scanner, type Token } from './lexer.js';

const assignOps = new Set<string>(['=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<=', '>>=']);

/** Binary operators by precedence level, loosest first (C's table). */
const levels: BinaryOp[][] = [['||'], ['&&'], ['|'], ['^'], ['&'], ['==', '!='], ['<', '<=', '>', '>='], ['<<', '>>'], ['+', '-'], ['*', '/', '%']];

const describe = (t: Token) => (t.kind === 'eof' ? 'the end of the script' : t.kind === 'string' ? `string ${t.text}` : `'${t.kind === 'map' ? `@${t.text}` : t.kind === 'var' ? `$${t.text}` : t.text}'`);

/**
 * Parses a script into its syntax tree; a syntax error fails with its place (see
 * {@link CompileAbort}). `parseExpression` parses one expression (provider argument texts).
 */
export class Parser {
  private readonly s: Scanner;
  private tok: Token;
  private inPredicate = false;

  constructor(readonly text: string) {
    this.s = new Scanner(text);
    this.tok = { kind: 'eof', text: '', start: 0, end: 0 };
  }

  parseScript(): ScriptAst {
    const probes: ProbeNode[] = [];
    for (;;) {
      this.s.skipSpace();
      if (this.s.pos >= this.text.length) break;
      probes.push(this.probe());
    }
    if (probes.length === 0) fail('syntax', { start: 0, end: this.text.length }, 'syntax: the script has no probe', 'write at least one probe, e.g. tracepoint:raw_syscalls:sys_enter { @[args.id] = count(); }');
    return { probes };
  }

  parseExpression(): Expr {
    this.advance();
    const e = this.expr();
    if (this.tok.kind !== 'eof') this.unexpected('the end of the expression');
    return e;
  }

  private advance(): Token {
    const prev = this.tok;
    this.tok = this.s.next();
    return prev;
  }

  private unexpected(wanted: string): never {
    const t = this.tok;
    fail('syntax', { start: t.start, end: Math.max(t.end, t.start + 1) }, `syntax: expected ${wanted}, found ${describe(t)}`);
  }

  private isWord(text: string): boolean {
    return this.tok.kind === 'ident' && this.tok.text === text;
  }

  private isPunct(text: string): boolean {
    return this.tok.kind === 'punct' && this.tok.text === text;
  }

  private expect(text: string, hint?: string): Token {
    if (!this.isPunct(text)) {
      const t = this.tok;
      fail('syntax', { start: t.start, end: Math.max(t.end, t.start + 1) }, `syntax: expected '${text}', found ${describe(t)}`, hint);
    }
    return this.advance();
  }

  private probe(): ProbeNode {
    const start = this.s.pos;
    const attachPoints: AttachPointNode[] = [];
    for (;;) {
      const a = this.s.attachPoint();
      if (a === undefined) {
        this.advance();
        this.unexpected('a probe (tracepoint:SYSTEM:EVENT, BEGIN, END, interval:s:N)');
      }
      attachPoints.push({ text: a.text, span: { start: a.start, end: a.end } });
      this.s.skipSpace();
      if (this.text[this.s.pos] === ',') {
        this.s.pos++;
        continue;
      }
      break;
    }
    this.advance();
    let predicate: Expr | undefined;
    if (this.isPunct('/')) {
      this.advance();
      this.inPredicate = true;
      predicate = this.expr();
      this.inPredicate = false;
      this.expect('/', 'a predicate is written /expression/ before the {');
    }
    if (!this.isPunct('{')) this.unexpected(predicate === undefined ? "'{' or a predicate /…/" : "'{'");
    const body = this.block();
    // the token after `}` was read as an ordinary token; the next probe's attach point is read again from there
    this.s.pos = this.lastEnd;
    return { attachPoints, predicate, body, span: { start, end: this.lastEnd } };
  }

  private lastEnd = 0;

  /** `{ stmt; stmt; … }` with the current token at `{`; leaves the token after `}`. */
  private block(): Stmt[] {
    this.expect('{');
    const body: Stmt[] = [];
    for (;;) {
      while (this.isPunct(';')) this.advance();
      if (this.isPunct('}')) break;
      if (this.tok.kind === 'eof') this.unexpected("'}'");
      const stmt = this.statement();
      body.push(stmt);
      if (stmt.kind === 'if' || stmt.kind === 'block' || stmt.kind === 'while' || stmt.kind === 'unroll') continue;
      if (this.isPunct(';')) this.advance();
      else if (!this.isPunct('}')) this.unexpected("';' or '}'");
    }
    this.lastEnd = this.tok.end;
    this.advance();
    return body;
  }

  private statement(): Stmt {
    const t = this.tok;
    if (t.kind === 'ident') {
      if (t.text === 'if') return this.ifStatement();
      if (t.text === 'return') {
        this.advance();
        return { kind: 'return', span: { start: t.start, end: t.end } };
      }
      if (t.text === 'while') return this.whileStatement();
      if (t.text === 'unroll') return this.unrollStatement();
      if (t.text === 'break' || t.text === 'continue') {
        this.advance();
        if (this.loopDepth === 0) fail('syntax', { start: t.start, end: t.end }, `syntax: ${t.text} used outside of a loop`, `${t.text} belongs in the body of a while loop`);
        return { kind: t.text, span: { start: t.start, end: t.end } };
      }
      if (t.text === 'for') {
        fail('unsupported', { start: t.start, end: t.end }, "unsupported: 'for' loops are not in this language", 'write a while loop: $i = 0; while ($i < N) { …; $i++; }');
      }
    }
    if (this.isPunct('{')) {
      const body = this.block();
      return { kind: 'block', body, span: { start: t.start, end: this.lastEnd } };
    }
    if (this.isPunct('++') || this.isPunct('--')) {
      const op = this.advance();
      const target = this.postfix();
      if (target.kind !== 'map' && target.kind !== 'var') fail('syntax', target.span, `syntax: ${op.text} needs a map or a variable`);
      return { kind: 'incdec', target, delta: op.text === '++' ? 1 : -1, span: { start: t.start, end: target.span.end } };
    }
    const expr = this.expr();
    if (this.tok.kind === 'punct' && (this.tok.text === '++' || this.tok.text === '--')) {
      const op = this.advance();
      if (expr.kind !== 'map' && expr.kind !== 'var') fail('syntax', expr.span, `syntax: ${op.text} needs a map or a variable`);
      return { kind: 'incdec', target: expr, delta: op.text === '++' ? 1 : -1, span: { start: expr.span.start, end: op.end } };
    }
    if (this.tok.kind === 'punct' && assignOps.has(this.tok.text)) {
      const op = this.advance().text as AssignOp;
      const value = this.expr();
      const span = { start: expr.span.start, end: value.span.end };
      if (expr.kind === 'map') return { kind: 'map-assign', map: expr, op, value, span };
      if (expr.kind === 'var') return { kind: 'var-assign', name: expr.name, nameSpan: expr.span, op, value, span };
      fail('syntax', expr.span, 'syntax: only a map (@name[…]) or a variable ($name) can be assigned');
    }
    return { kind: 'expr', expr, span: expr.span };
  }

  /** How many `while` bodies enclose the statement being parsed (`break`/`continue` need one). */
  private loopDepth = 0;

  private whileStatement(): Stmt {
    const start = this.advance().start;
    this.expect('(', 'while needs a condition in parentheses: while (cond) { … }');
    const cond = this.expr();
    this.expect(')');
    if (!this.isPunct('{')) this.unexpected("'{' (the body of while is a block)");
    this.loopDepth++;
    const body = this.block();
    this.loopDepth--;
    return { kind: 'while', cond, body, span: { start, end: this.lastEnd } };
  }

  /** `unroll(N) { … }`: N an integer literal from 1 to 100 (as bpftrace). A `break` in it belongs to an enclosing while. */
  private unrollStatement(): Stmt {
    const start = this.advance().start;
    this.expect('(', 'unroll needs a count in parentheses: unroll(N) { … }');
    const n = this.tok;
    if (n.kind !== 'int') this.unexpected('an integer literal (the count of unroll, 1 to 100)');
    this.advance();
    const close = this.expect(')');
    const head = { start, end: close.end };
    if (n.int! < 1n) fail('syntax', head, 'syntax: unroll minimum value is 1');
    if (n.int! > 100n) fail('limit', head, 'unroll maximum value is 100', 'write a while loop for more iterations');
    if (!this.isPunct('{')) this.unexpected("'{' (the body of unroll is a block)");
    // unroll is no loop for break and continue: in its body they leave an enclosing while (as in bpftrace)
    const body = this.block();
    return { kind: 'unroll', count: Number(n.int!), body, span: { start, end: this.lastEnd } };
  }

  private ifStatement(): Stmt {
    const start = this.advance().start;
    this.expect('(', 'if needs a condition in parentheses: if (cond) { … }');
    const cond = this.expr();
    this.expect(')');
    if (!this.isPunct('{')) this.unexpected("'{' (the body of if is a block)");
    const then = this.block();
    let elseBody: Stmt[] | undefined;
    if (this.isWord('else')) {
      this.advance();
      if (this.isWord('if')) elseBody = [this.ifStatement()];
      else {
        if (!this.isPunct('{')) this.unexpected("'{' or 'if' after else");
        elseBody = this.block();
      }
    }
    return { kind: 'if', cond, then, else: elseBody, span: { start, end: this.lastEnd } };
  }

  private expr(): Expr {
    const cond = this.binary(0);
    if (!this.isPunct('?')) return cond;
    this.advance();
    const then = this.expr();
    this.expect(':', "a conditional is written cond ? a : b");
    const otherwise = this.expr();
    return { kind: 'ternary', cond, then, else: otherwise, span: { start: cond.span.start, end: otherwise.span.end } };
  }

  /** True when the `/` at hand closes a predicate (it is followed by `{`). */
  private closesPredicate(): boolean {
    if (!this.inPredicate || !this.isPunct('/')) return false;
    return this.s.peek().kind === 'punct' && this.s.peek().text === '{';
  }

  private binary(level: number): Expr {
    if (level >= levels.length) return this.unary();
    let left = this.binary(level + 1);
    const ops = levels[level]!;
    while (this.tok.kind === 'punct' && (ops as string[]).includes(this.tok.text) && !this.closesPredicate()) {
      const op = this.advance().text as BinaryOp;
      const right = this.binary(level + 1);
      left = { kind: 'binary', op, left, right, span: { start: left.span.start, end: right.span.end } };
    }
    return left;
  }

  private unary(): Expr {
    const t = this.tok;
    if (t.kind === 'punct' && (t.text === '!' || t.text === '~' || t.text === '-')) {
      this.advance();
      const operand = this.unary();
      return { kind: 'unary', op: t.text, operand, span: { start: t.start, end: operand.span.end } };
    }
    if (t.kind === 'punct' && (t.text === '*' || t.text === '&')) {
      fail('unsupported', { start: t.start, end: t.end }, `unsupported: '${t.text}' (${t.text === '*' ? 'dereference' : 'address-of'}) reads kernel memory, which a recorded event does not carry`, 'read the event through args.FIELD');
    }
    if (t.kind === 'punct' && (t.text === '++' || t.text === '--')) {
      fail('syntax', { start: t.start, end: t.end }, `syntax: ${t.text} is a statement here, not part of an expression`, `write it on its own: ${t.text}@x;`);
    }
    if (this.isPunct('(')) {
      const next = this.s.peek();
      if (next.kind === 'ident' && Object.hasOwn(intTypeNames, next.text)) {
        const save = this.s.pos;
        this.advance();
        const typeTok = this.advance();
        if (this.isPunct(')')) {
          this.advance();
          const operand = this.unary();
          return { kind: 'cast', type: typeTok.text as IntTypeName, operand, span: { start: t.start, end: operand.span.end } };
        }
        // not a cast: `(uint32 + 1)` cannot happen (a type name is no value); report plainly
        this.s.pos = save;
        this.tok = t;
      }
    }
    return this.postfix();
  }

  private postfix(): Expr {
    let e = this.primary();
    for (;;) {
      if (this.isPunct('.') || this.isPunct('->')) {
        const op = this.advance();
        if (this.tok.kind !== 'ident') this.unexpected(`a field name after '${op.text}'`);
        const name = this.advance();
        const span = { start: e.span.start, end: name.end };
        if (e.kind === 'ident' && e.name === 'args') e = { kind: 'field', field: name.text, fieldSpan: { start: name.start, end: name.end }, span };
        else e = { kind: 'member', base: e, name: name.text, span };
        continue;
      }
      if (this.isPunct('[') && e.kind !== 'map') {
        this.advance();
        const index = this.expr();
        const close = this.expect(']');
        e = { kind: 'index', base: e, index, span: { start: e.span.start, end: close.end } };
        continue;
      }
      return e;
    }
  }

  private primary(): Expr {
    const t = this.tok;
    const span: SourceSpan = { start: t.start, end: t.end };
    switch (t.kind) {
      case 'int':
        this.advance();
        return { kind: 'int', value: t.int!, span };
      case 'string':
        this.advance();
        return { kind: 'string', value: t.str!, span };
      case 'positional':
        this.advance();
        return { kind: 'positional', index: Number(t.text), span };
      case 'var': {
        this.advance();
        return { kind: 'var', name: t.text, span } satisfies VarExpr;
      }
      case 'map': {
        this.advance();
        const keys: Expr[] = [];
        let end = t.end;
        if (this.isPunct('[')) {
          this.advance();
          if (this.isPunct(']')) fail('syntax', { start: t.start, end: this.tok.end }, `syntax: @${t.text}[] has no key`, `write @${t.text} for a map without a key`);
          for (;;) {
            keys.push(this.expr());
            if (this.isPunct(',')) {
              this.advance();
              continue;
            }
            break;
          }
          end = this.expect(']').end;
        }
        return { kind: 'map', name: t.text, keys, span: { start: t.start, end }, nameSpan: span } satisfies MapExpr;
      }
      case 'ident': {
        this.advance();
        if (this.isPunct('(')) {
          this.advance();
          const args: Expr[] = [];
          if (!this.isPunct(')')) {
            for (;;) {
              args.push(this.expr());
              if (this.isPunct(',')) {
                this.advance();
                continue;
              }
              break;
            }
          }
          const close = this.expect(')');
          return { kind: 'call', name: t.text, nameSpan: span, args, span: { start: t.start, end: close.end } };
        }
        return { kind: 'ident', name: t.text, span };
      }
      case 'punct':
        if (t.text === '(') {
          this.advance();
          const saved = this.inPredicate;
          this.inPredicate = false;
          const e = this.expr();
          this.inPredicate = saved;
          const close = this.expect(')');
          // keep the parentheses in the span so carets cover what was written
          return { ...e, span: { start: t.start, end: close.end } } as Expr;
        }
        return this.unexpected('an expression');
      default:
        return this.unexpected('an expression');
    }
  }
}

/** Parses a whole script. */
export function parseScript(text: string): ScriptAst {
  return new Parser(text).parseScript();
}

/** Parses one expression (a provider's argument text). */
export function parseExpression(text: string): Expr {
  return new Parser(text).parseExpression();
}
