import { describe, expect, it } from 'vitest';
import { target618 } from '../test/support/formats.js';
import { compileScript } from './compile.js';
import { formatDiagnostics } from './source-text.js';

const errorsOf = async (text: string) => {
  const r = await compileScript(text, { target: target618(), name: '-e', verify: false });
  if (r.ok) throw new Error(`compiled: ${text}`);
  return { text: formatDiagnostics(r.source, r.diagnostics), diagnostics: r.diagnostics };
};

describe('compile errors: line, column, a caret and a hint', () => {
  it('an unknown field names the fields the event has', async () => {
    const { text, diagnostics } = await errorsOf('tracepoint:raw_syscalls:sys_enter {\n  @[args.ids] = count();\n}');
    expect(text).toBe(
      [
        "-e:2:10: error: args.ids: raw_syscalls/sys_enter has no field 'ids'",
        '  @[args.ids] = count();',
        '         ^~~',
        'hint: did you mean id? raw_syscalls/sys_enter has the fields id, args',
        '',
      ].join('\n'),
    );
    expect(diagnostics[0]).toMatchObject({ code: 'not-found', severity: 'error', line: 2, column: 10 });
  });

  it.each([
    ['tracepoint:sched:sched_switchh { @ = count(); }', 'not-found', 1, 1, 'probe tracepoint:sched:sched_switchh: linux 6.18 fixture has no event sched/sched_switchh', 'did you mean tracepoint:sched:sched_switch, tracepoint:sched:sched_wakeup?'],
    ['kprobe:do_sys_open { @ = count(); }', 'unsupported', 1, 1, 'probe kprobe:do_sys_open: kprobe probes are not supported here', 'kprobes attach to kernel functions, which only kernel BPF can do; use a tracepoint'],
    ['tracepoint:sched:sched_switch { @[kstack] = count(); }', 'unsupported', 1, 35, 'kstack: not supported here', 'kstack needs the kernel stack of the running task; a trace record carries none'],
    ['tracepoint:sched:sched_switch { printf("%d\\n", comm); }', 'type', 1, 48, 'printf(): %d wants an integer, got string[16]', 'print strings with %s'],
    ['tracepoint:sched:sched_switch { @x = count(); @x = sum(1); }', 'type', 1, 52, '@x: assigned sum() here, count() elsewhere', 'a map holds one kind of value'],
    ['BEGIN { print(args.id); }', 'type', 1, 15, 'args: BEGIN has no event record', "args.FIELD reads a tracepoint's record"],
    ['tracepoint:sched:sched_switch {\n\t@x = @y;\n}', 'not-found', 2, 7, '@y: read but never assigned', undefined],
    ['tracepoint:sched:sched_switch { @ = cont(); }', 'not-found', 1, 37, 'cont(): unknown function', 'did you mean count?'],
    ['tracepoint:sched:sched_switch { @[pidd] = count(); }', 'not-found', 1, 35, 'pidd: unknown identifier', 'did you mean pid, gid, tid, uid? (variables are written $name, maps @name)'],
    ['tracepoint:raw_syscalls:sys_enter { @ = hist(args.args); }', 'type', 1, 46, 'args.args: an array of 6 integers', 'read one element: args.args[0]'],
    ['tracepoint:raw_syscalls:sys_enter { @ = count(); clear(@z); }', 'not-found', 1, 56, '@z: never assigned', 'assign it, e.g. @z = count()'],
    ['proc:::exec { @ = count(); }', 'not-found', 1, 1, "probe proc:::exec: no provider 'proc' is known here", 'provider probes are resolved by the registry for the kernel they run on'],
    ['interval:s:0 { exit(); }', 'syntax', 1, 1, 'probe interval:s:0: an interval is written interval:UNIT:N (UNIT s, ms, us, ns or hz; N > 0)', 'for example interval:s:1 or interval:ms:100'],
    ['BEGIN { $1 }', 'unsupported', 1, 9, '$1: positional parameters are not supported', 'write the value into the script'],
    ['BEGIN { @ = count(); }\nBEGIN { @[1] = count(); }', 'type', 2, 9, '@: used with 1 key here, with no key elsewhere', 'every use of a map needs the same keys: @'],
    ['tracepoint:raw_syscalls:sys_enter { @[str(args.args[0])] = count(); }', 'type', 1, 43, 'str(): want a string (a char array, a __data_loc string), got uint64', 'a pointer into kernel or user memory cannot be read from a recorded event'],
    ['BEGIN { @x = pid / (2 - 2); }', 'type', 1, 20, '/: division by zero', undefined],
    ['tracepoint:sched:sched_switch { @[args.common_pid] = count(); }', 'unsupported', 1, 40, 'args.common_pid: the common header of a record is not readable by BPF programs', 'the kernel refuses reads of its first 8 bytes; use pid, tid or probe instead'],
    ['tracepoint:sched:sched_switch { @ = count() }\ntracepoint:sched:sched_switch { @x = comm + 1; }', 'type', 2, 38, '+: want an integer, got string[16]', 'strings compare with == and != only'],
  ])('%j', async (script, code, line, column, message, hint) => {
    const { diagnostics } = await errorsOf(script);
    expect(diagnostics[0]).toMatchObject({ code, line, column, message });
    expect(diagnostics[0]!.hint).toBe(hint);
  });

  it('reports one error per probe and keeps going to the next probe', async () => {
    const { diagnostics } = await errorsOf('tracepoint:sched:sched_switch { @a = nope; }\ntracepoint:sched:sched_wakeup { @b = alsonope; }');
    expect(diagnostics.map((d) => [d.line, d.message])).toEqual([
      [1, 'nope: unknown identifier'],
      [2, 'alsonope: unknown identifier'],
    ]);
  });
});

describe('limits', () => {
  it('a source over maxSourceBytes is refused before parsing', async () => {
    const r = await compileScript(`BEGIN { ${'@x = 1; '.repeat(100)}}`, { maxSourceBytes: 200 });
    expect(r.ok ? undefined : r.diagnostics[0]).toMatchObject({ code: 'limit', message: 'script: 809 characters, at most 200' });
  });

  it('a statement that needs more than the 512-byte stack is a limit error at its place', async () => {
    const f = 'str(args.filename)';
    const r = await compileScript(`t:sched:sched_process_exec { @ = count();\n  printf("%s %s %s %s %s %s %s %s\\n", ${Array(8).fill(f).join(', ')}); }`, { target: target618() });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.diagnostics[0]).toMatchObject({ code: 'limit', line: 2, column: 3, message: expect.stringMatching(/^stack: this needs \d+ bytes of the 512-byte BPF stack$/) });
  });
});
