import type { Metadata } from 'next';
import { LiveEditor } from '../../../components/live/live-editor';
import { hasRole } from '../../../lib/roles';
import { api, requireSession } from '../../../lib/session';

export const metadata: Metadata = { title: 'Live' };

/** The registry's default limit on a session's duration (a tenant's own limit is enforced by `live.start`). */
const maxDurationSeconds = 300;

export default async function LivePage() {
  const s = await requireSession();
  const { agents } = await (await api()).agent.list.query({ limit: 100 });
  const live = agents
    .filter((a) => !a.revokedAt)
    .map((a) => ({ id: a.id, hostname: a.hostname, labels: a.labels, kernel: a.kernel ? a.kernel.release || a.kernel.name : null }));
  return (
    <>
      <h1>Live</h1>
      <p className="muted">
        Write a program and run it on a node now. It is compiled, relocated and verified in this browser against the chosen agent&apos;s kernel as you type; the agent
        does the same before it runs it, and ends it itself at its duration.
      </p>
      <LiveEditor agents={live} canRun={hasRole(s.role, 'publisher')} maxDurationSeconds={maxDurationSeconds} />
    </>
  );
}
