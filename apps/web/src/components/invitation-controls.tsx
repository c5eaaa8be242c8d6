'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { type Role, roles } from '../lib/roles';
import { useTRPC } from '../lib/trpc';

/**
 * Invite someone by email with a role (never above yours). The one-time secret is shown once,
 * here; the invited person redeems it at /invitations/accept and chooses their own password (or,
 * with an account, accepts with that account's own credential). The answer is the same whether
 * or not the email has an account anywhere on the instance.
 */
export function InviteMember({ role }: { role: Role }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [made, setMade] = useState<{ email: string; secret: string; expiresAt: string } | null>(null);
  const invite = useMutation(trpc.member.invite.mutationOptions());
  const allowed = roles.slice(roles.indexOf(role));
  return (
    <form
      className="form"
      onSubmit={async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const f = new FormData(form);
        const r = await invite.mutateAsync({ email: String(f.get('email')), role: f.get('role') as Role }).catch(() => null);
        if (r) {
          setMade({ email: r.invitation.email, secret: r.secret, expiresAt: r.invitation.expiresAt });
          form.reset();
          router.refresh();
        }
      }}
    >
      <label htmlFor="inv-email">Email</label>
      <input id="inv-email" name="email" type="email" required maxLength={254} autoComplete="off" />
      <label htmlFor="inv-role">Role</label>
      <select id="inv-role" name="role" defaultValue="viewer">
        {allowed.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <button type="submit" className="button primary" disabled={invite.isPending}>
        Invite
      </button>
      {invite.error ? (
        <p className="alert alert-error" role="alert">
          {invite.error.message}
        </p>
      ) : null}
      {made ? (
        <div className="alert alert-ok" role="status">
          <p>
            Give {made.email} this secret: it is shown once, works once, and expires {new Date(made.expiresAt).toUTCString()}. They open{' '}
            <code>/invitations/accept</code> on this site (or run <code>probeyard invitations accept SECRET</code>).
          </p>
          <code data-testid="invitation-secret" className="mono">
            {made.secret}
          </code>
        </div>
      ) : null}
    </form>
  );
}

export function RevokeInvitation({ id, email }: { id: string; email: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const revoke = useMutation(trpc.member.revokeInvitation.mutationOptions({ onSuccess: () => router.refresh() }));
  return (
    <span className="toolbar">
      <button type="button" className="button small danger" disabled={revoke.isPending} onClick={() => revoke.mutate({ id })} aria-label={`Revoke the invitation of ${email}`}>
        Revoke
      </button>
      {revoke.error ? (
        <span role="alert" className="stale small">
          {revoke.error.message}
        </span>
      ) : null}
    </span>
  );
}
