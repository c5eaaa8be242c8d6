// The worker side of src/jobs/worker-pool.ts: says `ready` once its modules are loaded, then
// answers each `{ id, task }` with `{ id, outcome }` (what the handler returned) or `{ id, failed }`
// (a bug: the handler threw). One task at a time. The worker lowers its own CPU priority first.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { WorkerRequest } from './worker-pool.js';

/**
 * Nice +10 for this thread alone (Linux: a thread's id is a pid to setpriority(2), and
 * /proc/thread-self names it), so the server's thread, at the process' priority, wins the CPU
 * when both want it. Best effort: elsewhere, or when refused, the worker keeps its priority.
 */
function lowerThreadPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // not Linux, or not allowed
  }
}

export function serveTasks<Task, Outcome>(handle: (task: Task) => Promise<Outcome> | Outcome): void {
  const port = parentPort;
  if (!port) return;
  lowerThreadPriority();
  port.on('message', (req: WorkerRequest<Task>) => {
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
  port.postMessage({ type: 'ready' });
}
