import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { InviteMember, RevokeInvitation } from '../../../components/invitation-controls';
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
  const registry = await api();
  const [{ members, nextCursor }, { invitations }] = await Promise.all([
    registry.member.list.query({ limit: 100, cursor: sp.cursor || undefined }),
    registry.member.invitations.query({ limit: 100 }),
  ]);
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
          The invited person chooses their own password with the one-time secret; someone who already has an account accepts with that account&apos;s own
          credential. Nobody&apos;s password is ever set for them.
        </p>
        <InviteMember role={session.role} />
      </section>
      <section aria-labelledby="pending-heading" style={{ marginTop: '1.5rem' }}>
        <h2 id="pending-heading">Pending invitations</h2>
        {invitations.length === 0 ? (
          <p className="muted">No pending invitations: accepted, revoked and expired ones are not listed.</p>
        ) : (
          <table className="list" data-testid="invitations">
            <caption className="visually-hidden">Pending invitations to {session.tenant.name}</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Secret starts</th>
                <th scope="col">Invited</th>
                <th scope="col">Expires</th>
                <th scope="col">Revoke</th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr key={i.id}>
                  <td>{i.email}</td>
                  <td>{i.role}</td>
                  <td className="mono small">{i.prefix}…</td>
                  <td className="small">{formatTime(i.createdAt)}</td>
                  <td className="small">{formatTime(i.expiresAt)}</td>
                  <td>{hasRole(session.role, i.role) ? <RevokeInvitation id={i.id} email={i.email} /> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
