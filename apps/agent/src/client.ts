// The agent's side of the registry API: a typed tRPC client (the router's *type* is the only
// thing of the registry imported, docs/ARCHITECTURE.md) over plain HTTP requests (`httpLink`, no
// batching), every answer checked before use, every failure turned into an AgentError that says
// whether trying again later may help.
import type { AppRouter } from '@probeyard/registry';
import { createTRPCClient, httpLink, type TRPCClient, TRPCClientError } from '@trpc/client';
import { z } from 'zod';
import { AgentError } from './errors.js';

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

// Answers are checked before the agent acts on them: a registry (or something posing as one) that
// answers garbage gets a retryable error, never a crash or a half-applied answer.
const assignmentSchema = z.object({
  targetId: z.string().min(1).max(64),
  deploymentId: z.string().min(1).max(64),
  program: z.object({ name: z.string().max(200), version: z.string().max(200) }),
  versionId: z.string().min(1).max(64),
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().min(0),
  artifactKind: z.string().max(64),
  desiredState: z.enum(['running', 'stopped']),
});
export type Assignment = z.infer<typeof assignmentSchema>;
const pollSchema = z.union([
  z.object({ notModified: z.literal(true), etag: z.string().max(256), pollAfterSeconds: z.number().min(0).max(86_400) }),
  z.object({ notModified: z.literal(false), etag: z.string().max(256), pollAfterSeconds: z.number().min(0).max(86_400), assignments: z.array(assignmentSchema).max(10_000) }),
]);
const artifactSchema = z.object({
  versionId: z.string(),
  program: z.object({ name: z.string(), version: z.string() }),
  artifactKind: z.string(),
  artifact: z.string(),
  digest: z.string(),
  spec: z.unknown(),
  manifest: z.unknown(),
});
const uploadSchema = z.object({ accepted: z.number().int().min(0), duplicates: z.number().int().min(0) });
const statusSchema = z.object({ updated: z.number().int().min(0), changed: z.number().int().min(0) });
const profileSchema = z.object({ profile: z.object({ id: z.string(), name: z.string() }).passthrough(), created: z.boolean() });

function checked<T>(call: string, schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  return (() => {
    throw new AgentError('registry', `${call}: not an answer of a registry: ${issue ? `${issue.path.join('.') || 'answer'}: ${issue.message}` : 'unexpected shape'}`, {
      registryCode: 'GARBAGE',
      retryable: true,
    });
  })();
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

  async poll(etag: string | undefined): Promise<z.infer<typeof pollSchema>> {
    const answer = await this.call('poll', () => this.client.agent.poll.query(etag === undefined ? {} : { etag }));
    return checked('poll', pollSchema, answer);
  }

  async artifact(targetId: string): Promise<ArtifactAnswer> {
    const answer = await this.call('artifact', () => this.client.agent.artifact.query({ targetId }));
    return checked('artifact', artifactSchema, answer) as ArtifactAnswer;
  }

  async reportProfile(input: ReportProfileInput): Promise<ReportProfileAnswer> {
    const answer = await this.call('report profile', () => this.client.agent.reportProfile.mutate(input));
    checked('report profile', profileSchema, answer);
    return answer;
  }

  async reportStatus(targets: StatusReport[]): Promise<void> {
    const answer = await this.call('report status', () => this.client.agent.reportStatus.mutate({ targets }));
    checked('report status', statusSchema, answer);
  }

  /** Output batches (payloads are JSON values: what the spool read back from JSON). */
  async uploadOutputs(batches: readonly (Omit<OutputBatch, 'payload'> & { payload: unknown })[]): Promise<UploadAnswer> {
    const answer = await this.call('upload outputs', () => this.client.agent.uploadOutputs.mutate({ batches: batches as OutputBatch[] }));
    return checked('upload outputs', uploadSchema, answer);
  }
}
