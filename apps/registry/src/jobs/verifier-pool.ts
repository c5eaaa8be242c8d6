// Verification off the request's thread. Verifying one small program can take the verifier
// seconds (a 1,093-byte assembly file of 24 independent branches on a random number runs it to
// the 1 M-instruction limit: 9–29 s here), and compat verdicts verify every program again on every
// kernel profile. Both run on a `WorkerPool` (src/jobs/worker-pool.ts) under a deadline, with
// per-tenant fairness: one tenant's burst of publishes holds at most half of the workers, and a
// tenant with too many publishes waiting is told to retry (`rate_limited`).
import type { Manifest, ProgramSpecJson, ProviderDefinition } from '@probeyard/compat';
import type { ReadArtifact } from '../data/artifact-read.js';
import type { CompatCell, CompatProfileRows, CompatSettings } from '../data/compat-cell.js';
import { RegistryError } from '../errors.js';
import type { VerifyOutcome, VerifyTask } from './verify-worker.js';
import { WorkerPool, type WorkerReply, WorkerTaskFailed } from './worker-pool.js';

export interface VerifierPoolOptions {
  /** Longest one publish's verification (or one compat cell) may take before its worker is terminated (default 30 s). */
  timeoutMs?: number;
  /** Verifications at once, each on its own worker (default 2). */
  maxWorkers?: number;
  /** Verifications of one tenant at once (default half of `maxWorkers`, at least 1). */
  maxInFlightPerTenant?: number;
  /** Verifications of one tenant waiting for a worker (default 8); one more is `rate_limited`. */
  maxQueuedPerTenant?: number;
  /** Verifications of all tenants waiting (default 128); one more is `rate_limited`. */
  maxQueued?: number;
  /** V8 heap of a worker (default 512 MiB: the verifier keeps its explored states). */
  maxHeapMb?: number;
  /** An idle worker is stopped after this long (default 30 s). */
  idleMs?: number;
  /** Idle workers kept however long they wait (default 0; the server keeps 1, see {@link VerifierPool.warm}). */
  keepIdle?: number;
  /** Test-only: a worker spins this long before a task of this kind (a stand-in for a slow verification). */
  spinMs?: (kind: VerifyTask['kind']) => number;
}

export const defaultVerifyTimeoutMs = 30_000;

/** The verifier's workers: one pool per registry (`RegistryDeps.verifier`); `close()` stops them. */
export class VerifierPool {
  readonly timeoutMs: number;
  private readonly pool: WorkerPool<VerifyTask, VerifyOutcome>;
  private readonly spinMs: ((kind: VerifyTask['kind']) => number) | undefined;

  constructor(opts: VerifierPoolOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? defaultVerifyTimeoutMs;
    this.spinMs = opts.spinMs;
    this.pool = new WorkerPool({
      name: 'the verifier',
      entry: new URL('./verify-worker', import.meta.url),
      maxWorkers: opts.maxWorkers ?? 2,
      maxHeapMb: opts.maxHeapMb ?? 512,
      maxQueuedPerTenant: opts.maxQueuedPerTenant ?? 8,
      maxQueued: opts.maxQueued ?? 128,
      ...(opts.maxInFlightPerTenant !== undefined ? { maxInFlightPerTenant: opts.maxInFlightPerTenant } : {}),
      ...(opts.idleMs !== undefined ? { idleMs: opts.idleMs } : {}),
      ...(opts.keepIdle !== undefined ? { keepIdle: opts.keepIdle } : {}),
    });
  }

  /**
   * Starts a worker and has it load and run the script and verifier code once, so that the first
   * publish or live session after the start (and, with `keepIdle`, after a quiet spell) does not
   * pay for a cold worker. Never fails: a warm-up that cannot run is only a slower first task.
   */
  async warm(): Promise<boolean> {
    try {
      await this.checkLive('', 'script', 'BEGIN { exit(); }');
      await this.checkLive('', 'asm', 'r0 = 0\nexit\n');
      return true;
    } catch {
      return false;
    }
  }

  /** Workers alive now, for tests. */
  get workers(): number {
    return this.pool.workers;
  }

  /** Tasks of `tenant` running and waiting, for tests. */
  load(tenant: string): { running: number; waiting: number } {
    return this.pool.load(tenant);
  }

  private async run(tenant: string, task: VerifyTask, what: string, transfer: ArrayBuffer[] = []): Promise<VerifyOutcome & { ok: true }> {
    let reply: WorkerReply<VerifyOutcome>;
    try {
      reply = await this.pool.run(tenant, task, { timeoutMs: this.timeoutMs, what, transfer, spinMs: this.spinMs?.(task.kind) ?? 0 });
    } catch (err) {
      if (!(err instanceof WorkerTaskFailed)) throw err;
      if (err.reason === 'deadline') {
        throw new RegistryError('program_rejected', `${what}: verification did not finish within ${this.timeoutMs / 1000} s; nothing was stored`, {
          timeoutMs: this.timeoutMs,
          diagnostics: [],
        });
      }
      if (err.reason === 'memory') {
        throw new RegistryError('program_rejected', `${what}: verification needs more than the verifier's ${this.pool.maxHeapMb} MiB of memory; nothing was stored`, {
          maxHeapMb: this.pool.maxHeapMb,
          diagnostics: [],
        });
      }
      if (err.reason === 'closed') throw new RegistryError('not_ready', `${what}: the registry is shutting down`);
      throw new Error(`${what}: the verifier's worker failed: ${err.message}`, { cause: err });
    }
    if ('failed' in reply) {
      const err = new Error(`${what}: ${reply.failed.message}`);
      if (reply.failed.stack) err.stack = reply.failed.stack;
      throw err;
    }
    const out = reply.outcome;
    if (!out.ok) throw new RegistryError(out.error.code, out.error.message, out.error.context);
    return out;
  }

  /**
   * Parses and verifies an artifact of `tenant` on a worker (packages/verifier through
   * src/data/artifact-read.ts). With `buildFormatsOf`, first asks a worker which events the
   * artifact reads and gives it the texts of those formats. Refusals as `readArtifact`; a
   * verification past the deadline or the worker's heap is `program_rejected` saying so.
   */
  async readArtifact(
    tenant: string,
    bytes: Uint8Array,
    buildFormatsOf?: (events: Set<string>) => Promise<{ system: string; text: string }[]>,
    /** The provider definitions a script's provider probes resolve through. */
    providers?: ProviderDefinition[],
  ): Promise<ReadArtifact> {
    let buildFormats: { system: string; text: string }[] | undefined;
    if (buildFormatsOf) {
      const r = await this.run(tenant, { kind: 'events', bytes: copy(bytes) }, 'publish');
      if (!('events' in r)) throw new Error('publish: the verifier answered another task');
      buildFormats = await buildFormatsOf(new Set(r.events));
    }
    const own = copy(bytes);
    const r = await this.run(tenant, { kind: 'read', bytes: own, ...(buildFormats ? { buildFormats } : {}), ...(providers ? { providers } : {}) }, 'publish', [own.buffer]);
    if (!('read' in r)) throw new Error('publish: the verifier answered another task');
    return r.read;
  }

  /**
   * One compat cell of `tenant` on a worker. A cell whose verification does not finish within the
   * deadline is `unknown`, saying so (the job goes on with the next cell).
   */
  async compatCell(tenant: string, spec: ProgramSpecJson, manifest: Manifest, profile: CompatProfileRows, settings: CompatSettings): Promise<CompatCell> {
    return this.cell(tenant, { kind: 'cell', spec, manifest, profile, settings });
  }

  /**
   * The cell of a script with provider probes of `tenant` on a worker (src/data/compat-cell.ts
   * `computeProviderCell`: the script compiled through the pinned releases, each probe resolved on
   * the profile, relocated and verified), under the same deadline and fairness as any cell: past
   * the deadline it is `unknown`, saying so.
   */
  async providerCell(
    tenant: string,
    artifact: Uint8Array,
    manifest: Manifest,
    providers: ProviderDefinition[],
    pins: Record<string, number>,
    profile: CompatProfileRows,
    settings: CompatSettings,
  ): Promise<CompatCell> {
    const own = copy(artifact);
    return this.cell(tenant, { kind: 'provider-cell', artifact: own, manifest, providers, pins, profile, settings }, [own.buffer]);
  }

  private async cell(tenant: string, task: VerifyTask & { kind: 'cell' | 'provider-cell' }, transfer: ArrayBuffer[] = []): Promise<CompatCell> {
    try {
      const r = await this.run(tenant, task, 'compat', transfer);
      if (!('cell' in r)) throw new Error('compat: the verifier answered another task');
      return r.cell;
    } catch (err) {
      if (!(err instanceof RegistryError) || err.code !== 'program_rejected') throw err;
      const text = err.message.replace('; nothing was stored', '');
      return { verdict: 'unknown', reasons: { programs: [], reasons: [{ kind: 'verifier-rejected', program: '', event: '', text }], fieldDiffs: [] } };
    }
  }

  /**
   * Checks a live session's program of `tenant` on a worker (src/jobs/verify-worker.ts): a script
   * parsed, assembly assembled and verified. Refusals as publish's (`bad_request`, `program_rejected`).
   */
  async checkLive(tenant: string, language: 'script' | 'asm', source: string): Promise<{ programs: number }> {
    const r = await this.run(tenant, { kind: 'live', language, source }, 'live start');
    if (!('live' in r)) throw new Error('live start: the verifier answered another task');
    return r.live;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** A buffer of its own (small Buffers share a pool), to move to a worker rather than copy. */
function copy(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const own = new Uint8Array(bytes.length);
  own.set(bytes);
  return own;
}
