import { describe, expect, it } from 'vitest';
import { CompileAbort } from './errors.js';
import { Scanner } from './lexer.js';

const tokens = (text: string) => {
  const s = new Scanner(text);
  const out: string[] = [];
  for (let t = s.next(); t.kind !== 'eof'; t = s.next()) out.push(`${t.kind}:${t.kind === 'int' ? t.int : t.kind === 'string' ? JSON.stringify(t.str) : t.text}`);
  return out;
};

describe('Scanner', () => {
  it.each([
    ['@[args.id] = count();', ['map:', 'punct:[', 'ident:args', 'punct:.', 'ident:id', 'punct:]', 'punct:=', 'ident:count', 'punct:(', 'punct:)', 'punct:;']],
    ['@start[tid] = nsecs', ['map:start', 'punct:[', 'ident:tid', 'punct:]', 'punct:=', 'ident:nsecs']],
    ['$x <<= 3 >>= 2 -> != &&', ['var:x', 'punct:<<=', 'int:3', 'punct:>>=', 'int:2', 'punct:->', 'punct:!=', 'punct:&&']],
    ['0x10 1_000 1e3 18446744073709551615', ['int:16', 'int:1000', 'int:1000', 'int:18446744073709551615']],
    ['"a\\tb\\n\\"q\\" \\x41\\101"', ['string:"a\\tb\\n\\"q\\" AA"']],
    ['a // comment\n /* block\n */ b', ['ident:a', 'ident:b']],
    ['#!/usr/bin/env bpftrace\nBEGIN', ['ident:BEGIN']],
    ['$1 $10', ['positional:1', 'positional:10']],
  ])('%j', (text, want) => {
    expect(tokens(text)).toEqual(want);
  });

  it.each([
    ['"never closed', 0, 'syntax: this string is never closed'],
    ['a /* no end', 2, 'syntax: this comment is never closed'],
    ['18446744073709551616', 0, 'syntax: 18446744073709551616 does not fit 64 bits'],
    ['12abc', 0, "syntax: '12abc' is not a number"],
    ['a # b', 2, "syntax: unexpected character '#'"],
    ['"\\q"', 1, "syntax: unknown escape '\\q'"],
    ['$ x', 0, "syntax: '$' without a variable name"],
  ])('refuses %j at %d', (text, start, message) => {
    let err: unknown;
    try {
      tokens(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CompileAbort);
    expect((err as CompileAbort).span.start).toBe(start);
    expect((err as CompileAbort).message).toBe(message);
  });

  it.each([
    ['tracepoint:syscalls:sys_enter_* /pid/ {', 'tracepoint:syscalls:sys_enter_*'],
    ['t:sched:sched_switch{', 't:sched:sched_switch'],
    ['uprobe:/bin/bash:readline {', 'uprobe:/bin/bash:readline'],
    ['interval:s:1,END {', 'interval:s:1'],
    ['kprobe:do_sys_open+4 {', 'kprobe:do_sys_open+4'],
  ])('reads the attach point of %j', (text, want) => {
    expect(new Scanner(text).attachPoint()?.text).toBe(want);
  });
});
