// The agent: a loop of small restartable parts around one state folder.
//
//   profile  reads the node's kernel profile and reports it (again when it changes)
//   poll     asks the registry for the agent's assignments (ETag, jitter, backoff)
//   flush    every snapshot interval: outputs of every target → spool (fsynced)
//   upload   spool → registry, oldest first, until empty (woken by flush)
//
// A registry outage changes nothing that runs: polls and uploads back off and retry while the
// outputs wait in the spool. SIGINT/SIGTERM stop everything in order (see `stop`).
import { AgentApi, type AgentApiOptions, type Assignment } from './client.js';
import type { BackoffOptions } from './backoff.js';
import { jitter } from './backoff.js';
import { AgentError, isAgentError } from './errors.js';
import type { FeedOptions } from './feed-options.js';
import { jsonLogger, type Logger } from './log.js';
import { AgentMetrics } from './metrics/agent-metrics.js';
import { type Health, type MetricsServer, startMetricsServer } from './metrics/metrics-server.js';
import { type Part, PartLoop } from './part-loop.js';
import { type NodeProfile, profileTarball, readLiveProfile, readTraceDatProfile } from './profile/node-profile.js';
import { Spool } from './spool/spool.js';
import { Uploader } from './spool/uploader.js';
import { type Credential, StateDir } from './state/state-dir.js';
import { findTracefs } from '@probeyard/formats/node';

export interface AgentOptions {
  /** The state folder `enroll` made. */
  state: string;
  feed: FeedOptions;
  /** `HOST:PORT` for `/metrics` and `/healthz` (none when undefined). */
  metrics?: string;
  /** Milliseconds between polls; default: what the registry says (10 s), with ±20% jitter. */
  pollIntervalMs?: number;
  /** Milliseconds between map snapshots (default 10,000). */
  snapshotIntervalMs?: number;
  /** Bytes the spool keeps at most (default 256 MiB). */
  spoolCapBytes?: number;
  /** Milliseconds between checks of a live kernel profile (default 300,000). */
  profileIntervalMs?: number;
  /** Backoff of every part after a failure (default: 1 s doubling to 60 s, full jitter). */
  backoff?: BackoffOptions;
  /** Milliseconds the last upload at stop may take (default 5,000). */
  stopUploadMs?: number;
  log?: Logger;
  api?: AgentApiOptions;
}

export class Agent {
  readonly options: AgentOptions;
  readonly log: Logger;
  readonly metrics = new AgentMetrics();
  readonly state: StateDir;
  readonly credential: Credential;
  readonly api: AgentApi;
  readonly spool: Spool;
  private readonly abort = new AbortController();
  private readonly loops = new Map<string, PartLoop>();
  private metricsServer: MetricsServer | undefined;
  private profile: NodeProfile | undefined;
  private reportedProfileHash: string | undefined;
  private etag: string | undefined;
  /** The assignments of the last full poll answer. */
  assignments: Assignment[] = [];
  private uploader: Uploader | undefined;
  private stopping: Promise<void> | undefined;
  private fatal: AgentError | undefined;
  private resolveDone!: (code: number) => void;
  /** Resolves with the exit code once the agent has stopped. */
  readonly done: Promise<number>;

  private constructor(options: AgentOptions, state: StateDir, credential: Credential) {
    this.options = options;
    this.log = options.log ?? jsonLogger();
    this.state = state;
    this.credential = credential;
    this.api = new AgentApi(credential.registry, credential.credential, options.api);
    this.spool = Spool.open(state.dir('spool'), { ...(options.spoolCapBytes !== undefined ? { capBytes: options.spoolCapBytes } : {}), log: this.log });
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    const saved = state.readJson<{ etag?: string; assignments?: Assignment[] }>('assignments.json');
    if (saved?.assignments) this.assignments = saved.assignments;
  }

  /** Opens the state folder (taking its lock), reads the node's profile and starts every part. */
  static async start(options: AgentOptions): Promise<Agent> {
    const state = StateDir.open(options.state);
    const credential = state.readCredential();
    if (!credential) throw new AgentError('state', `state ${state.path}: not enrolled: run probeyard-agent enroll first`, { path: state.path });
    state.lock();
    let agent: Agent;
    try {
      agent = new Agent(options, state, credential);
    } catch (e) {
      state.unlock();
      throw e;
    }
    try {
      await agent.begin();
    } catch (e) {
      await agent.stop('start failed');
      throw e;
    }
    return agent;
  }

  private async begin(): Promise<void> {
    this.profile = await this.readProfile();
    this.log('info', `agent ${this.credential.agentId} of ${this.credential.registry}: kernel ${this.profile.release || '?'} (${this.profile.complete ? 'complete' : 'partial'} profile ${this.profile.hash.slice(0, 12)}, ${this.profile.kernel.events.size} events)`, {
      agentId: this.credential.agentId,
      feed: this.options.feed.kind === 'live' ? 'live' : this.options.feed.path,
    });
    this.metrics.setSources({
      spool: () => ({ bytes: this.spool.bytes, batches: this.spool.batches, dropped: this.spool.droppedTotal, rejected: this.spool.rejectedTotal }),
      kernelHash: () => this.profile?.hash ?? '',
    });
    if (this.options.metrics !== undefined) {
      this.metricsServer = await startMetricsServer(this.options.metrics, this.metrics, () => this.health());
      this.log('info', `metrics on ${this.metricsServer.url}/metrics, health on ${this.metricsServer.url}/healthz`);
    }
    const uploader = (this.uploader = new Uploader(this.spool, this.api, {
      log: this.log,
      onUploaded: (n, seconds) => {
        this.metrics.uploadedBatches.inc(n);
        this.metrics.uploadSeconds.observe(seconds);
      },
      onError: (e) => this.metrics.registryErrors.inc({ call: 'uploadOutputs', code: e.context.registryCode ?? e.code }),
    }));
    this.addPart({ name: 'profile', tick: () => this.profileTick() });
    this.addPart({ name: 'poll', tick: () => this.pollTick() });
    this.addPart({
      name: 'upload',
      tick: async (signal) => {
        await uploader.drain(signal);
        return 5_000;
      },
    });
    for (const loop of this.loops.values()) loop.start(this.abort.signal);
  }

  private addPart(part: Part): PartLoop {
    const loop = new PartLoop(part, {
      log: this.log,
      ...(this.options.backoff ? { backoff: this.options.backoff } : {}),
      onFailure: (name) => this.metrics.partRestarts.inc({ part: name }),
      isFatal: (err) => isAgentError(err) && err.code === 'unauthorized',
      onFatal: (name, err) => {
        this.fatal = err as AgentError;
        this.log('error', `${name}: the registry does not accept this agent's credential (revoked?): enrol again: ${(err as Error).message}`);
        void this.stop('credential refused');
      },
    });
    this.loops.set(part.name, loop);
    return loop;
  }

  private async readProfile(): Promise<NodeProfile> {
    const feed = this.options.feed;
    if (feed.kind === 'file') return readTraceDatProfile(feed.path);
    const tracefs = feed.tracefs ?? findTracefs({ mount: true })?.path;
    if (tracefs === undefined) throw new AgentError('profile', 'profile: tracefs is not mounted and cannot be mounted here (root is needed for --feed live)');
    return readLiveProfile(tracefs);
  }

  /** `http://host:port` of `/metrics` and `/healthz`, when served. */
  get metricsUrl(): string | undefined {
    return this.metricsServer?.url;
  }

  /** The node's kernel profile (as last read). */
  get kernelProfile(): NodeProfile | undefined {
    return this.profile;
  }

  private async profileTick(): Promise<number> {
    const live = this.options.feed.kind === 'live';
    if (live && this.reportedProfileHash !== undefined) {
      const now = await this.readProfile();
      if (now.hash !== this.profile?.hash) {
        this.log('info', `kernel profile changed: ${this.profile?.hash.slice(0, 12)} → ${now.hash.slice(0, 12)} (${now.kernel.events.size} events)`);
        this.profile = now;
      }
    }
    const p = this.profile!;
    if (p.hash !== this.reportedProfileHash) {
      const answer = await this.api.reportProfile({ release: p.release.slice(0, 128), machine: p.machine.slice(0, 32), tarball: profileTarball(p).toString('base64') }).catch((e) => {
        this.metrics.registryErrors.inc({ call: 'reportProfile', code: (isAgentError(e) && e.context.registryCode) || 'unknown' });
        throw e;
      });
      this.reportedProfileHash = p.hash;
      this.log('info', `reported kernel profile ${answer.profile.name}${answer.created ? ' (new to the registry)' : ''}`, { profileId: answer.profile.id });
    }
    return live ? (this.options.profileIntervalMs ?? 300_000) : 3_600_000;
  }

  private async pollTick(): Promise<number> {
    const started = performance.now();
    let answer: Awaited<ReturnType<AgentApi['poll']>>;
    try {
      answer = await this.api.poll(this.etag);
    } catch (e) {
      this.metrics.polls.inc({ result: 'error' });
      this.metrics.registryErrors.inc({ call: 'poll', code: (isAgentError(e) && e.context.registryCode) || 'unknown' });
      throw e;
    } finally {
      this.metrics.pollSeconds.observe((performance.now() - started) / 1000);
    }
    this.metrics.polls.inc({ result: answer.notModified ? 'not_modified' : 'changed' });
    if (!answer.notModified) {
      this.assignments = answer.assignments;
      this.state.writeJson('assignments.json', { etag: answer.etag, assignments: answer.assignments });
      this.log('info', `assignments: ${answer.assignments.length} (${answer.assignments.filter((a) => a.desiredState === 'running').length} to run)`);
    }
    this.etag = answer.etag;
    return jitter(this.options.pollIntervalMs ?? answer.pollAfterSeconds * 1000);
  }

  /** What `/healthz` answers: each part's last success and error, the spool, the feed. */
  health(): Health {
    const parts: Record<string, unknown> = {};
    for (const [name, loop] of this.loops) {
      parts[name] = { lastOkAt: loop.lastOkAt ? new Date(loop.lastOkAt).toISOString() : null, failures: loop.failures, lastError: loop.lastError ?? null };
    }
    return {
      ok: this.stopping === undefined && this.fatal === undefined,
      agentId: this.credential.agentId,
      kernel: this.profile ? { release: this.profile.release, hash: this.profile.hash, complete: this.profile.complete } : null,
      spool: { batches: this.spool.batches, bytes: this.spool.bytes, dropped: this.spool.droppedTotal, rejected: this.spool.rejectedTotal },
      parts,
    };
  }

  /**
   * Stops in order: every part, then a last flush to the spool and one upload attempt (bounded),
   * then the feed (its tracefs instance removed), the metrics server and the state lock.
   */
  stop(why: string): Promise<void> {
    this.stopping ??= (async () => {
      this.log('info', `stopping: ${why}`);
      this.abort.abort();
      await Promise.all([...this.loops.values()].map((l) => l.stopped()));
      if (this.uploader && this.spool.batches > 0 && this.fatal === undefined) {
        // One last upload, bounded: what does not make it waits in the spool for the next start.
        const deadline = AbortSignal.timeout(this.options.stopUploadMs ?? 5_000);
        await Promise.race([this.uploader.drain(deadline).catch(() => 0), new Promise((r) => deadline.addEventListener('abort', r, { once: true }))]);
      }
      this.log('info', `stopped: ${this.spool.batches} batches wait in the spool`, { spoolBatches: this.spool.batches, spoolBytes: this.spool.bytes });
      await this.metricsServer?.close();
      this.spool.close();
      this.state.unlock();
      this.resolveDone(this.fatal ? 1 : 0);
    })();
    return this.stopping;
  }
}
