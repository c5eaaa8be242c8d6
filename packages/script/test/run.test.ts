// Compiled scripts run through packages/runtime on records made from the 6.18 fixture formats;
// every expectation is computed by hand from the records in the row.
import { describe, expect, it } from 'vitest';
import { compileScript } from '../src/compile.js';
import { formatDiagnostics } from '../src/source-text.js';
import { type FieldValues, fixtureFormats, makeRecord, ScriptRun, type TestRecord, target618 } from './support/harness.js';

const formats = fixtureFormats('linux-6.18');
const formatOf = (event: string) => formats.find((f) => `${f.system}/${f.name}` === event)!;

/** Records of one event: each `[fields, pid]`, 1000 ns apart from t = 1000, on CPU (i % 2). */
function records(event: string, rows: [FieldValues, number?][], start = 1000): TestRecord[] {
  return rows.map(([values, pid], i) => ({ event, data: makeRecord(formatOf(event), values, pid ?? 100 + i), timestamp: start + 1000 * i, cpu: i % 2 }));
}

const comms: Record<number, string> = { 100: 'bash', 101: 'sshd', 102: 'bash', 103: 'cron', 104: 'bash', 105: 'sshd' };
const environment = { commOf: (pid: number) => comms[pid] };

async function compileAndRun(script: string, recs: TestRecord[]): Promise<ScriptRun> {
  const r = await compileScript(script, { target: target618(), name: 'test.bt' });
  if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
  return new ScriptRun(r.spec, { formats, environment }).run(recs);
}

const ids = (list: number[]) => records('raw_syscalls/sys_enter', list.map((id) => [{ id }]));

describe('maps and aggregations', () => {
  it.each([
    ['@[args.id] = count()', [0, 1, 0, 3, 0], '', [[0, 3], [1, 1], [3, 1]]],
    ['@ = count()', [5, 6, 7], '', [[undefined, 3]]],
    ['@[args.id % 2] = sum(args.id)', [1, 2, 3, 4, 5], '', [[0, 6], [1, 9]]],
    ['@ = min(args.id)', [5, 3, 9, 4], '', [[undefined, 3]]],
    ['@ = max(args.id)', [5, 3, 9, 4], '', [[undefined, 9]]],
    ['@ = min(args.id - 10)', [5, 3, 9, 4], '', [[undefined, -7]]],
    ['@ = avg(args.id)', [1, 2, 3, 5], '', [[undefined, { count: 4, total: 11 }]]],
    ['@[args.id > 2] = stats(args.id)', [1, 2, 3, 5], '', [[0, { count: 2, total: 3 }], [1, { count: 2, total: 8 }]]],
    ['@x = args.id', [7, 8, 9], '', [[undefined, 9]]],
    ['@x[args.id] = args.id * 2', [7, 8], '', [[7, 14], [8, 16]]],
    ['@x[0] += args.id; @x[1]++; @x[2]--; @x[3] -= 2', [7, 8], '', [[0, 15], [1, 2], [2, -2], [3, -4]]],
    ['@x[args.id] = 1; delete(@x[2])', [1, 2, 3], '', [[1, 1], [3, 1]]],
    ['@[args.id, args.args[0]] = count()', [1, 1, 2], '', [[{ k0: 1, k1: 0 }, 2], [{ k0: 2, k1: 0 }, 1]]],
  ] as const)('%s', async (body, list, _text, want) => {
    const run = await compileAndRun(`tracepoint:raw_syscalls:sys_enter { ${body}; }`, ids([...list]));
    const name = body.startsWith('@x') ? 'x' : '';
    expect(run.entries(name)).toEqual(want);
  });

  it('hist(): bpftrace buckets, drawn as bpftrace draws them', async () => {
    const run = await compileAndRun('tracepoint:raw_syscalls:sys_enter { @h = hist(args.id - 1); }', ids([0, 1, 2, 3, 4, 5, 100, 1025, 1 << 20]));
    // values -1, 0, 1, 2, 3, 4, 99, 1024, 2^20 - 1 → slots 0 (negative), 1 (0), 2 (1), 3 ([2,4) ×2), 4 ([4,8)), 8 ([64,128)), 12 ([1K,2K)), 21 ([512K,1M))
    expect(run.entries('h')).toEqual([[0, 1], [1, 1], [2, 1], [3, 2], [4, 1], [8, 1], [12, 1], [21, 1]]);
    expect(run.draw()).toBe(
      [
        '@h: ',
        '(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |',
        '[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |',
        '[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |',
        '[2, 4)                 2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|',
        '[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |',
        '[8, 16)                0 |                                                    |',
        '[16, 32)               0 |                                                    |',
        '[32, 64)               0 |                                                    |',
        '[64, 128)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |',
        '[128, 256)             0 |                                                    |',
        '[256, 512)             0 |                                                    |',
        '[512, 1K)              0 |                                                    |',
        '[1K, 2K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |',
        '[2K, 4K)               0 |                                                    |',
        '[4K, 8K)               0 |                                                    |',
        '[8K, 16K)              0 |                                                    |',
        '[16K, 32K)             0 |                                                    |',
        '[32K, 64K)             0 |                                                    |',
        '[64K, 128K)            0 |                                                    |',
        '[128K, 256K)           0 |                                                    |',
        '[256K, 512K)           0 |                                                    |',
        '[512K, 1M)             1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |',
        '',
        '',
      ].join('\n'),
    );
  });

  it('hist() of values past 2^32 and unsigned values past 2^63 find their power of two', async () => {
    const run = await compileAndRun('tracepoint:raw_syscalls:sys_enter { @h = hist((uint64)args.args[0]); }', records('raw_syscalls/sys_enter', [[{ args: 0 }], [{ id: 0 }]]));
    expect(run.entries('h')).toEqual([[1, 2]]);
    const big = await compileAndRun('tracepoint:raw_syscalls:sys_enter { @h = hist(args.id); @u = hist((uint64)args.id); }', ids([]).concat(records('raw_syscalls/sys_enter', [[{ id: 2n ** 40n + 5n }], [{ id: -1 }]])));
    // 2^40 + 5: slot 2 + 40; -1 as signed: slot 0; as unsigned 2^64 - 1: slot 2 + 63
    expect(big.entries('h')).toEqual([[0, 1], [42, 1]]);
    expect(big.entries('u')).toEqual([[42, 1], [65, 1]]);
  });

  it('lhist(): bpftrace buckets, below min, in range, at and above max', async () => {
    const run = await compileAndRun('tracepoint:raw_syscalls:sys_enter { @l = lhist(args.id, 10, 50, 10); }', ids([-5, 9, 10, 19, 20, 49, 50, 51, 1000]));
    // slot 0: -5, 9; 1: 10, 19; 2: 20; 4: 49; 5: 50, 51, 1000 (at and above max)
    expect(run.entries('l')).toEqual([[0, 2], [1, 2], [2, 1], [4, 1], [5, 3]]);
    expect(run.draw()).toBe(
      [
        '@l: ',
        '(..., 10)              2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@                  |',
        '[10, 20)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@                  |',
        '[20, 30)               1 |@@@@@@@@@@@@@@@@@                                   |',
        '[30, 40)               0 |                                                    |',
        '[40, 50)               1 |@@@@@@@@@@@@@@@@@                                   |',
        '[50, ...)              3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|',
        '',
        '',
      ].join('\n'),
    );
  });

  it('hist() per key: one histogram per comm', async () => {
    const run = await compileAndRun('tracepoint:raw_syscalls:sys_enter { @h[comm] = hist(args.id); }', ids([1, 2, 3, 4, 5]));
    // pids 100..104: bash 1, 3, 5; sshd 2; cron 4
    expect(run.entries('h')).toEqual([
      [{ k0: 'bash', slot: 2 }, 1],
      [{ k0: 'bash', slot: 3 }, 1],
      [{ k0: 'bash', slot: 4 }, 1],
      [{ k0: 'cron', slot: 4 }, 1],
      [{ k0: 'sshd', slot: 3 }, 1],
    ]);
  });
});

describe('predicates, expressions, variables', () => {
  it.each([
    ['/args.id == 2/ { @ = count(); }', [1, 2, 2, 3], [[undefined, 2]]],
    ['/args.id != 2 && args.id < 5/ { @ = count(); }', [1, 2, 4, 5], [[undefined, 2]]],
    ['/args.id < 2 || args.id > 4/ { @ = count(); }', [1, 2, 4, 5], [[undefined, 2]]],
    ['/!(args.id >= 2)/ { @ = count(); }', [1, 2, 0], [[undefined, 2]]],
    ['/args.id - 10 < 0/ { @ = count(); }', [1, 12, 3], [[undefined, 2]]],
    ['{ @[args.id > 3 ? 1 : 0] = count(); }', [1, 5, 6], [[0, 1], [1, 2]]],
    ['{ $x = args.id * 3; $y = $x + 1; @[$y] = count(); }', [1, 2], [[4, 1], [7, 1]]],
    ['{ $x = 0; if (args.id > 1) { $x = 10; } else if (args.id == 1) { $x = 5; } else { $x = 1; } @[$x] = count(); }', [0, 1, 2, 3], [[1, 1], [5, 1], [10, 2]]],
    ['{ @[(args.id << 4) + (args.id >> 1) - 1] = count(); }', [2], [[32, 1]]],
    ['{ @[args.id / 3, args.id % 3] = count(); }', [7], [[{ k0: 2, k1: 1 }, 1]]],
    ['{ @[(args.id & 6) | 1, args.id ^ 0xff] = count(); }', [5], [[{ k0: 5, k1: 250 }, 1]]],
    ['{ @[-args.id, ~args.id] = count(); }', [5], [[{ k0: -5, k1: -6 }, 1]]],
    ['{ @[(uint8)args.id, (int8)args.id, (uint32)args.id, (int16)args.id] = count(); }', [0x1ff80], [[{ k0: 0x80, k1: -128, k2: 0x1ff80, k3: -128 }, 1]]],
    ['{ @[1 + 2 * 3] = count(); }', [0], [[7, 1]]],
    ['{ @[args.id * 1000000 * 1000000] = count(); }', [20], [[20000000000000, 1]]],
    ['{ @[args.id * 1000000 * 1000000 * 1000] = count(); }', [20], [['20000000000000000', 1]]],
    ['{ $x = 1; $x += args.id; $x *= 2; $x++; @[$x] = count(); }', [3], [[9, 1]]],
    ['{ if (args.id > 1) { return; } @ = count(); }', [1, 2, 0], [[undefined, 2]]],
  ] as const)('%s', async (body, list, want) => {
    const run = await compileAndRun(`tracepoint:raw_syscalls:sys_enter ${body}`, ids([...list]));
    expect(run.entries('')).toEqual(want);
  });

  it('signed and unsigned comparisons follow bpftrace (signed only when both sides are)', async () => {
    // args.id is signed (long); pid is unsigned: 0 - 1 as unsigned is never below 5
    const run = await compileAndRun('tracepoint:raw_syscalls:sys_enter { @[args.id < 5, (pid - 200) < 5, args.id < 0] = count(); }', ids([-1]));
    expect(run.entries('')).toEqual([[{ k0: 1, k1: 0, k2: 1 }, 1]]);
  });

  it('reads every integer width and signedness, sign-extending signed fields', async () => {
    const switches = records('sched/sched_switch', [[{ prev_pid: -2, prev_prio: 120, prev_state: -1, next_pid: 7, next_prio: 99 }]]);
    const run = await compileAndRun('tracepoint:sched:sched_switch { @[args.prev_pid, args.prev_state, args.next_pid, args.next_prio] = count(); }', switches);
    expect(run.entries('')).toEqual([[{ k0: -2, k1: -1, k2: 7, k3: 99 }, 1]]);
    const issues = records('block/block_rq_issue', [[{ dev: 0xfffffff0, sector: 2n ** 40n, nr_sector: 8, bytes: 4096, ioprio: 0xffff }]]);
    const io = await compileAndRun('tracepoint:block:block_rq_issue { @[args.dev, args.sector, args.bytes, args.ioprio] = count(); }', issues);
    expect(io.entries('')).toEqual([[{ k0: 0xfffffff0, k1: 2 ** 40, k2: 4096, k3: 0xffff }, 1]]);
  });
});

describe('strings', () => {
  it('char arrays, __data_loc strings through str(), comm, and string comparison', async () => {
    const sw = records('sched/sched_switch', [[{ prev_comm: 'swapper/0', next_comm: 'bash' }], [{ prev_comm: 'bash', next_comm: 'kworker/u8:1' }], [{ prev_comm: 'x', next_comm: 'bash' }]]);
    const run = await compileAndRun('tracepoint:sched:sched_switch /args.next_comm == "bash"/ { @[args.prev_comm, comm] = count(); }', sw);
    expect(run.entries('')).toEqual([
      [{ k0: 'swapper/0', k1: 'bash' }, 1],
      [{ k0: 'x', k1: 'bash' }, 1],
    ]);
    const exec = records('sched/sched_process_exec', [[{ filename: '/usr/bin/ls', pid: 5 }], [{ filename: '/usr/bin/ls', pid: 6 }], [{ filename: '/bin/sh', pid: 7 }]]);
    const e = await compileAndRun('tracepoint:sched:sched_process_exec { @[str(args.filename)] = count(); @n[args.filename] = count(); @short[str(args.filename, 4)] = count(); }', exec);
    expect(e.entries('')).toEqual([['/bin/sh', 1], ['/usr/bin/ls', 2]]);
    expect(e.entries('n')).toEqual([['/bin/sh', 1], ['/usr/bin/ls', 2]]);
    expect(e.entries('short')).toEqual([['/bin', 1], ['/usr', 2]]);
  });

  it('string comparisons: == and != against literals and strings, strncmp, variables, ternaries', async () => {
    const sw = records('sched/sched_switch', [[{ prev_comm: 'bash', next_comm: 'bash' }], [{ prev_comm: 'bashful', next_comm: 'bash' }], [{ prev_comm: 'ba', next_comm: 'cron' }]]);
    const run = await compileAndRun(
      `tracepoint:sched:sched_switch {
        $p = args.prev_comm;
        @[$p == "bash", $p != "bash", args.prev_comm == args.next_comm, strncmp($p, "bash", 4), $p == "a-name-longer-than-16-bytes", args.next_comm == "bash" ? "b" : "other"] = count();
      }`,
      sw,
    );
    expect(run.entries('')).toEqual([
      [{ k0: 0, k1: 1, k2: 0, k3: 0, k4: 0, k5: 'b' }, 1],
      [{ k0: 0, k1: 1, k2: 0, k3: 1, k4: 0, k5: 'other' }, 1],
      [{ k0: 1, k1: 0, k2: 1, k3: 0, k4: 0, k5: 'b' }, 1],
    ]);
  });

  it('string values in maps and variables, copied and truncated to the destination', async () => {
    const sw = records('sched/sched_switch', [[{ next_comm: 'bash' }, 100], [{ next_comm: 'kworker/0:1' }, 101]]);
    const run = await compileAndRun('tracepoint:sched:sched_switch { @last[cpu] = args.next_comm; $s = str(args.next_comm, 3); @short[$s] = count(); @copy[cpu] = @last[cpu]; }', sw);
    expect(run.entries('last')).toEqual([[0, 'bash'], [1, 'kworker/0:1']]);
    expect(run.entries('short')).toEqual([['bas', 1], ['kwo', 1]]);
    expect(run.entries('copy')).toEqual([[0, 'bash'], [1, 'kworker/0:1']]);
  });
});

describe('builtins, printf, print, clear, exit, BEGIN, END, interval', () => {
  it('builtins answer from the record: pid, tid, cpu, nsecs, comm, probe, elapsed', async () => {
    const run = await compileAndRun('tracepoint:raw_syscalls:sys_enter { printf("%d %d %d %d %s %s %d\\n", pid, tid, cpu, nsecs, comm, probe, elapsed); }', ids([0, 0]));
    expect(run.text).toBe('100 100 0 1000 bash tracepoint:raw_syscalls:sys_enter 0\n101 101 1 2000 sshd tracepoint:raw_syscalls:sys_enter 1000\n');
  });

  it('printf formats as bpftrace (C printf over 64-bit values)', async () => {
    const run = await compileAndRun('tracepoint:raw_syscalls:sys_enter { printf("%-6s|%5d|%x|%lu|%d|%c|%%|%s\\n", comm, args.id, args.id, -1, -1, 65, "lit"); }', ids([255]));
    expect(run.text).toBe('bash  |  255|ff|18446744073709551615|-1|A|%|lit\n');
  });

  it('BEGIN, END and intervals run by trace time; print shows a map then, clear empties it, exit stops', async () => {
    const script = `BEGIN { printf("start\\n"); }
tracepoint:raw_syscalls:sys_enter { @[args.id] = count(); }
interval:us:2 { print(@); clear(@); }
END { printf("end\\n"); }`;
    // records at 1, 2, 3, 4, 5 µs: intervals due at 3 µs and 5 µs (BEGIN at 1 µs)
    const run = await compileAndRun(script, ids([1, 1, 2, 1, 2]));
    expect(run.text).toBe('start\n@[1]: 2\n@[1]: 1\n@[2]: 1\nend\n');
    expect(run.entries('')).toEqual([[2, 1]]);
    const exiting = await compileAndRun('tracepoint:raw_syscalls:sys_enter { @ = count(); if (args.id == 9) { exit(); } } END { printf("bye %d\\n", 1); }', ids([1, 9, 1, 1]));
    expect(exiting.entries('')).toEqual([[undefined, 2]]);
    expect(exiting.text).toBe('bye 1\n');
  });

  it('print(@, top, div), zero and print of values', async () => {
    const run = await compileAndRun(
      'tracepoint:raw_syscalls:sys_enter { @[args.id] = count(); } END { print(@, 2, 2); zero(@); print(@); print(7); print("s"); }',
      ids([1, 2, 2, 3, 3, 3, 3]),
    );
    expect(run.text).toBe('@[2]: 1\n@[3]: 2\n@[1]: 0\n@[2]: 0\n@[3]: 0\n7\ns\n');
  });
});
