import type { RegistryDeps } from '../context.js';
import { RegistryError } from '../errors.js';
import { hashPassword, verifyPassword } from './password.js';
import type { LoginAttempt } from './rate-limit.js';

/**
 * Checks a password someone offers for `account` (an email), the way every entry point does it:
 * the attempt is counted first (login limiter, per account and client address), then the hash runs
 * through the password gate (a few at a time). `stored` null (no such user, no password) costs the
 * same. `what` prefixes the errors (`login`, `set password`, `accept invitation`).
 */
export async function checkPassword(deps: RegistryDeps, what: string, account: string, address: string, password: string, stored: string | null): Promise<boolean> {
  const attempt = countAttempt(deps, what, account, address);
  return verifyCounted(deps, what, attempt, password, stored);
}

/** Counts one attempt of `account` from `address` now (synchronously), or throws `rate_limited`. */
export function countAttempt(deps: RegistryDeps, what: string, account: string, address: string): LoginAttempt {
  const r = deps.loginLimiter.begin(account, address);
  if (!r.ok) {
    throw new RegistryError('rate_limited', `${what}: too many attempts (per ${r.limit}), try again in ${Math.ceil(r.retryAfterMs / 1000)} s`, {
      retryAfterMs: r.retryAfterMs,
    });
  }
  return r.attempt;
}

/** Verifies a password of a counted attempt through the gate; a right one marks the attempt a success. */
export async function verifyCounted(deps: RegistryDeps, what: string, attempt: LoginAttempt, password: string, stored: string | null): Promise<boolean> {
  let ok: boolean;
  try {
    ok = await deps.passwordGate.run(what, () => verifyPassword(password, stored));
  } catch (err) {
    // Refused for load (or failed) before any answer: not a guess, so not held against anyone.
    attempt.cancel();
    throw err;
  }
  if (ok) attempt.succeed();
  return ok;
}

/** Hashes a new password through the password gate. */
export function hashPasswordGated(deps: RegistryDeps, what: string, password: string): Promise<string> {
  return deps.passwordGate.run(what, () => hashPassword(password));
}
