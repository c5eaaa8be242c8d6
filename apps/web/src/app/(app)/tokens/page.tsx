import type { Metadata } from 'next';
import Link from 'next/link';
import { Pager } from '../../../components/pager';
import { CreateToken, RevokeToken } from '../../../components/token-controls';
import { formatTime, query } from '../../../lib/format';
import { hasRole } from '../../../lib/roles';
import { api, requireSession } from '../../../lib/session';

export const metadata: Metadata = { title: 'Tokens' };

export default async function TokensPage({ searchParams }: { searchParams: Promise<{ kind?: string; revoked?: string; cursor?: string }> }) {
  const sp = await searchParams;
  const session = await requireSession();
  const kind = sp.kind === 'api' || sp.kind === 'session' ? sp.kind : undefined;
  const includeRevoked = sp.revoked === '1';
  const { tokens, nextCursor } = await (await api()).token.list.query({ kind, includeRevoked, limit: 50, cursor: sp.cursor || undefined });
  const admin = hasRole(session.role, 'admin');
  return (
    <>
      <h1>Tokens</h1>
      <p className="muted">{admin ? 'Every token of the tenant (you may revoke those of a role no stronger than yours).' : 'Your tokens.'} Secrets are never shown again after creation.</p>
      <nav className="toolbar" aria-label="Filter tokens">
        <Link href={`/tokens${query({ revoked: sp.revoked })}`} aria-current={!kind ? 'page' : undefined}>
          All
        </Link>
        <Link href={`/tokens${query({ kind: 'api', revoked: sp.revoked })}`} aria-current={kind === 'api' ? 'page' : undefined}>
          API tokens
        </Link>
        <Link href={`/tokens${query({ kind: 'session', revoked: sp.revoked })}`} aria-current={kind === 'session' ? 'page' : undefined}>
          Sign-in sessions
        </Link>
        <Link href={`/tokens${query({ kind, revoked: includeRevoked ? undefined : '1' })}`}>{includeRevoked ? 'Hide revoked' : 'Show revoked'}</Link>
      </nav>
      {tokens.length === 0 ? (
        <p className="empty">No tokens here.</p>
      ) : (
        <table className="list">
          <caption className="visually-hidden">Tokens, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Role</th>
              <th scope="col">Owner</th>
              <th scope="col">Prefix</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr key={t.id}>
                <td>
                  {t.name}
                  {t.id === session.tokenId ? <span className="badge"> this session</span> : null}
                </td>
                <td className="small">{t.kind === 'session' ? 'sign-in' : 'API'}</td>
                <td className="small">{t.role}</td>
                <td className="small">{t.user.email}</td>
                <td className="mono small">{t.prefix}…</td>
                <td className="small">{formatTime(t.createdAt)}</td>
                <td className="small">{t.expiresAt ? formatTime(t.expiresAt) : 'never'}</td>
                <td className="small">{formatTime(t.lastUsedAt)}</td>
                <td>{t.revokedAt ? <span className="badge badge-yanked">revoked</span> : t.id === session.tokenId ? null : <RevokeToken id={t.id} name={t.name} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager noun="tokens" count={tokens.length} isFirst={!sp.cursor} firstHref={`/tokens${query({ kind, revoked: sp.revoked })}`} nextHref={nextCursor ? `/tokens${query({ kind, revoked: sp.revoked, cursor: nextCursor })}` : null} />
      <section className="card" aria-labelledby="new-token-heading" style={{ marginTop: '1.5rem' }}>
        <h2 id="new-token-heading">New API token</h2>
        <CreateToken role={session.role} />
      </section>
    </>
  );
}
