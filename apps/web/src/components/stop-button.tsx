'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useTRPC } from '../lib/trpc';

/** Stops a deployment (agents stop its targets at their next poll), after a confirmation step. */
export function StopButton({ id, label }: { id: string; label: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [confirming, setConfirming] = useState(false);
  const stop = useMutation(trpc.deployment.stop.mutationOptions({ onSuccess: () => router.refresh() }));
  if (!confirming) {
    return (
      <button type="button" className="button danger" onClick={() => setConfirming(true)}>
        Stop deployment
      </button>
    );
  }
  return (
    <span className="toolbar">
      <span>Stop {label} on every agent?</span>
      <button type="button" className="button danger" disabled={stop.isPending} onClick={() => stop.mutate({ id })}>
        Yes, stop it
      </button>
      <button type="button" className="button" onClick={() => setConfirming(false)}>
        Keep running
      </button>
      {stop.error ? (
        <span role="alert" className="stale">
          {stop.error.message}
        </span>
      ) : null}
    </span>
  );
}
