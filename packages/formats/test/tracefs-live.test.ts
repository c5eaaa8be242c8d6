// The live tracefs feed, for real: needs root and a kernel with tracefs. Skips with the reason
// printed otherwise.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findTracefs, openTracefsStream, unmountTracefs } from '../src/node/tracefs-live.js';
import { readFieldNumber, readFieldString } from '../src/event-format/field-read.js';

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
    expect(instance).toMatch(/\/instances\/probeyard-\d+-[a-z0-9]+$/);
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

  it('accounts events the kernel lost when the reader falls behind', async () => {
    // A 8 KiB buffer per CPU and no reading while processes start: the kernel overwrites pages and
    // flags the next one read with the number it dropped.
    const stream = openTracefsStream({ events: ['sched:sched_switch', 'sched:sched_wakeup', 'raw_syscalls:sys_enter'], tracefs: mount!, bufferSizeKb: 8 });
    for (let i = 0; i < 20; i++) spawnSync('true');
    let flagged = 0;
    let n = 0;
    try {
      for await (const batch of stream) {
        for (let r = batch.next(); r; r = batch.next()) {
          n++;
          if (r.missedEvents !== 0) flagged++;
        }
        if (n > 50) break;
      }
    } finally {
      await stream.close();
    }
    expect(flagged).toBeGreaterThan(0);
    expect(stream.stats.lostEvents + stream.stats.lostUnknown).toBeGreaterThan(0);
  });
});

