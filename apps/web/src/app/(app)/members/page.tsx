import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { MemberControls } from '../../../components/member-controls';
import { Pager } from '../../../components/pager';
import { formatTime, query } from '../../../lib/format';
import { hasRole } from '../../../lib/roles';
import { api, requireSession } from '../../../lib/session';

export const metadata: Metadata = { title: 'Members' };

export default async function MembersPage({ searchParams }: { searchParams: Promise<{ cursor?: string }> }) {
  const sp = await searchParams;
  const session = await requireSession();
  if (!hasRole(session.role, 'admin')) redirect('/programs');
  const { members, nextCursor } = await (await api()).member.list.query({ limit: 100, cursor: sp.cursor || undefined });
  return (
    <>
      <h1>Members</h1>
      <p className="muted">
        Roles, strongest first: owner, admin (members, agents, audit), publisher (publish, deploy, upload kernels), viewer (read). A role never grants more
        than yours.
      </p>
      <table className="list">
        <caption className="visually-hidden">Members of {session.tenant.name}</caption>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Member since</th>
            <th scope="col">Change</th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <tr key={m.userId}>
              <td>
                {m.email}
                {m.userId === session.user.id ? <span className="badge"> you</span> : null}
              </td>
              <td>{m.role}</td>
              <td className="small">{formatTime(m.since)}</td>
              <td>{m.userId !== session.user.id && hasRole(session.role, m.role) ? <MemberControls userId={m.userId} email={m.email} role={m.role} myRole={session.role} /> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager noun="members" count={members.length} isFirst={!sp.cursor} firstHref="/members" nextHref={nextCursor ? `/members${query({ cursor: nextCursor })}` : null} />
      <section className="card" aria-labelledby="invite-heading" style={{ marginTop: '1.5rem' }}>
        <h2 id="invite-heading">Invite someone</h2>
        <p className="muted">
          Invitations (a one-time secret the invited person redeems to choose their own password) arrive with the registry&apos;s invitation procedure; until
          then an admin adds members with <code>probeyard</code> or the API.
        </p>
      </section>
    </>
  );
}
