/**
 * Failed-attempt limiter for logins, per key (email and client address): after `maxFailures`
 * failures within `windowMs`, the key is refused until the oldest failure leaves the window.
 * In memory, per process: behind a load balancer each replica counts on its own, which bounds an
 * attacker to `maxFailures` × replicas per window.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    readonly maxFailures = 5,
    readonly windowMs = 15 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  private recent(key: string): number[] {
    const since = this.now() - this.windowMs;
    const list = (this.failures.get(key) ?? []).filter((t) => t > since);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  /** Milliseconds until `key` may try again, 0 when it may now. */
  retryAfterMs(key: string): number {
    const list = this.recent(key);
    if (list.length < this.maxFailures) return 0;
    return (list[list.length - this.maxFailures] ?? 0) + this.windowMs - this.now();
  }

  fail(key: string): void {
    if (this.failures.size > 100_000) {
      for (const k of [...this.failures.keys()]) this.recent(k);
    }
    this.failures.set(key, [...this.recent(key), this.now()]);
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }
}
