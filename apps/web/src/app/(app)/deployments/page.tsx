import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../components/data-table';
import { Pager } from '../../../components/pager';
import { formatTime, query } from '../../../lib/format';
import { hasRole } from '../../../lib/roles';
import { api, requireSession } from '../../../lib/session';

export const metadata: Metadata = { title: 'Deployments' };

export default async function DeploymentsPage({ searchParams }: { searchParams: Promise<{ state?: string; cursor?: string }> }) {
  const sp = await searchParams;
  const session = await requireSession();
  const state = sp.state === 'running' || sp.state === 'stopped' ? sp.state : undefined;
  const { deployments, nextCursor } = await (await api()).deployment.list.query({ limit: 50, cursor: sp.cursor || undefined, state });
  const publisher = hasRole(session.role, 'publisher');
  return (
    <>
      <div className="panel-head">
        <h1>Deployments</h1>
        {publisher ? (
          <Link className="button primary" href="/deployments/new">
            New deployment
          </Link>
        ) : null}
      </div>
      <nav className="toolbar" aria-label="Filter by state">
        <Link href="/deployments" aria-current={!state ? 'page' : undefined}>
          All
        </Link>
        <Link href="/deployments?state=running" aria-current={state === 'running' ? 'page' : undefined}>
          Running
        </Link>
        <Link href="/deployments?state=stopped" aria-current={state === 'stopped' ? 'page' : undefined}>
          Stopped
        </Link>
      </nav>
      <DataTable
        rows={deployments}
        rowKey={(d) => d.id}
        caption="Deployments, newest first"
        empty={
          <>
            {state ? `No ${state} deployments.` : 'No deployments yet.'}{' '}
            {publisher ? 'Deploy a published version to the agents a label selector matches with “New deployment”.' : 'A publisher of this tenant deploys versions to agents.'}
          </>
        }
        columns={[
          {
            header: 'Deployment',
            cell: (d) => (
              <>
                <Link href={`/deployments/${d.id}`}>
                  <strong>
                    {d.program.name}@{d.program.version}
                  </strong>
                </Link>{' '}
                <Link className="small" href={`/deployments/${d.id}/dashboard`}>
                  dashboard
                </Link>
              </>
            ),
          },
          { header: 'Selector', className: 'mono small', cell: (d) => d.selectorText },
          { header: 'State', className: (d) => `status s-${d.desiredState === 'running' ? 'running' : 'stopped'}`, cell: (d) => d.desiredState },
          {
            header: 'Targets',
            className: 'small',
            cell: (d) => (
              <>
                {d.targets.total} total: {d.targets.running} running, {d.targets.pending} pending
                {d.targets.refused ? <span className="s-refused">, {d.targets.refused} refused</span> : null}
                {d.targets.failed ? <span className="s-failed">, {d.targets.failed} failed</span> : null}
                {d.targets.stopped ? `, ${d.targets.stopped} stopped` : null}
              </>
            ),
          },
          { header: 'Created', className: 'small', cell: (d) => formatTime(d.createdAt) },
        ]}
      />
      <Pager noun="deployments" count={deployments.length} isFirst={!sp.cursor} firstHref={`/deployments${query({ state })}`} nextHref={nextCursor ? `/deployments${query({ state, cursor: nextCursor })}` : null} />
    </>
  );
}
