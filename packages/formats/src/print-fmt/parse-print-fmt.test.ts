import { describe, expect, it } from 'vitest';
import { FormatError } from '../errors.js';
import { evaluateConstant } from './evaluate-constant.js';
import { parseCExpression, parseIntegerLiteral, parsePrintFmt } from './parse-print-fmt.js';
import type { PrintExpr } from './print-fmt-tree.js';

/** A compact S-expression of a tree, to compare shapes in one string. */
function show(e: PrintExpr): string {
  switch (e.kind) {
    case 'number': return e.text;
    case 'float': return e.text;
    case 'string': return JSON.stringify(e.value);
    case 'char': return `'${String.fromCharCode(e.value)}'`;
    case 'ident': return e.name;
    case 'field': return `REC->${e.name}`;
    case 'member': return `(${e.arrow ? '->' : '.'} ${show(e.object)} ${e.name})`;
    case 'index': return `([] ${show(e.object)} ${show(e.index)})`;
    case 'call': return `(${e.callee} ${e.args.map(show).join(' ')})`;
    case 'call-expr': return `(call ${show(e.callee)} ${e.args.map(show).join(' ')})`;
    case 'unary': return `(${e.op} ${show(e.operand)})`;
    case 'postfix': return `(post${e.op} ${show(e.operand)})`;
    case 'binary': return `(${e.op} ${show(e.left)} ${show(e.right)})`;
    case 'assign': return `(${e.op} ${show(e.left)} ${show(e.right)})`;
    case 'conditional': return `(? ${show(e.test)} ${show(e.consequent)} ${show(e.alternate)})`;
    case 'comma': return `(, ${e.expressions.map(show).join(' ')})`;
    case 'cast': return `(cast <${e.type.text}> ${show(e.operand)})`;
    case 'sizeof-type': return `(sizeof <${e.type.text}>)`;
    case 'sizeof-expr': return `(sizeof ${show(e.operand)})`;
    case 'type': return `<${e.type.text}>`;
    case 'init-list': return `{${e.elements.map(show).join(' ')}}`;
    case 'designated': return `(${e.designator} = ${show(e.value)})`;
    case 'statement-expr': return '({...})';
    case 'compound-literal': return `(literal <${e.type.text}> ${show(e.init)})`;
  }
}

describe('parsePrintFmt', () => {
  it.each([
    ['"a=%d", REC->a', ['REC->a']],
    ['"%d", REC->a + REC->b * 2', ['(+ REC->a (* REC->b 2))']],
    ['"%d", REC->a << 1 | 2 & 3', ['(| (<< REC->a 1) (& 2 3))']],
    ['"%s", REC->x ? "y" : "n"', ['(? REC->x "y" "n")']],
    ['"%d", a ? b : c ? d : e', ['(? a b (? c d e))']],
    ['"%d", -REC->a - -1', ['(- (- REC->a) (- 1))']],
    ['"%lx", ((unsigned long)(REC->dfd))', ['(cast <unsigned long> REC->dfd)']],
    ['"%p", (void *)REC->ip', ['(cast <void *> REC->ip)']],
    ['"%d", (int) REC->x && (int) REC->y', ['(&& (cast <int> REC->x) (cast <int> REC->y))']],
    ['"%d", (u8)REC->x', ['(cast <u8> REC->x)']],
    ['"%d", (NETDEV_UP) + 1', ['(+ NETDEV_UP 1)']],
    ['"%d", (gfp_flags_t)x', ['(cast <gfp_flags_t> x)']],
    ['"%d", sizeof(u64), sizeof(REC->a), sizeof REC->b', ['(sizeof <u64>)', '(sizeof REC->a)', '(sizeof REC->b)']],
    ['"%s", __get_str(name)', ['(__get_str name)']],
    ['"%s", __print_flags(REC->f, "|", { 1, "A" }, { 2, "B" })', ['(__print_flags REC->f "|" {1 "A"} {2 "B"})']],
    ['"%s", __print_array(__get_dynamic_array(x), __get_dynamic_array_len(x) / sizeof(u64), sizeof(u64))',
      ['(__print_array (__get_dynamic_array x) (/ (__get_dynamic_array_len x) (sizeof <u64>)) (sizeof <u64>))']],
    ['"%lx", REC->caller[0]', ['([] REC->caller 0)']],
    ['"%d", ((ktime_t) { .tv64 = REC->t }).tv64', ['(. (literal <ktime_t> {(.tv64 = REC->t)}) tv64)']],
    ['"%s" "%d" "x", a, b', ['a', 'b']],
    ['"%d", ({ int x = 1; x; })', ['({...})']],
    ['"%d", __builtin_types_compatible_p(typeof(a), typeof(&(a)[0]))', ['(__builtin_types_compatible_p <typeof(...)> <typeof(...)>)']],
    ['"%d", sizeof(struct { int:(-!!(0)); })', ['(sizeof <struct { int:(-!!(0)); }>)']],
    ['"%d", REC->next->id', ['(-> REC->next id)']],
    ['"%d", x ?: y', ['(? x x y)']],
    ['"%c", \'*\'', ["'*'"]],
  ])('%s', (text, args) => {
    expect(parsePrintFmt(text).args.map(show)).toEqual(args);
  });

  it('concatenates adjacent strings and decodes escapes in the format', () => {
    expect(parsePrintFmt('"\\t=> %ps\\n" "next"').format).toBe('\t=> %ps\nnext');
  });

  it('parses the 6.18 sched_switch print fmt into a tree with the kernel flag table', () => {
    const text = '"prev_state=%s%s", (REC->prev_state & ((((0x00000000 | 0x00000001) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001) + 1) << 1) - 1), "|", { 0x00000001, "S" }, { 0x00000080, "I" }) : "R", REC->prev_state & (((0x00000000 | 0x00000001) + 1) << 1) ? "+" : ""';
    const fmt = parsePrintFmt(text);
    expect(fmt.args).toHaveLength(2);
    expect(fmt.args[0]!.kind).toBe('conditional');
  });

  it.each([
    ['"unterminated', /unterminated string literal/],
    ['"%d", (a', /expected '\)'/],
    ['"%d", a b', /expected ','/],
    ['REC->x', /expected the format string/],
    ['"%d", @', /unexpected character '@'/],
  ])('rejects %s', (text, message) => {
    expect(() => parsePrintFmt(text, 12)).toThrow(message);
    try {
      parsePrintFmt(text, 12);
    } catch (e) {
      expect(e).toBeInstanceOf(FormatError);
      expect((e as FormatError).line).toBe(12);
      expect((e as FormatError).code).toBe('malformed');
    }
  });

  it('refuses nesting deeper than 200 instead of overflowing the stack', () => {
    const text = `"%d", ${'('.repeat(5000)}1${')'.repeat(5000)}`;
    expect(() => parsePrintFmt(text)).toThrow(/nested deeper than 200/);
  });
});

describe('integer constants and constant expressions', () => {
  it.each([
    ['0', 0n, false, 0],
    ['017', 15n, false, 0],
    ['0x1fUL', 31n, true, 1],
    ['1ULL', 1n, true, 2],
    ['18446744073709551615ULL', 18446744073709551615n, true, 2],
    ['10lu', 10n, true, 1],
  ])('%s', (text, value, unsigned, longs) => {
    expect(parseIntegerLiteral(text)).toEqual({ value, unsigned, longs });
  });

  it.each([
    ['32 + 1', 33n],
    ['(4 * sizeof(u64)) / sizeof(u64)', 4n],
    ['((((((32)-1) | ((__typeof__(32))((4)-1)))+1)/4) > 128 ? 128 : (((((32)-1) | ((__typeof__(32))((4)-1)))+1)/4))', 8n],
    ['-1UL', 18446744073709551615n],
    ['(1U << 20) - 1', 1048575n],
    ['~0', -1n],
    ['(unsigned char)300', 44n],
    ['1 ? 2 : 3', 2n],
    ['TASK_COMM_LEN', undefined],
    ['sizeof(struct sockaddr_in6)', undefined],
  ])('%s = %s', (text, value) => {
    expect(evaluateConstant(parseCExpression(text)!, 8)).toBe(value);
  });

  it('sizeof(long) follows the kernel long size', () => {
    expect(evaluateConstant(parseCExpression('sizeof(long)')!, 4)).toBe(4n);
    expect(evaluateConstant(parseCExpression('sizeof(unsigned long)')!, 8)).toBe(8n);
  });
});
