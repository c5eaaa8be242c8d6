// A pool of worker threads for the work a request must not do on the server's thread: parsing an
// uploaded tarball or trace.dat (src/data/upload-parser.ts), verifying a published program and
// computing compat verdicts (src/jobs/verifier-pool.ts). Each task runs under a deadline (of the
// worker thread's CPU time where Linux tells it, bounded by a multiple in wall time) on a
// worker with a capped heap; a worker past its deadline is terminated, one that ran out of memory
// is replaced, and the server's thread keeps answering meanwhile.
//
// Fairness between tenants: every task belongs to a tenant; tasks wait in per-tenant queues served
// round-robin, a tenant has at most `maxInFlightPerTenant` tasks on workers at once (default: half
// the workers, at least one), and a tenant's queue and the whole queue are bounded (a task past
// either bound is refused at once with `rate_limited`, never left to wait without end). So one
// tenant's burst holds at most its share of the workers, and another tenant's task starts at the
// next free worker.
//
// Workers start on demand (150–320 ms from dist/ on this 2-core machine), are kept for `idleMs`
// after their last task (unref'd, so they never hold the process open), and lower their own CPU
// priority (nice +10, Linux) so that the server's thread wins the CPU when both want it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type TransferListItem, Worker } from 'node:worker_threads';
import { RegistryError } from '../errors.js';

/** Why a task did not come back with an answer from its worker. */
export type WorkerFailureReason = 'deadline' | 'memory' | 'crashed' | 'closed';

/** A task whose worker was terminated (deadline), ran out of memory, crashed, or was stopped by `close()`. */
export class WorkerTaskFailed extends Error {
  constructor(
    readonly reason: WorkerFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'WorkerTaskFailed';
  }
}

export interface WorkerPoolOptions {
  /** What the workers do, for messages (`the parser`, `the verifier`). */
  name: string;
  /** The worker's module, next to this file's folder tree: a URL without extension (`.ts` from sources, `.js` from dist/ is added). */
  entry: URL;
  /** Tasks run at once, each on its own worker (default 2). */
  maxWorkers?: number;
  /** Tasks of one tenant on workers at once (default half of `maxWorkers`, at least 1). */
  maxInFlightPerTenant?: number;
  /** Tasks of one tenant waiting for a worker (default 16); one more is `rate_limited`. */
  maxQueuedPerTenant?: number;
  /** Tasks of all tenants waiting for a worker (default 256); one more is `rate_limited`. */
  maxQueued?: number;
  /** V8 heap of a worker (`resourceLimits.maxOldGenerationSizeMb`, default 256 MiB). */
  maxHeapMb?: number;
  /** An idle worker is stopped after this long (default 30 s). */
  idleMs?: number;
  /**
   * Idle workers kept however long they wait (default 0): the first task after a quiet spell then
   * finds its modules loaded and compiled (a cold worker costs 2–5 s on a loaded 2-core machine).
   */
  keepIdle?: number;
}

/** Longest wait for a new worker to load its modules (a loaded machine, from TypeScript sources). */
const startupTimeoutMs = 60_000;

const here = import.meta.url;
/** The registry runs from its TypeScript sources (vitest, tsx `--conditions=@probeyard/source`) or from dist/. */
const fromSource = here.endsWith('.ts');

/**
 * Starts the worker module `entry` (a URL without extension: `.ts` from sources, `.js` from dist/).
 * Also used for the thread that holds the PGlite database (src/db/pglite-thread.ts).
 */
export function startModuleWorker(entry: URL, resourceLimits?: Worker['resourceLimits']): Worker {
  const file = new URL(`${entry.href}${fromSource ? '.ts' : '.js'}`);
  // dist/: plain JavaScript, packages resolved by their default condition. No execArgv of this
  // process (a `--conditions` or loader given to the server is not the worker's business).
  if (!fromSource) return new Worker(file, { execArgv: [], ...(resourceLimits ? { resourceLimits } : {}) });
  // Sources: the worker installs tsx's loader on its own thread, then loads the .ts entry with the
  // `@probeyard/source` condition, so it runs the same packages' sources as the tests.
  // (tsx is a dev dependency: sources run only in development. Tried and failed on Node 20:
  // `--import tsx` in the worker's execArgv, whose hooks did not apply to its .ts entry, and tsx's
  // CommonJS API from the eval'd code, which resolves its loader wrongly. Hence its ESM API by file.)
  const tsx = pathToFileURL(join(dirname(createRequire(here).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const boot = `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(file.href)}); });`;
  return new Worker(boot, { eval: true, execArgv: ['--conditions=@probeyard/source'], ...(resourceLimits ? { resourceLimits } : {}) });
}

/** What a worker answers to one task. */
export type WorkerReply<Outcome> = { id: number; outcome: Outcome } | { id: number; failed: { message: string; stack?: string } };

/** What the pool sends a worker: the task, and (tests only) how long to spin first. */
export interface WorkerRequest<Task> {
  id: number;
  task: Task;
  /** Test-only: the worker spins this long before the task, a stand-in for a task that takes long. */
  spinMs?: number;
  /** Test-only: the worker sleeps this long first, using no CPU (a stand-in for a thread kept off the CPU). */
  sleepMs?: number;
}

class Deadline extends Error {}

/**
 * A deadline counts the worker thread's CPU time where the thread's clock can be read (Linux,
 * `/proc/self/task/TID/stat`), so a task on a busy machine, whose thread waits for a CPU (it runs at
 * nice +10), is not cut short for time it did not get; wall time still bounds it at this many times
 * the deadline. Elsewhere the deadline is wall time.
 */
export const deadlineWallFactor = 4;

/** CPU time (ms) the thread `tid` of this process has used, or undefined when it cannot be read. */
export function threadCpuMs(tid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    // after the command name in parentheses (which may hold spaces): state is field 3, utime 14, stime 15
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    // /proc reports in USER_HZ, 100 a second on every Linux
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/** One worker thread and the task it is on. */
class PoolWorker<Outcome> {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  /** Why the worker is gone (terminated, crashed, out of memory), once it is. */
  gone: Error | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  /** The worker thread's id (Linux), whose CPU time the deadline counts. */
  private tid: number | undefined;
  private onReady!: () => void;
  private onGone!: (err: Error) => void;
  private waiting: { id: number; resolve: (r: WorkerReply<Outcome>) => void; reject: (err: Error) => void } | undefined;

  constructor(entry: URL, maxHeapMb: number) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.onReady = resolve;
      this.onGone = reject;
    });
    this.ready.catch(() => {});
    this.worker = startModuleWorker(entry, { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: Math.min(32, Math.max(4, maxHeapMb / 8)), stackSizeMb: 4 });
    this.worker.on('message', (m: WorkerReply<Outcome> | { type: 'ready'; tid?: number }) => {
      if ('type' in m) {
        this.tid = m.tid;
        this.onReady();
      }
      else if (this.waiting?.id === m.id) {
        const w = this.waiting;
        this.waiting = undefined;
        w.resolve(m);
      }
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`the worker exited (code ${code})`)));
  }

  private fail(err: Error): void {
    this.gone ??= err;
    this.onGone(this.gone);
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(this.gone);
  }

  /**
   * Sends one task; terminates the worker when the task has had `timeoutMs` of CPU time (or, where
   * that cannot be read, of wall time), or `deadlineWallFactor` times that of wall time, first.
   */
  run<Task>(req: WorkerRequest<Task>, transfer: readonly TransferListItem[], timeoutMs: number): Promise<WorkerReply<Outcome>> {
    return new Promise((resolve, reject) => {
      if (this.gone) return reject(this.gone);
      const tid = this.tid;
      const cpuAtStart = tid === undefined ? undefined : threadCpuMs(tid);
      const wallEnd = performance.now() + timeoutMs * deadlineWallFactor;
      let timer: NodeJS.Timeout;
      const check = () => {
        const cpu = tid === undefined || cpuAtStart === undefined ? undefined : threadCpuMs(tid);
        const left = Math.min(cpu === undefined ? 0 : timeoutMs - (cpu - cpuAtStart!), wallEnd - performance.now());
        // short of both: look again when the rest could at the earliest have been used
        if (left > 0) timer = setTimeout(check, Math.max(20, left));
        else this.kill(new Deadline());
      };
      timer = setTimeout(check, timeoutMs);
      this.waiting = {
        id: req.id,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.worker.postMessage(req, transfer as TransferListItem[]);
    });
  }

  kill(why: Error): void {
    clearTimeout(this.idleTimer);
    this.fail(why);
    void this.worker.terminate();
  }
}

interface Waiter {
  tenant: string;
  start: () => void;
  reject: (err: Error) => void;
}

/** The pool (see the top of this file); `close()` stops its workers. */
export class WorkerPool<Task, Outcome> {
  readonly name: string;
  readonly maxHeapMb: number;
  readonly maxWorkers: number;
  readonly maxInFlightPerTenant: number;
  readonly maxQueuedPerTenant: number;
  readonly maxQueued: number;
  private readonly entry: URL;
  private readonly idleMs: number;
  private readonly keepIdle: number;
  private readonly idle: PoolWorker<Outcome>[] = [];
  private readonly busy = new Set<PoolWorker<Outcome>>();
  /** Waiting tasks by tenant; the map's order is the round-robin order (a served tenant goes to the back). */
  private readonly queues = new Map<string, Waiter[]>();
  private readonly inFlight = new Map<string, number>();
  private queued = 0;
  private running = 0;
  private nextId = 1;
  private closed = false;

  constructor(opts: WorkerPoolOptions) {
    this.name = opts.name;
    this.entry = opts.entry;
    this.maxWorkers = Math.max(1, opts.maxWorkers ?? 2);
    this.maxInFlightPerTenant = Math.max(1, opts.maxInFlightPerTenant ?? Math.floor(this.maxWorkers / 2));
    this.maxQueuedPerTenant = Math.max(0, opts.maxQueuedPerTenant ?? 16);
    this.maxQueued = Math.max(0, opts.maxQueued ?? 256);
    this.maxHeapMb = opts.maxHeapMb ?? 256;
    this.idleMs = opts.idleMs ?? 30_000;
    this.keepIdle = Math.max(0, Math.min(this.maxWorkers, opts.keepIdle ?? 0));
  }

  /** Workers alive now (idle or working), for tests. */
  get workers(): number {
    return this.idle.length + this.busy.size;
  }

  /** Tasks of `tenant` on workers now, and waiting. */
  load(tenant: string): { running: number; waiting: number } {
    return { running: this.inFlight.get(tenant) ?? 0, waiting: this.queues.get(tenant)?.length ?? 0 };
  }

  /**
   * Runs `task` for `tenant` on a worker within `timeoutMs` of the worker's CPU time, counted from
   * when a worker takes it (see {@link deadlineWallFactor}).
   * The worker's answer comes back as it is; a refusal to queue is `rate_limited` (`what` says whose
   * task in the message); a task that did not finish is a {@link WorkerTaskFailed}.
   */
  async run(
    tenant: string,
    task: Task,
    opts: { timeoutMs: number; what: string; transfer?: readonly TransferListItem[]; spinMs?: number; sleepMs?: number },
  ): Promise<WorkerReply<Outcome>> {
    await this.acquire(tenant, opts.what);
    let w: PoolWorker<Outcome> | undefined;
    try {
      w = this.takeIdle() ?? new PoolWorker<Outcome>(this.entry, this.maxHeapMb);
      clearTimeout(w.idleTimer);
      w.worker.ref();
      this.busy.add(w);
      await this.started(w);
      const req: WorkerRequest<Task> = { id: this.nextId++, task, ...(opts.spinMs ? { spinMs: opts.spinMs } : {}), ...(opts.sleepMs ? { sleepMs: opts.sleepMs } : {}) };
      try {
        return await w.run(req, opts.transfer ?? [], opts.timeoutMs);
      } catch (err) {
        throw this.failure(err as Error, opts.timeoutMs);
      }
    } finally {
      if (w) this.busy.delete(w);
      this.release(tenant, w);
    }
  }

  /** The last idle worker still alive (one may have died while idle). */
  private takeIdle(): PoolWorker<Outcome> | undefined {
    for (let w = this.idle.pop(); w; w = this.idle.pop()) {
      if (w.gone === undefined) return w;
      clearTimeout(w.idleTimer);
    }
    return undefined;
  }

  private async started(w: PoolWorker<Outcome>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        w.ready,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${this.name}'s worker did not start within ${startupTimeoutMs / 1000} s`)), startupTimeoutMs);
        }),
      ]);
    } catch (err) {
      w.kill(err as Error);
      throw this.closed ? new WorkerTaskFailed('closed', 'the registry is shutting down') : new WorkerTaskFailed('crashed', (err as Error).message, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  private failure(err: Error, timeoutMs: number): WorkerTaskFailed {
    if (err instanceof Deadline) return new WorkerTaskFailed('deadline', `did not finish within ${timeoutMs / 1000} s`);
    if ((err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') return new WorkerTaskFailed('memory', `needs more than ${this.name}'s ${this.maxHeapMb} MiB of memory`);
    if (this.closed) return new WorkerTaskFailed('closed', 'the registry is shutting down');
    return new WorkerTaskFailed('crashed', err.message, { cause: err });
  }

  private acquire(tenant: string, what: string): Promise<void> {
    if (this.closed) return Promise.reject(new WorkerTaskFailed('closed', 'the registry is shutting down'));
    // A free worker while tasks wait means every waiting tenant is at its cap: this one may start.
    if (this.running < this.maxWorkers && (this.inFlight.get(tenant) ?? 0) < this.maxInFlightPerTenant) {
      this.begin(tenant);
      return Promise.resolve();
    }
    const queue = this.queues.get(tenant);
    if ((queue?.length ?? 0) >= this.maxQueuedPerTenant) {
      return Promise.reject(
        new RegistryError('rate_limited', `${what}: your tenant has ${this.maxQueuedPerTenant} tasks waiting for ${this.name} already; try again when they are done`, {
          maxQueuedPerTenant: this.maxQueuedPerTenant,
        }),
      );
    }
    if (this.queued >= this.maxQueued) {
      return Promise.reject(
        new RegistryError('rate_limited', `${what}: ${this.name} is busy (${this.maxQueued} tasks waiting); try again in a few seconds`, { maxQueued: this.maxQueued }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { tenant, start: resolve, reject };
      if (queue) queue.push(waiter);
      else this.queues.set(tenant, [waiter]);
      this.queued++;
      this.dispatch();
    });
  }

  private begin(tenant: string): void {
    this.running++;
    this.inFlight.set(tenant, (this.inFlight.get(tenant) ?? 0) + 1);
  }

  /** Starts waiting tasks while workers are free: tenants in round-robin order, skipping those at their cap. */
  private dispatch(): void {
    while (this.running < this.maxWorkers && this.queued > 0) {
      let picked: Waiter | undefined;
      for (const [tenant, queue] of this.queues) {
        if ((this.inFlight.get(tenant) ?? 0) >= this.maxInFlightPerTenant) continue;
        picked = queue.shift();
        // To the back of the round: delete and re-insert (a Map keeps insertion order).
        this.queues.delete(tenant);
        if (queue.length > 0) this.queues.set(tenant, queue);
        break;
      }
      if (!picked) return;
      this.queued--;
      this.begin(picked.tenant);
      picked.start();
    }
  }

  private release(tenant: string, w: PoolWorker<Outcome> | undefined): void {
    if (w) {
      if (w.gone === undefined && !this.closed) {
        w.worker.unref();
        // The first `keepIdle` idle workers stay (unref'd: they never keep the process alive).
        if (this.idle.length >= this.keepIdle) {
          w.idleTimer = setTimeout(() => {
            const at = this.idle.indexOf(w);
            if (at >= 0) this.idle.splice(at, 1);
            w.kill(new Error('idle'));
          }, this.idleMs);
          w.idleTimer.unref();
        }
        this.idle.push(w);
      } else if (w.gone === undefined) {
        w.kill(new Error('closed'));
      }
    }
    this.running--;
    const n = (this.inFlight.get(tenant) ?? 1) - 1;
    if (n > 0) this.inFlight.set(tenant, n);
    else this.inFlight.delete(tenant);
    this.dispatch();
  }

  /** Stops every worker; tasks in progress and waiting fail with reason `closed`. */
  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.queues.values()) for (const q of queue.splice(0)) q.reject(new WorkerTaskFailed('closed', 'the registry is shutting down'));
    this.queues.clear();
    this.queued = 0;
    const all = [...this.idle.splice(0), ...this.busy];
    for (const w of all) w.kill(new Error('closed'));
    await Promise.all(all.map((w) => w.worker.terminate()));
  }
}
