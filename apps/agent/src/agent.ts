// The agent: a loop of small restartable parts around one state folder and one feed.
//
//   profile  reads the node's kernel profile and reports it (again when it changes)
//   poll     asks the registry for the agent's assignments (ETag, jitter, backoff) and brings the
//            targets in line: load (relocate for this node, verify, load into the VM), attach, stop
//   feed     the node's records (live tracefs or a recording), dispatched to the attached targets
//   flush    every snapshot interval: outputs of every target → spool (fsynced)
//   upload   spool → registry, oldest first, until empty (woken by flush)
//   status   target statuses with their reasons as data, when they change (and counters now and then)
//
// A registry outage changes nothing that runs: polls, uploads and status reports back off and
// retry, the outputs wait in the spool, and a restart runs the last assignments from the state
// folder. SIGINT/SIGTERM stop everything in order (see `stop`).
import { findTracefs, removeStaleInstances, type TraceDatFile } from '@probeyard/formats/node';
import { Dispatcher } from '@probeyard/runtime';
import type { BackoffOptions } from './backoff.js';
import { jitter } from './backoff.js';
import { AgentApi, type AgentApiOptions, type Assignment, type StatusReport } from './client.js';
import { AgentError, isAgentError } from './errors.js';
import { FeedRunner } from './feed/feed-runner.js';
import type { FeedOptions } from './feed-options.js';
import { LiveSessions } from './live/live-sessions.js';
import { jsonLogger, type Logger } from './log.js';
import { AgentMetrics } from './metrics/agent-metrics.js';
import { type Health, type MetricsServer, startMetricsServer } from './metrics/metrics-server.js';
import { type Part, PartLoop } from './part-loop.js';
import { type NodeProfile, openRecording, profileTarball, readLiveProfile, readTraceDatProfile } from './profile/node-profile.js';
import { Spool } from './spool/spool.js';
import { Uploader } from './spool/uploader.js';
import { type Credential, StateDir } from './state/state-dir.js';
import { ArtifactStore } from './targets/artifact-store.js';
import { type TargetLimits, TargetManager } from './targets/target-manager.js';

export interface AgentOptions {
  /** The state folder `enroll` made. */
  state: string;
  /**
   * The registry's URL when it is no longer where the agent enrolled (it moved, or a local
   * `probeyard up` picked another port); default: the URL kept with the credential.
   */
  registry?: string;
  feed: FeedOptions;
  /** Speed of a replay at its recorded pace (1 real time, 0.1 ten times slower). */
  speed?: number;
  /** `HOST:PORT` for `/metrics` and `/healthz` (none when undefined). */
  metrics?: string;
  /** Milliseconds between polls; default: what the registry says (10 s), with ±20% jitter. */
  pollIntervalMs?: number;
  /** Milliseconds between map snapshots (default 10,000). */
  snapshotIntervalMs?: number;
  /** Milliseconds between a live session's output reports (default 1,000). */
  liveOutputIntervalMs?: number;
  /** Milliseconds between reports of every running target's counters (default 30,000). */
  statusIntervalMs?: number;
  /** Bytes the spool keeps at most (default 256 MiB). */
  spoolCapBytes?: number;
  /** Milliseconds between checks of a live kernel profile (default 300,000). */
  profileIntervalMs?: number;
  /** buffer_size_kb of the live instance per CPU (default: 64 MiB shared by the CPUs, 2 to 32 MiB each). */
  bufferSizeKb?: number;
  limits?: TargetLimits;
  /** Backoff of every part after a failure (default: 1 s doubling to 60 s, full jitter). */
  backoff?: BackoffOptions;
  /** Milliseconds the last upload at stop may take (default 5,000). */
  stopUploadMs?: number;
  log?: Logger;
  api?: AgentApiOptions;
}

const day = 86_400_000;

export class Agent {
  readonly options: AgentOptions;
  readonly log: Logger;
  readonly metrics = new AgentMetrics();
  readonly state: StateDir;
  readonly credential: Credential;
  readonly api: AgentApi;
  readonly spool: Spool;
  readonly dispatcher = new Dispatcher();
  readonly feed: FeedRunner;
  readonly targets: TargetManager;
  /** Live sessions (issue 18): programs run now, for a while, from the registry's long poll. */
  readonly live: LiveSessions;
  private readonly abort = new AbortController();
  private readonly loops = new Map<string, PartLoop>();
  private metricsServer: MetricsServer | undefined;
  private profile: NodeProfile | undefined;
  private reportedProfileHash: string | undefined;
  private etag: string | undefined;
  /** The assignments of the last full poll answer (or of the state folder, before one). */
  assignments: Assignment[] = [];
  private uploader: Uploader | undefined;
  private stopping: Promise<void> | undefined;
  private fatal: AgentError | undefined;
  private resolveDone!: (code: number) => void;
  private feedGate!: () => void;
  private readonly feedReady: Promise<void>;
  private lastLimitsCheck = 0;
  /** The recording of a file feed, open from start to stop. */
  private readonly recording: TraceDatFile | undefined;
  private lastFullStatus = 0;
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
    this.feedReady = new Promise((resolve) => {
      this.feedGate = resolve;
    });
    // one pass of a recording gets its chunks decompressed ahead on a worker; a loop reads them as it goes
    this.recording = options.feed.kind === 'file' ? openRecording(options.feed.path, { prefetch: !options.feed.loop }) : undefined;
    this.feed = new FeedRunner({
      feed: options.feed,
      ...(this.recording ? { recording: this.recording } : {}),
      dispatcher: this.dispatcher,
      log: this.log,
      ...(options.speed !== undefined ? { speed: options.speed } : {}),
      ...(options.bufferSizeKb !== undefined ? { bufferSizeKb: options.bufferSizeKb } : {}),
      onBatch: () => this.afterBatch(),
      onEnd: (pass) => {
        // a loop says it once; later passes only at debug (a short recording ends every few seconds)
        this.log(pass === 1 ? 'info' : 'debug', `feed: the recording ended (pass ${pass}, ${this.feed.records} records in all)${pass === 1 && this.options.feed.kind === 'file' && this.options.feed.loop ? '; it loops, time moving on from its end' : ''}`);
        this.loops.get('flush')?.wake();
      },
    });
    this.targets = new TargetManager({
      store: new ArtifactStore(state.dir('artifacts'), this.api),
      dispatcher: this.dispatcher,
      profile: () => this.profile!,
      cpuCount: () => this.profile?.cpuCount ?? 1,
      environment: { commOf: (pid) => this.feed.comm(pid) },
      ...(options.limits ? { limits: options.limits } : {}),
      log: this.log,
      onEventsChanged: () => this.feed.eventsChanged(),
      onStatusChanged: () => this.loops.get('status')?.wake(),
    });
    this.live = new LiveSessions({
      api: this.api,
      dispatcher: this.dispatcher,
      profile: () => this.profile!,
      cpuCount: () => this.profile?.cpuCount ?? 1,
      environment: { commOf: (pid) => this.feed.comm(pid) },
      log: this.log,
      onEventsChanged: () => this.feed.eventsChanged(),
      ...(options.liveOutputIntervalMs !== undefined ? { outputIntervalMs: options.liveOutputIntervalMs } : {}),
      ...(options.limits?.instructionBudget !== undefined ? { instructionBudget: options.limits.instructionBudget } : {}),
    });
    const saved = state.readJson<{ etag?: string; assignments?: Assignment[] }>('assignments.json');
    if (saved?.assignments) this.assignments = saved.assignments;
  }

  /** Opens the state folder (taking its lock), reads the node's profile and starts every part. */
  static async start(options: AgentOptions): Promise<Agent> {
    const state = StateDir.open(options.state);
    const stored = state.readCredential();
    if (!stored) throw new AgentError('state', `state ${state.path}: not enrolled: run probeyard-agent enroll first`, { path: state.path });
    const credential = options.registry === undefined ? stored : { ...stored, registry: options.registry.replace(/\/+$/, '') };
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
    if (this.options.feed.kind === 'live') this.removeLeftovers();
    this.profile = await this.readProfile();
    this.log('info', `agent ${this.credential.agentId} of ${this.credential.registry}: kernel ${this.profile.release || '?'} (${this.profile.complete ? 'complete' : 'partial'} profile ${this.profile.hash.slice(0, 12)}, ${this.profile.kernel.events.size} events, ${this.profile.cpuCount} CPUs)`, {
      agentId: this.credential.agentId,
      feed: this.options.feed.kind === 'live' ? 'live' : this.options.feed.path,
    });
    this.metrics.setSources({
      spool: () => ({ bytes: this.spool.bytes, batches: this.spool.batches, dropped: this.spool.droppedTotal, rejected: this.spool.rejectedTotal }),
      kernelHash: () => this.profile?.hash ?? '',
      targets: () => this.targets.samples(),
      feed: () => this.feed.sample(),
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
    // What ran before a restart runs again at once, from the state folder, whatever the registry.
    if (this.assignments.length > 0) {
      this.targets.reconcile(this.assignments);
      void this.targets.idle().then(() => this.feedGate());
    }
    const snapshotMs = this.options.snapshotIntervalMs ?? 10_000;
    this.addPart({ name: 'profile', tick: () => this.profileTick() });
    this.addPart({ name: 'poll', tick: () => this.pollTick() });
    // the fast path of live sessions: a long poll held by the registry, again at once after each answer
    this.addPart({ name: 'live', tick: (signal) => this.live.waitTick(signal) });
    this.addPart({
      name: 'feed',
      tick: async (signal) => {
        await Promise.race([this.feedReady, new Promise((r) => signal.addEventListener('abort', r, { once: true }))]);
        if (signal.aborted) return day;
        await this.feed.run(signal);
        return day; // a recording without --loop is over
      },
    });
    this.addPart({
      name: 'flush',
      tick: async () => {
        this.flush();
        return snapshotMs;
      },
    });
    this.addPart({
      name: 'upload',
      tick: async (signal) => {
        await uploader.drain(signal);
        return 5_000;
      },
    });
    this.addPart({ name: 'status', tick: () => this.statusTick() });
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
    if (feed.kind === 'file') return readTraceDatProfile(this.recording ?? feed.path);
    const tracefs = feed.tracefs ?? findTracefs({ mount: true })?.path;
    if (tracefs === undefined) throw new AgentError('profile', 'profile: tracefs is not mounted and cannot be mounted here (root is needed for --feed live)');
    return readLiveProfile(tracefs);
  }

  /**
   * A SIGKILL leaves the live instance behind (`probeyard-<pid>-<start time>-<random>`, events on,
   * buffers allocated): this start removes those of processes that are gone, never a live one's.
   */
  private removeLeftovers(): void {
    const { removed, failed } = removeStaleInstances();
    for (const r of removed) this.log('info', `feed live: removed the instance ${r.name} that a killed process (pid ${r.pid}) left behind`);
    for (const f of failed) this.log('warn', `feed live: could not remove the leftover instance ${f.name}: ${f.error}`);
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
        this.log('info', `kernel profile changed: ${this.profile?.hash.slice(0, 12)} → ${now.hash.slice(0, 12)} (${now.kernel.events.size} events); running targets keep their load, new ones use it`);
        this.profile = now;
      }
    }
    const p = this.profile!;
    if (p.hash !== this.reportedProfileHash) {
      const report = { release: p.release.slice(0, 128), machine: p.machine.slice(0, 32), tarball: profileTarball(p).toString('base64'), ...(p.complete ? {} : { partial: true }) };
      const answer = await this.api.reportProfile(report).catch((e) => {
        this.metrics.registryErrors.inc({ call: 'reportProfile', code: (isAgentError(e) && e.context.registryCode) || 'unknown' });
        throw e;
      });
      this.reportedProfileHash = p.hash;
      this.log('info', `reported kernel profile ${answer.profile.name}${answer.created ? ' (new to the registry)' : ''}`, { profileId: answer.profile.id });
    }
    return live ? (this.options.profileIntervalMs ?? 300_000) : day;
  }

  private async pollTick(): Promise<number> {
    const started = performance.now();
    let answer: Awaited<ReturnType<AgentApi['poll']>>;
    try {
      answer = await this.api.poll(this.etag);
    } catch (e) {
      this.metrics.polls.inc({ result: 'error' });
      this.metrics.registryErrors.inc({ call: 'poll', code: (isAgentError(e) && e.context.registryCode) || 'unknown' });
      // loads that waited for the registry (an artifact not in the state folder) try again later
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
    this.targets.reconcile(this.assignments);
    await this.targets.idle();
    this.feedGate();
    return jitter(this.options.pollIntervalMs ?? answer.pollAfterSeconds * 1000);
  }

  private flush(): void {
    const batches = this.targets.collectOutputs(this.dispatcher.traceTimeNs);
    if (batches.length === 0) return;
    this.spool.append(batches);
    this.metrics.spoolAppended.inc(batches.length);
    this.loops.get('upload')?.wake();
  }

  private async statusTick(): Promise<number> {
    const interval = this.options.statusIntervalMs ?? 30_000;
    const all = Date.now() - this.lastFullStatus >= interval;
    const reports = this.targets.statusReports(all);
    for (let i = 0; i < reports.length; i += 200) await this.sendStatus(reports.slice(i, i + 200));
    if (all) this.lastFullStatus = Date.now();
    return interval;
  }

  private async sendStatus(reports: StatusReport[]): Promise<void> {
    if (reports.length === 0) return;
    try {
      await this.api.reportStatus(reports);
      this.targets.reported(reports);
      for (const r of reports) this.metrics.statusReports.inc({ status: r.status });
    } catch (e) {
      this.metrics.registryErrors.inc({ call: 'reportStatus', code: (isAgentError(e) && e.context.registryCode) || 'unknown' });
      if (!isAgentError(e) || e.retryable || e.code === 'unauthorized') throw e;
      if (reports.length === 1) {
        // The registry refuses this one for good (a target it no longer has): forget it.
        this.log('warn', `report status: target ${reports[0]!.targetId}: ${e.message}: forgotten`, { targetId: reports[0]!.targetId });
        if (e.context.registryCode === 'NOT_FOUND') this.targets.forget(reports[0]!.targetId);
        else this.targets.reported(reports);
        return;
      }
      for (const r of reports) await this.sendStatus([r]);
    }
  }

  private afterBatch(): void {
    const now = Date.now();
    if (now - this.lastLimitsCheck < 1000) return;
    this.lastLimitsCheck = now;
    this.targets.enforceLimits(now);
  }

  /** What `/healthz` answers: each part's last success and error, the spool, the feed. */
  health(): Health {
    const parts: Record<string, unknown> = {};
    for (const [name, loop] of this.loops) {
      parts[name] = { lastOkAt: loop.lastOkAt ? new Date(loop.lastOkAt).toISOString() : null, failures: loop.failures, lastError: loop.lastError ?? null };
    }
    const feed = this.feed.sample();
    return {
      ok: this.stopping === undefined && this.fatal === undefined,
      agentId: this.credential.agentId,
      kernel: this.profile ? { release: this.profile.release, hash: this.profile.hash, complete: this.profile.complete } : null,
      feed: { kind: feed.kind, records: feed.records, lostEvents: [...feed.lostByCpu.values()].reduce((a, b) => a + b, 0), passes: this.feed.passes },
      targets: this.targets.all().map((t) => ({ id: t.id, program: `${t.assignment.program.name}@${t.assignment.program.version}`, status: t.phase, code: t.detail.code })),
      live: this.live.all(),
      spool: { batches: this.spool.batches, bytes: this.spool.bytes, dropped: this.spool.droppedTotal, rejected: this.spool.rejectedTotal },
      parts,
    };
  }

  /**
   * Stops in order: every part (the feed's tracefs instance is removed as its stream closes),
   * then each target's final outputs into the spool (fsynced), one bounded upload attempt, the
   * metrics server, the spool and the state lock. What is not uploaded waits for the next start.
   */
  stop(why: string): Promise<void> {
    this.stopping ??= (async () => {
      this.log('info', `stopping: ${why}`);
      this.abort.abort();
      await Promise.all([...this.loops.values()].map((l) => l.stopped()));
      if (this.profile) await this.live.stopAll();
      if (this.profile) {
        this.targets.stopAll();
        try {
          this.flush();
        } catch (e) {
          this.log('error', `stop: last flush: ${(e as Error).message}`);
        }
      }
      if (this.uploader && this.spool.batches > 0 && this.fatal === undefined) {
        // One last upload, bounded: what does not make it waits in the spool for the next start.
        const deadline = AbortSignal.timeout(this.options.stopUploadMs ?? 5_000);
        await Promise.race([this.uploader.drain(deadline).catch(() => 0), new Promise((r) => deadline.addEventListener('abort', r, { once: true }))]);
      }
      this.log('info', `stopped: ${this.spool.batches} batches wait in the spool`, { spoolBatches: this.spool.batches, spoolBytes: this.spool.bytes });
      await this.metricsServer?.close();
      this.recording?.close();
      this.spool.close();
      this.state.unlock();
      this.resolveDone(this.fatal ? 1 : 0);
    })();
    return this.stopping;
  }
}
