'use client';

import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useTRPC } from '../../lib/trpc';

export interface LiveLimitValues {
  maxSessions: number;
  maxDurationSeconds: number;
  cpuBudgetPercent: number;
}

const fields = [
  { key: 'maxSessions', label: 'Sessions at once' },
  { key: 'maxDurationSeconds', label: 'Longest session (seconds)' },
  { key: 'cpuBudgetPercent', label: 'CPU budget per agent (%)' },
] as const;

/**
 * The tenant's live limits (registry `live.limits`) and, for an admin, a form that changes them
 * (`live.setLimits`), each at most the instance's ceiling. Sessions running keep theirs.
 */
export function LiveLimits({ limits, ceilings, canChange }: { limits: LiveLimitValues; ceilings: LiveLimitValues; canChange: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const set = useMutation(trpc.live.setLimits.mutationOptions({ onSuccess: () => router.refresh() }));
  const summary = (
    <p className="small" data-testid="live-limits">
      This tenant runs at most <strong>{limits.maxSessions}</strong> live sessions at once, each at most <strong>{limits.maxDurationSeconds} s</strong>, with a CPU
      budget of <strong>{limits.cpuBudgetPercent}%</strong> of a CPU on each agent{' '}
      <span className="muted">
        (the instance allows up to {ceilings.maxSessions}, {ceilings.maxDurationSeconds} s, {ceilings.cpuBudgetPercent}%)
      </span>
      .
    </p>
  );
  if (!canChange) return summary;
  return (
    <>
      {summary}
      <details>
      <summary className="small">Change the live limits</summary>
      <form
        className="toolbar"
        aria-label="Live limits"
        data-testid="live-limits-form"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const change = Object.fromEntries(fields.map(({ key }) => [key, Number(f.get(key))])) as unknown as LiveLimitValues;
          set.mutate(change);
        }}
      >
        {fields.map(({ key, label }) => (
          <label key={key} className="small" htmlFor={`live-limit-${key}`}>
            {label}{' '}
            <input id={`live-limit-${key}`} name={key} type="number" min={1} max={ceilings[key]} step={1} required defaultValue={limits[key]} style={{ width: '6rem' }} />
          </label>
        ))}
        <button type="submit" className="button small" disabled={set.isPending}>
          Save live limits
        </button>
        {set.error ? (
          <span role="alert" className="stale small">
            {set.error.message}
          </span>
        ) : null}
        {set.data ? (
          <span role="status" className="small muted">
            {set.data.changed ? 'Saved: sessions started from now on get these limits.' : 'Nothing changed.'}
          </span>
        ) : null}
      </form>
      </details>
    </>
  );
}
