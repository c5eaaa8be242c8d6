// Live sessions (issue 18): a program run on this node now, for a few seconds, that is not a
// version. The registry hands them over a long poll (`agent.waitLive`, held up to 25 s and answered
// the moment a session of this agent starts or stops), apart from the normal poll.
//
// Each session: compiled for this node's own kernel (a script by packages/script; assembly
// read by name), relocated, verified and loaded as a deployment target is (packages/runtime
// `loadForProfile`), attached to the one feed, with a CPU budget of its own (throttled, then
// failed `cpu-budget`). Every second its outputs (map snapshot, events — a script's printf lines
// as `printk` events —, counters: the shapes deployments upload) go to the registry with its
// state; at its duration, **by this agent's own clock**, it ends itself, whatever the registry
// does, and sends its last outputs (a few tries, then they are dropped: a session is ephemeral and
// has no spool).
import { randomUUID } from 'node:crypto';
import { parseProvider, type ProgramSpec, type ProviderDefinition, readProgramSpec } from '@probeyard/compat';
import { type AttachedTarget, type Dispatcher, encodeCounters, encodeEvents, encodeMapSnapshot, type LoadedSpec, loadForProfile, ScriptSession } from '@probeyard/runtime';
import { compileScript, formatDiagnostics, providerResolver, targetOfProfile } from '@probeyard/script';
import type { HelperEnvironment } from '@probeyard/vm';
import type { AgentApi, LiveAssignment, LiveReport } from '../client.js';
import { isAgentError } from '../errors.js';
import type { Logger } from '../log.js';
import type { NodeProfile } from '../profile/node-profile.js';
import { CpuBudget } from '../targets/limits.js';
import { maxBatchPayloadBytes } from '../targets/target-manager.js';

type Output = LiveReport['outputs'] extends (infer O)[] | undefined ? O : never;
type LiveState = 'running' | 'ended' | 'stopped' | 'failed';

/** Outputs kept for a registry that does not answer (a snapshot is cumulative: the oldest go first). */
const maxPending = 60;
/** Tries of the last report after a session ends. */
const finalTries = 5;

export interface LiveSessionsOptions {
  api: AgentApi;
  dispatcher: Dispatcher;
  profile: () => NodeProfile;
  cpuCount: () => number;
  environment: HelperEnvironment;
  log: Logger;
  /** The attached programs' events changed (a live feed enables exactly them; a replay starts). */
  onEventsChanged: () => void;
  /** Milliseconds between output reports (default 1,000). */
  outputIntervalMs?: number;
  /** Instruction budget of one run (the VM's default). */
  instructionBudget?: number;
}

/** One session on this node. */
class LiveRun {
  readonly id: string;
  readonly attachId: string;
  readonly runId = randomUUID();
  state: LiveState | 'starting' = 'starting';
  /** The state the registry has (undefined: none yet). */
  reportedState: LiveState | undefined;
  error: string | undefined;
  verdict: LiveReport['verdict'];
  loaded: LoadedSpec | undefined;
  attached: AttachedTarget | undefined;
  script: ScriptSession | undefined;
  /** printf text since the last report (a script's). */
  text = '';
  seq = 0;
  pending: Output[] = [];
  endTimer: NodeJS.Timeout | undefined;
  cpu: CpuBudget;
  startedAt = Date.now();
  sending: Promise<void> | undefined;

  constructor(readonly assignment: LiveAssignment) {
    this.id = assignment.sessionId;
    this.attachId = `live:${assignment.sessionId}`;
    this.cpu = new CpuBudget({ share: Math.max(0.001, assignment.cpuBudgetPercent / 100), windowMs: 5_000 });
  }

  get done(): boolean {
    return this.state === 'ended' || this.state === 'stopped' || this.state === 'failed';
  }
}

export class LiveSessions {
  private readonly runs = new Map<string, LiveRun>();
  /** Sessions over here (the last 1,000): never started again, whatever a stale answer lists. */
  private readonly over = new Set<string>();
  private etag: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly intervalMs: number;
  /** Sessions started so far, and the last one's time from its assignment to running (ms), for tests and /healthz. */
  started = 0;
  lastStartMs: number | undefined;

  constructor(private readonly options: LiveSessionsOptions) {
    this.intervalMs = options.outputIntervalMs ?? 1000;
  }

  /** The sessions this agent knows (running and those whose last report is owed). */
  all(): { sessionId: string; state: string }[] {
    return [...this.runs.values()].map((r) => ({ sessionId: r.id, state: r.state }));
  }

  /**
   * One long poll: waits for the registry's answer (held up to 25 s), then starts and stops
   * sessions to match. Throws what the call throws (the part loop backs off).
   */
  async waitTick(signal: AbortSignal): Promise<number> {
    const t0 = Date.now();
    const answer = await this.options.api.waitLive(this.etag, undefined, signal);
    this.etag = answer.etag;
    if (!answer.notModified) this.apply(answer.sessions);
    // a registry that does not hold the call (over its limit of held calls) is asked again in a second, not in a loop
    return answer.notModified && Date.now() - t0 < 1000 ? 1000 : 0;
  }

  /** Starts the sessions to run that are new here, stops those the registry stopped. */
  apply(sessions: readonly LiveAssignment[]): void {
    for (const s of sessions) {
      if (this.over.has(s.sessionId)) continue;
      const run = this.runs.get(s.sessionId);
      if (s.desiredState === 'stopped') {
        if (run && !run.done) this.end(run, 'stopped', undefined);
        else if (!run) {
          // stopped before this agent started it: say so once
          const r = new LiveRun(s);
          this.runs.set(r.id, r);
          this.end(r, 'stopped', undefined);
        }
        continue;
      }
      if (!run) this.start(s);
    }
  }

  private start(s: LiveAssignment): void {
    const t0 = performance.now();
    const run = new LiveRun(s);
    this.runs.set(run.id, run);
    this.ensureTimer();
    // the duration is this agent's to keep: its own clock, whatever the registry does later
    const ms = Math.max(0, Math.min(s.durationSeconds * 1000, s.remainingMs));
    run.endTimer = setTimeout(() => this.end(run, 'ended', undefined), ms);
    run.endTimer.unref?.();
    void this.load(run)
      .then(() => {
        if (run.state === 'running') {
          this.started++;
          this.lastStartMs = performance.now() - t0;
          this.options.log('info', `live ${run.id}: running (${s.language}, ${s.durationSeconds} s, verdict ${run.verdict?.status ?? '?'}) in ${this.lastStartMs.toFixed(0)} ms`, { sessionId: run.id });
          void this.send(run);
        }
      })
      .catch((e) => this.end(run, 'failed', `load: ${(e as Error).message}`));
  }

  private async compile(run: LiveRun): Promise<ProgramSpec | undefined> {
    const profile = this.options.profile();
    const a = run.assignment;
    if (a.language === 'script') {
      // provider probes (`io:::done`) resolve on this node's kernel through the releases handed along
      let providers: ProviderDefinition[];
      try {
        providers = (a.providers ?? []).map((p) => parseProvider(p.text));
      } catch (e) {
        this.end(run, 'failed', `malformed-provider: ${(e as Error).message}`);
        return undefined;
      }
      const r = await compileScript(a.source, { name: 'live', target: targetOfProfile(profile.kernel), providers: providerResolver(providers) });
      if (r.ok) return r.spec;
      this.end(run, 'failed', `the script does not compile for this node's kernel (${profile.release || profile.hash.slice(0, 12)}):\n${formatDiagnostics(r.source, r.diagnostics).trimEnd()}`);
      return undefined;
    }
    try {
      return await readProgramSpec(new TextEncoder().encode(a.source));
    } catch (e) {
      this.end(run, 'failed', `assembly: ${(e as Error).message}`);
      return undefined;
    }
  }

  private async load(run: LiveRun): Promise<void> {
    const spec = await this.compile(run);
    if (spec === undefined || run.done) return;
    const profile = this.options.profile();
    const outcome = loadForProfile(spec, profile.kernel, {
      cpuCount: Math.max(1, this.options.cpuCount()),
      environment: this.options.environment,
      ...(this.options.instructionBudget !== undefined ? { budget: this.options.instructionBudget } : {}),
      outputs: { maxOutputs: 10_000, maxBytes: 1024 * 1024 },
    });
    if (!outcome.ok) {
      if (outcome.status === 'refused') {
        run.verdict = { status: outcome.verdict.status, reasons: outcome.reasons.slice(0, 50).map((r) => r.text.slice(0, 1000)) };
        this.end(run, 'failed', `${outcome.verdict.status} on this node's kernel (${profile.release || profile.hash.slice(0, 12)}): ${outcome.reasons.map((r) => r.text).join('; ')}`);
      } else {
        run.verdict = { status: outcome.verdict.status };
        this.end(run, 'failed', `load-fault: ${outcome.fault.message}`);
      }
      return;
    }
    if (run.done) return;
    run.verdict = { status: outcome.status, ...(outcome.changes.length ? { changes: outcome.changes.slice(0, 200).map((c) => c.slice(0, 500)) } : {}) };
    run.loaded = outcome.loaded;
    if (spec.script !== undefined) {
      run.script = new ScriptSession(outcome.loaded, { onText: (t) => (run.text += t) });
      run.script.begin(this.traceNs());
    }
    run.attached = this.options.dispatcher.attach(run.attachId, outcome.loaded);
    run.state = 'running';
    this.options.onEventsChanged();
  }

  private traceNs(): bigint {
    const d = this.options.dispatcher;
    return d.records > 0 ? (BigInt(d.lastTsHigh >>> 0) << 32n) | BigInt(d.lastTsLow >>> 0) : 0n;
  }

  /** Ends a session here: detached now (END of a script run), its last outputs and state sent. */
  end(run: LiveRun, state: LiveState, error: string | undefined): void {
    if (run.done) return;
    if (run.endTimer) clearTimeout(run.endTimer);
    this.over.add(run.id);
    if (this.over.size > 1000) this.over.delete(this.over.values().next().value!);
    const wasRunning = run.state === 'running';
    const seen = run.attached?.counters.eventsSeen ?? 0;
    run.state = state;
    run.error = error?.slice(0, 8000);
    if (run.attached && !run.attached.detached) {
      this.options.dispatcher.detach(run.attachId);
      this.options.onEventsChanged();
    }
    if (wasRunning) {
      if (run.script) {
        run.script.drain();
        run.script.end(this.traceNs());
      }
      this.collect(run);
    }
    this.options.log(state === 'failed' ? 'warn' : 'info', `live ${run.id}: ${state}${error ? `: ${error}` : ''} (${seen} events seen, ${run.seq} outputs)`, { sessionId: run.id });
    void this.sendFinal(run);
  }

  private ensureTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref?.();
  }

  /** Every second: limits, outputs, reports. */
  private tick(): void {
    const now = Date.now();
    for (const run of this.runs.values()) {
      if (run.state !== 'running' || !run.attached) continue;
      const verdict = run.cpu.check(now, run.attached.counters.cpuNs);
      if (verdict === 'stop') {
        this.end(run, 'failed', `cpu-budget: over ${run.assignment.cpuBudgetPercent}% of one core three times`);
        continue;
      }
      if (verdict === 'throttle') run.attached.paused = true;
      else if (verdict === 'resume') run.attached.paused = false;
      if (run.script) {
        run.script.advance(this.traceNs());
        if (run.script.drain()) {
          this.end(run, 'ended', undefined);
          continue;
        }
      }
      this.collect(run);
      void this.send(run);
    }
    if (this.runs.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** The run's outputs now, queued for the next report: a snapshot, events (and printf text), counters. */
  private collect(run: LiveRun): void {
    const loaded = run.loaded;
    const at = run.attached;
    if (!loaded || !at) return;
    const c = at.counters;
    const lost = c.lostEvents + at.skipped;
    const push = (kind: Output['kind'], payload: unknown) => {
      run.pending.push({ seq: run.seq++, kind, payload: payload as Output['payload'] });
      if (run.pending.length > maxPending) run.pending.shift();
    };
    let maxEntries = 10_000;
    for (;;) {
      const payload = encodeMapSnapshot(loaded, { runId: run.runId, traceTimeNs: this.options.dispatcher.traceTimeNs, eventsSeen: c.eventsSeen, eventsLost: lost, maxEntries });
      const size = Buffer.byteLength(JSON.stringify(payload));
      if (size <= maxBatchPayloadBytes || maxEntries <= 1) {
        push('map_snapshot', payload);
        break;
      }
      maxEntries = Math.max(1, Math.floor((maxEntries * maxBatchPayloadBytes * 0.9) / size));
    }
    if (run.script) {
      if (run.text !== '') {
        // printf text as printk lines, each its own event (the web's tail and the CLI print them as they come)
        const lines = run.text.split(/(?<=\n)/);
        run.text = '';
        const timeNs = this.options.dispatcher.traceTimeNs;
        for (let i = 0; i < lines.length; i += 2000) {
          push('events', { v: 1, runId: run.runId, dropped: 0, events: lines.slice(i, i + 2000).map((text) => ({ timeNs, cpu: 0, source: 'printk', text })) });
        }
      }
    } else {
      const { outputs, dropped } = loaded.outputs.take();
      if (outputs.length > 0 || dropped > 0) push('events', encodeEvents(loaded, outputs, dropped, run.runId));
    }
    push('counters', encodeCounters({ ...c, lostEvents: lost, budgetExhaustions: 0 }, { runId: run.runId }));
  }

  /** Sends what is pending and the state when it changed; the answer may say the session is stopped. */
  private send(run: LiveRun): Promise<void> {
    run.sending ??= (async () => {
      try {
        const outputs = run.pending.slice(0, 100);
        const state = run.state === 'starting' ? undefined : run.state;
        const changed = state !== undefined && state !== run.reportedState;
        if (outputs.length === 0 && !changed) return;
        const report: LiveReport = {
          sessionId: run.id,
          ...(changed ? { state, ...(run.error !== undefined ? { error: run.error } : {}), ...(run.verdict !== undefined ? { verdict: run.verdict } : {}) } : {}),
          outputs,
        };
        const answer = await this.options.api.reportLive(report);
        run.pending.splice(0, outputs.length);
        if (changed) run.reportedState = state;
        if (answer.stop && !run.done) this.end(run, 'stopped', undefined);
      } catch (e) {
        const gone = isAgentError(e) && e.context.registryCode === 'NOT_FOUND';
        this.options.log(gone ? 'warn' : 'debug', `live ${run.id}: report: ${(e as Error).message}`, { sessionId: run.id });
        if (gone) {
          // the registry no longer has it (deleted, or never this agent's): end it here, quietly
          run.pending = [];
          run.reportedState = run.done ? run.state as LiveState : run.reportedState;
          if (!run.done) this.end(run, 'failed', 'the registry does not know this session');
        }
      } finally {
        run.sending = undefined;
      }
    })();
    return run.sending;
  }

  /** The last report of a session that ended: a few tries, then forgotten. */
  private async sendFinal(run: LiveRun): Promise<void> {
    for (let i = 0; i < finalTries; i++) {
      while (run.sending) await run.sending;
      await this.send(run);
      if (run.pending.length === 0 && run.reportedState === run.state) break;
      await new Promise((r) => setTimeout(r, 500 * 2 ** i).unref?.());
    }
    if (this.runs.get(run.id) === run) this.runs.delete(run.id);
  }

  /** Agent shutdown: every session ends (stopped) and gets one try at its last report. */
  async stopAll(): Promise<void> {
    const runs = [...this.runs.values()];
    for (const r of runs) if (!r.done) this.end(r, 'stopped', 'the agent stopped');
    await Promise.race([Promise.all(runs.map((r) => r.sending ?? Promise.resolve())), new Promise((r) => setTimeout(r, 3000).unref?.())]);
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
