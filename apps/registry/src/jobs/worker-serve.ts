// The worker side of src/jobs/worker-pool.ts: says `ready` once its modules are loaded, then
// answers each `{ id, task }` with `{ id, outcome }` (what the handler returned) or `{ id, failed }`
// (a bug: the handler threw). One task at a time. The worker lowers its own CPU priority first,
// and says its thread id with `ready` (the pool's deadline counts the thread's CPU time).
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { WorkerRequest } from './worker-pool.js';

/**
 * Nice +10 for this thread alone (Linux: a thread's id is a pid to setpriority(2), and
 * /proc/thread-self names it), so the server's thread, at the process' priority, wins the CPU
 * when both want it. Best effort: elsewhere, or when refused, the worker keeps its priority.
 */
function lowerThreadPriority(tid: number | undefined): void {
  try {
    if (tid !== undefined) setPriority(tid, 10);
  } catch {
    // not allowed
  }
}

/** This thread's id (Linux: /proc/thread-self names it); undefined elsewhere. */
function threadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

export function serveTasks<Task, Outcome>(handle: (task: Task) => Promise<Outcome> | Outcome): void {
  const port = parentPort;
  if (!port) return;
  const tid = threadId();
  lowerThreadPriority(tid);
  port.on('message', (req: WorkerRequest<Task>) => {
    if (req.sleepMs) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, req.sleepMs);
    if (req.spinMs) {
      const until = performance.now() + req.spinMs;
      while (performance.now() < until) {
        // busy, like a task stuck in a loop: only terminate() ends it
      }
    }
    Promise.resolve()
      .then(() => handle(req.task))
      .then(
        (outcome) => port.postMessage({ id: req.id, outcome }),
        (err: unknown) => port.postMessage({ id: req.id, failed: { message: String((err as Error)?.message ?? err), stack: (err as Error)?.stack } }),
      );
  });
  // The pool reads this thread's CPU time by its id, so a deadline counts work, not waiting for a CPU.
  port.postMessage({ type: 'ready', ...(tid !== undefined ? { tid } : {}) });
}
