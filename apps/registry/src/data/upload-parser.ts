// Uploaded events tarballs and trace.dat files are parsed on worker threads, with a deadline and
// a memory cap, so that a hostile file (a reader loop that spins, a decompression bomb) costs its
// upload a clear BAD_REQUEST and never pins the registry's event loop or memory.
//
// The workers are a `WorkerPool` (src/jobs/worker-pool.ts): at most `maxWorkers` (default 2), one
// file at a time each, at most half of them for one tenant's uploads (per-tenant queues served
// round-robin, bounded: a tenant with 16 uploads waiting is told to retry), kept for `idleMs` after
// their last file. Measured from dist/ on this 2-core machine (loaded): a worker takes 150–320 ms
// to start and load packages/formats (the import alone is ~130 ms in-process), a typical upload
// 10–25 ms to parse on a warm one (0.5 s for the corpus' 2,305-format trace.dat); and agents
// report their kernel's tarball when they start, so a fleet coming up sends many in a row. Reuse
// pays; a worker per upload would not.
import { RegistryError } from '../errors.js';
import { WorkerPool, WorkerTaskFailed } from '../jobs/worker-pool.js';
import { defaultUploadLimits, type ParsedProfile, type ParseLimits, type ParseOutcome, type UploadKind } from './upload-parse.js';
import type { ParseTask } from './upload-parse-worker.js';

export interface UploadParserOptions {
  /** Longest a worker may spend on one file before it is terminated and the upload refused (default 10 s). */
  timeoutMs?: number;
  /** V8 heap of a worker (`resourceLimits.maxOldGenerationSizeMb`, default 256 MiB). */
  maxHeapMb?: number;
  /** Bytes a file may decompress to in all: gzip of a tarball, compressed blocks of a trace.dat (default 64 MiB; the corpus' 2,305-format trace.dat needs 1–4). */
  maxDecompressedBytes?: number;
  /** Format files one upload may hold (default 10,000; a kernel has ~2,300). */
  maxFormats?: number;
  /** Bytes of format text one upload may hold (default 16 MiB; a kernel has ~2 MB). */
  maxFormatTextBytes?: number;
  /** Files parsed at once, each on its own worker (default 2); more wait their turn. */
  maxWorkers?: number;
  /** Files of one tenant parsed at once (default half of `maxWorkers`, at least 1). */
  maxInFlightPerTenant?: number;
  /** Files of one tenant waiting for a worker (default 16); one more is refused with `rate_limited`. */
  maxQueuedPerTenant?: number;
  /** An idle worker is stopped after this long (default 30 s). */
  idleMs?: number;
  /** Test-only: the worker spins this long before parsing the file (a stand-in for a file the reader is slow on). */
  spinMs?: (kind: UploadKind) => number;
}

export const defaultUploadParseTimeoutMs = 10_000;

/** The pool of parser workers: one per registry (`RegistryDeps.uploads`); `close()` stops them. */
export class UploadParser {
  readonly timeoutMs: number;
  readonly limits: ParseLimits;
  private readonly pool: WorkerPool<ParseTask, ParseOutcome>;
  private readonly spinMs: ((kind: UploadKind) => number) | undefined;
  private closed = false;

  constructor(opts: UploadParserOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? defaultUploadParseTimeoutMs;
    this.limits = {
      maxDecompressedBytes: opts.maxDecompressedBytes ?? defaultUploadLimits.maxDecompressedBytes,
      maxFormats: opts.maxFormats ?? defaultUploadLimits.maxFormats,
      maxFormatTextBytes: opts.maxFormatTextBytes ?? defaultUploadLimits.maxFormatTextBytes,
    };
    this.spinMs = opts.spinMs;
    this.pool = new WorkerPool({
      name: 'the parser',
      entry: new URL('./upload-parse-worker', import.meta.url),
      maxWorkers: opts.maxWorkers ?? 2,
      maxHeapMb: opts.maxHeapMb ?? 256,
      ...(opts.maxInFlightPerTenant !== undefined ? { maxInFlightPerTenant: opts.maxInFlightPerTenant } : {}),
      ...(opts.maxQueuedPerTenant !== undefined ? { maxQueuedPerTenant: opts.maxQueuedPerTenant } : {}),
      ...(opts.idleMs !== undefined ? { idleMs: opts.idleMs } : {}),
    });
  }

  /** Workers alive now (idle or parsing), for tests. */
  get workers(): number {
    return this.pool.workers;
  }

  /**
   * Parses a base64 upload of `tenant` on a worker. A file the parser refuses, one not parsed
   * within the deadline and one that needs more memory than a worker has are `bad_request`; a
   * tenant with too many uploads waiting is `rate_limited`.
   */
  async parse(kind: UploadKind, base64: string, tenant = ''): Promise<ParsedProfile> {
    const what = kind === 'traceDat' ? 'trace.dat' : 'tarball';
    if (this.closed) throw shuttingDown();
    const decoded = Buffer.from(base64, 'base64');
    // A buffer of its own (small Buffers share a pool), moved to the worker rather than copied.
    const bytes = new Uint8Array(decoded.length);
    bytes.set(decoded);
    const spinMs = this.spinMs?.(kind) ?? 0;
    let reply: Awaited<ReturnType<typeof this.pool.run>>;
    try {
      reply = await this.pool.run(tenant, { kind, bytes, limits: this.limits }, { timeoutMs: this.timeoutMs, what: 'kernel upload', transfer: [bytes.buffer], spinMs });
    } catch (err) {
      throw this.failure(what, err as Error);
    }
    if ('failed' in reply) {
      const err = new Error(`kernel upload: ${what}: ${reply.failed.message}`);
      if (reply.failed.stack) err.stack = reply.failed.stack;
      throw err;
    }
    if (!reply.outcome.ok) throw new RegistryError('bad_request', reply.outcome.refused);
    return reply.outcome.profile;
  }

  /** The error of an upload whose worker was terminated or died. */
  private failure(what: string, err: Error): Error {
    if (!(err instanceof WorkerTaskFailed)) return err;
    if (err.reason === 'deadline') {
      return new RegistryError('bad_request', `kernel upload: ${what}: not decoded within ${this.timeoutMs / 1000} s (the file may be hostile or corrupt)`, {
        timeoutMs: this.timeoutMs,
      });
    }
    if (err.reason === 'memory') {
      return new RegistryError(
        'bad_request',
        `kernel upload: ${what}: decoding it needs more than the parser's ${this.pool.maxHeapMb} MiB of memory (the file may be hostile or corrupt)`,
        { maxHeapMb: this.pool.maxHeapMb },
      );
    }
    if (err.reason === 'closed' || this.closed) return shuttingDown();
    return new Error(`kernel upload: ${what}: the parser's worker failed: ${err.message}`, { cause: err });
  }

  /** Stops every worker; parses in progress and waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool.close();
  }
}

function shuttingDown(): RegistryError {
  return new RegistryError('not_ready', 'kernel upload: the registry is shutting down');
}
