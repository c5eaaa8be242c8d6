import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../../components/data-table';
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
      <DataTable
        rows={targets}
        rowKey={(t) => t.id}
        empty="No deployment targets this agent. Deployments whose selector matches its labels do."
        columns={[
          {
            header: 'Program',
            cell: (t) => (
              <>
                <Link href={`/deployments/${t.deploymentId}`}>
                  {t.program.name}@{t.program.version}
                </Link>{' '}
                <Link className="small" href={`/deployments/${t.deploymentId}/dashboard?target=${t.id}`}>
                  outputs
                </Link>
              </>
            ),
          },
          { header: 'Status', className: (t) => `status s-${t.status}`, cell: (t) => t.status },
          { header: 'Reason', className: 'small', cell: (t) => t.reason ?? '' },
          { header: 'Desired', className: 'small', cell: (t) => t.desiredState },
          { header: 'Events seen', numeric: true, cell: (t) => (t.counters?.eventsSeen !== undefined ? formatCount(t.counters.eventsSeen) : '—') },
          { header: 'Lost', numeric: true, cell: (t) => (t.counters?.eventsLost !== undefined ? formatCount(t.counters.eventsLost) : '—') },
          { header: 'Updated', className: 'small', cell: (t) => formatTime(t.updatedAt) },
        ]}
      />
    </>
  );
}
