import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../components/data-table';
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
      <DataTable
        rows={tokens}
        rowKey={(t) => t.id}
        caption="Tokens, newest first"
        empty="No tokens here."
        columns={[
          {
            header: 'Name',
            cell: (t) => (
              <>
                {t.name}
                {t.id === session.tokenId ? <span className="badge"> this session</span> : null}
              </>
            ),
          },
          { header: 'Kind', className: 'small', cell: (t) => (t.kind === 'session' ? 'sign-in' : 'API') },
          { header: 'Role', className: 'small', cell: (t) => t.role },
          { header: 'Owner', className: 'small', cell: (t) => t.user.email },
          { header: 'Prefix', className: 'mono small', cell: (t) => `${t.prefix}…` },
          { header: 'Created', className: 'small', cell: (t) => formatTime(t.createdAt) },
          { header: 'Expires', className: 'small', cell: (t) => (t.expiresAt ? formatTime(t.expiresAt) : 'never') },
          { header: 'Last used', className: 'small', cell: (t) => formatTime(t.lastUsedAt) },
          {
            header: 'Actions',
            cell: (t) => (t.revokedAt ? <span className="badge badge-yanked">revoked</span> : t.id === session.tokenId ? null : <RevokeToken id={t.id} name={t.name} />),
          },
        ]}
      />
      <Pager noun="tokens" count={tokens.length} isFirst={!sp.cursor} firstHref={`/tokens${query({ kind, revoked: sp.revoked })}`} nextHref={nextCursor ? `/tokens${query({ kind, revoked: sp.revoked, cursor: nextCursor })}` : null} />
      <section className="card" aria-labelledby="new-token-heading" style={{ marginTop: '1.5rem' }}>
        <h2 id="new-token-heading">New API token</h2>
        <CreateToken role={session.role} />
      </section>
    </>
  );
}
