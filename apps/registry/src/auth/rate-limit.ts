/**
 * Login attempt limiter. An attempt is counted when it starts, before the password hash runs, in
 * three windows at once:
 * - per (account, client address): `perAccountAddress` attempts (a user mistyping from one place);
 * - per client address, across accounts: `perAddress` (one address guessing many accounts);
 * - per account, across addresses: `perAccount` (many addresses guessing one account).
 *
 * Counting synchronously at the start (no `await` between the check and the count) means
 * concurrent guesses cannot all pass: with a limit of 5, at most 5 of 50 simultaneous guesses
 * reach the hash. A success takes its own attempt back out of the address and account windows and
 * forgets the (account, address) failures of that account only: logging into one's own account
 * never clears what the same address spent guessing another.
 *
 * In memory, per process: behind a load balancer each replica counts on its own, which bounds an
 * attacker to the limits × replicas per window.
 */
export interface LoginLimits {
  perAccountAddress: number;
  perAddress: number;
  perAccount: number;
  windowMs: number;
}

export const defaultLoginLimits: LoginLimits = { perAccountAddress: 5, perAddress: 20, perAccount: 100, windowMs: 15 * 60_000 };

/** One attempt in progress: say how it ended. */
export interface LoginAttempt {
  /** The password was right: this attempt is no failure, and the account's failures from this address are forgotten. */
  succeed(): void;
}

export type AttemptResult = { ok: true; attempt: LoginAttempt } | { ok: false; retryAfterMs: number; limit: 'account and address' | 'address' | 'account' };

export class LoginLimiter {
  readonly limits: LoginLimits;
  private readonly windows = new Map<string, number[]>();

  constructor(
    limits: Partial<LoginLimits> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.limits = { ...defaultLoginLimits, ...limits };
  }

  private recent(key: string): number[] {
    const since = this.now() - this.limits.windowMs;
    const list = (this.windows.get(key) ?? []).filter((t) => t > since);
    if (list.length === 0) this.windows.delete(key);
    else this.windows.set(key, list);
    return list;
  }

  private wait(list: number[], max: number): number {
    if (list.length < max) return 0;
    return Math.max(1, (list[list.length - max] ?? 0) + this.limits.windowMs - this.now());
  }

  /**
   * Counts an attempt of `account` from `address`, or says how long until one is allowed. Call it
   * before any password work, and call `succeed()` on the attempt when the password was right.
   */
  begin(account: string, address: string): AttemptResult {
    const keys = { pair: `p|${account}|${address}`, address: `a|${address}`, account: `u|${account}` };
    const checks = [
      [this.wait(this.recent(keys.pair), this.limits.perAccountAddress), 'account and address'],
      [this.wait(this.recent(keys.address), this.limits.perAddress), 'address'],
      [this.wait(this.recent(keys.account), this.limits.perAccount), 'account'],
    ] as const;
    const refused = checks.filter(([ms]) => ms > 0);
    if (refused.length > 0) {
      const [retryAfterMs, limit] = refused.reduce((a, b) => (b[0] > a[0] ? b : a));
      return { ok: false, retryAfterMs, limit };
    }
    if (this.windows.size > 100_000) for (const k of [...this.windows.keys()]) this.recent(k);
    const at = this.now();
    for (const key of Object.values(keys)) this.windows.set(key, [...(this.windows.get(key) ?? []), at]);
    let done = false;
    return {
      ok: true,
      attempt: {
        succeed: () => {
          if (done) return;
          done = true;
          this.windows.delete(keys.pair);
          for (const key of [keys.address, keys.account]) {
            const list = this.windows.get(key);
            const i = list?.indexOf(at) ?? -1;
            if (list && i >= 0) list.splice(i, 1);
          }
        },
      },
    };
  }
}
