import type { Metadata } from 'next';
import { LiveEditor } from '../../../components/live/live-editor';
import { LiveLimits } from '../../../components/live/live-limits';
import { hasRole } from '../../../lib/roles';
import { api, requireSession } from '../../../lib/session';

export const metadata: Metadata = { title: 'Live' };

/** `live.start`'s default duration when the tenant's limit allows it. */
const defaultDurationSeconds = 10;

export default async function LivePage() {
  const s = await requireSession();
  const client = await api();
  const [{ agents }, { limits, ceilings }] = await Promise.all([client.agent.list.query({ limit: 100 }), client.live.limits.query()]);
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
      <LiveLimits limits={limits} ceilings={ceilings} canChange={hasRole(s.role, 'admin')} />
      <LiveEditor
        agents={live}
        canRun={hasRole(s.role, 'publisher')}
        maxDurationSeconds={limits.maxDurationSeconds}
        defaultDurationSeconds={Math.min(defaultDurationSeconds, limits.maxDurationSeconds)}
      />
    </>
  );
}
