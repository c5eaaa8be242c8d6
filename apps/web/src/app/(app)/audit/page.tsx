import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { DataTable } from '../../../components/data-table';
import { Pager } from '../../../components/pager';
import { formatTime, query } from '../../../lib/format';
import { hasRole } from '../../../lib/roles';
import { api, requireSession } from '../../../lib/session';

export const metadata: Metadata = { title: 'Audit log' };

function detailText(detail: unknown): string {
  if (!detail || typeof detail !== 'object') return '';
  return Object.entries(detail as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(', ')
    .slice(0, 300);
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<{ cursor?: string }> }) {
  const sp = await searchParams;
  const session = await requireSession();
  if (!hasRole(session.role, 'admin')) redirect('/programs');
  const { entries, nextCursor } = await (await api()).audit.list.query({ limit: 100, cursor: sp.cursor || undefined });
  return (
    <>
      <h1>Audit log</h1>
      <p className="muted">Every change, written in the same transaction as the change, newest first.</p>
      <DataTable
        rows={entries}
        rowKey={(e) => e.id}
        caption="Audit entries, newest first"
        empty="Nothing recorded yet."
        columns={[
          { header: 'When', className: 'small', cell: (e) => formatTime(e.at) },
          { header: 'Action', className: 'mono small', cell: (e) => e.action },
          {
            header: 'Actor',
            className: 'small',
            cell: (e) => (
              <>
                {e.actor.kind}
                {e.actor.id ? <span className="muted"> {e.actor.id.slice(0, 8)}</span> : null}
              </>
            ),
          },
          {
            header: 'Target',
            className: 'small',
            cell: (e) => (
              <>
                {e.target.type}
                {e.target.id ? <span className="muted"> {e.target.id.slice(0, 8)}</span> : null}
              </>
            ),
          },
          { header: 'Detail', className: 'small', cell: (e) => detailText(e.detail) },
        ]}
      />
      <Pager noun="entries" count={entries.length} isFirst={!sp.cursor} firstHref="/audit" nextHref={nextCursor ? `/audit${query({ cursor: nextCursor })}` : null} />
    </>
  );
}
