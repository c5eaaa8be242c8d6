// The in-process runner of compat jobs (data/compat.ts): started by the server, woken when a
// procedure queues a job and every few seconds (a job queued by another replica). Jobs live in the
// database and a running one is leased: a job a killed process left behind is taken over when its
// lease lapses (at once at the next start when the database has one process only).
import {
  type CellComputer,
  claimCompatJob,
  computeCellHere,
  computeProviderCellHere,
  enqueueStaleCompatJobs,
  type JobClock,
  type ProviderCellComputer,
  requeueRunningJobs,
  runCompatJob,
} from '../data/compat.js';
import type { Db } from '../db/open.js';
import type { Logger } from '../server/log.js';

/** What procedures see of the runner: a wake-up call after they queue a job. */
export interface JobNotifier {
  kick(): void;
}

/**
 * Runs every queued job of the database, one after another, in this call. Returns how many ran.
 * Cells are computed by `computeCellOf` (and a script's with provider probes by
 * `computeProviderCellOf`): in this thread by default (tests, tools), on the verifier's workers in
 * the server's runner.
 */
export async function drainCompatJobs(
  db: Db,
  shouldStop: () => boolean = () => false,
  clock: JobClock = {},
  computeCellOf: CellComputer = computeCellHere,
  computeProviderCellOf: ProviderCellComputer = computeProviderCellHere,
): Promise<number> {
  let ran = 0;
  for (;;) {
    if (shouldStop()) return ran;
    const id = await claimCompatJob(db, clock);
    if (id === undefined) return ran;
    const outcome = await runCompatJob(db, id, shouldStop, clock, computeCellOf, computeProviderCellOf);
    ran++;
    // The database is too busy: leave the rest for the next round instead of pressing on.
    if (outcome === 'busy') return ran;
  }
}

export interface CompatJobRunnerOptions {
  /** How often to look for jobs queued elsewhere (or whose lease lapsed). Default 5 s. */
  pollMs?: number;
  /**
   * The database has no other process (PGlite, locked to one): jobs left running are requeued at
   * start instead of waiting for their leases.
   */
  exclusive?: boolean;
  clock?: JobClock;
  /** How cells are computed: the server gives its verifier pool (verification never runs on its thread). */
  computeCellOf?: CellComputer;
  /** How the cells of scripts with provider probes are computed (the same pool, the same deadline). */
  computeProviderCellOf?: ProviderCellComputer;
}

export class CompatJobRunner implements JobNotifier {
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly opts: CompatJobRunnerOptions = {},
  ) {}

  /**
   * On an exclusive database requeues the jobs a previous process left running; queues a job for
   * every tenant whose results an older engine computed; then starts working.
   */
  async start(): Promise<void> {
    if (this.opts.exclusive) {
      const requeued = await requeueRunningJobs(this.db);
      if (requeued > 0) this.logger({ level: 'info', msg: 'compat jobs requeued', count: requeued });
    }
    const stale = await enqueueStaleCompatJobs(this.db);
    if (stale > 0) this.logger({ level: 'info', msg: 'compat jobs queued for results of an older engine', count: stale });
    this.timer = setInterval(() => this.kick(), this.opts.pollMs ?? 5_000);
    this.timer.unref();
    this.kick();
  }

  kick(): void {
    if (this.stopped) return;
    if (this.loop) {
      this.again = true;
      return;
    }
    this.loop = (async () => {
      do {
        this.again = false;
        try {
          const ran = await drainCompatJobs(this.db, () => this.stopped, this.opts.clock, this.opts.computeCellOf, this.opts.computeProviderCellOf);
          if (ran > 0) this.logger({ level: 'info', msg: 'compat jobs ran', count: ran });
        } catch (err) {
          if (!this.stopped) this.logger({ level: 'error', msg: 'compat job runner', error: (err as Error).message });
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.loop = undefined;
    });
  }

  /** Stops between two (version, profile) pairs; an unfinished job goes back to the queue. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.loop;
  }
}
