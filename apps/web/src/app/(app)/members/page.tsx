import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { InviteMember, RevokeInvitation } from '../../../components/invitation-controls';
import { MemberControls } from '../../../components/member-controls';
import { DataTable } from '../../../components/data-table';
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
      <DataTable
        rows={members}
        rowKey={(m) => m.userId}
        caption={`Members of ${session.tenant.name}`}
        columns={[
          {
            header: 'Email',
            cell: (m) => (
              <>
                {m.email}
                {m.userId === session.user.id ? <span className="badge"> you</span> : null}
              </>
            ),
          },
          { header: 'Role', cell: (m) => m.role },
          { header: 'Member since', className: 'small', cell: (m) => formatTime(m.since) },
          {
            header: 'Change',
            cell: (m) => (m.userId !== session.user.id && hasRole(session.role, m.role) ? <MemberControls userId={m.userId} email={m.email} role={m.role} myRole={session.role} /> : null),
          },
        ]}
      />
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
        <DataTable
          rows={invitations}
          rowKey={(i) => i.id}
          testId="invitations"
          caption={`Pending invitations to ${session.tenant.name}`}
          empty="No pending invitations: accepted, revoked and expired ones are not listed."
          emptyClassName="muted"
          columns={[
            { header: 'Email', cell: (i) => i.email },
            { header: 'Role', cell: (i) => i.role },
            { header: 'Secret starts', className: 'mono small', cell: (i) => `${i.prefix}…` },
            { header: 'Invited', className: 'small', cell: (i) => formatTime(i.createdAt) },
            { header: 'Expires', className: 'small', cell: (i) => formatTime(i.expiresAt) },
            { header: 'Revoke', cell: (i) => (hasRole(session.role, i.role) ? <RevokeInvitation id={i.id} email={i.email} /> : null) },
          ]}
        />
      </section>
    </>
  );
}
