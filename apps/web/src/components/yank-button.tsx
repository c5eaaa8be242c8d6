'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useId, useState } from 'react';
import { useTRPC } from '../lib/trpc';

/** Yank a version with a reason (it stays readable; new deployments of it are refused). */
export function YankButton({ name, version }: { name: string; version: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const id = useId();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const yank = useMutation(trpc.version.yank.mutationOptions({ onSuccess: () => router.refresh() }));
  if (!open) {
    return (
      <button type="button" className="button small danger" onClick={() => setOpen(true)}>
        Yank {version}
      </button>
    );
  }
  return (
    <form
      className="toolbar"
      onSubmit={(e) => {
        e.preventDefault();
        yank.mutate({ name, version, reason });
      }}
    >
      <label htmlFor={id}>
        Why yank {version}?
        <input id={id} value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={500} placeholder="reads a field that moved in 6.8" />
      </label>
      <button type="submit" className="button small danger" disabled={yank.isPending || !reason.trim()}>
        Yank
      </button>
      <button type="button" className="button small" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {yank.error ? (
        <span role="alert" className="stale">
          {yank.error.message}
        </span>
      ) : null}
    </form>
  );
}
