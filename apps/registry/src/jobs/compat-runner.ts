// The in-process runner of compat jobs (data/compat.ts): started by the server, woken when a
// procedure queues a job and every few seconds (a job queued by another replica). Jobs live in the
// database, so a job a stopped or killed process left behind is queued again at the next start.
import { claimCompatJob, requeueRunningJobs, runCompatJob } from '../data/compat.js';
import type { Db } from '../db/open.js';
import type { Logger } from '../server/log.js';

/** What procedures see of the runner: a wake-up call after they queue a job. */
export interface JobNotifier {
  kick(): void;
}

/** Runs every queued job of the database, one after another, in this call. Returns how many ran. */
export async function drainCompatJobs(db: Db, shouldStop: () => boolean = () => false): Promise<number> {
  let ran = 0;
  for (;;) {
    if (shouldStop()) return ran;
    const id = await claimCompatJob(db);
    if (id === undefined) return ran;
    await runCompatJob(db, id, shouldStop);
    ran++;
  }
}

export class CompatJobRunner implements JobNotifier {
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly pollMs = 5_000,
  ) {}

  /** Requeues jobs left running by a previous process, then starts working. */
  async start(): Promise<void> {
    const requeued = await requeueRunningJobs(this.db);
    if (requeued > 0) this.logger({ level: 'info', msg: 'compat jobs requeued', count: requeued });
    this.timer = setInterval(() => this.kick(), this.pollMs);
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
          const ran = await drainCompatJobs(this.db, () => this.stopped);
          if (ran > 0) this.logger({ level: 'info', msg: 'compat jobs ran', count: ran });
        } catch (err) {
          if (!this.stopped) this.logger({ level: 'error', msg: 'compat job runner', error: (err as Error).message });
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.loop = undefined;
    });
  }

  /** Stops between two (version, profile) pairs; an unfinished job is requeued at the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.loop;
  }
}
