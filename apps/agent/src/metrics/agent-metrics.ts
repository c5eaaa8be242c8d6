// The agent's own cost and health in the Prometheus text format (prom-client, a registry of its
// own, never the process-global one): per target events, runs, faults, lost events, CPU seconds;
// the spool; polls and registry errors; the feed; and Node's process metrics (RSS, CPU). Info
// series per target (program, digest, status, verdict) and per provider probe of a running target
// (which provider release and implementation it runs through).
import type { ProviderChoice } from '@probeyard/compat';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * A provider implementation a running target goes through (`io:::done via io@1.1.0, implementation
 * for error` as data): the verdict's own record of it (`ProgramVerdict.provider`).
 */
export type ProviderUse = ProviderChoice;

/** What the agent knows of one target when metrics are scraped. */
export interface TargetSample {
  targetId: string;
  program: string;
  version: string;
  digest: string;
  status: string;
  /** `compatible` / `relocated` when running, '' otherwise. */
  verdict: string;
  eventsSeen: number;
  runs: number;
  instructions: number;
  faults: number;
  lostEvents: number;
  cpuSeconds: number;
  outputsDropped: number;
  /** The provider implementations it runs through (running targets only; none for a program without provider probes). */
  providers: readonly ProviderUse[];
}

export interface SpoolSample {
  bytes: number;
  batches: number;
  dropped: number;
  rejected: number;
}

export interface FeedSample {
  kind: string;
  records: number;
  /** Lost events per CPU (ring-buffer overruns). */
  lostByCpu: ReadonlyMap<number, number>;
  lostUnknown: number;
}

export interface MetricsSources {
  targets?: () => readonly TargetSample[];
  spool?: () => SpoolSample | undefined;
  feed?: () => FeedSample | undefined;
  kernelHash?: () => string;
}

export class AgentMetrics {
  readonly registry = new Registry();
  readonly polls: Counter<'result'>;
  readonly pollSeconds: Histogram;
  readonly registryErrors: Counter<'call' | 'code'>;
  readonly uploadedBatches: Counter;
  readonly uploadSeconds: Histogram;
  readonly spoolAppended: Counter;
  readonly partRestarts: Counter<'part'>;
  readonly statusReports: Counter<'status'>;
  private sources: MetricsSources = {};

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    const self = this;
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'probeyard_agent_' });
    this.polls = new Counter({ name: 'probeyard_agent_polls_total', help: 'Polls of the registry, by result (changed, not_modified, error)', labelNames: ['result'], registers });
    this.pollSeconds = new Histogram({
      name: 'probeyard_agent_poll_duration_seconds',
      help: 'Latency of agent.poll calls',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.registryErrors = new Counter({ name: 'probeyard_agent_registry_errors_total', help: 'Failed registry calls, by call and code', labelNames: ['call', 'code'], registers });
    this.uploadedBatches = new Counter({ name: 'probeyard_agent_uploaded_batches_total', help: 'Output batches the registry acknowledged', registers });
    this.uploadSeconds = new Histogram({
      name: 'probeyard_agent_upload_duration_seconds',
      help: 'Latency of agent.uploadOutputs calls',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.spoolAppended = new Counter({ name: 'probeyard_agent_spool_appended_batches_total', help: 'Output batches written (fsynced) to the spool', registers });
    this.partRestarts = new Counter({ name: 'probeyard_agent_part_restarts_total', help: 'Times a part of the agent failed and was restarted after a backoff', labelNames: ['part'], registers });
    this.statusReports = new Counter({ name: 'probeyard_agent_status_reports_total', help: 'Target statuses reported to the registry', labelNames: ['status'], registers });

    new Gauge({
      name: 'probeyard_agent_spool_bytes',
      help: 'Bytes of output batches waiting in the spool for the registry',
      registers,
      collect() {
        this.set(self.sources.spool?.()?.bytes ?? 0);
      },
    });
    new Gauge({
      name: 'probeyard_agent_spool_batches',
      help: 'Output batches waiting in the spool for the registry',
      registers,
      collect() {
        this.set(self.sources.spool?.()?.batches ?? 0);
      },
    });
    new Counter({
      name: 'probeyard_agent_spool_dropped_batches_total',
      help: 'Output batches dropped because the spool was over its cap (oldest first)',
      registers,
      collect() {
        this.reset();
        this.inc(self.sources.spool?.()?.dropped ?? 0);
      },
    });
    new Counter({
      name: 'probeyard_agent_spool_rejected_batches_total',
      help: 'Output batches the registry refused for good (not retried)',
      registers,
      collect() {
        this.reset();
        this.inc(self.sources.spool?.()?.rejected ?? 0);
      },
    });
    new Counter({
      name: 'probeyard_agent_feed_records_total',
      help: 'Trace records read from the feed',
      labelNames: ['feed'],
      registers,
      collect() {
        this.reset();
        const f = self.sources.feed?.();
        if (f) this.inc({ feed: f.kind }, f.records);
      },
    });
    new Counter({
      name: 'probeyard_agent_feed_lost_events_total',
      help: 'Events the kernel ring buffer lost (overruns), per CPU; cpu="unknown" counts pages that said events were lost without a count',
      labelNames: ['cpu'],
      registers,
      collect() {
        this.reset();
        const f = self.sources.feed?.();
        if (!f) return;
        for (const [cpu, n] of f.lostByCpu) this.inc({ cpu: String(cpu) }, n);
        if (f.lostUnknown > 0) this.inc({ cpu: 'unknown' }, f.lostUnknown);
      },
    });
    const perTarget = (name: string, help: string, pick: (s: TargetSample) => number) =>
      new Counter({
        name,
        help,
        labelNames: ['target', 'program'],
        registers,
        collect() {
          this.reset();
          for (const s of self.sources.targets?.() ?? []) this.inc({ target: s.targetId, program: s.program }, pick(s));
        },
      });
    perTarget('probeyard_agent_target_events_total', 'Records dispatched to the target (since its run began)', (s) => s.eventsSeen);
    perTarget('probeyard_agent_target_runs_total', 'Program runs of the target', (s) => s.runs);
    perTarget('probeyard_agent_target_instructions_total', 'BPF instructions the target executed', (s) => s.instructions);
    perTarget('probeyard_agent_target_faults_total', 'Runs of the target that faulted', (s) => s.faults);
    perTarget('probeyard_agent_target_lost_events_total', 'Events of the target lost in the ring buffer', (s) => s.lostEvents);
    perTarget('probeyard_agent_target_cpu_seconds_total', 'CPU time spent running the target', (s) => s.cpuSeconds);
    perTarget('probeyard_agent_target_outputs_dropped_total', 'Output of the target dropped (event bounds, spool cap, refused batches)', (s) => s.outputsDropped);
    new Gauge({
      name: 'probeyard_agent_target_info',
      help: 'One per target: which program digest runs in which status on which kernel fingerprint',
      labelNames: ['target', 'program', 'version', 'digest', 'status', 'verdict', 'kernel'],
      registers,
      collect() {
        this.reset();
        const kernel = self.sources.kernelHash?.() ?? '';
        for (const s of self.sources.targets?.() ?? []) {
          this.set({ target: s.targetId, program: s.program, version: s.version, digest: s.digest, status: s.status, verdict: s.verdict, kernel }, 1);
        }
      },
    });
    new Gauge({
      name: 'probeyard_agent_target_provider_info',
      help: 'One per provider probe of a running target: the provider release and the implementation it runs through on this kernel (none for a program without provider probes)',
      labelNames: ['target', 'program', 'probe', 'provider', 'version', 'implementation'],
      registers,
      collect() {
        this.reset();
        for (const s of self.sources.targets?.() ?? []) {
          for (const p of s.providers) {
            this.set({ target: s.targetId, program: s.program, probe: p.probe, provider: p.provider, version: p.version, implementation: p.implementation }, 1);
          }
        }
      },
    });
  }

  /** Where the scraped values come from (set once the parts exist). */
  setSources(sources: MetricsSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
