// One small restartable part of the agent (poll, load, flush, upload, profile…): its `tick` runs,
// says how long to wait before the next one, and may be woken early. A tick that throws is logged
// and counted, and the part runs again after an exponential backoff with jitter; one part failing
// never stops the others.
import { Backoff, type BackoffOptions, sleep } from './backoff.js';
import { isAgentError } from './errors.js';
import type { Logger } from './log.js';

export interface Part {
  readonly name: string;
  /** One round of work; returns milliseconds until the next round. */
  tick(signal: AbortSignal): Promise<number>;
}

export interface PartLoopOptions {
  backoff?: BackoffOptions;
  log: Logger;
  /** Counts a failed tick (metrics). */
  onFailure?: (part: string, err: unknown) => void;
  /** An error that must stop the agent (a revoked credential): no retry. */
  isFatal?: (err: unknown) => boolean;
  onFatal?: (part: string, err: unknown) => void;
}

export class PartLoop {
  readonly part: Part;
  readonly backoff: Backoff;
  private wakeUp: AbortController | undefined;
  private woken = false;
  private done: Promise<void> | undefined;
  /** When the last tick succeeded (ms since the epoch), and the last error. */
  lastOkAt: number | undefined;
  lastError: string | undefined;
  failures = 0;

  constructor(
    part: Part,
    private readonly options: PartLoopOptions,
  ) {
    this.part = part;
    this.backoff = new Backoff(options.backoff);
  }

  start(signal: AbortSignal): void {
    this.done ??= this.loop(signal);
  }

  /** Runs the next tick now (or right after the current one). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.abort();
  }

  /** Resolves when the loop has ended (after the signal aborted). */
  stopped(): Promise<void> {
    return this.done ?? Promise.resolve();
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const { log } = this.options;
    while (!signal.aborted) {
      let wait: number;
      this.woken = false;
      try {
        wait = await this.part.tick(signal);
        this.backoff.reset();
        this.lastOkAt = Date.now();
        this.lastError = undefined;
      } catch (err) {
        if (signal.aborted) break;
        if (this.options.isFatal?.(err)) {
          this.lastError = (err as Error).message;
          this.options.onFatal?.(this.part.name, err);
          break;
        }
        this.failures++;
        wait = this.backoff.next();
        this.lastError = (err as Error).message;
        this.options.onFailure?.(this.part.name, err);
        const retryable = isAgentError(err) ? err.retryable : undefined;
        log(retryable === false ? 'error' : 'warn', `${this.part.name}: ${(err as Error).message}`, {
          part: this.part.name,
          retryInMs: wait,
          attempt: this.backoff.attempts,
          ...(isAgentError(err) ? { code: err.code, ...err.context } : { stack: (err as Error).stack }),
        });
      }
      if (this.woken || signal.aborted) continue;
      this.wakeUp = new AbortController();
      await sleep(wait, AbortSignal.any([signal, this.wakeUp.signal]));
      this.wakeUp = undefined;
    }
  }
}
