// The agent's targets: what the registry assigned, each loaded for this node's own profile and
// attached to the one feed, with a status that says why.
//
// For each assignment to run: fetch the artifact and check its digest → count its maps against
// the agent's memory budget → relocate for the node's profile, verify, sanitize, load into the VM
// (packages/runtime `loadForProfile`) → attach to the dispatcher. Statuses: `running` (verdict
// compatible or relocated, with the field moves), `refused` (this node's profile makes it
// incompatible: which field, why; or over the memory budget), `failed` (digest mismatch, a load
// fault, faults past the limit, the CPU budget), `stopped` (the deployment stopped). A node never
// runs what its own profile refuses, whatever the registry's matrix said. The deployment's options
// (`.rodata` variables, as a libbpf tool's command line sets them) are set in the spec first, so the
// verdict and the verifier see them as the constants they are (a disabled option prunes branches).
import { randomUUID } from 'node:crypto';
import { isCompatError, type KernelProfile, type ProgramSpec, type ProviderDefinition, setRodata, type Verdict, type VerdictReason } from '@probeyard/compat';
import {
  type AttachedTarget,
  type Dispatcher,
  encodeCounters,
  encodeEvents,
  encodeMapSnapshot,
  type LoadedSpec,
  loadForProfile,
  mapMemoryBytes,
} from '@probeyard/runtime';
import { checkScriptCompat, compileScriptArtifact, decodeScriptArtifact, formatDiagnostics, isScriptArtifact, providerResolver } from '@probeyard/script';
import type { HelperEnvironment } from '@probeyard/vm';
import type { Assignment, StatusReport } from '../client.js';
import { isAgentError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ProviderUse, TargetSample } from '../metrics/agent-metrics.js';
import type { NodeProfile } from '../profile/node-profile.js';
import type { NewBatch } from '../spool/spool.js';
import { type Artifact, ArtifactRefused, type ArtifactStore } from './artifact-store.js';
import { CpuBudget, type CpuBudgetOptions, FaultRate } from './limits.js';

export type TargetPhase = 'loading' | 'running' | 'refused' | 'failed' | 'stopped';
type Detail = NonNullable<StatusReport['detail']>;

/** The largest JSON payload of one batch the registry takes is 256 KiB: stay clear of it. */
export const maxBatchPayloadBytes = 240 * 1024;

export interface TargetLimits {
  /** Map memory all targets together may take, bytes (default 64 MiB). */
  memoryBudgetBytes?: number;
  cpu?: CpuBudgetOptions;
  /** Faults a minute past which a target is stopped (default 60). */
  maxFaultsPerMinute?: number;
  /** Instruction budget of one run (the VM's default, 1,000,000). */
  instructionBudget?: number;
  /** Output events kept per target between two flushes (default 10,000 and 1 MiB). */
  maxEventsPerFlush?: number;
  maxEventBytesPerFlush?: number;
  /** Map entries per map in a snapshot (default 10,000; fewer when the batch would be too big). */
  maxSnapshotEntries?: number;
}

/** One target the agent knows. */
export class Target {
  readonly id: string;
  assignment: Assignment;
  phase: TargetPhase = 'loading';
  message: string | undefined;
  detail: Detail;
  artifact: Artifact | undefined;
  loaded: LoadedSpec | undefined;
  attached: AttachedTarget | undefined;
  runId: string | undefined;
  mapBytes = 0;
  /** The provider implementations the current run goes through (set when it runs). */
  providers: ProviderUse[] = [];
  cpu: CpuBudget;
  faults: FaultRate;
  /** A status to report (set on every change; cleared once the registry has it). */
  dirty = true;
  /** Whether a final snapshot is still owed (a target stopped since the last flush). */
  finalOwed = false;
  /** Events counted while throttled (not run: lost to this target). */
  throttledEvents = 0;
  loadQueued = false;

  constructor(a: Assignment, limits: TargetLimits) {
    this.id = a.targetId;
    this.assignment = a;
    this.detail = { code: 'loading', digest: a.digest };
    this.cpu = new CpuBudget(limits.cpu);
    this.faults = new FaultRate(limits.maxFaultsPerMinute ?? 60);
  }

  /** Counters of the current run (zeros before it is loaded). */
  get counters() {
    const c = this.attached?.counters;
    return {
      eventsSeen: c?.eventsSeen ?? 0,
      runs: c?.runs ?? 0,
      instructions: c?.instructions ?? 0,
      // a run stopped for its instruction budget is a fault of the program too
      faults: (c?.faults ?? 0) + (c?.budgetExhaustions ?? 0),
      lostEvents: (c?.lostEvents ?? 0) + this.throttledEvents,
      cpuNs: c?.cpuNs ?? 0,
      outputsDropped: c?.outputsDropped ?? 0,
      // probe reads of kernel memory the VM cannot see (-EFAULT, zeros): the program's results
      // differ from a kernel's there
      kernelReadsFailed: c?.kernelReadsFailed ?? 0,
    };
  }
}

export interface TargetManagerOptions {
  store: ArtifactStore;
  dispatcher: Dispatcher;
  profile: () => NodeProfile;
  /** CPUs of the feed (per-CPU maps hold one value each). */
  cpuCount: () => number;
  environment: HelperEnvironment;
  limits?: TargetLimits;
  log: Logger;
  /** The set of events to trace changed (a target attached or detached). */
  onEventsChanged?: () => void;
  /** A status changed (report it soon). */
  onStatusChanged?: () => void;
}

export class TargetManager {
  private readonly targets = new Map<string, Target>();
  /** Runs replaced by a new one (another version or provider release) that still owe their final outputs. */
  private retired: Target[] = [];
  private readonly limits: TargetLimits;
  private readonly memoryBudget: number;
  private loading: Promise<void> = Promise.resolve();
  private pendingLoads = 0;

  constructor(private readonly options: TargetManagerOptions) {
    this.limits = options.limits ?? {};
    this.memoryBudget = this.limits.memoryBudgetBytes ?? 64 * 1024 * 1024;
  }

  all(): Target[] {
    return [...this.targets.values()];
  }

  get(id: string): Target | undefined {
    return this.targets.get(id);
  }

  /** Resolves when no load is in progress. */
  async idle(): Promise<void> {
    while (this.pendingLoads > 0) await this.loading;
  }

  /** Map memory the loaded targets take, bytes. */
  get mapBytes(): number {
    let n = 0;
    for (const t of this.targets.values()) if (t.loaded) n += t.mapBytes;
    return n;
  }

  /**
   * Brings the targets in line with the registry's assignments: new ones to run are loaded (one
   * at a time, in the background), ones to stop are stopped and reported `stopped`, ones no longer
   * listed are detached (they are not the agent's any more). Returns once loads are queued.
   */
  reconcile(assignments: readonly Assignment[]): void {
    const listed = new Set<string>();
    for (const a of assignments) {
      listed.add(a.targetId);
      let t = this.targets.get(a.targetId);
      if (a.desiredState === 'stopped') {
        if (!t) {
          t = new Target(a, this.limits);
          this.targets.set(a.targetId, t);
        }
        if (t.phase !== 'stopped') this.stop(t, 'stopped', 'stopped: the deployment was stopped (or the agent no longer matches its selector)', { code: 'stopped' });
        continue;
      }
      if (t && (t.assignment.digest !== a.digest || providersKey(t.assignment) !== providersKey(a) || (t.assignment.strictCharSign ?? false) !== (a.strictCharSign ?? false))) {
        // another version, (a script pinning providers) another provider release, or the tenant's
        // compat setting changed: a new run through it; the old run's outputs since the last flush
        // still go out, once
        if (t.attached && !t.attached.detached) {
          t.finalOwed = true;
          this.retired.push(t);
        }
        this.detach(t);
        this.targets.delete(a.targetId);
        t = undefined;
      }
      if (!t) {
        t = new Target(a, this.limits);
        this.targets.set(a.targetId, t);
        this.queueLoad(t);
      } else if (t.phase === 'stopped') {
        // running again (the agent matches the selector again): a new run
        t.phase = 'loading';
        t.detail = { code: 'loading', digest: a.digest };
        this.queueLoad(t);
      } else if (t.phase === 'loading' && t.loaded === undefined && !t.loadQueued) {
        this.queueLoad(t);
      }
      t.assignment = a;
    }
    for (const t of [...this.targets.values()]) {
      if (listed.has(t.id)) continue;
      this.detach(t);
      this.targets.delete(t.id);
    }
  }

  private queueLoad(t: Target): void {
    t.loadQueued = true;
    this.pendingLoads++;
    this.loading = this.loading
      .then(() => (this.targets.get(t.id) === t && t.phase === 'loading' ? this.load(t) : undefined))
      .catch((e) => this.options.log('error', `target ${t.id}: load: ${(e as Error).stack ?? e}`))
      .finally(() => {
        t.loadQueued = false;
        this.pendingLoads--;
      });
  }

  private setStatus(t: Target, phase: TargetPhase, message: string | undefined, detail: Detail): void {
    t.phase = phase;
    t.message = message;
    t.detail = { digest: t.assignment.digest, kernelHash: this.options.profile().hash, ...detail };
    t.dirty = true;
    this.options.onStatusChanged?.();
    const { log } = this.options;
    const what = `${t.assignment.program.name}@${t.assignment.program.version}`;
    log(phase === 'failed' ? 'error' : phase === 'refused' ? 'warn' : 'info', `target ${t.id} (${what}): ${phase}${message ? `: ${message}` : ''}`, { targetId: t.id, code: detail.code });
  }

  private async load(t: Target): Promise<void> {
    const a = t.assignment;
    let artifact: Artifact;
    try {
      artifact = await this.options.store.get(a);
    } catch (e) {
      if (e instanceof ArtifactRefused) {
        this.setStatus(t, 'failed', e.message, { code: e.refusal });
        return;
      }
      // The registry is away: the next poll tries again.
      this.options.log('warn', `target ${t.id}: artifact: ${(e as Error).message}`, { targetId: t.id, retryable: isAgentError(e) ? e.retryable : undefined });
      return;
    }
    if (this.targets.get(t.id) !== t || t.phase !== 'loading') return;
    t.artifact = artifact;
    const profile = this.options.profile();
    let base = artifact.spec;
    let through: Extract<ProviderResolution, { ok: true }> | undefined;
    // a compiled object with provider probes (docs/PROVIDERS-C.md) binds them in the load below
    const objectProviders = artifact.providers !== undefined && !isScriptArtifact(artifact.providers.bytes) ? artifact.providers.definitions : undefined;
    if (artifact.providers && objectProviders === undefined) {
      // a script pinning providers: compiled and checked for this node's kernel through the
      // releases the registry resolves now; what runs is the verdict's spec
      const r = await resolveThroughProviders(artifact.providers.bytes, artifact.providers.definitions, profile.kernel, a.strictCharSign === true);
      if (this.targets.get(t.id) !== t || t.phase !== 'loading') return;
      if (!r.ok) {
        this.refuse(t, r.status, r.reasons, profile);
        return;
      }
      through = r;
      base = r.spec;
    }
    let spec: ProgramSpec;
    try {
      spec = withOptions(base, a.options);
    } catch (e) {
      if (!isCompatError(e)) throw e;
      this.setStatus(t, 'failed', `bad-options: ${e.message}`.slice(0, 2000), { code: 'bad-options' });
      return;
    }
    const cpuCount = Math.max(1, this.options.cpuCount());
    const need = mapMemoryBytes(spec, cpuCount);
    const used = this.mapBytes;
    if (used + need > this.memoryBudget) {
      this.setStatus(t, 'refused', `memory-budget: its maps need ${need} bytes on ${cpuCount} CPUs; the agent's budget is ${this.memoryBudget} bytes and ${used} are in use`, {
        code: 'memory-budget',
        limit: { used: used + need, budget: this.memoryBudget, unit: 'bytes' },
      });
      return;
    }
    const outcome = loadForProfile(spec, profile.kernel, {
      cpuCount,
      environment: this.options.environment,
      ...(this.limits.instructionBudget !== undefined ? { budget: this.limits.instructionBudget } : {}),
      outputs: { maxOutputs: this.limits.maxEventsPerFlush ?? 10_000, maxBytes: this.limits.maxEventBytesPerFlush ?? 1024 * 1024 },
      ...(objectProviders !== undefined ? { providers: objectProviders } : {}),
      // the tenant's compat setting: the node refuses what the tenant's matrix refuses
      ...(a.strictCharSign ? { strictCharSign: true } : {}),
    });
    if (!outcome.ok) {
      if (outcome.status === 'refused') {
        this.refuse(t, outcome.verdict.status, outcome.reasons, profile);
        return;
      }
      const f = outcome.fault;
      this.setStatus(t, 'failed', `load-fault: ${f.message}`.slice(0, 2000), {
        code: 'load-fault',
        verdict: outcome.verdict.status,
        fault: {
          message: f.message.slice(0, 1000),
          ...(f.program !== undefined ? { program: f.program } : {}),
          ...(f.map !== undefined ? { map: f.map } : {}),
          ...(f.insnIndex !== undefined ? { insnIndex: f.insnIndex } : {}),
          ...(f.insnText !== undefined ? { insnText: f.insnText.slice(0, 200) } : {}),
        },
      });
      return;
    }
    t.loaded = outcome.loaded;
    t.mapBytes = need;
    t.runId = randomUUID();
    t.throttledEvents = 0;
    t.cpu = new CpuBudget(this.limits.cpu);
    t.faults = new FaultRate(this.limits.maxFaultsPerMinute ?? 60);
    t.attached = this.options.dispatcher.attach(t.id, outcome.loaded);
    this.options.onEventsChanged?.();
    // through providers: the verdict is the script's on this kernel (another implementation than
    // the build's is `relocated`, its moves say which), the load's own relocation is then a no-op
    const status = through?.status === 'relocated' ? 'relocated' : outcome.status;
    const moves = [...(through?.changes ?? []), ...outcome.changes].slice(0, 200).map((c) => c.slice(0, 500));
    const via = (through?.via ?? outcome.verdict.programs.flatMap((p) => (p.via ? [p.via] : []))).slice(0, 50).map((v) => v.slice(0, 500));
    t.providers = (through?.providers ?? outcome.verdict.programs.flatMap((p) => (p.provider ? [p.provider] : []))).slice(0, 50);
    this.setStatus(t, 'running', `${status}${via.length ? ` (${via.join('; ')})` : ''}${moves.length ? `: ${moves.join('; ')}` : ''}`.slice(0, 2000), {
      code: status,
      verdict: status,
      ...(moves.length ? { moves } : {}),
      ...(via.length ? { via } : {}),
      runId: t.runId,
    });
  }

  /** `refused`: this node's kernel makes the program incompatible (or unknown), each reason as data. */
  private refuse(t: Target, verdict: 'incompatible' | 'unknown' | 'compatible' | 'relocated', reasons: readonly RefusalReason[], profile: NodeProfile): void {
    this.setStatus(t, 'refused', `${verdict} on this node's kernel (${profile.release || profile.hash.slice(0, 12)}): ${reasons.map((r) => r.text).join('; ')}`.slice(0, 2000), {
      code: verdict === 'unknown' ? 'unknown' : 'incompatible',
      verdict,
      refusal: reasons.slice(0, 50).map((r) => ({
        kind: r.kind,
        program: r.program.slice(0, 200),
        event: r.event.slice(0, 200),
        ...(r.field !== undefined ? { field: r.field.slice(0, 200) } : {}),
        ...(r.insnIndex !== undefined ? { insnIndex: r.insnIndex } : {}),
        text: r.text.slice(0, 1000),
      })),
    });
    if (reasons.length === 0) t.message = `${verdict} on this node's kernel`;
  }

  /** Detaches a target's run (its outputs stay until the next flush takes them). */
  private detach(t: Target): void {
    if (t.attached && !t.attached.detached) {
      this.options.dispatcher.detach(t.id);
      this.options.onEventsChanged?.();
    }
  }

  private stop(t: Target, phase: 'stopped' | 'failed', message: string, detail: Detail): void {
    if (t.attached && !t.attached.detached) t.finalOwed = true;
    this.detach(t);
    this.setStatus(t, phase, message, { ...detail, ...(t.runId ? { runId: t.runId } : {}) });
  }

  /**
   * Applies the limits to every running target (call about once a second): CPU budget (throttle,
   * resume, stop with `cpu-budget`) and fault rate (stop with the fault).
   */
  enforceLimits(nowMs: number): void {
    for (const t of this.targets.values()) {
      const at = t.attached;
      if (t.phase !== 'running' || !at || at.detached) continue;
      const c = at.counters;
      if (t.faults.check(nowMs, at.faultCount)) {
        const f = at.lastFault;
        const limit = t.faults.maxPerMinute;
        this.stop(t, 'failed', `fault-rate: ${t.faults.lastMinute} faults in the last minute (limit ${limit})${f ? `; last: ${f.program}: insn ${f.insnIndex ?? '?'} (${f.insnText ?? '?'}): ${f.message}` : ''}`.slice(0, 2000), {
          code: 'fault-rate',
          limit: { used: t.faults.lastMinute, budget: limit, unit: 'faults', windowSeconds: 60 },
          ...(f
            ? {
                fault: {
                  program: f.program,
                  ...(f.insnIndex !== undefined ? { insnIndex: f.insnIndex } : {}),
                  ...(f.insnText !== undefined ? { insnText: f.insnText.slice(0, 200) } : {}),
                  message: f.message.slice(0, 1000),
                  count: at.faultCount,
                  record: { ...f.record, hex: f.record.hex.slice(0, 1024) },
                },
              }
            : {}),
        });
        continue;
      }
      const verdict = t.cpu.check(nowMs, c.cpuNs);
      const limit = { used: Math.round(t.cpu.usedNs / 1e6), budget: Math.round(t.cpu.budgetNs / 1e6), unit: 'ms', windowSeconds: t.cpu.windowMs / 1000 };
      if (verdict === 'stop') {
        this.stop(t, 'failed', `cpu-budget: stopped: ${limit.used} ms of CPU in ${limit.windowSeconds} s, the budget is ${limit.budget} ms, hit 3 times`, { code: 'cpu-budget', limit });
      } else if (verdict === 'throttle') {
        at.paused = true;
        this.setStatus(t, 'running', `throttled: ${limit.used} ms of CPU in ${limit.windowSeconds} s, the budget is ${limit.budget} ms: its events are counted lost until it is under half of it`, {
          code: 'throttled',
          verdict: t.detail.verdict ?? 'compatible',
          limit,
          ...(t.runId ? { runId: t.runId } : {}),
        });
      } else if (verdict === 'resume') {
        at.paused = false;
        this.setStatus(t, 'running', 'resumed after throttling (cpu budget)', { code: t.detail.verdict ?? 'compatible', verdict: t.detail.verdict ?? 'compatible', ...(t.runId ? { runId: t.runId } : {}) });
      }
      t.throttledEvents = at.skipped;
    }
  }

  /**
   * The outputs of every target since the last call, as batches: a map snapshot and counters per
   * run (cumulative), events in emission order (bounded per flush; what was dropped is counted),
   * each batch under the registry's size limit. Stopped targets give their final ones once.
   */
  collectOutputs(traceTimeNs: string, takenAt = new Date()): NewBatch[] {
    const out: NewBatch[] = [];
    const retired = this.retired;
    this.retired = [];
    for (const t of [...retired, ...this.targets.values()]) {
      const live = t.phase === 'running' && t.attached && !t.attached.detached;
      if (!live && !t.finalOwed) continue;
      t.finalOwed = false;
      const loaded = t.loaded!;
      const runId = t.runId!;
      const c = t.counters;
      const common = { targetId: t.id, eventsSeen: c.eventsSeen, eventsLost: c.lostEvents };
      out.push({ ...common, kind: 'map_snapshot', payload: this.snapshot(t, loaded, runId, traceTimeNs, takenAt) });
      const { outputs, dropped } = loaded.outputs.take();
      if (outputs.length > 0 || dropped > 0) {
        for (const payload of splitEvents(loaded, outputs, dropped, runId)) out.push({ ...common, kind: 'events', payload });
      }
      out.push({
        ...common,
        kind: 'counters',
        payload: encodeCounters({ ...c, budgetExhaustions: 0 }, { runId, takenAt }),
      });
    }
    return out;
  }

  private snapshot(t: Target, loaded: LoadedSpec, runId: string, traceTimeNs: string, takenAt: Date) {
    const c = t.counters;
    let maxEntries = this.limits.maxSnapshotEntries ?? 10_000;
    for (;;) {
      const payload = encodeMapSnapshot(loaded, { runId, takenAt, traceTimeNs, eventsSeen: c.eventsSeen, eventsLost: c.lostEvents, maxEntries });
      const size = Buffer.byteLength(JSON.stringify(payload));
      if (size <= maxBatchPayloadBytes || maxEntries <= 1) return payload;
      maxEntries = Math.max(1, Math.floor((maxEntries * maxBatchPayloadBytes * 0.9) / size));
    }
  }

  /** Status reports for what changed (and, with `all`, every target: counters as telemetry). */
  statusReports(all: boolean): StatusReport[] {
    const out: StatusReport[] = [];
    for (const t of this.targets.values()) {
      if (t.phase === 'loading' && !t.dirty) continue;
      if (!t.dirty && !(all && t.phase === 'running')) continue;
      if (t.phase === 'loading') continue; // `pending` already says so
      const c = t.counters;
      out.push({
        targetId: t.id,
        status: t.phase,
        ...(t.message ? { message: t.message.slice(0, 2000) } : {}),
        counters: { eventsSeen: c.eventsSeen, eventsLost: c.lostEvents, runtimeNs: Math.round(c.cpuNs), kernelReadsFailed: c.kernelReadsFailed },
        detail: t.detail,
      });
    }
    return out;
  }

  /** The registry has these reports (unless the target changed since). */
  reported(reports: readonly StatusReport[]): void {
    for (const r of reports) {
      const t = this.targets.get(r.targetId);
      if (t && t.phase === r.status && t.detail === r.detail) t.dirty = false;
    }
  }

  /** A target the registry no longer knows (NOT_FOUND): forget it. */
  forget(targetId: string): void {
    const t = this.targets.get(targetId);
    if (!t) return;
    this.detach(t);
    this.targets.delete(targetId);
  }

  /** Detaches everything (agent shutdown); each run owes its final outputs. */
  stopAll(): void {
    for (const t of this.targets.values()) {
      if (t.attached && !t.attached.detached) t.finalOwed = true;
      this.detach(t);
    }
  }

  samples(): TargetSample[] {
    return this.all().map((t) => {
      const c = t.counters;
      return {
        targetId: t.id,
        program: t.assignment.program.name,
        version: t.assignment.program.version,
        digest: t.assignment.digest,
        status: t.phase,
        verdict: t.phase === 'running' ? (t.detail.verdict ?? '') : '',
        eventsSeen: c.eventsSeen,
        runs: c.runs,
        instructions: c.instructions,
        faults: c.faults,
        lostEvents: c.lostEvents,
        cpuSeconds: c.cpuNs / 1e9,
        outputsDropped: c.outputsDropped,
        providers: t.phase === 'running' ? t.providers : [],
      };
    });
  }
}

type RefusalReason = Pick<VerdictReason, 'kind' | 'program' | 'event' | 'field' | 'insnIndex' | 'text'>;

/** How a script pinning providers runs on this kernel: the spec, its status and which implementations. */
export type ProviderResolution =
  | { ok: true; status: 'compatible' | 'relocated'; spec: ProgramSpec; via: string[]; providers: ProviderUse[]; changes: string[] }
  | { ok: false; status: 'incompatible' | 'unknown'; reasons: RefusalReason[] };

/** The provider releases an assignment names (`''` for a program without providers). */
function providersKey(a: Assignment): string {
  return a.providers === undefined ? '' : a.providers.join(',');
}

/**
 * A script pinning providers, on this node's kernel (packages/script `checkScriptCompat`, as the
 * registry's matrix computes its cell): the build (the script compiled through `providers` for the
 * formats it was published against), then each provider probe resolved on `kernel` — the build
 * relocated where the same implementations apply, compiled through others where the kernel needs
 * them, refused (`provider-unresolved`, each implementation's reason) where none applies.
 */
export async function resolveThroughProviders(bytes: Uint8Array, providers: readonly ProviderDefinition[], kernel: KernelProfile, strictCharSign = false): Promise<ProviderResolution> {
  const reason = (text: string): RefusalReason[] => [{ kind: 'provider-unresolved', program: '', event: '', text }];
  let source: string;
  try {
    source = decodeScriptArtifact(bytes).source;
  } catch (e) {
    return { ok: false, status: 'incompatible', reasons: reason(`not a script artifact: ${(e as Error).message}`) };
  }
  const names = providers.map((p) => `${p.name}@${p.version}`).join(', ') || 'no provider';
  const build = await compileScriptArtifact(bytes, { name: 'script', providers: providerResolver(providers) });
  if (!build.ok) return { ok: false, status: 'incompatible', reasons: reason(`the script does not compile through ${names} for the formats it was published against: ${formatDiagnostics(build.source, build.diagnostics).trimEnd()}`) };
  let v: Verdict;
  try {
    v = await checkScriptCompat(source, build, kernel, { providers, strictCharSign });
  } catch (e) {
    if (!isCompatError(e)) throw e;
    return { ok: false, status: 'incompatible', reasons: reason(e.message) };
  }
  if (v.relocated === undefined || v.status === 'incompatible' || v.status === 'unknown') {
    return { ok: false, status: v.status === 'unknown' ? 'unknown' : 'incompatible', reasons: v.reasons };
  }
  const via = v.programs.flatMap((p) => (p.via ? [p.via] : []));
  const changes = v.programs.flatMap((p) => p.changes.map((c) => `${p.program}: ${c}`));
  const uses = v.programs.flatMap((p) => (p.provider ? [p.provider] : []));
  return { ok: true, status: v.status, spec: v.relocated, via, providers: uses, changes };
}

/** An events payload per group of outputs, each under the batch size limit. */
/**
 * The artifact's spec with the deployment's `.rodata` options set (decimal text or `true`/`false`,
 * as the registry checked them against this spec); a name or value that does not fit is a
 * CompatError (`malformed`).
 */
export function withOptions(spec: ProgramSpec, options: Readonly<Record<string, string>> | undefined): ProgramSpec {
  const entries = Object.entries(options ?? {});
  if (entries.length === 0) return spec;
  return setRodata(spec, Object.fromEntries(entries.map(([k, v]) => [k, v === 'true' ? true : v === 'false' ? false : BigInt(v)])));
}

function splitEvents(loaded: LoadedSpec, outputs: Parameters<typeof encodeEvents>[1], dropped: number, runId: string): ReturnType<typeof encodeEvents>[] {
  const payload = encodeEvents(loaded, outputs, dropped, runId);
  if (outputs.length <= 1 || Buffer.byteLength(JSON.stringify(payload)) <= maxBatchPayloadBytes) return [payload];
  const half = Math.ceil(outputs.length / 2);
  // `dropped` counts once, on the first part
  return [...splitEvents(loaded, outputs.slice(0, half), dropped, runId), ...splitEvents(loaded, outputs.slice(half), 0, runId)];
}
