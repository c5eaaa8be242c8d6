import { RegistryError } from '../errors.js';

/**
 * Bounds the password-hash work (scrypt, 32 MiB and tens of milliseconds each) that callers can
 * make the registry do: at most `concurrency` hashes at a time, at most `maxQueued` waiting; beyond
 * that the caller gets `rate_limited` (429) at once instead of queueing without end. Logins and
 * invitation redemptions are anonymous, so without this anyone could keep every core hashing.
 */
export class PasswordGate {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  /** Hashes started since the gate was made (tests compare it before and after). */
  started = 0;

  constructor(
    readonly concurrency = 2,
    readonly maxQueued = 16,
  ) {}

  /** Runs `fn` (one password hash or verification) when a slot is free; refuses when the queue is full. */
  async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) {
      if (this.queue.length >= this.maxQueued) {
        throw new RegistryError('rate_limited', `${what}: too many password checks in progress, try again in a few seconds`, { retryAfterMs: 1000 });
      }
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else {
      this.active++;
    }
    this.started++;
    try {
      return await fn();
    } finally {
      const next = this.queue.shift();
      // The slot passes straight to the next waiter (active stays the same), else it is freed.
      if (next) next();
      else this.active--;
    }
  }
}
