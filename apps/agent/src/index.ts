// Public API of @probeyard/agent: what its tests, benchmarks and the fleet simulator use. The
// agent is an app: other apps never import it (docs/ARCHITECTURE.md).
export { AgentError, type AgentErrorCode, type AgentErrorContext, isAgentError } from './errors.js';
export { Backoff, type BackoffOptions, jitter, sleep } from './backoff.js';
export { jsonLogger, type Logger, type LogLevel, redact, silentLogger } from './log.js';
export { AgentApi, type AgentApiOptions, type Assignment, classifyRegistryError, type OutputBatch, type StatusReport } from './client.js';
export { StateDir, type Credential, writeFileAtomic } from './state/state-dir.js';
export { automaticLabels, checkLabel, type Labels, parseLabelFlags, readConfigLabels } from './labels.js';
export { type NodeProfile, profileTarball, readLiveProfile, readTraceDatProfile } from './profile/node-profile.js';
export { writeTar } from './profile/tar.js';
export { defaultSpoolCapBytes, type NewBatch, type OutputKind, outputKinds, Spool, type SpoolEntry, type SpooledBatch, type SpoolOptions } from './spool/spool.js';
export { Uploader, type UploaderOptions } from './spool/uploader.js';
export { AgentMetrics, type FeedSample, type MetricsSources, type ProviderUse, type SpoolSample, type TargetSample } from './metrics/agent-metrics.js';
export { type Health, type MetricsServer, parseListenAddress, startMetricsServer } from './metrics/metrics-server.js';
export { type Part, PartLoop, type PartLoopOptions } from './part-loop.js';
export { type FeedOptions, parseFeedOptions } from './feed-options.js';
export { agentVersion, enroll, type EnrollOptions, type EnrollResult, readTokenFile } from './enroll.js';
export { type Artifact, ArtifactRefused, ArtifactStore } from './targets/artifact-store.js';
export { CpuBudget, type CpuBudgetOptions, type CpuVerdict, FaultRate, WindowedCounter } from './targets/limits.js';
export { maxBatchPayloadBytes, Target, type TargetLimits, TargetManager, type TargetManagerOptions, type TargetPhase } from './targets/target-manager.js';
export { FeedRunner, type FeedRunnerOptions } from './feed/feed-runner.js';
export { Agent, type AgentOptions } from './agent.js';
export { main } from './main.js';
