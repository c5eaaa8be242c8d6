import { afterEach, describe, expect, it, vi } from 'vitest';
import { RegistryError } from '../errors.js';
import { FleetGate, fleetGateLimits } from './fleet-gate.js';

/** A task that runs until `finish()`; `started` tells whether the gate let it in. */
function task(gate: FleetGate, tenantId: string, log: string[], name: string, maxWaitMs?: number) {
  let finish!: () => void;
  const held = new Promise<void>((r) => {
    finish = r;
  });
  const state = { started: false };
  const done = gate.run(
    tenantId,
    'agent enroll',
    async () => {
      state.started = true;
      log.push(name);
      await held;
      return name;
    },
    maxWaitMs,
  );
  done.catch(() => {});
  return { done, finish, state };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('fleetGateLimits', () => {
  it.each([
    [1, { perTenant: 1, total: 1 }],
    [4, { perTenant: 1, total: 2 }],
    [10, { perTenant: 2, total: 5 }],
    [20, { perTenant: 5, total: 10 }],
  ])('a pool of %i: %o', (pool, want) => {
    expect(fleetGateLimits(pool, 1000)).toEqual({ ...want, maxQueuedPerTenant: 256, maxWaitMs: 1000 });
  });

  it('refuses limits that would let nothing through', () => {
    expect(() => new FleetGate({ perTenant: 0, total: 1, maxQueuedPerTenant: 1, maxWaitMs: 1 })).toThrow(RangeError);
    expect(() => new FleetGate({ perTenant: 3, total: 2, maxQueuedPerTenant: 1, maxWaitMs: 1 })).toThrow(RangeError);
  });
});

describe('FleetGate', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets a tenant run at most perTenant at once, the rest in the order they came', async () => {
    const gate = new FleetGate({ perTenant: 2, total: 5, maxQueuedPerTenant: 16, maxWaitMs: 60_000 });
    const log: string[] = [];
    const tasks = ['a1', 'a2', 'a3', 'a4', 'a5'].map((n) => task(gate, 'A', log, n));
    await turn();
    expect(log).toEqual(['a1', 'a2']);
    expect(gate.load('A')).toEqual({ running: 2, waiting: 3 });
    tasks[1]!.finish();
    await tasks[1]!.done;
    await turn();
    expect(log).toEqual(['a1', 'a2', 'a3']);
    tasks[0]!.finish();
    tasks[2]!.finish();
    await Promise.all([tasks[0]!.done, tasks[2]!.done]);
    await turn();
    expect(log).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    for (const t of tasks) t.finish();
    expect(await Promise.all(tasks.map((t) => t.done))).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    expect(gate.load('A')).toEqual({ running: 0, waiting: 0 });
    expect(gate.stats).toEqual({ admitted: 5, waited: 3, timedOut: 0, queueFull: 0 });
  });

  it("lets another tenant in at once while one tenant's burst waits", async () => {
    const gate = new FleetGate({ perTenant: 2, total: 5, maxQueuedPerTenant: 64, maxWaitMs: 60_000 });
    const log: string[] = [];
    const burst = Array.from({ length: 30 }, (_, i) => task(gate, 'A', log, `a${i}`));
    const b = task(gate, 'B', log, 'b');
    await turn();
    expect(log).toEqual(['a0', 'a1', 'b']);
    expect(gate.runningTotal).toBe(3);
    for (const t of [...burst, b]) t.finish();
    await Promise.all([...burst, b].map((t) => t.done));
    expect(log).toHaveLength(31);
  });

  it('serves the tenants waiting for the total round-robin, each under its own cap', async () => {
    const gate = new FleetGate({ perTenant: 2, total: 2, maxQueuedPerTenant: 64, maxWaitMs: 60_000 });
    const log: string[] = [];
    const tasks = new Map<string, ReturnType<typeof task>>();
    for (const [tenant, name] of [['A', 'a0'], ['A', 'a1'], ['A', 'a2'], ['A', 'a3'], ['A', 'a4'], ['B', 'b0'], ['B', 'b1'], ['C', 'c0']] as const) {
      tasks.set(name, task(gate, tenant, log, name));
    }
    await turn();
    expect(log).toEqual(['a0', 'a1']);
    // One slot frees at a time (the oldest running one finishes): the tenants waiting take turns in
    // the order they began to wait, A first, then B, then C, then A again.
    for (let finished = 0; finished < 6; finished++) {
      const oldest = tasks.get(log[finished]!)!;
      oldest.finish();
      await oldest.done;
      await turn();
    }
    expect(log).toEqual(['a0', 'a1', 'a2', 'b0', 'c0', 'a3', 'b1', 'a4']);
    for (const t of tasks.values()) t.finish();
    await Promise.all([...tasks.values()].map((t) => t.done));
    expect(gate.stats).toEqual({ admitted: 8, waited: 6, timedOut: 0, queueFull: 0 });
  });

  it('refuses a waiter after maxWait with unavailable in words, and forgets it', async () => {
    vi.useFakeTimers();
    const gate = new FleetGate({ perTenant: 1, total: 1, maxQueuedPerTenant: 16, maxWaitMs: 10_000 });
    const log: string[] = [];
    const a = task(gate, 'A', log, 'a0');
    const late = task(gate, 'A', log, 'a1');
    const shorter = task(gate, 'B', log, 'b0', 500);
    await vi.advanceTimersByTimeAsync(500);
    await expect(shorter.done).rejects.toMatchObject({
      code: 'unavailable',
      message: "database busy: agent enroll: this tenant's fleet changes queued longer than 0.5 s (at most 1 at a time per registry process); try again in 2 s",
    });
    expect(gate.load('B')).toEqual({ running: 0, waiting: 0 });
    await vi.advanceTimersByTimeAsync(9_500);
    const err = await late.done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryError);
    expect((err as RegistryError).message).toMatch(/^database busy: agent enroll: this tenant's fleet changes queued longer than 10 s .*; try again in 2 s$/);
    expect(log).toEqual(['a0']);
    expect(gate.load('A')).toEqual({ running: 1, waiting: 0 });
    a.finish();
    await a.done;
    expect(gate.load('A')).toEqual({ running: 0, waiting: 0 });
    expect(gate.stats).toEqual({ admitted: 1, waited: 0, timedOut: 2, queueFull: 0 });
    // The slot is free again: the next one runs at once.
    const next = task(gate, 'A', log, 'a2');
    next.finish();
    expect(await next.done).toBe('a2');
  });

  it("refuses at once past a tenant's queue, other tenants unaffected", async () => {
    const gate = new FleetGate({ perTenant: 1, total: 4, maxQueuedPerTenant: 2, maxWaitMs: 60_000 });
    const log: string[] = [];
    const a = ['a0', 'a1', 'a2'].map((n) => task(gate, 'A', log, n));
    const refused = task(gate, 'A', log, 'a3');
    await expect(refused.done).rejects.toMatchObject({
      code: 'unavailable',
      message: 'database busy: agent enroll: 2 fleet changes of this tenant are already waiting (at most 1 at a time per registry process); try again in 2 s',
    });
    const b = task(gate, 'B', log, 'b0');
    await turn();
    expect(log).toEqual(['a0', 'b0']);
    expect(gate.stats.queueFull).toBe(1);
    for (const t of [...a, b]) t.finish();
    await Promise.all([...a, b].map((t) => t.done));
    expect(log).toEqual(['a0', 'b0', 'a1', 'a2']);
  });

  it('frees the slot when the transaction throws', async () => {
    const gate = new FleetGate({ perTenant: 1, total: 1, maxQueuedPerTenant: 4, maxWaitMs: 60_000 });
    await expect(gate.run('A', 'x', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(gate.load('A')).toEqual({ running: 0, waiting: 0 });
    expect(await gate.run('A', 'x', async () => 7)).toBe(7);
  });
});
