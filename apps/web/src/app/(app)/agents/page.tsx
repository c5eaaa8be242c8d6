import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '../../../components/data-table';
import { Pager } from '../../../components/pager';
import { isStale, labelsText } from '../../../lib/fleet';
import { ago, formatTime, query } from '../../../lib/format';
import { api } from '../../../lib/session';

export const metadata: Metadata = { title: 'Agents' };

export default async function AgentsPage({ searchParams }: { searchParams: Promise<{ q?: string; selector?: string; cursor?: string }> }) {
  const sp = await searchParams;
  const { agents, nextCursor } = await (await api()).agent.list.query({ limit: 100, cursor: sp.cursor || undefined, q: sp.q || undefined, selector: sp.selector || undefined }).catch((err) => {
    if (sp.selector) return { agents: [], nextCursor: null, error: String((err as Error).message) };
    throw err;
  });
  const now = Date.now();
  return (
    <>
      <h1>Agents</h1>
      <form className="toolbar" action="/agents" aria-label="Filter agents">
        <label htmlFor="a-q">
          Hostname contains
          <input id="a-q" name="q" defaultValue={sp.q ?? ''} />
        </label>
        <label htmlFor="a-sel">
          Labels (k=v,…)
          <input id="a-sel" name="selector" defaultValue={sp.selector ?? ''} placeholder="env=prod" />
        </label>
        <button type="submit" className="button">
          Filter
        </button>
        {sp.q || sp.selector ? <Link href="/agents">Clear filters</Link> : null}
      </form>
      <DataTable
        rows={agents}
        rowKey={(a) => a.id}
        caption="Agents"
        empty={
          sp.q || sp.selector
            ? 'No agent matches these filters.'
            : 'No agents yet. An admin makes an enrolment token (`probeyard agents enroll-token --label env=prod`), then on a node: `probeyard-agent enroll --registry URL --token T`.'
        }
        columns={[
          {
            header: 'Agent',
            cell: (a) => (
              <>
                <Link href={`/agents/${a.id}`}>
                  <strong>{a.hostname}</strong>
                </Link>
                {a.revokedAt ? <span className="badge badge-yanked"> revoked</span> : null}
                {a.agentVersion ? <div className="muted small">agent {a.agentVersion}</div> : null}
              </>
            ),
          },
          { header: 'Labels', className: 'mono small', cell: (a) => labelsText(a.labels) },
          {
            header: 'Kernel',
            className: 'small',
            cell: (a) => (a.kernel ? <Link href={`/kernels/${a.kernel.name}`}>{`${a.kernel.release || a.kernel.name} ${a.kernel.machine}`}</Link> : 'not reported yet'),
          },
          {
            header: 'Last seen',
            className: 'small',
            title: (a) => formatTime(a.lastSeenAt),
            cell: (a) => (!a.revokedAt && isStale(a.lastSeenAt, now) ? <span className="stale">stale: {ago(a.lastSeenAt, now)}</span> : ago(a.lastSeenAt, now)),
          },
          {
            header: 'Targets',
            className: 'small',
            cell: (a) =>
              Object.entries(a.targets)
                .map(([s, n]) => `${n} ${s}`)
                .join(', ') || 'none',
          },
        ]}
      />
      <Pager noun="agents" count={agents.length} isFirst={!sp.cursor} firstHref={`/agents${query({ q: sp.q, selector: sp.selector })}`} nextHref={nextCursor ? `/agents${query({ q: sp.q, selector: sp.selector, cursor: nextCursor })}` : null} />
    </>
  );
}
