// Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And Jitter"):
// the n-th consecutive failure waits a uniformly random time in [0, min(cap, base·2^n)), so a
// fleet that lost its registry at the same moment does not come back at the same moment.

export interface BackoffOptions {
  /** First ceiling, milliseconds (default 1,000). */
  baseMs?: number;
  /** Largest ceiling, milliseconds (default 60,000). */
  capMs?: number;
  /** Shortest wait, milliseconds (default 50): never a tight loop. */
  minMs?: number;
  /** Uniform [0, 1) source (tests pass a seeded one). */
  random?: () => number;
}

export class Backoff {
  private failures = 0;
  readonly baseMs: number;
  readonly capMs: number;
  readonly minMs: number;
  private readonly random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 1_000;
    this.capMs = options.capMs ?? 60_000;
    this.minMs = options.minMs ?? 50;
    this.random = options.random ?? Math.random;
  }

  /** Consecutive failures so far. */
  get attempts(): number {
    return this.failures;
  }

  /** The ceiling of the next wait (without jitter). */
  ceilingMs(): number {
    return Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.failures, 30));
  }

  /** Records a failure and returns how long to wait before the next try. */
  next(): number {
    const ceiling = this.ceilingMs();
    this.failures++;
    return Math.max(this.minMs, Math.floor(this.random() * ceiling));
  }

  /** A success: the next failure starts from the base again. */
  reset(): void {
    this.failures = 0;
  }
}

/** `ms` ± `fraction`·`ms`, uniformly (the spread of a fleet's regular polls). */
export function jitter(ms: number, fraction = 0.2, random: () => number = Math.random): number {
  return Math.max(0, Math.round(ms * (1 - fraction + 2 * fraction * random())));
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
