'use server';

import { redirect } from 'next/navigation';
import { registryClient, registryErrorCode } from '../../../lib/registry-client';
import { clientIp, sessionToken } from '../../../lib/session';

function back(error: string): never {
  redirect(`/invitations/accept?error=${encodeURIComponent(error)}`);
}

/**
 * Redeems an invitation's secret at the registry (`auth.acceptInvitation`), with the browser's
 * address for the registry's limits. `as=session`: as the signed-in account (the session cookie's
 * credential), no password. Otherwise the password chooses a new account's, or is an existing
 * account's own. The secret never travels in a URL.
 */
export async function acceptInvitation(form: FormData) {
  const secret = String(form.get('secret') ?? '').trim();
  const password = String(form.get('password') ?? '');
  const asSession = form.get('as') === 'session';
  if (!secret) back('missing_secret');
  const token = asSession ? await sessionToken() : undefined;
  if (asSession && !token) back('signed_out');
  if (!asSession && !password) back('missing_password');
  let done: { tenant: { name: string }; role: string; email: string; accountCreated: boolean };
  try {
    done = await registryClient(token, await clientIp()).auth.acceptInvitation.mutate({ secret, ...(asSession ? {} : { password }) });
  } catch (err) {
    const code = registryErrorCode(err);
    back(
      code === 'NOT_FOUND'
        ? 'unusable'
        : code === 'BAD_REQUEST'
          ? 'weak_password'
          : code === 'FORBIDDEN'
            ? asSession
              ? 'wrong_account'
              : 'existing_account'
            : code === 'TOO_MANY_REQUESTS'
              ? 'rate_limited'
              : code === 'CONFLICT'
                ? 'already_member'
                : code
                  ? 'failed'
                  : 'unreachable',
    );
  }
  const q = new URLSearchParams({ joined: done.tenant.name, role: done.role, email: done.email, ...(done.accountCreated ? { created: '1' } : {}) });
  redirect(`/invitations/accept?${q}`);
}
