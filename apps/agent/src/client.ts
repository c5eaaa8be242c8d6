// The agent's side of the registry API: a typed tRPC client (the router's *type* is the only
// thing of the registry imported, docs/ARCHITECTURE.md) over plain HTTP requests (`httpLink`, no
// batching), every answer checked before use, every failure turned into an AgentError that says
// whether trying again later may help.
import type { AppRouter } from '@probeyard/registry';
import { createTRPCClient, httpLink, type TRPCClient, TRPCClientError } from '@trpc/client';
import { any, arr, bool, either, int, num, obj, oneOf, opt, rec, type Shape, str } from './answer-shape.js';
import { AgentError } from './errors.js';
import { storableValue } from './storable-text.js';

export type RegistryClient = TRPCClient<AppRouter>;

type Api = RegistryClient['agent'];
export type PollAnswer = Awaited<ReturnType<Api['poll']['query']>>;
export type ArtifactAnswer = Awaited<ReturnType<Api['artifact']['query']>>;
export type EnrollAnswer = Awaited<ReturnType<Api['enroll']['mutate']>>;
export type ReportProfileInput = Parameters<Api['reportProfile']['mutate']>[0];
export type ReportProfileAnswer = Awaited<ReturnType<Api['reportProfile']['mutate']>>;
export type StatusReport = Parameters<Api['reportStatus']['mutate']>[0]['targets'][number];
export type OutputBatch = Parameters<Api['uploadOutputs']['mutate']>[0]['batches'][number];
export type UploadAnswer = Awaited<ReturnType<Api['uploadOutputs']['mutate']>>;
export type LiveReport = Parameters<Api['reportLive']['mutate']>[0];
export type LiveReportAnswer = Awaited<ReturnType<Api['reportLive']['mutate']>>;

/** One live session of the agent (`agent.waitLive`): a program to run now, for a while, that is not a version. */
export interface LiveAssignment {
  sessionId: string;
  language: 'script' | 'asm';
  source: string;
  durationSeconds: number;
  /** Milliseconds left by the registry's clock. */
  remainingMs: number;
  /** Percent of one core. */
  cpuBudgetPercent: number;
  desiredState: 'running' | 'stopped';
  /** A script naming provider probes: the releases to compile it through (name, version, published text). */
  providers?: { name: string; version: string; text: string }[];
}
export interface WaitLiveAnswer {
  notModified: boolean;
  etag: string;
  sessions: LiveAssignment[];
}

/** An HTTP error answered with something other than the registry's JSON (a proxy's page). */
class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`HTTP ${status}${body ? `: ${body}` : ''}`);
    this.name = 'HttpStatusError';
  }
}

/** tRPC codes after which the same call may succeed later. */
const transientCodes = new Set([
  'INTERNAL_SERVER_ERROR',
  'TOO_MANY_REQUESTS',
  'SERVICE_UNAVAILABLE',
  'GATEWAY_TIMEOUT',
  'BAD_GATEWAY',
  'TIMEOUT',
  'CLIENT_CLOSED_REQUEST',
  'PRECONDITION_FAILED',
]);

/** A failed call as an AgentError: `unauthorized`, or `registry` with the code and whether to retry. */
export function classifyRegistryError(call: string, err: unknown): AgentError {
  if (err instanceof AgentError) return err;
  if (err instanceof TRPCClientError) {
    const data = err.data as { code?: string; httpStatus?: number } | undefined;
    const status = (err.meta as { response?: { status?: number } } | undefined)?.response?.status ?? data?.httpStatus;
    const code = data?.code;
    if (code === 'UNAUTHORIZED') return new AgentError('unauthorized', `${call}: ${err.message}`, { registryCode: code, status, retryable: false, cause: err });
    if (code !== undefined) {
      return new AgentError('registry', `${call}: ${err.message}`, { registryCode: code, status, retryable: transientCodes.has(code), cause: err });
    }
    // No tRPC error shape: the connection failed, or the answer was not the registry's JSON.
    const cause = err.cause as Error | undefined;
    if (cause instanceof HttpStatusError) {
      return new AgentError('registry', `${call}: not an answer of a registry: ${cause.message}`, { registryCode: `HTTP_${cause.status}`, status: cause.status, retryable: true, cause: err });
    }
    const network = cause instanceof TypeError || cause?.name === 'AbortError' || cause?.name === 'TimeoutError';
    const inner = (cause?.cause as Error | undefined)?.message;
    const what = network ? `${cause?.message ?? 'no answer'}${inner ? ` (${inner})` : ''}` : `not an answer of a registry${status ? ` (HTTP ${status})` : ''}: ${err.message}`;
    return new AgentError('registry', `${call}: ${what}`, { registryCode: network ? 'NETWORK' : 'GARBAGE', status, retryable: true, cause: err });
  }
  return new AgentError('registry', `${call}: ${(err as Error)?.message ?? String(err)}`, { registryCode: 'NETWORK', retryable: true, cause: err });
}

/** One target the registry assigns the agent (`agent.poll`). */
export interface Assignment {
  targetId: string;
  deploymentId: string;
  program: { name: string; version: string };
  versionId: string;
  /** sha256 of the artifact. */
  digest: string;
  size: number;
  artifactKind: string;
  /** The deployment's `.rodata` options, set before load (decimal text or `true`/`false`; absent from an older registry). */
  options?: Record<string, string>;
  desiredState: 'running' | 'stopped';
  /** A program pinning providers: the release each pin resolves to now (`io@1.1.0`); a change restarts the target through it. */
  providers?: string[];
  /** The tenant's compat setting: also refuse a read of a plain `char` field whose signedness changed. */
  strictCharSign?: true;
}

export type PollResult = { notModified: true; etag: string; pollAfterSeconds: number } | { notModified: false; etag: string; pollAfterSeconds: number; assignments: Assignment[] };

const id = str(64, /^[^\s]+$/);
const assignmentShape = obj({
  targetId: id,
  deploymentId: id,
  program: obj({ name: str(200), version: str(200) }),
  versionId: id,
  digest: str(64, /^[0-9a-f]{64}$/),
  size: int(0, Number.MAX_SAFE_INTEGER),
  artifactKind: str(64),
  options: opt(rec(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, str(40, /^(true|false|-?\d+)$/), 64)),
  desiredState: oneOf('running', 'stopped'),
  providers: opt(arr(str(200), 64)),
  strictCharSign: opt(oneOf(true)),
});
const pollShape = either(
  obj({ notModified: oneOf(true), etag: str(256), pollAfterSeconds: num(0, 86_400) }),
  obj({ notModified: oneOf(false), etag: str(256), pollAfterSeconds: num(0, 86_400), assignments: arr(assignmentShape, 10_000) }),
);
const artifactShape = obj({ versionId: str(64), program: obj({ name: str(200), version: str(200) }), artifactKind: str(64), artifact: str(16 * 1024 * 1024), digest: str(64), spec: any, manifest: any, providers: opt(arr(obj({ name: str(64), version: str(200), text: str(256 * 1024) }), 64)) });
const uploadShape = obj({ accepted: int(0, 1_000_000), duplicates: int(0, 1_000_000) });
const statusShape = obj({ updated: int(0, 1_000_000), changed: int(0, 1_000_000) });
const liveAssignmentShape = obj({
  sessionId: id,
  language: oneOf('script', 'asm'),
  source: str(256 * 1024),
  durationSeconds: int(0, 86_400),
  remainingMs: int(0, 86_400_000),
  cpuBudgetPercent: int(0, 100_000),
  desiredState: oneOf('running', 'stopped'),
  providers: opt(arr(obj({ name: str(64), version: str(200), text: str(256 * 1024) }), 64)),
});
const waitLiveShape = obj({ notModified: bool, etag: str(256), sessions: arr(liveAssignmentShape, 1000) });
const reportLiveShape = obj({ accepted: int(0, 1_000_000), stop: bool });
const profileShape = obj({ profile: obj({ id: str(64), name: str(200) }), created: bool });

function checked<T>(call: string, shape: Shape, value: unknown): T {
  const bad = shape(value, '');
  if (bad === undefined) return value as T;
  throw new AgentError('registry', `${call}: not an answer of a registry: ${bad}`, { registryCode: 'GARBAGE', retryable: true });
}

export interface AgentApiOptions {
  /** Milliseconds before a call is abandoned (default 30,000). */
  timeoutMs?: number;
  /** A fetch to use instead of the global one (tests, the fleet simulator). */
  fetch?: typeof fetch;
}

/**
 * The registry calls the agent makes, with its credential. Each method throws an AgentError
 * (`unauthorized`, or `registry` with `retryable`); callers decide about retries.
 */
export class AgentApi {
  readonly url: string;
  private readonly client: RegistryClient;

  constructor(url: string, credential: string | undefined, options: AgentApiOptions = {}) {
    this.url = url.replace(/\/+$/, '');
    const timeoutMs = options.timeoutMs ?? 30_000;
    const baseFetch = options.fetch ?? fetch;
    const timedFetch: typeof fetch = async (input, init) => {
      const signal = init?.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      const res = await baseFetch(input, { ...init, signal });
      // the registry answers errors as JSON; an error page is someone else's (a proxy, a crash)
      if (!res.ok && !(res.headers.get('content-type') ?? '').includes('json')) {
        const text = (await res.text().catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 200);
        throw new HttpStatusError(res.status, text);
      }
      return res;
    };
    this.client = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${this.url}/trpc`, fetch: timedFetch, headers: () => (credential ? { authorization: `Bearer ${credential}` } : {}) })],
    });
  }

  private async call<T>(name: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw classifyRegistryError(name, err);
    }
  }

  enroll(input: Parameters<Api['enroll']['mutate']>[0]): Promise<EnrollAnswer> {
    return this.call('enroll', () => this.client.agent.enroll.mutate(input));
  }

  async poll(etag: string | undefined): Promise<PollResult> {
    const answer = await this.call('poll', () => this.client.agent.poll.query(etag === undefined ? {} : { etag }));
    return checked<PollResult>('poll', pollShape, answer);
  }

  async artifact(targetId: string): Promise<ArtifactAnswer> {
    const answer = await this.call('artifact', () => this.client.agent.artifact.query({ targetId }));
    return checked<ArtifactAnswer>('artifact', artifactShape, answer);
  }

  async reportProfile(input: ReportProfileInput): Promise<ReportProfileAnswer> {
    const answer = await this.call('report profile', () => this.client.agent.reportProfile.mutate(input));
    checked('report profile', profileShape, answer);
    return answer;
  }

  async reportStatus(targets: StatusReport[]): Promise<void> {
    // Messages can quote what a program or the kernel wrote: no NUL or lone surrogate may cost the report.
    const answer = await this.call('report status', () => this.client.agent.reportStatus.mutate({ targets: targets.map(storableValue) }));
    checked('report status', statusShape, answer);
  }

  /**
   * The agent's live sessions, held by the registry up to `waitMs` (25 s) while they are still
   * those of `etag`: the fast path from Run to the agent.
   */
  async waitLive(etag: string | undefined, waitMs?: number, signal?: AbortSignal): Promise<WaitLiveAnswer> {
    const answer = await this.call('wait live', () => this.client.agent.waitLive.query({ ...(etag !== undefined ? { etag } : {}), ...(waitMs !== undefined ? { waitMs } : {}) }, signal ? { signal } : {}));
    return checked<WaitLiveAnswer>('wait live', waitLiveShape, answer);
  }

  /** A live session's outputs and state. */
  async reportLive(report: LiveReport): Promise<LiveReportAnswer> {
    const answer = await this.call('report live', () => this.client.agent.reportLive.mutate(storableValue(report)));
    return checked<LiveReportAnswer>('report live', reportLiveShape, answer);
  }

  /** Output batches (payloads are JSON values: what the spool read back from JSON). */
  async uploadOutputs(batches: readonly (Omit<OutputBatch, 'payload'> & { payload: unknown })[]): Promise<UploadAnswer> {
    const answer = await this.call('upload outputs', () => this.client.agent.uploadOutputs.mutate({ batches: batches as OutputBatch[] }));
    return checked<UploadAnswer>('upload outputs', uploadShape, answer);
  }
}
