// The signed-in user's credential lives in an httpOnly, SameSite=Lax cookie that only this server
// reads; browser JavaScript never sees it. Pages and route handlers call the registry with it.
import { cookies, headers } from 'next/headers';
import { notFound, redirect } from 'next/navigation';
import { cache } from 'react';
import { type RegistryClient, registryClient, registryErrorCode } from './registry-client';
import type { Role } from './roles';

export const sessionCookie = 'probeyard_session';

export interface Session {
  tenant: { id: string; name: string };
  user: { id: string; email: string };
  role: Role;
  tokenId: string;
}

/** Cookie attributes: httpOnly, SameSite=Lax (links from elsewhere still open a page; no cross-site POST carries it). */
export async function sessionCookieOptions(maxAgeSeconds: number) {
  const h = await headers();
  const env = process.env.PROBEYARD_WEB_SECURE_COOKIES;
  const secure = env === '1' || (env !== '0' && h.get('x-forwarded-proto') === 'https');
  return { httpOnly: true, sameSite: 'lax' as const, secure, path: '/', maxAge: maxAgeSeconds };
}

export async function sessionToken(): Promise<string | undefined> {
  return (await cookies()).get(sessionCookie)?.value || undefined;
}

/** The client address, passed to the registry for its records. */
export async function clientIp(): Promise<string | undefined> {
  const h = await headers();
  return h.get('x-probeyard-client-ip') ?? undefined;
}

/** Who the cookie's credential acts as, once per request; null when there is none or it stopped working. */
export const getSession = cache(async (): Promise<Session | null> => {
  const token = await sessionToken();
  if (!token) return null;
  try {
    return await registryClient(token, await clientIp()).whoami.query();
  } catch (err) {
    const code = registryErrorCode(err);
    if (code === 'UNAUTHORIZED' || code === 'FORBIDDEN') return null;
    throw err;
  }
});

/** The session, or a redirect to the sign-in page that comes back here afterwards. */
export async function requireSession(): Promise<Session> {
  const s = await getSession();
  if (!s) {
    const path = (await headers()).get('x-probeyard-path') ?? '/';
    redirect(`/sign-in?next=${encodeURIComponent(path)}`);
  }
  return s;
}

/** The registry as the signed-in user (redirects to sign-in without a session). */
export const api = cache(async (): Promise<RegistryClient> => {
  await requireSession();
  return registryClient(await sessionToken(), await clientIp());
});

/** Awaits a registry read; NOT_FOUND (a missing row, or another tenant's) renders the not-found page. */
export async function orNotFound<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (registryErrorCode(err) === 'NOT_FOUND' || registryErrorCode(err) === 'BAD_REQUEST') notFound();
    throw err;
  }
}
