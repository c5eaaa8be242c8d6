/**
 * Login attempt limiter. An attempt is counted when it starts, before the password hash runs, in
 * three windows at once:
 * - per (account, client address): `perAccountAddress` attempts (a user mistyping from one place);
 * - per client address (an IPv6 address by its /64), across accounts: `perAddress` (one address
 *   guessing many accounts);
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
/**
 * The address a limit counts: an IPv4 address as it is, an IPv6 address by its /64 (one
 * subscriber usually holds a whole /64, so per-address limits on single IPv6 addresses would be
 * 2^64 times too generous). Anything else (`local` in tests) as it is.
 */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  if (right.some((g) => g.includes('.')) || left.some((g) => g.includes('.'))) return address; // IPv4-mapped: rare here, kept whole
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  if (groups.length !== 8) return address;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

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
  /** No password was checked after all (the hash was refused for load): the attempt is taken back. */
  cancel(): void;
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
  begin(account: string, rawAddress: string): AttemptResult {
    const address = addressKey(rawAddress);
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
    const takeBack = (from: string[]) => {
      for (const key of from) {
        const list = this.windows.get(key);
        const i = list?.indexOf(at) ?? -1;
        if (list && i >= 0) list.splice(i, 1);
      }
    };
    return {
      ok: true,
      attempt: {
        succeed: () => {
          if (done) return;
          done = true;
          this.windows.delete(keys.pair);
          takeBack([keys.address, keys.account]);
        },
        cancel: () => {
          if (done) return;
          done = true;
          takeBack([keys.pair, keys.address, keys.account]);
        },
      },
    };
  }
}
