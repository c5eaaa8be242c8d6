// The live tracefs feed, for real: needs root and a kernel with tracefs. Skips with the reason
// printed otherwise.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findTracefs, openTracefsStream, processStartTime, removeStaleInstances, unmountTracefs } from '../src/node/tracefs-live.js';
import { readFieldNumber, readFieldString } from '../src/event-format/field-read.js';
import type { EventFormat } from '../src/event-format/event-format.js';
import type { TraceRecord } from '../src/ring-buffer/trace-record.js';

const isRoot = process.getuid?.() === 0;
const mount = isRoot ? findTracefs({ mount: true }) : undefined;
const skipReason = !isRoot ? 'not root' : !mount ? 'tracefs is not mounted and cannot be mounted' : undefined;
if (skipReason) console.log(`tracefs live tests skipped: ${skipReason}`);
afterAll(() => {
  if (mount) unmountTracefs(mount);
});

// /proc/<tid> exists for every live thread (not only the ones readdir lists).
const existed = new Map<number, boolean>();
function checkPid(pid: number): void {
  if (pid !== 0 && !existed.has(pid)) existed.set(pid, existsSync(`/proc/${pid}`));
}

describe.runIf(skipReason === undefined)('live tracefs feed (root)', () => {
  it('reads sched_switch records of real processes from a private instance and removes it', async () => {
    const stream = openTracefsStream({ events: ['sched:sched_switch'], tracefs: mount!, pollIntervalMs: 10 });
    const instance = stream.instancePath;
    expect(existsSync(instance)).toBe(true);
    expect(instance).toMatch(new RegExp(`/instances/probeyard-${process.pid}-${processStartTime(process.pid)}-[a-z0-9]{8}$`));
    // Our own processes: alive while we read, so their records can be checked against /proc.
    const children = [0, 1, 2].map(() => spawn('sleep', ['0.3']));
    const childPids = children.map((c) => c.pid!);
    const pids: number[] = [];
    const names = new Set<string>();
    const childSeenAsSleep = new Set<number>();
    const deadline = Date.now() + 10_000;
    try {
      for await (const batch of stream) {
        for (let r = batch.next(); r; r = batch.next()) {
          expect(r.format).toBeDefined();
          const f = r.format!;
          names.add(f.name);
          for (const side of ['prev', 'next']) {
            const pid = readFieldNumber(r.view, r.recordOffset, f.fields.find((x) => x.name === `${side}_pid`)!);
            const comm = readFieldString(r.view, r.recordOffset, r.recordLength, f.fields.find((x) => x.name === `${side}_comm`)!);
            checkPid(pid);
            pids.push(pid);
            // After exec, our children switch as 'sleep', and /proc agrees while they live.
            if (childPids.includes(pid) && comm === 'sleep' && existsSync(`/proc/${pid}`)) childSeenAsSleep.add(pid);
          }
          expect(r.cpu).toBeGreaterThanOrEqual(0);
          expect(r.timestampNs).toBeGreaterThan(0);
        }
        if ((pids.length >= 200 && childSeenAsSleep.size > 0) || Date.now() > deadline) break;
      }
    } finally {
      await stream.close();
      for (const c of children) c.kill();
    }
    expect(names).toEqual(new Set(['sched_switch']));
    expect(pids.length).toBeGreaterThanOrEqual(200);
    expect(childSeenAsSleep.size).toBeGreaterThan(0);
    // Every other pid is 0 or was a process when we looked; a busy machine's short-lived processes
    // may be gone by then, so most, not all.
    const existedCount = pids.filter((p) => p === 0 || existed.get(p) === true).length;
    expect(existedCount).toBeGreaterThan(pids.length * 0.5);
    expect(pids.every((p) => p >= 0 && p < 1 << 22)).toBe(true);
    expect(existsSync(instance)).toBe(false);
    expect(stream.stats.records).toBeGreaterThan(0);
  });

  it('removes the instance when the event does not exist', () => {
    const before = readdirSync(`${mount!.path}/instances`).length;
    expect(() => openTracefsStream({ events: ['sched:no_such_event'], tracefs: mount! })).toThrow(/no event sched:no_such_event/);
    expect(readdirSync(`${mount!.path}/instances`).length).toBe(before);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('removes the instance when the process gets %s', async (signal) => {
    const tsx = join(__dirname, '../node_modules/.bin/tsx');
    const child = spawn(tsx, [join(__dirname, 'helpers/tracefs-child.ts'), mount!.path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const instance = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', () => reject(new Error(`child exited early: ${err}`)));
    });
    expect(existsSync(instance)).toBe(true);
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
    // tsx forwards the signal to the script's process.
    child.kill(signal);
    const sig = await exited;
    expect(sig === signal || sig === null).toBe(true);
    expect(existsSync(instance)).toBe(false);
    const name = instance.split('/').pop()!;
    expect(readdirSync(join(mount!.path, 'instances'))).not.toContain(name);
  }, 30_000);

  it('does not feed on itself: tracing syscalls, its own reads stay few once it has caught up', async () => {
    // Each read of trace_pipe_raw is a syscall; a reader that read again whenever a read returned
    // anything would chase its own sys_enter events forever (it made ~60,000 reads a second).
    const stream = openTracefsStream({ events: ['raw_syscalls:sys_enter'], tracefs: mount!, pollIntervalMs: 25 });
    let own = 0;
    let all = 0;
    const until = Date.now() + 1000;
    try {
      for await (const batch of stream) {
        for (let r = batch.next(); r; r = batch.next()) {
          all++;
          const f = r.format!;
          if (readFieldNumber(r.view, r.recordOffset, f.commonFields.find((x) => x.name === 'common_pid')!) === process.pid) own++;
        }
        if (Date.now() > until) break;
      }
    } finally {
      await stream.close();
    }
    // one read per CPU per poll while caught up (40 polls a second), plus Node's own syscalls
    console.log(`tracefs live: ${own} of ${all} sys_enter records in 1 s were the reader's own process`);
    expect(own).toBeLessThan(5000);
  });

  it('names a short-lived process at its records as the kernel does: task names learnt from the feed, kept from the batches', async () => {
    // a copy of `true` under a name of its own: each run forks, execs (a rename) and exits within
    // a millisecond, long before saved_cmdlines or /proc could be read for it
    const dir = mkdtempSync(join(tmpdir(), 'probeyard-comm-'));
    const name = `pycomm${Math.random().toString(36).slice(2, 8)}`;
    copyFileSync('/bin/true', join(dir, name));
    chmodSync(join(dir, name), 0o755);
    const stream = openTracefsStream({ events: ['raw_syscalls:sys_enter'], tracefs: mount!, pollIntervalMs: 10 });
    expect(stream.events).toEqual(['raw_syscalls/sys_enter']);
    const pids = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const child = spawnSync(join(dir, name));
      expect(child.status).toBe(0);
      pids.add(child.pid!);
    }
    /** Per child pid, `syscall id:name comm() gave` at each of its records, in order. */
    const names = new Map<number, string[]>();
    const others = new Set<string>();
    const iter = stream[Symbol.asyncIterator]();
    try {
      const until = Date.now() + 20_000;
      while (Date.now() < until && names.size < pids.size) {
        const { value, done } = await iter.next();
        if (done) break;
        for (let r = value.next(); r; r = value.next()) {
          others.add(`${r.format?.system}/${r.format?.name}`);
          const pid = readFieldNumber(r.view, r.recordOffset, r.format!.commonFields.find((x) => x.name === 'common_pid')!);
          if (pids.has(pid)) {
            const id = readFieldNumber(r.view, r.recordOffset, r.format!.fields.find((x) => x.name === 'id')!);
            names.set(pid, [...(names.get(pid) ?? []), `${id}:${stream.info.comm(pid)}`]);
          }
        }
      }
    } finally {
      await iter.return?.(undefined);
      await stream.close();
      rmSync(dir, { recursive: true, force: true });
    }
    expect(names.size).toBe(pids.size);
    // Up to its execve (syscall 59 on x86_64, 221 on arm64) a child is a copy of its parent and has
    // its name; the exec renames it, so every later record has the new one: what
    // bpf_get_current_comm gives at each of them.
    const execve = process.arch === 'arm64' ? 221 : 59;
    for (const [pid, seen] of names) {
      const at = seen.findIndex((x) => x.startsWith(`${execve}:`));
      expect(at, `pid ${pid}: ${seen.join(' ')}`).toBeGreaterThanOrEqual(0);
      for (const x of seen.slice(0, at + 1)) expect(x, `pid ${pid} before its exec: ${seen.join(' ')}`).not.toMatch(new RegExp(`:(${name}|undefined)$`));
      for (const x of seen.slice(at + 1)) expect(x, `pid ${pid} after its exec: ${seen.join(' ')}`).toMatch(new RegExp(`:${name}$`));
    }
    // the task events it reads for that are not in the batches
    expect([...others]).toEqual(['raw_syscalls/sys_enter']);
  }, 60_000);

  it('counts every lost event per CPU: what was read plus what was lost covers what was made', async () => {
    // A 64 KiB buffer per CPU and no reading while a child makes 200,000 getppid calls (Node's
    // process.ppid is one getppid each): the ring buffer overruns; the page flags and the per-CPU
    // stats files account for the rest.
    const calls = 200_000;
    const stream = openTracefsStream({ events: ['raw_syscalls:sys_enter'], tracefs: mount!, bufferSizeKb: 64, subBufferSizeKb: 0 });
    const child = spawnSync(process.execPath, ['-e', `for (let i = 0; i < ${calls}; i++) process.ppid;`]);
    expect(child.status).toBe(0);
    const idField = (f: NonNullable<ReturnType<typeof stream.info.format>>) => f.fields.find((x) => x.name === 'id')!;
    let seen = 0;
    let quiet = 0;
    try {
      for await (const batch of stream) {
        let n = 0;
        for (let r = batch.next(); r; r = batch.next()) {
          n++;
          if (readFieldNumber(r.view, r.recordOffset, idField(r.format!)) === 110 && readFieldNumber(r.view, r.recordOffset, r.format!.commonFields.find((x) => x.name === 'common_pid')!) === child.pid) seen++;
        }
        if (n === 0 || ++quiet > 50) break;
      }
    } finally {
      await stream.close();
    }
    const lost = stream.stats.lostEvents;
    const byCpu = stream.stats.lostByCpu;
    console.log(`tracefs live: ${seen} of ${calls} getppid records read, ${lost} events lost (${byCpu.join(', ')} by CPU)`);
    expect(lost).toBeGreaterThan(0);
    expect(byCpu.reduce((a, b) => a + b, 0)).toBe(lost);
    expect(seen + lost).toBeGreaterThanOrEqual(calls);
  }, 60_000);

  it('enables and disables events while it runs, without losing the others', async () => {
    const stream = openTracefsStream({ events: [], tracefs: mount!, pollIntervalMs: 5 });
    expect(stream.events).toEqual([]);
    stream.setEvents(['sched:sched_switch']);
    const seen = new Map<string, number>();
    /** A getppid system call of process `pid`. */
    const getppidOf = (pid: number | undefined) => (r: TraceRecord<EventFormat>) =>
      r.format?.name === 'sys_enter' &&
      readFieldNumber(r.view, r.recordOffset, r.format.fields.find((x) => x.name === 'id')!) === 110 &&
      readFieldNumber(r.view, r.recordOffset, r.format.commonFields.find((x) => x.name === 'common_pid')!) === pid;
    const iter = stream[Symbol.asyncIterator]();
    /** Reads for `ms`; counts records by event and those `match` takes. */
    const drain = async (ms: number, match?: (r: TraceRecord<EventFormat>) => boolean) => {
      let matched = 0;
      const until = Date.now() + ms;
      while (Date.now() < until) {
        const { value, done } = await iter.next();
        if (done) break;
        for (let r = value.next(); r; r = value.next()) {
          const k = `${r.format?.system}/${r.format?.name}`;
          seen.set(k, (seen.get(k) ?? 0) + 1);
          if (match?.(r)) matched++;
        }
      }
      return matched;
    };
    const ppidCalls = () => spawnSync(process.execPath, ['-e', 'for (let i = 0; i < 1000; i++) process.ppid;']).pid;
    try {
      await drain(300);
      expect(() => stream.addEvents(['raw_syscalls:sys_enter', 'sched:no_such_event'])).toThrow(/no event sched:no_such_event/);
      expect(stream.events).toEqual(['sched/sched_switch']);
      stream.addEvents(['raw_syscalls:sys_enter']);
      expect(stream.events).toEqual(['raw_syscalls/sys_enter', 'sched/sched_switch']);
      expect(await drain(1500, getppidOf(ppidCalls()))).toBeGreaterThanOrEqual(1000);
      stream.removeEvents(['raw_syscalls/sys_enter']);
      await drain(300); // what was buffered before the switch
      const switchesBefore = seen.get('sched/sched_switch') ?? 0;
      expect(await drain(1000, getppidOf(ppidCalls()))).toBe(0);
      expect(seen.get('sched/sched_switch') ?? 0).toBeGreaterThan(switchesBefore);
    } finally {
      await iter.return?.(undefined);
      await stream.close();
    }
    expect(stream.stats.lostEvents).toBe(0);
  }, 60_000);

  it('removes the instance a SIGKILLed process left, and only that one', async () => {
    const tsx = join(__dirname, '../node_modules/.bin/tsx');
    const child = spawn(tsx, [join(__dirname, 'helpers/tracefs-child.ts'), mount!.path], { stdio: ['ignore', 'pipe', 'pipe'] });
    const instance = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', () => reject(new Error('child exited early')));
    });
    const mine = openTracefsStream({ events: [], tracefs: mount! });
    try {
      // tsx runs the script in a child of its own: kill the whole group's reader, the process named in the instance
      const pid = Number(/probeyard-(\d+)-/.exec(instance)![1]);
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      process.kill(pid, 'SIGKILL');
      child.kill('SIGKILL');
      await exited;
      for (let i = 0; i < 100 && processStartTime(pid) !== undefined; i++) await new Promise((r) => setTimeout(r, 50));
      expect(existsSync(instance)).toBe(true);
      const { removed, failed } = removeStaleInstances({ tracefs: mount! });
      expect(failed).toEqual([]);
      expect(removed.map((r) => r.path)).toContain(instance);
      expect(existsSync(instance)).toBe(false);
      expect(existsSync(mine.instancePath)).toBe(true);
    } finally {
      await mine.close();
    }
  }, 30_000);
});
