'use client';

import { useMutation, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { ago, formatTime } from '../lib/format';
import { labelsText } from '../lib/fleet';
import { useTRPC } from '../lib/trpc';
import { DataTable } from './data-table';
import { Verdict } from './verdict';

/**
 * `filter_pid=42 filter_failed=true` (spaces or commas between) → `{ filter_pid: "42", … }`, or
 * what is wrong. The registry checks each against the version's `.rodata` variables.
 */
export function parseOptionsText(text: string): { options: Record<string, string> } | { error: string } {
  const options: Record<string, string> = {};
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0 || eq === part.length - 1) return { error: `options: '${part}' is not NAME=VALUE` };
    const name = part.slice(0, eq);
    if (name in options) return { error: `options: ${name} given twice` };
    options[name] = part.slice(eq + 1);
  }
  return { options };
}

/**
 * A deployment in two steps: the selector's preview (the agents it matches now, each with the
 * version's predicted verdict on its own kernel), then the confirmation that creates it.
 */
export function DeployForm({ programs, initial }: { programs: { name: string; versions: string[] }[]; initial: { name?: string; version?: string; selector?: string } }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [name, setName] = useState(initial.name ?? programs[0]?.name ?? '');
  const versions = programs.find((p) => p.name === name)?.versions ?? [];
  const [version, setVersion] = useState(initial.version ?? versions[0] ?? '');
  const [selector, setSelector] = useState(initial.selector ?? '');
  const [optionsText, setOptionsText] = useState('');
  const [asked, setAsked] = useState<{ name: string; version: string; selector: string; optionsText: string; options: Record<string, string> } | null>(null);
  const parsed = parseOptionsText(optionsText);
  const preview = useQuery({
    // with options the verdicts are computed with them (a read an option guards is dead while it is off)
    ...trpc.deployment.preview.queryOptions(
      asked
        ? { name: asked.name, version: asked.version, selector: asked.selector, ...(Object.keys(asked.options).length > 0 ? { options: asked.options } : {}) }
        : { name: '', version: '', selector: '' },
    ),
    enabled: asked !== null,
    retry: false,
  });
  const create = useMutation(trpc.deployment.create.mutationOptions());
  const stale = asked && (asked.name !== name || asked.version !== version || asked.selector !== selector || asked.optionsText !== optionsText);

  return (
    <>
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          if ('error' in parsed) return;
          setAsked({ name, version, selector: selector.trim(), optionsText, options: parsed.options });
        }}
      >
        <label htmlFor="dep-program">Program</label>
        <select
          id="dep-program"
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            setVersion(programs.find((p) => p.name === e.target.value)?.versions[0] ?? '');
          }}
        >
          {programs.map((p) => (
            <option key={p.name} value={p.name}>
              {p.name}
            </option>
          ))}
        </select>
        <label htmlFor="dep-version">Version</label>
        <select id="dep-version" value={version} onChange={(e) => setVersion(e.target.value)}>
          {versions.map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </select>
        <label htmlFor="dep-selector">Label selector</label>
        <input id="dep-selector" value={selector} onChange={(e) => setSelector(e.target.value)} required placeholder="env=prod,zone=a" aria-describedby="dep-selector-hint" />
        <span id="dep-selector-hint" className="hint">
          k=v pairs, comma-separated: agents whose labels include every pair. Agents that match later join the deployment.
        </span>
        <label htmlFor="dep-options">Options (optional)</label>
        <input
          id="dep-options"
          value={optionsText}
          onChange={(e) => setOptionsText(e.target.value)}
          placeholder="filter_pid=42 filter_failed=true"
          aria-describedby="dep-options-hint"
          aria-invalid={'error' in parsed}
        />
        <span id="dep-options-hint" className="hint">
          {'error' in parsed
            ? parsed.error
            : ".rodata options (a libbpf tool's const volatile variables) as NAME=VALUE, set before load on every agent: integers or true/false."}
        </span>
        <button type="submit" className="button primary" disabled={!name || !version || !selector.trim() || 'error' in parsed}>
          Preview matching agents
        </button>
      </form>
      <section aria-live="polite" aria-labelledby="preview-heading" className="card" style={{ marginTop: '1rem' }}>
        <h2 id="preview-heading">Preview</h2>
        {!asked ? <p className="muted">Choose a version and a selector, then preview: nothing is deployed until you confirm.</p> : null}
        {asked && preview.isPending ? <p className="muted">Matching agents…</p> : null}
        {preview.error ? (
          <p className="alert alert-error" role="alert">
            {preview.error.message}
          </p>
        ) : null}
        {asked && preview.data ? (
          <div data-testid="deploy-preview">
            <p>
              <strong>{preview.data.total}</strong> agent{preview.data.total === 1 ? '' : 's'} match <code>{asked.selector}</code>
              {preview.data.total > preview.data.agents.length ? ` (the first ${preview.data.agents.length} listed)` : ''}.{' '}
              {Object.entries(preview.data.counts)
                .map(([k, n]) => `${n} ${k === 'no-profile' ? 'without a kernel profile yet' : k === 'pending' ? 'not computed yet' : k}`)
                .join(', ')}
              {Object.keys(preview.data.options).length > 0 ? (
                <>
                  {' '}
                  Verdicts with <code>{Object.entries(preview.data.options).map(([k, v]) => `${k}=${v}`).join(' ')}</code>.
                </>
              ) : null}
            </p>
            {preview.data.optionsNote ? <p className="muted small" data-testid="preview-options-note">{preview.data.optionsNote}</p> : null}
            <DataTable
              rows={preview.data.agents}
              rowKey={(a) => a.id}
              caption="Agents the selector matches, with the predicted verdict on each"
              empty="No agent matches now; agents that match later (enrolment, a label change) join the deployment."
              emptyClassName="muted"
              columns={[
                { header: 'Agent', cell: (a) => <Link href={`/agents/${a.id}`}>{a.hostname}</Link> },
                { header: 'Labels', className: 'mono small', cell: (a) => labelsText(a.labels) },
                { header: 'Kernel', className: 'small', cell: (a) => (a.profile ? `${a.profile.name} (${a.profile.release || '?'} ${a.profile.machine})` : 'not reported yet') },
                {
                  header: Object.keys(preview.data.options).length > 0 ? 'Predicted with the options' : 'Predicted',
                  cell: (a) => (a.verdict ? <Verdict verdict={a.verdict} /> : <span className="muted small">{a.profile ? 'computing…' : 'unknown until it reports its kernel'}</span>),
                },
                { header: 'Why', className: 'small', cell: (a) => a.reason ?? '' },
                { header: 'Last seen', className: 'small', title: (a) => formatTime(a.lastSeenAt), cell: (a) => ago(a.lastSeenAt, Date.now()) },
              ]}
            />
            {stale ? <p className="stale">The form changed since this preview: preview again before deploying.</p> : null}
            <button
              type="button"
              className="button primary"
              disabled={Boolean(stale) || create.isPending}
              onClick={async () => {
                const { optionsText: _text, options, ...rest } = asked;
                const r = await create.mutateAsync({ ...rest, ...(Object.keys(options).length > 0 ? { options } : {}) }).catch(() => null);
                if (r) {
                  router.push(`/deployments/${r.deployment.id}`);
                  router.refresh();
                }
              }}
            >
              {create.isPending
                ? 'Deploying…'
                : `Deploy ${asked.name}@${asked.version}${Object.keys(asked.options).length > 0 ? ` with ${Object.entries(asked.options).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''} to ${preview.data.total} agent${preview.data.total === 1 ? '' : 's'}`}
            </button>
            {create.error ? (
              <p className="alert alert-error" role="alert">
                {create.error.message}
              </p>
            ) : null}
          </div>
        ) : null}
      </section>
    </>
  );
}
