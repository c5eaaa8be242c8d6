'use client';

// The live editor: write a script or Probeyard assembly, see it compiled, relocated and verified
// for the chosen agent's kernel as you type (in this browser: packages/script, compat and
// verifier), run it on that agent (or the agents a selector matches) now, and watch its maps and
// printf lines arrive (`live.outputs`, a long poll). The session ends at its duration, on Stop, or
// when the page closes (`live.stop` sent with `keepalive`, which outlives the page).
import { parseProvider, type ProviderDefinition } from '@probeyard/compat';
import type { AppRouter } from '@probeyard/registry';
import type { MapSnapshotJson } from '@probeyard/runtime';
import { TRPCClientError } from '@trpc/client';
import type { inferRouterOutputs } from '@trpc/server';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { type CheckResult, checkProgram, type FormatsAnswer, type LiveLanguage } from '../../lib/live/check';
import type { LiveMapView } from '../../lib/live/maps';
import { formatCount } from '../../lib/format';
import { useTRPCClient } from '../../lib/trpc';
import { MapPanel } from '../dashboard';
import { Verdict } from '../verdict';
import { CodeEditor } from './code-editor';

type Session = inferRouterOutputs<AppRouter>['live']['get']['session'];

export interface LiveAgent {
  id: string;
  hostname: string;
  labels: Record<string, string>;
  kernel: string | null;
}

const examples: Record<LiveLanguage, string> = {
  script: 'tracepoint:sched:sched_switch {\n  @switches[args.next_comm] = count();\n}\n',
  asm: '.license "GPL"\n.map counts hash key=4 value=8 entries=10240\n\n.section tracepoint/sched/sched_switch\ncount_switch:\n    r2 = *(u32 *)(r1 + sched_switch.next_pid)\n    *(u32 *)(r10 - 4) = r2\n    r6 = 1\n    *(u64 *)(r10 - 16) = r6\n    r2 = r10\n    r2 += -4\n    r1 = counts ll\n    call bpf_map_lookup_elem\n    if r0 == 0 goto insert\n    lock *(u64 *)(r0 + 0) += r6\n    goto out\ninsert:\n    r2 = r10\n    r2 += -4\n    r3 = r10\n    r3 += -16\n    r1 = counts ll\n    r4 = 0\n    call bpf_map_update_elem\nout:\n    r0 = 0\n    exit\n',
};

/** `k=v,k2=v2` → pairs; undefined when malformed. */
function parseSelector(text: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const i = part.indexOf('=');
    if (i <= 0) return undefined;
    out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return Object.keys(out).length ? out : undefined;
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function errorText(err: unknown): string {
  return err instanceof TRPCClientError || err instanceof Error ? err.message : String(err);
}

/** The tail keeps the newest lines only (drawn whole, without a scrolling box). */
const maxLines = 200;

/** `maxDurationSeconds` and `defaultDurationSeconds` come from the tenant's live limits (`live.limits`). */
export function LiveEditor({
  agents,
  canRun,
  maxDurationSeconds,
  defaultDurationSeconds,
}: { agents: LiveAgent[]; canRun: boolean; maxDurationSeconds: number; defaultDurationSeconds: number }) {
  const client = useTRPCClient();
  const [language, setLanguage] = useState<LiveLanguage>('script');
  const [source, setSource] = useState(examples.script);
  const [editorKey, setEditorKey] = useState(0);
  const [mode, setMode] = useState<'agent' | 'selector'>('agent');
  const [agentId, setAgentId] = useState(agents[0]?.id ?? '');
  const [selectorText, setSelectorText] = useState('');
  const [duration, setDuration] = useState(defaultDurationSeconds);
  // a limit changed on this page (an admin's form) holds the chosen duration to the new maximum
  useEffect(() => setDuration((d) => Math.min(d, maxDurationSeconds)), [maxDurationSeconds]);
  const [check, setCheck] = useState<CheckResult | null>(null);
  const [checkError, setCheckError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);

  const selector = mode === 'selector' ? parseSelector(selectorText) : undefined;
  const matching = useMemo(() => (selector ? agents.filter((a) => Object.entries(selector).every(([k, v]) => a.labels[k] === v)) : []), [agents, selector]);
  // the kernel the editor checks against: the chosen agent, or the first the selector matches
  const checkAgent = mode === 'agent' ? agents.find((a) => a.id === agentId) : matching[0];

  // ---- check as the user types (debounced; a newer edit wins) -------------------------------
  const formatsCache = useRef(new Map<string, Promise<FormatsAnswer>>());
  const providersCache = useRef(new Map<string, Promise<ProviderDefinition | undefined>>());
  const checkSeq = useRef(0);
  useEffect(() => {
    const seq = ++checkSeq.current;
    if (!checkAgent) {
      setCheck(null);
      return;
    }
    setChecking(true);
    const timer = setTimeout(() => {
      const fetchFormats = (events: string[]) => {
        const key = `${checkAgent.id}|${[...events].sort().join(',')}`;
        const had = formatsCache.current.get(key);
        if (had) return had;
        const p = client.kernel.formatsFor.query({ agentId: checkAgent.id, events: events.slice(0, 32) });
        p.catch(() => formatsCache.current.delete(key));
        formatsCache.current.set(key, p);
        return p;
      };
      // provider probes (`io:::done`): the newest release of each, as the agent gets it with the session
      const fetchProviders = async (names: string[]) => {
        const found = await Promise.all(
          names.map((name) => {
            let p = providersCache.current.get(name);
            if (!p) {
              p = client.provider.get.query({ name }).then(
                (r) => parseProvider(r.text),
                () => undefined,
              );
              providersCache.current.set(name, p);
            }
            return p;
          }),
        );
        return found.filter((d) => d !== undefined);
      };
      checkProgram(source, language, fetchFormats, fetchProviders)
        .then((r) => {
          if (seq !== checkSeq.current) return;
          setCheck(r);
          setCheckError(null);
        })
        .catch((err) => {
          if (seq === checkSeq.current) setCheckError(errorText(err));
        })
        .finally(() => {
          if (seq === checkSeq.current) setChecking(false);
        });
    }, 300);
    return () => clearTimeout(timer);
  }, [source, language, checkAgent, client]);

  // ---- a running session --------------------------------------------------------------------
  const [session, setSession] = useState<Session | null>(null);
  const [runError, setRunError] = useState<string | null>(null);
  const [starting, setStarting] = useState(false);
  const [snapshots, setSnapshots] = useState<Map<string, { maps: MapSnapshotJson[]; eventsSeen: number; eventsLost: number }>>(new Map());
  const [lines, setLines] = useState<{ key: string; agent: string; text: string }[]>([]);
  const [ended, setEnded] = useState(false);
  const [firstResultMs, setFirstResultMs] = useState<number | null>(null);
  const [startedMs, setStartedMs] = useState<number | null>(null);
  const [runningMs, setRunningMs] = useState<number | null>(null);
  const live = useRef<{ id: string; abort: AbortController } | null>(null);

  const stopRemote = useCallback((id: string, keepalive: boolean) => {
    // through this app's /api/trpc (the cookie's credential); keepalive outlives a closing page
    return fetch('/api/trpc/live.stop', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId: id }), keepalive, credentials: 'same-origin' });
  }, []);

  useEffect(() => {
    const onHide = () => {
      const s = live.current;
      if (s) void stopRemote(s.id, true);
    };
    window.addEventListener('pagehide', onHide);
    return () => {
      window.removeEventListener('pagehide', onHide);
      onHide();
      live.current?.abort.abort();
    };
  }, [stopRemote]);

  async function follow(id: string, abort: AbortController, startedAt: number) {
    let cursor: string | undefined;
    let lastGet = 0;
    let first = true;
    // when the node reports it running (a short poll of the session, until then)
    void (async () => {
      while (!abort.signal.aborted) {
        const g = await client.live.get.query({ sessionId: id }).catch(() => undefined);
        if (g?.session.agents.some((a) => a.state !== 'starting')) {
          setRunningMs(Math.round(performance.now() - startedAt));
          setSession(g.session);
          return;
        }
        if (g && g.session.state !== 'starting' && g.session.state !== 'running') return;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const hostOf = new Map<string, string>();
    while (!abort.signal.aborted) {
      let r: Awaited<ReturnType<typeof client.live.outputs.query>>;
      try {
        r = await client.live.outputs.query({ sessionId: id, ...(cursor ? { after: cursor } : {}), waitMs: 5000 }, { signal: abort.signal });
      } catch (err) {
        if (abort.signal.aborted) return;
        setRunError(`outputs: ${errorText(err)} (trying again)`);
        await new Promise((res) => setTimeout(res, 1000));
        continue;
      }
      cursor = r.cursor;
      if (r.outputs.length) {
        if (first) {
          first = false;
          setFirstResultMs(Math.round(performance.now() - startedAt));
        }
        const newLines: { key: string; agent: string; text: string }[] = [];
        setSnapshots((prev) => {
          const next = new Map(prev);
          for (const o of r.outputs) {
            const p = o.payload as { maps?: MapSnapshotJson[]; eventsSeen?: number; eventsLost?: number };
            if (o.kind === 'map_snapshot' && Array.isArray(p.maps)) next.set(o.agentId, { maps: p.maps, eventsSeen: p.eventsSeen ?? 0, eventsLost: p.eventsLost ?? 0 });
          }
          return next;
        });
        for (const o of r.outputs) {
          if (o.kind !== 'events') continue;
          const p = o.payload as { events?: { text?: string; source?: string; data?: unknown }[] };
          (p.events ?? []).forEach((e, i) => {
            newLines.push({ key: `${o.agentId}:${o.seq}:${i}`, agent: hostOf.get(o.agentId) ?? o.agentId.slice(0, 8), text: e.text ?? JSON.stringify(e.data ?? null) });
          });
        }
        if (newLines.length) setLines((prev) => [...prev, ...newLines].slice(-maxLines));
      }
      if (r.ended || Date.now() - lastGet > 1000) {
        lastGet = Date.now();
        try {
          const g = await client.live.get.query({ sessionId: id });
          for (const a of g.session.agents) hostOf.set(a.agentId, a.name);
          setSession(g.session);
        } catch {
          // the next round asks again
        }
      }
      if (r.ended) {
        setEnded(true);
        if (live.current?.id === id) live.current = null;
        return;
      }
    }
  }

  async function run() {
    setRunError(null);
    const target = mode === 'agent' ? { agentId } : selectorText.trim() ? { selector: selectorText.trim() } : undefined;
    if (!target) {
      setRunError('Choose an agent, or give a selector such as env=dev.');
      return;
    }
    setStarting(true);
    setStartedMs(null);
    setRunningMs(null);
    setFirstResultMs(null);
    live.current?.abort.abort();
    const startedAt = performance.now();
    try {
      const r = await client.live.start.mutate({ language, source, target: target as never, durationSeconds: duration });
      setStartedMs(Math.round(performance.now() - startedAt));
      setSession(r.session);
      setSnapshots(new Map());
      setLines([]);
      setEnded(false);
      const abort = new AbortController();
      live.current = { id: r.session.id, abort };
      void follow(r.session.id, abort, startedAt);
    } catch (err) {
      setRunError(errorText(err));
    } finally {
      setStarting(false);
    }
  }

  async function stop() {
    const s = live.current;
    if (!s) return;
    try {
      const res = await stopRemote(s.id, false);
      if (!res.ok) setRunError(`stop: the registry answered ${res.status}`);
    } catch (err) {
      setRunError(`stop: ${errorText(err)}`);
    }
  }

  // ---- publish as a version -------------------------------------------------------------------
  const [pubName, setPubName] = useState('');
  const [pubVersion, setPubVersion] = useState('');
  const [pubResult, setPubResult] = useState<{ ok: boolean; text: string; href?: string } | null>(null);
  async function publish(e: React.FormEvent) {
    e.preventDefault();
    if (check?.kind !== 'checked') return;
    try {
      const r = await client.program.publish.mutate({ name: pubName.trim(), version: pubVersion.trim(), artifact: toBase64(check.artifact) });
      setPubResult({ ok: true, text: `${r.created ? 'Published' : 'Already published'} ${pubName.trim()}@${r.version.version}.`, href: `/programs/${encodeURIComponent(pubName.trim())}/${encodeURIComponent(r.version.version)}` });
    } catch (err) {
      setPubResult({ ok: false, text: errorText(err) });
    }
  }

  const diagnostics = check?.kind === 'errors' ? check.diagnostics : check?.kind === 'checked' ? check.warnings : [];
  // the merge uses packages/runtime (which brings the VM): loaded when the first snapshot comes, not with the page
  const [merge, setMerge] = useState<((s: { maps: MapSnapshotJson[] }[]) => LiveMapView[]) | null>(null);
  useEffect(() => {
    if (snapshots.size === 0 || merge) return;
    void import('../../lib/live/maps').then((m) => setMerge(() => m.mergeLiveMaps));
  }, [snapshots, merge]);
  const maps = useMemo(() => (merge ? merge([...snapshots.values()]) : []), [snapshots, merge]);
  const eventsSeen = [...snapshots.values()].reduce((s, x) => s + x.eventsSeen, 0);
  const eventsLost = [...snapshots.values()].reduce((s, x) => s + x.eventsLost, 0);
  const running = session !== null && !ended && (session.state === 'starting' || session.state === 'running');

  return (
    <div className="live">
      <section className="card" aria-labelledby="live-program">
        <div className="panel-head">
          <h2 id="live-program">Program</h2>
          <label className="small">
            Language{' '}
            <select
              value={language}
              data-testid="live-language"
              onChange={(e) => {
                const l = e.target.value as LiveLanguage;
                setLanguage(l);
                setSource(examples[l]);
                setEditorKey((k) => k + 1);
              }}
            >
              <option value="script">Script (bpftrace-like)</option>
              <option value="asm">Probeyard assembly</option>
            </select>
          </label>
        </div>
        <CodeEditor key={editorKey} initial={source} language={language} diagnostics={diagnostics} onChange={setSource} label={language === 'asm' ? 'Probeyard assembly source' : 'Script source'} />
        <div aria-live="polite" data-testid="live-check">
          {checking ? <p className="muted small">Checking…</p> : null}
          {checkError ? <p className="alert alert-error">Could not check: {checkError}</p> : null}
          {!checkAgent ? <p className="muted small">{mode === 'agent' ? 'Choose an agent to check the program against its kernel.' : 'No agent matches this selector: nothing to check against.'}</p> : null}
          {check?.kind === 'no-kernel' ? <p className="alert">{check.message}</p> : null}
          {check?.kind === 'errors' ? (
            <div className="alert alert-error" role="alert">
              <p>
                {check.diagnostics.length} error{check.diagnostics.length === 1 ? '' : 's'}
                {check.profile ? ` (compiled for ${check.profile.name})` : ''}:
              </p>
              <ul className="mono small" data-testid="live-diagnostics">
                {check.diagnostics.map((d) => (
                  <li key={`${d.from}:${d.message}`}>
                    line {d.line}, column {d.column}: {d.message}
                    {d.hint ? <div className="muted">{d.hint}</div> : null}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          {check?.kind === 'checked' ? (
            <div data-testid="live-verdict">
              <p>
                On <strong>{checkAgent?.hostname}</strong> ({check.profile.release || check.profile.name}, {check.profile.complete ? 'complete' : 'partial'} profile):{' '}
                <Verdict verdict={check.verdict.status} />
                {check.truncated ? <span className="stale small"> · only the first 64 matching events were checked</span> : null}
              </p>
              {check.verdict.programs.some((p) => p.changes.length) ? (
                <p className="small">
                  Moves: <span className="mono">{check.verdict.programs.flatMap((p) => p.changes).join('; ')}</span>
                </p>
              ) : null}
              {check.verdict.reasons.length ? (
                <ul className="small">
                  {check.verdict.reasons.map((r, i) => (
                    <li key={`${r.kind}-${i}`}>
                      <span className="mono">{r.kind}</span>: {r.text}
                    </li>
                  ))}
                </ul>
              ) : null}
              <p className="small">
                Fields read:{' '}
                {check.fields.length ? (
                  <span className="mono" data-testid="live-fields">
                    {check.fields.map((f) => `${f.event}.${f.field}`).join(', ')}
                  </span>
                ) : (
                  <span className="muted">none</span>
                )}
              </p>
            </div>
          ) : null}
        </div>
      </section>

      <section className="card" aria-labelledby="live-run">
        <h2 id="live-run">Run now</h2>
        <div className="toolbar">
          <fieldset className="plain">
            <legend className="small">Target</legend>
            <label className="small">
              <input type="radio" name="live-mode" checked={mode === 'agent'} onChange={() => setMode('agent')} /> One agent
            </label>{' '}
            <label className="small">
              <input type="radio" name="live-mode" checked={mode === 'selector'} onChange={() => setMode('selector')} /> Label selector
            </label>
          </fieldset>
          {mode === 'agent' ? (
            <label className="small">
              Agent{' '}
              <select value={agentId} onChange={(e) => setAgentId(e.target.value)} data-testid="live-agent">
                {agents.length === 0 ? <option value="">No agents</option> : null}
                {agents.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.hostname}
                    {a.kernel ? ` (${a.kernel})` : ' (no kernel reported)'}
                  </option>
                ))}
              </select>
            </label>
          ) : (
            <label className="small">
              Selector (k=v,…){' '}
              <input value={selectorText} onChange={(e) => setSelectorText(e.target.value)} placeholder="env=dev" />
              <span className="muted"> {selector ? `${matching.length} agent${matching.length === 1 ? '' : 's'} match` : ''}</span>
            </label>
          )}
          <label className="small">
            Duration (seconds){' '}
            <input type="number" min={1} max={maxDurationSeconds} value={duration} onChange={(e) => setDuration(Math.max(1, Math.min(maxDurationSeconds, Number(e.target.value) || defaultDurationSeconds)))} style={{ width: '5rem' }} />
          </label>
          {canRun ? (
            running ? (
              <button type="button" className="button" onClick={stop} data-testid="live-stop">
                Stop
              </button>
            ) : (
              <button type="button" className="button primary" onClick={run} disabled={starting || check?.kind === 'errors'} data-testid="live-run">
                {starting ? 'Starting…' : 'Run'}
              </button>
            )
          ) : (
            <p className="muted small" data-testid="live-viewer-note">
              Viewers can check programs here; running one needs the publisher role or above.
            </p>
          )}
        </div>
        {runError ? (
          <p className="alert alert-error" role="alert">
            {runError}
          </p>
        ) : null}
        {session ? (
          <div aria-live="polite" data-testid="live-session">
            <p className="small">
              Session <span className="mono">{session.id.slice(0, 8)}</span>: <strong data-testid="live-state">{ended && running ? 'ended' : session.state}</strong> · {session.durationSeconds} s, ends{' '}
              {new Date(session.endsAt).toLocaleTimeString()} · {formatCount(eventsSeen)} events seen
              {eventsLost ? <span className="stale"> · {formatCount(eventsLost)} lost</span> : null}
              <span className="muted" data-testid="live-timing">
                {startedMs !== null ? ` · started ${startedMs} ms after Run` : ''}
                {runningMs !== null ? `, running on the node by ${runningMs} ms` : ''}
                {firstResultMs !== null ? `, first result ${firstResultMs} ms after Run` : ''}
              </span>
            </p>
            <ul className="small">
              {session.agents.map((a) => (
                <li key={a.agentId}>
                  {a.name}: {a.state}
                  {a.verdict ? (
                    <>
                      {' '}
                      · <Verdict verdict={a.verdict.status} />
                    </>
                  ) : null}
                  {a.error ? <span className="stale"> · {a.error}</span> : null}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
      </section>

      {session ? (
        <>
          {maps.length === 0 ? <p className="muted">No map snapshot yet (agents send one every second while a session runs).</p> : null}
          {maps.map((m) => (
            <MapPanel key={m.name} map={m} lost={eventsLost} />
          ))}
          <section className="card" aria-labelledby="live-tail">
            <h2 id="live-tail">printf and events</h2>
            {lines.length === 0 ? (
              <p className="muted small">Nothing printed yet.</p>
            ) : (
              <pre className="mono small live-tail" data-testid="live-lines">
                {lines.map((l) => `${l.agent}: ${l.text}`).join('\n')}
              </pre>
            )}
          </section>
        </>
      ) : null}

      {canRun ? (
        <section className="card" aria-labelledby="live-publish">
          <h2 id="live-publish">Publish as a version</h2>
          <form className="form" onSubmit={publish}>
            <p className="hint">Stores this program as a normal version: verified again by the registry and tagged module-like, no ABI.</p>
            <label htmlFor="live-pub-name">Program name</label>
            <input id="live-pub-name" required value={pubName} onChange={(e) => setPubName(e.target.value)} pattern="[a-z0-9][a-z0-9._\-]{0,62}" />
            <label htmlFor="live-pub-version">Version (semver)</label>
            <input id="live-pub-version" required value={pubVersion} onChange={(e) => setPubVersion(e.target.value)} placeholder="1.0.0" />
            <button type="submit" className="button primary" disabled={check?.kind !== 'checked'}>
              Publish
            </button>
            {pubResult ? (
              <p className={`alert ${pubResult.ok ? 'alert-ok' : 'alert-error'}`} role="status">
                {pubResult.text} {pubResult.href ? <a href={pubResult.href}>Open it</a> : null}
              </p>
            ) : null}
          </form>
        </section>
      ) : null}
    </div>
  );
}
