// The libbpf-style corpus (examples/libbpf: programs built like libbpf-tools and libbpf-bootstrap,
// with this kernel's vmlinux.h and libbpf's headers) through the CLI as a user runs it: verify,
// compat and run over a recording made for it. Every expected value comes from the records as
// trace-cmd reports them (not from Probeyard's own output), and every verify verdict is compared
// with the kernel's verifier (bpftool prog loadall, as root).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readProfile } from '@probeyard/compat/node';
import { openTraceDatStream } from '@probeyard/formats/node';
import { Dispatcher, encodeEvents, loadForProfile } from '@probeyard/runtime';
import { readProgramSpec } from '@probeyard/compat';
import { describe, expect, it } from 'vitest';
import { run } from '../src/main.js';
import { bufferIo } from './support/buffer-io.js';

const corpus = join(import.meta.dirname, '../../../examples/libbpf');
const dat = join(corpus, 'recordings/libbpf-tools.dat');
const objects = ['syscount', 'execsnoop', 'bootstrap', 'opensnoop', 'ksym', 'mixed'];

function tryExec(cmd: string, args: string[]): string | undefined {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  } catch {
    return undefined;
  }
}

/** `trace-cmd report` of the recording, one parsed line a record (undefined without trace-cmd). */
interface ReportLine {
  comm: string;
  pid: number;
  ts: string;
  event: string;
  text: string;
}
const report: ReportLine[] | undefined = (() => {
  const text = tryExec('trace-cmd', ['report', '-i', dat]);
  if (text === undefined) return undefined;
  const out: ReportLine[] = [];
  for (const line of text.split('\n')) {
    const m = /^\S+:\s+(.+)-(\d+)\s+\[\d+\]\s+(\d+\.\d+): (\w+):\s+(.*)$/.exec(line);
    if (m) out.push({ comm: m[1]!, pid: Number(m[2]), ts: m[3]!, event: m[4]!, text: m[5]! });
  }
  return out;
})();
const noTraceCmd = report === undefined ? 'trace-cmd is not installed: the expected values come from its report' : undefined;
if (noTraceCmd) console.log(`skipping the record-derived checks: ${noTraceCmd}`);

const linesOf = (event: string) => report!.filter((l) => l.event === event);
const field = (text: string, name: string) => new RegExp(`(?:^|\\s)${name}=(\\S+)`).exec(text)?.[1];
/** trace-cmd's `538.357282` (µs, rounded) for a record time in ns. */
const usOf = (ns: bigint | string) => {
  const us = (BigInt(ns) + 500n) / 1000n;
  return `${us / 1_000_000n}.${(us % 1_000_000n).toString().padStart(6, '0')}`;
};

async function runJson(object: string, extra: string[] = []) {
  const io = bufferIo({ disk: true });
  const code = await run(['run', join(corpus, `${object}.bpf.o`), '--feed', dat, '--json', ...extra], io);
  expect(code, io.err).toBe(0);
  return JSON.parse(io.out);
}

async function runText(object: string, extra: string[] = []) {
  const io = bufferIo({ disk: true });
  const code = await run(['run', join(corpus, `${object}.bpf.o`), '--feed', dat, ...extra], io);
  expect(code, io.err).toBe(0);
  return io;
}

type Entry = { key: unknown; value: Record<string, unknown> };
/** The first key member (a single-member key is the value itself). */
const k0 = (e: Entry) => (Array.isArray(e.key) ? e.key[0] : e.key);
const mapOf = (json: { maps: { name: string; entries: Entry[] }[] }, name: string) => json.maps.find((m) => m.name === name)!.entries;

describe('libbpf-style corpus against the kernel verifier', () => {
  const bpffs = existsSync('/proc/mounts') && readFileSync('/proc/mounts', 'utf8').split('\n').some((l) => l.split(' ')[1] === '/sys/fs/bpf' && l.split(' ')[2] === 'bpf');
  const why =
    process.getuid?.() !== 0
      ? 'not root'
      : tryExec('bpftool', ['version']) === undefined
        ? 'bpftool is not installed'
        : !bpffs
          ? 'no BPF filesystem at /sys/fs/bpf (mount -t bpf bpf /sys/fs/bpf)'
          : undefined;
  if (why) console.log(`skipping the kernel verifier comparison: ${why}`);
  it.skipIf(why !== undefined).each(objects)('%s: verify agrees with the kernel on every tracepoint program', async (name) => {
    const object = join(corpus, `${name}.bpf.o`);
    const pin = mkdtempSync(join('/sys/fs/bpf', `probeyard-libbpf-${name}-`));
    rmSync(pin, { recursive: true });
    const load = spawnSync('bpftool', ['-d', 'prog', 'loadall', object, pin], { encoding: 'utf8' });
    const kernelAccepts = load.status === 0;
    const log = `${load.stdout}${load.stderr}`;
    rmSync(pin, { recursive: true, force: true });
    const io = bufferIo({ disk: true });
    const code = await run(['verify', object, '--json'], io);
    const json = JSON.parse(io.out);
    const results: { program: string; ok: boolean; supported?: boolean; stats?: { insnsProcessed: number } }[] = json.programs ?? [json];
    const tracepoints = results.filter((r) => r.supported !== false);
    // the kernel loads the whole object or nothing: it accepted every program, or rejected one
    expect(tracepoints.every((r) => r.ok)).toBe(kernelAccepts);
    const kernelProcessed = [...log.matchAll(/processed (\d+) insns/g)].map((m) => Number(m[1]));
    console.log(`${name}: kernel ${kernelAccepts ? 'accepts' : 'rejects'} (processed ${kernelProcessed.join(', ')}), probeyard ${tracepoints.map((r) => `${r.program} ${r.ok ? 'accepted' : 'rejected'} (${r.stats?.insnsProcessed})`).join(', ')}`);
    expect(code).toBe(results.every((r) => r.ok) ? 0 : 1);
  });

  it('mixed: the kprobe variant is not supported (said, exit 1), the tracepoint variant is verified', async () => {
    const io = bufferIo({ disk: true });
    expect(await run(['verify', join(corpus, 'mixed.bpf.o')], io)).toBe(1);
    expect(io.out).toContain('kprobe_unlinkat: not supported: section kprobe/do_unlinkat is not a tracepoint');
    expect(io.out).toContain('tp_unlinkat: accepted');
    expect(io.out).toContain('1 of 2 programs rejected or not supported');
    const one = bufferIo({ disk: true });
    expect(await run(['verify', join(corpus, 'mixed.bpf.o'), '--program', 'tp_unlinkat'], one)).toBe(0);
  });
});

describe.skipIf(noTraceCmd !== undefined)('libbpf-style corpus over its recording, against trace-cmd', () => {
  it('syscount counts what trace-cmd counts: sys_exit lines by syscall number', async () => {
    const expected = new Map<number, number>();
    for (const l of linesOf('sys_exit')) {
      const nr = Number(/^NR (-?\d+)/.exec(l.text)![1]) >>> 0; // the map's key is a u32
      expected.set(nr, (expected.get(nr) ?? 0) + 1);
    }
    expect(expected.size).toBeGreaterThan(20);
    const json = await runJson('syscount');
    const got = new Map(mapOf(json, 'data').map((e) => [Number(k0(e)), Number(e.value.count)]));
    expect(got).toEqual(expected);
    // the cgroup filter on: the cgroup array is empty here, and bpf_current_task_under_cgroup
    // answers -EAGAIN as the kernel does for an empty slot, which syscount's `!` lets through
    // text: the BTF-typed values decoded (struct data_t by member), the cgroup array and .rodata not printed
    const text = await runText('syscount');
    const [nr, count] = [...expected].sort((a, b) => b[1] - a[1])[0]!;
    expect(text.out).toContain(`@data[${nr}]: { .count = ${count}, .total_ns = 0, .max_ns = 0, .comm =  }\n`);
    expect(text.out).not.toMatch(/@cgroup_map|@\.rodata/);
    const filtered = await runJson('syscount', ['--set', 'filter_cg=true']);
    expect(new Map(mapOf(filtered, 'data').map((e) => [Number(k0(e)), Number(e.value.count)]))).toEqual(expected);
  });

  it('syscount options set at load: per process with latency, one pid, failed calls only', async () => {
    const byPid = new Map<number, number>();
    for (const l of linesOf('sys_exit')) byPid.set(l.pid, (byPid.get(l.pid) ?? 0) + 1);
    const json = await runJson('syscount', ['--set', 'count_by_process=true', '--set', 'measure_latency=true']);
    // with latency, a sys_exit counts only after its thread's sys_enter was seen
    const entered = new Set<number>();
    const expected = new Map<number, number>();
    const comms = new Map<number, string>();
    for (const l of report!) {
      if (l.event === 'sys_enter') entered.add(l.pid);
      if (l.event === 'sys_exit' && entered.has(l.pid)) {
        expected.set(l.pid, (expected.get(l.pid) ?? 0) + 1);
        comms.set(l.pid, l.comm);
      }
    }
    const rows = mapOf(json, 'data');
    expect(new Map(rows.map((e) => [Number(k0(e)), Number(e.value.count)]))).toEqual(expected);
    expect(new Map(rows.map((e) => [Number(k0(e)), e.value.comm]))).toEqual(comms);
    const pid = [...byPid.keys()][1]!;
    const one = await runJson('syscount', ['--set', `filter_pid=${pid}`, '--set', 'count_by_process=true']);
    expect(mapOf(one, 'data').map((e) => [Number(k0(e)), Number(e.value.count)])).toEqual([[pid, byPid.get(pid)]]);
    const failed = linesOf('sys_exit').filter((l) => Number(/= (-?\d+)$/.exec(l.text)![1]) < 0).length;
    const bad = await runJson('syscount', ['--set', 'filter_failed=true']);
    expect(mapOf(bad, 'data').reduce((n, e) => n + Number(e.value.count), 0)).toBe(failed);
    expect(failed).toBeGreaterThan(0);
  });

  it('execsnoop prints one perf record per exec, decoded by field name (text and JSON)', async () => {
    const execs = linesOf('sched_process_exec');
    expect(execs.length).toBe(7);
    const json = await runJson('execsnoop');
    expect(json.events.map((e: { data: Record<string, unknown> }) => [e.data.pid, e.data.old_pid, e.data.comm, e.data.filename])).toEqual(
      execs.map((l) => [Number(field(l.text, 'pid')), Number(field(l.text, 'old_pid')), l.comm, field(l.text, 'filename')]),
    );
    expect(json.events.map((e: { source: string; map: string }) => `${e.source} ${e.map}`)).toEqual(execs.map(() => 'perf events'));
    const io = await runText('execsnoop');
    const lines = io.out.split('\n').filter((l) => l.includes(' perf events: '));
    expect(lines.map((l) => l.slice(0, l.indexOf(' cpu')))).toEqual(execs.map((l) => l.ts));
    expect(lines[0]).toContain(`.pid = ${field(execs[0]!.text, 'pid')}, .old_pid = ${field(execs[0]!.text, 'old_pid')}`);
    expect(lines[0]).toContain(`.comm = ${execs[0]!.comm}, .filename = ${field(execs[0]!.text, 'filename')} }`);
    // the scratch per-CPU array and .rodata are not dumped
    expect(io.out).not.toContain('@heap');
    expect(io.out).not.toContain('.rodata');
  });

  it('bootstrap: ring-buffer records of execs and exits, durations from the records, kernel reads counted and said', async () => {
    const execs = linesOf('sched_process_exec');
    const exits = linesOf('sched_process_exit');
    const json = await runJson('bootstrap');
    expect(json.verdict.kernelMemory).toEqual(['handle_exec', 'handle_exit']);
    expect(json.verdict.reasons.map((r: { kind: string }) => r.kind)).toEqual(['kernel-memory', 'kernel-memory']);
    // struct event is not in the object's BTF (only a local's type): records come as hex, laid
    // out as bootstrap.h says: pid, ppid, exit_code, duration_ns (8-aligned), comm[16], filename[127], exit_event
    const events = json.events.map((e: { data: { hex: string }; timeNs: string }) => {
      const b = Buffer.from(e.data.hex, 'hex');
      return { ts: usOf(e.timeNs), pid: b.readInt32LE(0), ppid: b.readInt32LE(4), exitCode: b.readUInt32LE(8), durationNs: b.readBigUInt64LE(16), exit: b[167] === 1 };
    });
    const expected = [...execs.map((l) => ({ l, exit: false })), ...exits.map((l) => ({ l, exit: true }))].sort((a, b) => (a.l.ts < b.l.ts ? -1 : a.l.ts > b.l.ts ? 1 : 0));
    expect(events.map((e: { ts: string; pid: number; exit: boolean }) => [e.ts, e.pid, e.exit])).toEqual(expected.map((x) => [x.l.ts, x.l.pid, x.exit]));
    // exec-to-exit durations, from trace-cmd's µs timestamps (±1 µs of rounding)
    for (const e of events.filter((x: { exit: boolean }) => x.exit)) {
      const start = execs.find((l) => l.pid === e.pid);
      if (start === undefined) continue;
      const us = (Number(e.ts.replace('.', '')) - Number(start.ts.replace('.', ''))) as number;
      expect(Math.abs(Number(e.durationNs) / 1000 - us)).toBeLessThanOrEqual(1);
    }
    // task->real_parent->tgid and task->exit_code: kernel memory, zeros here, each read counted
    expect(events.every((e: { ppid: number; exitCode: number }) => e.ppid === 0 && e.exitCode === 0)).toBe(true);
    const counters = new Map(json.counters.map((c: { program: string; kernelReadsFailed: number }) => [c.program, c.kernelReadsFailed]));
    expect(counters).toEqual(new Map([['handle_exec', 2 * execs.length], ['handle_exit', 3 * exits.length]]));
    const io = await runText('bootstrap');
    expect(io.err).toContain('compatible, reads kernel memory (handle_exec, handle_exit) for this feed');
    expect(io.err).toContain(`handle_exec: ${2 * execs.length} reads of kernel memory failed`);
  });

  it('opensnoop: syscall_trace_enter.args[i] and syscall_trace_exit.ret relocate; one record per openat with its flags, mode and return', async () => {
    const enters = linesOf('sys_enter_openat');
    const exits = linesOf('sys_exit_openat');
    const hex = (t: string, name: string) => Number.parseInt(new RegExp(`${name}: 0x([0-9a-f]+)`).exec(t)![1]!, 16);
    const pending = new Map<number, { flags: number; mode: number }>();
    const expected: unknown[] = [];
    for (const l of report!) {
      if (l.event === 'sys_enter_openat') pending.set(l.pid, { flags: hex(l.text, 'flags') | 0, mode: hex(l.text, 'mode') });
      if (l.event === 'sys_exit_openat') {
        const a = pending.get(l.pid);
        pending.delete(l.pid);
        if (a) expected.push([l.pid, a.flags, a.mode, Number(BigInt.asIntN(32, BigInt(l.text.trim()))), l.comm]);
      }
    }
    expect(expected.length).toBe(exits.length);
    expect(enters.length).toBe(exits.length);
    const compat = bufferIo({ disk: true });
    expect(await run(['compat', join(corpus, 'opensnoop.bpf.o'), '--kernel', dat], compat)).toBe(0);
    expect(compat.out).toContain('compatible');
    expect(compat.out).not.toContain('layout-pinned');
    const json = await runJson('opensnoop');
    expect(json.events.map((e: { data: Record<string, unknown> }) => [e.data.pid, e.data.flags, e.data.mode, e.data.ret, e.data.comm])).toEqual(expected);
    // the file name is user memory: empty, and counted
    expect(json.events.every((e: { data: { fname: string } }) => e.data.fname === '')).toBe(true);
    expect(json.counters.find((c: { program: string }) => c.program === 'tracepoint__syscalls__sys_exit_openat').userReadsFailed).toBe(exits.length);
  });

  it('opensnoop on a kernel without open(2) (arm64): the open programs are skipped, the openat ones run', async () => {
    const profile = await readProfile(dat);
    profile.events.delete('syscalls/sys_enter_open');
    profile.events.delete('syscalls/sys_exit_open');
    const spec = await readProgramSpec(new Uint8Array(readFileSync(join(corpus, 'opensnoop.bpf.o'))));
    const stream = openTraceDatStream(dat);
    const out = loadForProfile(spec, profile, { cpuCount: stream.info.cpuCount, environment: { commOf: (pid) => stream.info.comm(pid) } });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.verdict.skipped).toEqual(['tracepoint__syscalls__sys_enter_open', 'tracepoint__syscalls__sys_exit_open']);
    expect(out.verdict.status).toBe('compatible');
    expect(out.loaded.programs.map((p) => p.name)).toEqual(['tracepoint__syscalls__sys_enter_openat', 'tracepoint__syscalls__sys_exit_openat']);
    const dispatcher = new Dispatcher();
    dispatcher.attach('t', out.loaded);
    await dispatcher.run(stream);
    const events = encodeEvents(out.loaded, out.loaded.outputs.take().outputs, 0, 'r').events;
    expect(events.length).toBe(linesOf('sys_exit_openat').length);
  });

  it('ksym: the weak kfunc resolves to 0 (its branch is dead), bpf_printk lines print as they come', async () => {
    const execs = linesOf('sched_process_exec');
    const io = await runText('ksym');
    const printk = io.out.split('\n').filter((l) => l.includes(' printk: '));
    expect(printk).toEqual(execs.map((l) => `${l.ts} cpu 0 printk: exec pid ${field(l.text, 'pid')} old_pid ${field(l.text, 'old_pid')}`));
    const counts = new Map<string, number>();
    for (const l of execs) counts.set(l.comm, (counts.get(l.comm) ?? 0) + 1);
    const json = await runJson('ksym');
    expect(new Map(mapOf(json, 'execs').map((e) => [k0(e), Number(e.value as unknown)]))).toEqual(counts);
    expect(mapOf(json, 'by_cgroup')).toEqual([]);
  });
});

describe('libbpf-style corpus: refusals say why', () => {
  it('a run whose feed has none of the events says no event matched', async () => {
    const io = bufferIo({ disk: true });
    const feed = join(import.meta.dirname, '../../../library/recordings/io.dat');
    expect(await run(['run', join(corpus, 'execsnoop.bpf.o'), '--feed', feed], io)).toBe(0);
    expect(io.err).toContain('no event matched: the feed has no records of sched/sched_process_exec');
  });

  it('a .rodata option that the object does not have is a usage error naming the ones it has', async () => {
    const io = bufferIo({ disk: true });
    await expect(run(['run', join(corpus, 'syscount.bpf.o'), '--feed', dat, '--set', 'pid=1'], io)).resolves.toBe(2);
    expect(io.err).toContain("rodata: no read-only variable pid (the object's: filter_cg, count_by_process, measure_latency, filter_failed, filter_errno, filter_pid");
  });

  it('compat --set: a read an option guards is dead code while the option is off, so the verdict follows the options', async () => {
    // a complete profile whose raw_syscalls/sys_exit has no `ret` (synthetic): syscount reads it
    // only under filter_failed or filter_errno (frozen .rodata, constant to the verifier)
    const dir = join(import.meta.dirname, '../../../packages/compat/test/fixtures/formats/syscalls-no-ret');
    const verdict = async (...set: string[]) => {
      const io = bufferIo({ disk: true });
      const code = await run(['compat', join(corpus, 'syscount.bpf.o'), '--kernel', dir, '--name', 'noret', '--json', ...set.flatMap((x) => ['--set', x])], io);
      const out = JSON.parse(io.out) as { verdicts: { status: string; programs: { program: string; reasons: { kind: string; text: string }[] }[] }[] };
      return { code, status: out.verdicts[0]!.status, reasons: out.verdicts[0]!.programs.flatMap((p) => p.reasons.map((r) => `${p.program} ${r.kind}`)) };
    };
    expect(await verdict()).toEqual({ code: 0, status: 'relocated', reasons: [] });
    expect(await verdict('count_by_process=true', 'measure_latency=true')).toEqual({ code: 0, status: 'relocated', reasons: [] });
    expect(await verdict('filter_failed=true')).toEqual({ code: 1, status: 'incompatible', reasons: ['sys_exit field-missing'] });
    expect(await verdict('filter_errno=2')).toEqual({ code: 1, status: 'incompatible', reasons: ['sys_exit field-missing'] });
    const io = bufferIo({ disk: true });
    await expect(run(['compat', join(corpus, 'syscount.bpf.o'), '--kernel', dir, '--set', 'pid=1'], io)).resolves.toBe(2);
    expect(io.err).toContain('rodata: no read-only variable pid');
  });
});
