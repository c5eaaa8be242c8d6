import type { Metadata } from 'next';
import Link from 'next/link';
import { isStale, labelsText } from '../../../../lib/fleet';
import { ago, formatCount, formatTime } from '../../../../lib/format';
import { api, orNotFound } from '../../../../lib/session';

export const metadata: Metadata = { title: 'Agent' };

export default async function AgentPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const { agent: a, targets } = await orNotFound((await api()).agent.get.query({ id }));
  const now = Date.now();
  return (
    <>
      <p className="crumbs">
        <Link href="/agents">Agents</Link> /
      </p>
      <h1>{a.hostname}</h1>
      <dl className="kv">
        <dt>Labels</dt>
        <dd className="mono">{labelsText(a.labels) || '—'}</dd>
        <dt>Kernel</dt>
        <dd>{a.kernel ? <Link href={`/kernels/${a.kernel.name}`}>{`${a.kernel.name} (${a.kernel.release} ${a.kernel.machine})`}</Link> : 'not reported yet'}</dd>
        <dt>Last seen</dt>
        <dd>
          {!a.revokedAt && isStale(a.lastSeenAt, now) ? <span className="stale">stale: {ago(a.lastSeenAt, now)}</span> : ago(a.lastSeenAt, now)}{' '}
          <span className="muted small">({formatTime(a.lastSeenAt)})</span>
        </dd>
        <dt>Enrolled</dt>
        <dd>{formatTime(a.enrolledAt)}</dd>
        {a.revokedAt ? (
          <>
            <dt>Revoked</dt>
            <dd className="stale">{formatTime(a.revokedAt)}</dd>
          </>
        ) : null}
      </dl>
      <h2>Targets</h2>
      {targets.length === 0 ? (
        <p className="empty">No deployment targets this agent. Deployments whose selector matches its labels do.</p>
      ) : (
        <table className="list">
          <thead>
            <tr>
              <th scope="col">Program</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              <th scope="col">Desired</th>
              <th scope="col" className="num">
                Events seen
              </th>
              <th scope="col" className="num">
                Lost
              </th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {targets.map((t) => (
              <tr key={t.id}>
                <td>
                  <Link href={`/deployments/${t.deploymentId}`}>
                    {t.program.name}@{t.program.version}
                  </Link>{' '}
                  <Link className="small" href={`/deployments/${t.deploymentId}/dashboard?target=${t.id}`}>
                    outputs
                  </Link>
                </td>
                <td className={`status s-${t.status}`}>{t.status}</td>
                <td className="small">{t.reason ?? ''}</td>
                <td className="small">{t.desiredState}</td>
                <td className="num">{t.counters?.eventsSeen !== undefined ? formatCount(t.counters.eventsSeen) : '—'}</td>
                <td className="num">{t.counters?.eventsLost !== undefined ? formatCount(t.counters.eventsLost) : '—'}</td>
                <td className="small">{formatTime(t.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
