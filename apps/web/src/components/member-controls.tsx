'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useId } from 'react';
import { type Role, roles } from '../lib/roles';
import { useTRPC } from '../lib/trpc';

/** Change a member's role (never above yours) or remove them; the registry keeps the last owner. */
export function MemberControls({ userId, email, role, myRole }: { userId: string; email: string; role: Role; myRole: Role }) {
  const trpc = useTRPC();
  const router = useRouter();
  const id = useId();
  const setRole = useMutation(trpc.member.setRole.mutationOptions({ onSuccess: () => router.refresh() }));
  const remove = useMutation(trpc.member.remove.mutationOptions({ onSuccess: () => router.refresh() }));
  const allowed = roles.slice(roles.indexOf(myRole));
  const error = setRole.error ?? remove.error;
  return (
    <span className="toolbar">
      <label htmlFor={id} className="visually-hidden">
        Role of {email}
      </label>
      <select id={id} defaultValue={role} disabled={setRole.isPending} onChange={(e) => setRole.mutate({ userId, role: e.target.value as Role })}>
        {allowed.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      <button type="button" className="button small danger" disabled={remove.isPending} onClick={() => remove.mutate({ userId })} aria-label={`Remove ${email}`}>
        Remove
      </button>
      {error ? (
        <span role="alert" className="stale small">
          {error.message}
        </span>
      ) : null}
    </span>
  );
}
