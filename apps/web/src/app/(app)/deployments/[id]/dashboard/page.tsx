import type { Metadata } from 'next';
import Link from 'next/link';
import { Dashboard } from '../../../../../components/dashboard';
import { api, orNotFound } from '../../../../../lib/session';

export const metadata: Metadata = { title: 'Outputs' };

export default async function DashboardPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ target?: string; range?: string }> }) {
  const { id } = await params;
  const sp = await searchParams;
  const initial = await orNotFound((await api()).output.latest.query({ deploymentId: id, ...(sp.target ? { targetId: sp.target } : {}) }));
  const d = initial.deployment;
  const target = sp.target ? initial.targets.find((t) => t.targetId === sp.target) : undefined;
  return (
    <>
      <p className="crumbs">
        <Link href="/deployments">Deployments</Link> / <Link href={`/deployments/${d.id}`}>{`${d.program}@${d.version}`}</Link> /
      </p>
      <h1>
        Outputs of {d.program}@{d.version} {target ? <>on {target.hostname}</> : <span className="muted small">fleet-wide, {initial.targets.length} targets</span>}
      </h1>
      <p className="muted small">
        Selector <code>{d.selectorText}</code> · deployment {d.desiredState}
        {target ? (
          <>
            {' '}
            · <Link href={`/deployments/${d.id}/dashboard`}>All targets merged</Link>
          </>
        ) : null}
      </p>
      <Dashboard key={`${sp.target ?? ''}:${sp.range ?? ''}`} deploymentId={d.id} targetId={sp.target} initial={initial} range={sp.range ?? '15m'} />
    </>
  );
}
