import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../../components/data-table';
import { StopButton } from '../../../../components/stop-button';
import { formatCount, formatTime } from '../../../../lib/format';
import { hasRole } from '../../../../lib/roles';
import { api, orNotFound, requireSession } from '../../../../lib/session';

export const metadata: Metadata = { title: 'Deployment' };

const statusText: Record<string, string> = {
  pending: 'pending: the agent has not taken it yet',
  running: 'running',
  refused: 'refused',
  failed: 'failed',
  stopped: 'stopped',
};

export default async function DeploymentPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const session = await requireSession();
  const { deployment: d, targets } = await orNotFound((await api()).deployment.get.query({ id }));
  // a program pinning providers: which implementation each agent runs (its own report)
  const viaShown = targets.some((t) => t.via.length > 0);
  const label = `${d.program.name}@${d.program.version}`;
  return (
    <>
      <p className="crumbs">
        <Link href="/deployments">Deployments</Link> /
      </p>
      <div className="panel-head">
        <h1>{label}</h1>
        <span>
          <Link className="button" href={`/deployments/${d.id}/dashboard`}>
            Output dashboard
          </Link>{' '}
          {hasRole(session.role, 'publisher') && d.desiredState === 'running' ? <StopButton id={d.id} label={label} /> : null}
        </span>
      </div>
      <dl className="kv">
        <dt>State</dt>
        <dd className={`status s-${d.desiredState === 'running' ? 'running' : 'stopped'}`} data-testid="deployment-state">
          {d.desiredState}
        </dd>
        <dt>Selector</dt>
        <dd className="mono">{d.selectorText}</dd>
        <dt>Options</dt>
        <dd className="mono" data-testid="deployment-options">
          {Object.keys(d.options).length > 0 ? (
            Object.entries(d.options)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')
          ) : (
            <span className="muted">none (the object's own .rodata values)</span>
          )}
        </dd>
        <dt>Version</dt>
        <dd>
          <Link href={`/programs/${d.program.name}/${d.program.version}`}>{label}</Link> <span className="mono small">{d.digest.slice(0, 12)}</span>
        </dd>
        <dt>Created</dt>
        <dd>{formatTime(d.createdAt)}</dd>
      </dl>
      <h2>Targets</h2>
      <p className="small">
        {d.targets.total} total: {d.targets.running} running, {d.targets.pending} pending, {d.targets.refused} refused, {d.targets.failed} failed, {d.targets.stopped} stopped.
      </p>
      <DataTable
        rows={targets}
        rowKey={(t) => t.id}
        caption="One target per matching agent"
        empty="No agent matches the selector yet. Agents that enroll with matching labels (or are relabelled) join it."
        columns={[
          {
            header: 'Agent',
            cell: (t) => (
              <>
                <Link href={`/agents/${t.agentId}`}>{t.hostname}</Link>{' '}
                <Link className="small" href={`/deployments/${d.id}/dashboard?target=${t.id}`}>
                  outputs
                </Link>
              </>
            ),
          },
          { header: 'Status', className: (t) => `status s-${t.status}`, cell: (t) => statusText[t.status] ?? t.status },
          { header: 'Reason', className: 'small', cell: (t) => t.reason ?? '' },
          viaShown && {
            header: 'Provider implementation',
            className: 'small',
            cell: (t) => (t.via.length === 0 ? '—' : t.via.map((v) => <div key={v}>{v}</div>)),
          },
          { header: 'Desired', className: 'small', cell: (t) => t.desiredState },
          { header: 'Events seen', numeric: true, cell: (t) => (t.counters?.eventsSeen !== undefined ? formatCount(t.counters.eventsSeen) : '—') },
          { header: 'Lost', numeric: true, cell: (t) => (t.counters?.eventsLost !== undefined ? formatCount(t.counters.eventsLost) : '—') },
          { header: 'Updated', className: 'small', cell: (t) => formatTime(t.updatedAt) },
        ]}
      />
    </>
  );
}
