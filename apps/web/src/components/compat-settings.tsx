'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useTRPC } from '../lib/trpc';

/**
 * The tenant's compat setting `strictCharSign` (registry `compat.setSettings`, admin): also refuse
 * a read of a plain `char` field whose signedness changed. A change recomputes the matrix.
 */
export function CompatSettings({ strictCharSign, canChange }: { strictCharSign: boolean; canChange: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const set = useMutation(trpc.compat.setSettings.mutationOptions({ onSuccess: () => router.refresh() }));
  return (
    <p className="small" data-testid="compat-settings">
      A read of a field whose signedness changed is <em>incompatible</em> (<code>signedness-changed</code>); plain <code>char</code> text{' '}
      <strong>{strictCharSign ? 'is refused too (strict)' : 'is let through (lenient, the default)'}</strong>.{' '}
      {canChange ? (
        <button type="button" className="button small" disabled={set.isPending} onClick={() => set.mutate({ strictCharSign: !strictCharSign })}>
          {strictCharSign ? 'Let char signedness through' : 'Refuse char signedness changes too'}
        </button>
      ) : null}
      {set.error ? (
        <span role="alert" className="stale">
          {' '}
          {set.error.message}
        </span>
      ) : null}
    </p>
  );
}
