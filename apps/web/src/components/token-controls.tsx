'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { type Role, roles } from '../lib/roles';
import { useTRPC } from '../lib/trpc';

/** Make an API token (of at most your role); its secret is shown once, here. */
export function CreateToken({ role }: { role: Role }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [secret, setSecret] = useState<string | null>(null);
  const create = useMutation(trpc.token.create.mutationOptions());
  const allowed = roles.slice(roles.indexOf(role));
  return (
    <form
      className="form"
      onSubmit={async (e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        const days = Number(f.get('days'));
        const r = await create
          .mutateAsync({ name: String(f.get('name')), role: f.get('role') as Role, ...(days > 0 ? { expiresInDays: days } : {}) })
          .catch(() => null);
        if (r) {
          setSecret(r.secret);
          router.refresh();
        }
      }}
    >
      <label htmlFor="tok-name">Name</label>
      <input id="tok-name" name="name" required maxLength={100} placeholder="ci publisher" />
      <label htmlFor="tok-role">Role</label>
      <select id="tok-role" name="role" defaultValue={role}>
        {allowed.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <label htmlFor="tok-days">Expires after (days, empty for never)</label>
      <input id="tok-days" name="days" type="number" min={1} max={3650} />
      <button type="submit" className="button primary" disabled={create.isPending}>
        Create token
      </button>
      {create.error ? (
        <p className="alert alert-error" role="alert">
          {create.error.message}
        </p>
      ) : null}
      {secret ? (
        <div className="alert alert-ok" role="status">
          <p>Copy the token now: it is shown once and only its hash is kept.</p>
          <code data-testid="new-token" className="mono">
            {secret}
          </code>
        </div>
      ) : null}
    </form>
  );
}

export function RevokeToken({ id, name }: { id: string; name: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const revoke = useMutation(trpc.token.revoke.mutationOptions({ onSuccess: () => router.refresh() }));
  return (
    <button type="button" className="button small danger" disabled={revoke.isPending} onClick={() => revoke.mutate({ id })} aria-label={`Revoke token ${name}`}>
      Revoke
    </button>
  );
}
