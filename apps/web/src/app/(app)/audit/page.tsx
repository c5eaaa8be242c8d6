import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
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
      {entries.length === 0 ? (
        <p className="empty">Nothing recorded yet.</p>
      ) : (
        <table className="list">
          <caption className="visually-hidden">Audit entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Actor</th>
              <th scope="col">Target</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <td className="small">{formatTime(e.at)}</td>
                <td className="mono small">{e.action}</td>
                <td className="small">
                  {e.actor.kind}
                  {e.actor.id ? <span className="muted"> {e.actor.id.slice(0, 8)}</span> : null}
                </td>
                <td className="small">
                  {e.target.type}
                  {e.target.id ? <span className="muted"> {e.target.id.slice(0, 8)}</span> : null}
                </td>
                <td className="small">{detailText(e.detail)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager noun="entries" count={entries.length} isFirst={!sp.cursor} firstHref="/audit" nextHref={nextCursor ? `/audit${query({ cursor: nextCursor })}` : null} />
    </>
  );
}
