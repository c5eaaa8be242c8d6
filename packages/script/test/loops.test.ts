// while, break, continue and unroll: compiled, verified (a real backward jump) and run through
// packages/runtime on records made from the 6.18 fixture formats; time() with a fixed clock. Expectations are what bpftrace
// 0.17 prints for the same scripts (checked by hand against it; the counting cases are also in
// bpftrace-differential.test.ts).
import { describe, expect, it } from 'vitest';
import { compileScript } from '../src/compile.js';
import { formatDiagnostics } from '../src/source-text.js';
import type { VmTier } from '@probeyard/vm';
import { fixtureFormats, makeRecord, ScriptRun, type TestRecord, target618 } from './support/harness.js';

const formats = fixtureFormats('linux-6.18');
const formatOf = (event: string) => formats.find((f) => `${f.system}/${f.name}` === event)!;

const ids = (list: number[]): TestRecord[] =>
  list.map((id, i) => ({ event: 'raw_syscalls/sys_enter', data: makeRecord(formatOf('raw_syscalls/sys_enter'), { id }, 100 + i), timestamp: 1000 + 1000 * i }));

/** Runs on both VM tiers; they must agree (maps drawn, text printed); returns the compiled tier's run. */
async function compileAndRun(script: string, recs: TestRecord[] = []): Promise<ScriptRun> {
  const r = await compileScript(script, { target: target618(), name: 'test.bt' });
  if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
  const runs = (['compiled', 'interpreter'] as VmTier[]).map((tier) => new ScriptRun(r.spec, { formats, tier }).run(recs));
  expect(runs[1]!.draw()).toBe(runs[0]!.draw());
  expect(runs[1]!.text).toBe(runs[0]!.text);
  return runs[0]!;
}

async function compileError(script: string): Promise<string> {
  const r = await compileScript(script, { target: target618(), name: 'test.bt' });
  if (r.ok) throw new Error('compiled');
  return formatDiagnostics(r.source, r.diagnostics);
}

describe('while', () => {
  it('counts over a scratch variable (a real backward jump, run 5 times)', async () => {
    const r = await compileScript('BEGIN { $i = 0; while ($i < 5) { @[$i] = count(); $i++; } }', { target: target618() });
    if (!r.ok) throw new Error('no');
    const code = r.spec.programs[0]!.instructions;
    const view = new DataView(code.buffer, code.byteOffset, code.byteLength);
    const backJumps = Array.from({ length: code.length / 8 }, (_, i) => i).filter((i) => code[i * 8] === 0x05 && view.getInt16(i * 8 + 2, true) < 0);
    expect(backJumps).toHaveLength(1);
    const run = new ScriptRun(r.spec, { formats }).run([]);
    expect(run.entries('')).toEqual([[0, 1], [1, 1], [2, 1], [3, 1], [4, 1]]);
  });

  it('break and continue (bpftrace prints @[1] @[2] @[4] @[5])', async () => {
    const run = await compileAndRun('BEGIN { $i = 0; while ($i < 10) { $i++; if ($i == 3) { continue; } if ($i == 6) { break; } @[$i] = count(); } }');
    expect(run.entries('')).toEqual([[1, 1], [2, 1], [4, 1], [5, 1]]);
  });

  it('nested loops, and a loop after a loop', async () => {
    const run = await compileAndRun('BEGIN { $i = 0; while ($i < 3) { $i++; @[$i] = count(); } $i = 0; while ($i < 2) { $j = 0; while ($j < 3) { @n = count(); $j++; } $i++; } }');
    expect(run.entries('')).toEqual([[1, 1], [2, 1], [3, 1]]);
    expect(run.entries('n')).toEqual([[undefined, 6]]);
  });

  it('break in the inner loop leaves only the inner loop', async () => {
    const run = await compileAndRun('BEGIN { $i = 0; while ($i < 4) { $j = 0; while (1) { if ($j == $i) { break; } @n = count(); $j++; } $i++; } }');
    // 0 + 1 + 2 + 3
    expect(run.entries('n')).toEqual([[undefined, 6]]);
  });

  it('return inside a loop leaves the probe', async () => {
    const run = await compileAndRun('BEGIN { $i = 0; while ($i < 5) { $i++; if ($i == 2) { return; } @[$i] = count(); } @done = 1; }');
    expect(run.entries('')).toEqual([[1, 1]]);
    expect(run.entries('done')).toEqual([]);
  });

  it('loops in a tracepoint probe, bounded by a value of the record', async () => {
    // per record: sum of 0..(id & 7)-1 into @s, (id & 7) iterations counted in @n
    const list = [3, 0, 7, 12, 5];
    const run = await compileAndRun('tracepoint:raw_syscalls:sys_enter { $i = 0; while ($i < (args.id & 7)) { @s = sum($i); @n[args.id] = count(); $i++; } }', ids(list));
    const want = list.map((id) => id & 7);
    expect(run.entries('s')).toEqual([[undefined, want.reduce((a, n) => a + (n * (n - 1)) / 2, 0)]]);
    expect(run.entries('n')).toEqual(list.filter((id) => (id & 7) > 0).sort((a, b) => a - b).map((id) => [id, id & 7]));
  });

  it('printf in a loop emits one line per iteration, in order', async () => {
    const run = await compileAndRun('BEGIN { $i = 0; while ($i < 3) { printf("i=%d\\n", $i); $i++; } }');
    expect(run.text).toBe('i=0\ni=1\ni=2\n');
  });
});

describe('unroll', () => {
  it('repeats its body N times (bpftrace: @: 3)', async () => {
    const run = await compileAndRun('BEGIN { unroll(3) { @ = count(); } }');
    expect(run.entries('')).toEqual([[undefined, 3]]);
  });

  it('a break in unroll leaves the enclosing while (bpftrace: @: 1)', async () => {
    const run = await compileAndRun('BEGIN { $i = 0; while ($i < 3) { $i++; unroll(2) { @ = count(); break; } } }');
    expect(run.entries('')).toEqual([[undefined, 1]]);
  });

  it('unroll(100) with a variable', async () => {
    const run = await compileAndRun('BEGIN { $i = 0; unroll(100) { $i += 2; } @ = $i; }');
    expect(run.entries('')).toEqual([[undefined, 200]]);
  });
});

describe('time()', () => {
  // the clock ScriptSession reads when it handles each time action: a local date, one second later per call
  const clock = () => {
    let n = 0;
    return () => new Date(2026, 11, 2, 17, 5, 9 + n++);
  };

  it('prints the wall time when the action is handled, in order with printf (bpftrace: %H:%M:%S\\n by default)', async () => {
    const r = await compileScript('BEGIN { printf("a\\n"); time(); time("%Y-%m-%d %j %b %a|"); printf("b\\n"); }', { target: target618() });
    if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
    const run = new ScriptRun(r.spec, { formats, now: clock() }).run([]);
    expect(run.text).toBe('a\n17:05:09\n2026-12-02 336 Dec Wed|b\n');
    expect(r.spec.script!.actions.filter((a) => a.kind === 'time')).toEqual([
      { kind: 'time', format: '%H:%M:%S\n' },
      { kind: 'time', format: '%Y-%m-%d %j %b %a|' },
    ]);
  });

  it('once per record and per loop iteration', async () => {
    const r = await compileScript('tracepoint:raw_syscalls:sys_enter { $i = 0; while ($i < 2) { time("%S "); $i++; } }', { target: target618() });
    if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
    const run = new ScriptRun(r.spec, { formats, now: clock() }).run(ids([1, 2]));
    expect(run.text).toBe('09 10 11 12 ');
  });
});

describe('errors', () => {
  it.each([
    ['BEGIN { break; }', 'test.bt:1:9: error: syntax: break used outside of a loop'],
    ['BEGIN { if (1) { continue; } }', 'test.bt:1:18: error: syntax: continue used outside of a loop'],
    ['BEGIN { unroll(2) { @ = count(); break; } }', 'test.bt:1:34: error: syntax: break used outside of a loop'],
    ['BEGIN { unroll(0) { @ = count(); } }', 'test.bt:1:9: error: syntax: unroll minimum value is 1'],
    ['BEGIN { unroll(101) { @ = count(); } }', 'test.bt:1:9: error: unroll maximum value is 100'],
    ['BEGIN { $n = 3; unroll($n) { @ = count(); } }', "test.bt:1:24: error: syntax: expected an integer literal (the count of unroll, 1 to 100), found '$n'"],
    ['BEGIN { for ($i = 0; $i < 3; $i++) { } }', "test.bt:1:9: error: unsupported: 'for' loops are not in this language"],
    ['BEGIN { while ($i < 3) { } }', 'test.bt:1:16: error: $i: used before it is assigned'],
    ['BEGIN { while (comm) { } }', 'test.bt:1:16: error: condition: want an integer, got string[16]'],
    ['BEGIN { time(1); }', 'test.bt:1:14: error: time(): the format is a string literal'],
    ['BEGIN { time("a", "b"); }', 'test.bt:1:9: error: time(): takes up to one argument (2 provided)'],
    ['BEGIN { $x = time(); }', 'test.bt:1:14: error: time(): has no value; call it as a statement'],
    ['BEGIN { time("%H %Q"); }', 'test.bt:1:14: error: time(): %Q is not a conversion time() knows; it knows %H %I %M %S %p %Y %y %m %d %e %j %b %h %B %a %A %u %w %s %z %F %T %R %D %n %t %%'],
  ])('%s', async (script, want) => {
    expect((await compileError(script)).split('\n')[0]).toBe(want);
  });

  it('a loop the verifier cannot bound is refused, naming the loop', async () => {
    const text = await compileError('BEGIN { $i = 0;\n  while ($i < 10) { @ = count(); } }');
    expect(text.split('\n')[0]).toMatch(/^test\.bt:2:3: error: while: the verifier cannot prove this loop ends \((infinite loop|BPF program is too large)/);
    expect(text).toContain('^');
  });

  it('a loop bounded only by a record value is refused as the kernel refuses it', async () => {
    // bpftrace 0.17 on pread64's args->count: the kernel says "BPF program is too large. Processed 1000001 insn"
    const text = await compileError('tracepoint:raw_syscalls:sys_enter { $i = 0; while ($i != args.id) { $i += 2; } }');
    expect(text.split('\n')[0]).toBe('test.bt:1:45: error: while: the verifier cannot prove this loop ends (BPF program is too large. Processed 1000001 insn)');
  }, 120_000);


});
