import type { Metadata } from 'next';
import Link from 'next/link';
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
      {targets.length === 0 ? (
        <p className="empty">No agent matches the selector yet. Agents that enroll with matching labels (or are relabelled) join it.</p>
      ) : (
        <table className="list">
          <caption className="visually-hidden">One target per matching agent</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Status</th>
              <th scope="col">Reason</th>
              {viaShown ? <th scope="col">Provider implementation</th> : null}
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
                  <Link href={`/agents/${t.agentId}`}>{t.hostname}</Link>{' '}
                  <Link className="small" href={`/deployments/${d.id}/dashboard?target=${t.id}`}>
                    outputs
                  </Link>
                </td>
                <td className={`status s-${t.status}`}>{statusText[t.status] ?? t.status}</td>
                <td className="small">{t.reason ?? ''}</td>
                {viaShown ? (
                  <td className="small">
                    {t.via.length === 0
                      ? '—'
                      : t.via.map((v) => (
                          <div key={v}>{v}</div>
                        ))}
                  </td>
                ) : null}
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
