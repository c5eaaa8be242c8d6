import type { Metadata } from 'next';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { registryUrl } from '../../lib/registry-client';
import { getSession } from '../../lib/session';
import { signInWithPassword, signInWithToken } from './actions';

export const metadata: Metadata = { title: 'Sign in' };

const messages: Record<string, string> = {
  missing: 'Enter your email and password.',
  missing_token: 'Paste an API token (it starts with pyt_).',
  invalid: 'That email, password and tenant do not match an account. Check them, or sign in with an API token.',
  choose_tenant: 'Your account belongs to several tenants: type the tenant to sign in to.',
  rate_limited: 'Too many sign-in attempts from here or for this email, or the registry is busy checking passwords. Wait a few minutes, then try again.',
  bad_token: 'The registry does not accept that token (unknown, revoked or expired). Make a new one with `probeyard tokens create`.',
  unreachable: 'The registry does not answer. Check that it runs (`probeyard serve`), then try again.',
};

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const q = await searchParams;
  if (await getSession().catch(() => null)) redirect(q.next?.startsWith('/') && !q.next.startsWith('//') ? q.next : '/programs');
  const error = q.error ? (messages[q.error] ?? 'Sign-in failed. Try again.') : undefined;
  return (
    <main className="sign-in">
      <h1>
        <span className="brand-mark" aria-hidden="true">
          ◆
        </span>{' '}
        Probeyard
      </h1>
      <p className="muted">eBPF tracing programs, module-like with no ABI: compatibility computed per kernel, never assumed.</p>
      {error ? (
        <p role="alert" className="alert alert-error">
          {error}
        </p>
      ) : null}
      <section aria-labelledby="password-heading" className="card">
        <h2 id="password-heading">Sign in with your password</h2>
        <form action={signInWithPassword} className="form">
          <input type="hidden" name="next" value={q.next ?? ''} />
          <label htmlFor="email">Email</label>
          <input id="email" name="email" type="email" autoComplete="username" required defaultValue={q.email ?? ''} />
          <label htmlFor="password">Password</label>
          <input id="password" name="password" type="password" autoComplete="current-password" required />
          <label htmlFor="tenant">
            Tenant <span className="muted">(only if you belong to several)</span>
          </label>
          <input id="tenant" name="tenant" type="text" autoComplete="organization" pattern="[a-z0-9][a-z0-9._\-]{0,62}" />
          <button type="submit" className="button primary">
            Sign in
          </button>
        </form>
      </section>
      <section aria-labelledby="token-heading" className="card">
        <h2 id="token-heading">Or with an API token</h2>
        <form action={signInWithToken} className="form">
          <input type="hidden" name="next" value={q.next ?? ''} />
          <label htmlFor="token">API token</label>
          <input id="token" name="token" type="password" autoComplete="off" required placeholder="pyt_…" />
          <button type="submit" className="button">
            Sign in with token
          </button>
        </form>
      </section>
      <p className="muted small">
        Registry: <code>{registryUrl()}</code>. Invited? <Link href="/invitations/accept">Accept the invitation</Link> to choose your password. No
        tenant yet? An instance admin makes one with <code>probeyard admin create-tenant NAME --owner EMAIL</code>.
      </p>
    </main>
  );
}
