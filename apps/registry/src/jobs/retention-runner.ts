// Runs output retention (src/data/output-retention.ts) in the server: first a minute after the
// start, then every hour. `PROBEYARD_OUTPUT_RETENTION_DAYS` (default 30; 0 keeps outputs forever).
import type { Db } from '../db/open.js';
import { pruneOutputs } from '../data/output-retention.js';
import { RegistryError } from '../errors.js';
import type { Logger } from '../server/log.js';

export const defaultOutputRetentionDays = 30;

/** The retention in days from `PROBEYARD_OUTPUT_RETENTION_DAYS` (0: forever), or undefined when unset. */
export function envOutputRetentionDays(): number | undefined {
  const raw = process.env.PROBEYARD_OUTPUT_RETENTION_DAYS;
  if (raw === undefined || raw === '') return undefined;
  const days = Number(raw);
  if (!(Number.isFinite(days) && days >= 0)) throw new RegistryError('bad_request', `PROBEYARD_OUTPUT_RETENTION_DAYS: a number of days (0 keeps outputs forever), not ${raw}`);
  return days;
}

export interface RetentionRunnerOptions {
  /** Outputs older than this many days are deleted; 0 keeps them forever. */
  days: number;
  /** Delay of the first run (default 60 s) and between runs (default 1 h). */
  firstMs?: number;
  everyMs?: number;
  now?: () => Date;
}

export class RetentionRunner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly opts: RetentionRunnerOptions,
  ) {}

  start(): void {
    if (this.opts.days <= 0) return;
    this.schedule(this.opts.firstMs ?? 60_000);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce().finally(() => {
        this.running = undefined;
        this.schedule(this.opts.everyMs ?? 3_600_000);
      });
    }, ms);
    this.timer.unref();
  }

  /** One pass; errors are logged (a busy database tries again at the next pass). */
  async runOnce(): Promise<void> {
    const cutoff = new Date((this.opts.now?.() ?? new Date()).getTime() - this.opts.days * 86_400_000);
    try {
      const r = await pruneOutputs(this.db, cutoff, { shouldStop: () => this.stopped });
      if (r.outputBatches + r.liveSessions > 0) this.logger({ level: 'info', msg: 'outputs past retention deleted', cutoff: cutoff.toISOString(), ...r });
    } catch (err) {
      if (!this.stopped) this.logger({ level: 'warn', msg: 'output retention', error: (err as Error).message });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
