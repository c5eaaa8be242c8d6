import type { Metadata } from 'next';
import Link from 'next/link';
import { getSession } from '../../../lib/session';
import { acceptInvitation } from './actions';

export const metadata: Metadata = { title: 'Accept an invitation' };

const messages: Record<string, string> = {
  missing_secret: 'Paste the invitation secret you were given (it starts with pyv_).',
  missing_password: 'Enter a password: a new one for a new account, or your current one if you already have an account.',
  signed_out: 'You are not signed in any more: sign in, or accept with your password below.',
  unusable: 'That invitation does not work: it was already used, revoked, has expired, or the secret is mistyped. Ask for a new one.',
  weak_password: 'Choose a password of at least 12 characters for your new account.',
  existing_account:
    "An account already exists for the invited email, and that is not its password. Give the account's current password, or sign in as it and accept here.",
  wrong_account: 'The signed-in credential cannot accept this invitation: it is for another email, or the token is capped below its role. Sign in as the invited account with its password, then accept.',
  rate_limited: 'Too many attempts from here. Wait a few minutes, then try again.',
  already_member: 'You are already a member of that tenant.',
  failed: 'The invitation could not be accepted. Try again.',
  unreachable: 'The registry does not answer. Try again in a moment.',
};

/** Reachable without signing in: redeem an invitation's one-time secret. */
export default async function AcceptInvitationPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const q = await searchParams;
  const session = await getSession().catch(() => null);
  const error = q.error ? (messages[q.error] ?? messages.failed) : undefined;
  return (
    <main className="sign-in">
      <h1>
        <span className="brand-mark" aria-hidden="true">
          ◆
        </span>{' '}
        Accept an invitation
      </h1>
      {q.joined ? (
        <div role="status" className="alert alert-ok">
          <p data-testid="joined">
            {q.email} joined {q.joined} as {q.role}
            {q.created ? ', with the new account and the password you chose' : ''}.
          </p>
          <p>
            <Link href={`/sign-in?${new URLSearchParams({ email: q.email ?? '' })}`}>Sign in</Link> (type the tenant <code>{q.joined}</code> if you belong to several).
          </p>
        </div>
      ) : null}
      {error ? (
        <p role="alert" className="alert alert-error">
          {error}
        </p>
      ) : null}
      <section aria-labelledby="accept-heading" className="card">
        <h2 id="accept-heading">With a password</h2>
        <p className="muted">
          No account yet: choose your password (at least 12 characters); the account is made now. Already have one: give its current password.
        </p>
        <form action={acceptInvitation} className="form">
          <label htmlFor="secret">Invitation secret</label>
          <input id="secret" name="secret" type="password" autoComplete="off" required placeholder="pyv_…" />
          <label htmlFor="password">Password</label>
          <input id="password" name="password" type="password" autoComplete="new-password" required maxLength={256} />
          <button type="submit" className="button primary">
            Accept invitation
          </button>
        </form>
      </section>
      {session ? (
        <section aria-labelledby="session-heading" className="card">
          <h2 id="session-heading">As {session.user.email}</h2>
          <p className="muted">You are signed in: accept an invitation for this account without typing its password.</p>
          <form action={acceptInvitation} className="form">
            <input type="hidden" name="as" value="session" />
            <label htmlFor="session-secret">Invitation secret</label>
            <input id="session-secret" name="secret" type="password" autoComplete="off" required placeholder="pyv_…" />
            <button type="submit" className="button">
              Accept as {session.user.email}
            </button>
          </form>
        </section>
      ) : null}
    </main>
  );
}
