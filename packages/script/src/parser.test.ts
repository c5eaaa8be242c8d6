import { describe, expect, it } from 'vitest';
import type { Expr, Stmt } from './ast.js';
import { CompileAbort } from './errors.js';
import { parseExpression, parseScript } from './parser.js';

/** An expression as compact text: (op a b), @m[k], $x, call(args). */
function show(e: Expr): string {
  switch (e.kind) {
    case 'int':
      return String(e.value);
    case 'string':
      return JSON.stringify(e.value);
    case 'ident':
      return e.name;
    case 'field':
      return `args.${e.field}`;
    case 'index':
      return `${show(e.base)}[${show(e.index)}]`;
    case 'member':
      return `${show(e.base)}.${e.name}`;
    case 'map':
      return `@${e.name}${e.keys.length ? `[${e.keys.map(show).join(', ')}]` : ''}`;
    case 'var':
      return `$${e.name}`;
    case 'positional':
      return `$${e.index}`;
    case 'call':
      return `${e.name}(${e.args.map(show).join(', ')})`;
    case 'unary':
      return `(${e.op} ${show(e.operand)})`;
    case 'binary':
      return `(${e.op} ${show(e.left)} ${show(e.right)})`;
    case 'ternary':
      return `(? ${show(e.cond)} ${show(e.then)} ${show(e.else)})`;
    case 'cast':
      return `(${e.type})${show(e.operand)}`;
  }
}

function showStmt(s: Stmt): string {
  switch (s.kind) {
    case 'expr':
      return show(s.expr);
    case 'map-assign':
      return `${show(s.map)} ${s.op} ${show(s.value)}`;
    case 'var-assign':
      return `$${s.name} ${s.op} ${show(s.value)}`;
    case 'incdec':
      return `${show(s.target)}${s.delta > 0 ? '++' : '--'}`;
    case 'if':
      return `if ${show(s.cond)} {${s.then.map(showStmt).join('; ')}}${s.else ? ` else {${s.else.map(showStmt).join('; ')}}` : ''}`;
    case 'block':
      return `{${s.body.map(showStmt).join('; ')}}`;
    case 'return':
    case 'break':
    case 'continue':
      return s.kind;
    case 'while':
      return `while ${show(s.cond)} {${s.body.map(showStmt).join('; ')}}`;
    case 'unroll':
      return `unroll ${s.count} {${s.body.map(showStmt).join('; ')}}`;
  }
}

describe('parseExpression', () => {
  it.each([
    ['1 + 2 * 3', '(+ 1 (* 2 3))'],
    ['(1 + 2) * 3', '(* (+ 1 2) 3)'],
    ['a || b && c | d ^ e & f', '(|| a (&& b (| c (^ d (& e f)))))'],
    ['x == 1 < 2', '(== x (< 1 2))'],
    ['1 << 2 + 3', '(<< 1 (+ 2 3))'],
    ['-x * !y', '(* (- x) (! y))'],
    ['a ? b : c ? d : e', '(? a b (? c d e))'],
    ['args.id', 'args.id'],
    ['args->filename', 'args.filename'],
    ['args.args[2]', 'args.args[2]'],
    ['@m[pid, comm]', '@m[pid, comm]'],
    ['@', '@'],
    ['str(args.filename, 10)', 'str(args.filename, 10)'],
    ['(uint8)$x + 1', '(+ (uint8)$x 1)'],
    ['(pid)', 'pid'],
    ['curtask.pid', 'curtask.pid'],
  ])('%s', (text, want) => {
    expect(show(parseExpression(text))).toBe(want);
  });
});

describe('parseScript', () => {
  it('reads probes, attach points, predicates and statements with their places', () => {
    const text = 'tracepoint:syscalls:sys_enter_read, t:syscalls:sys_enter_write /pid != 1/ { @[probe] = count(); $x = 1; $x += 2; @y++ }';
    const ast = parseScript(text);
    expect(ast.probes).toHaveLength(1);
    const p = ast.probes[0]!;
    expect(p.attachPoints.map((a) => [a.text, text.slice(a.span.start, a.span.end)])).toEqual([
      ['tracepoint:syscalls:sys_enter_read', 'tracepoint:syscalls:sys_enter_read'],
      ['t:syscalls:sys_enter_write', 't:syscalls:sys_enter_write'],
    ]);
    expect(show(p.predicate!)).toBe('(!= pid 1)');
    expect(p.body.map(showStmt)).toEqual(['@[probe] = count()', '$x = 1', '$x += 2', '@y++']);
    const m = p.body[0] as Extract<Stmt, { kind: 'map-assign' }>;
    expect(text.slice(m.span.start, m.span.end)).toBe('@[probe] = count()');
  });

  it('a predicate ends at the / before {, and division inside it still works', () => {
    const ast = parseScript('t:a:b /args.x / 2 > 1/ { exit(); }\nBEGIN{ }');
    expect(show(ast.probes[0]!.predicate!)).toBe('(> (/ args.x 2) 1)');
    expect(ast.probes[1]!.attachPoints[0]!.text).toBe('BEGIN');
  });

  it('reads if / else if / else, blocks, return and empty statements', () => {
    const ast = parseScript('BEGIN { if (1) { @a = 1 } else if (2) { @b = 2; } else { return; };; { @c = 3 } }');
    expect(ast.probes[0]!.body.map(showStmt)).toEqual(['if 1 {@a = 1} else {if 2 {@b = 2} else {return}}', '{@c = 3}']);
  });

  it('reads while with break and continue, and unroll', () => {
    const text = 'BEGIN { $i = 0; while ($i < 5) { if ($i == 2) { continue; } unroll(2) { @[$i] = count(); break; } $i++ } }';
    const body = parseScript(text).probes[0]!.body;
    expect(body.map(showStmt)).toEqual(['$i = 0', 'while (< $i 5) {if (== $i 2) {continue}; unroll 2 {@[$i] = count(); break}; $i++}']);
    expect(text.slice(body[1]!.span.start, body[1]!.span.end)).toBe(text.slice(16, -2));
  });

  it.each([
    ['', 0, 'syntax: the script has no probe'],
    ['BEGIN { @x = 1', 14, "syntax: expected ';' or '}', found the end of the script"],
    ['BEGIN { @x = ; }', 13, 'syntax: expected an expression, found \';\''],
    ['BEGIN @x = 1; }', 6, "syntax: expected '{' or a predicate /…/, found '@x'"],
    ['BEGIN { 1 = 2; }', 8, 'syntax: only a map (@name[…]) or a variable ($name) can be assigned'],
    ['BEGIN { @x[] = 1; }', 8, 'syntax: @x[] has no key'],
    ['BEGIN { for (;;) { } }', 8, "unsupported: 'for' loops are not in this language"],
    ['BEGIN { continue; }', 8, 'syntax: continue used outside of a loop'],
    ['BEGIN { while (1) { } break; }', 22, 'syntax: break used outside of a loop'],
    ['BEGIN { while 1 { } }', 14, "syntax: expected '(', found '1'"],
    ['BEGIN { while (1) @x = 1; }', 18, "syntax: expected '{' (the body of while is a block), found '@x'"],
    ['BEGIN { unroll(101) { } }', 8, 'unroll maximum value is 100'],
    ['BEGIN { unroll(0x0) { } }', 8, 'syntax: unroll minimum value is 1'],
    ['BEGIN { $x = *$y; }', 13, "unsupported: '*' (dereference) reads kernel memory, which a recorded event does not carry"],
    ['BEGIN { if 1 { } }', 11, "syntax: expected '(', found '1'"],
    ['BEGIN { $x = 1 ? 2; }', 18, "syntax: expected ':', found ';'"],
    ['{ }', 0, "syntax: expected a probe (tracepoint:SYSTEM:EVENT, BEGIN, END, interval:s:N), found '{'"],
  ])('%j fails at %d: %s', (text, start, message) => {
    let err: unknown;
    try {
      parseScript(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CompileAbort);
    expect((err as CompileAbort).message).toBe(message);
    expect((err as CompileAbort).span.start).toBe(start);
  });
});
