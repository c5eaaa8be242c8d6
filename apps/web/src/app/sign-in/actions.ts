'use server';

import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { registryClient, registryErrorCode } from '../../lib/registry-client';
import { clientIp, sessionCookie, sessionCookieOptions } from '../../lib/session';

/** Where to go after signing in: a path of this site only (never an open redirect). */
async function safeNext(raw: FormDataEntryValue | null): Promise<string> {
  const next = typeof raw === 'string' ? raw : '';
  return next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/programs';
}

function back(error: string, form: FormData, extra: Record<string, string> = {}): never {
  const q = new URLSearchParams({ error, ...extra });
  const next = form.get('next');
  if (typeof next === 'string' && next) q.set('next', next);
  redirect(`/sign-in?${q}`);
}

/** Email + password (+ tenant): the registry's `auth.login` makes a session token, kept in the cookie. */
export async function signInWithPassword(form: FormData) {
  const email = String(form.get('email') ?? '').trim();
  const password = String(form.get('password') ?? '');
  const tenant = String(form.get('tenant') ?? '').trim();
  if (!email || !password) back('missing', form, { email });
  let made: { token: string; expiresAt: string };
  try {
    made = await registryClient(undefined, await clientIp()).auth.login.mutate({ email, password, ...(tenant ? { tenant } : {}) });
  } catch (err) {
    const code = registryErrorCode(err);
    back(code === 'TOO_MANY_REQUESTS' ? 'rate_limited' : code === 'BAD_REQUEST' ? (tenant ? 'invalid' : 'choose_tenant') : code ? 'invalid' : 'unreachable', form, { email });
  }
  const seconds = Math.max(60, Math.floor((Date.parse(made.expiresAt) - Date.now()) / 1000));
  (await cookies()).set(sessionCookie, made.token, await sessionCookieOptions(seconds));
  redirect(await safeNext(form.get('next')));
}

/** An API token: checked with `whoami`, then kept in the cookie (12 hours) like a session. */
export async function signInWithToken(form: FormData) {
  const token = String(form.get('token') ?? '').trim();
  if (!token) back('missing_token', form);
  try {
    await registryClient(token, await clientIp()).whoami.query();
  } catch (err) {
    back(registryErrorCode(err) ? 'bad_token' : 'unreachable', form);
  }
  (await cookies()).set(sessionCookie, token, await sessionCookieOptions(12 * 3600));
  redirect(await safeNext(form.get('next')));
}
