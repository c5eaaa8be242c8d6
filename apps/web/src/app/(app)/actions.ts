'use server';

import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { registryClient } from '../../lib/registry-client';
import { getSession, sessionCookie, sessionToken } from '../../lib/session';

/** Signs out: a login session is revoked at the registry; an API token is only forgotten here. */
export async function signOut() {
  const token = await sessionToken();
  if (token?.startsWith('pys_')) {
    const s = await getSession().catch(() => null);
    if (s) await registryClient(token).token.revoke.mutate({ id: s.tokenId }).catch(() => {});
  }
  (await cookies()).delete(sessionCookie);
  redirect('/sign-in?signed_out=1');
}
