// Uploaded events tarballs and trace.dat files are parsed on worker threads, with a deadline and
// a memory cap, so that a hostile file (a reader loop that spins, a decompression bomb) costs its
// upload a clear BAD_REQUEST and never pins the registry's event loop or memory.
//
// A small pool: at most `maxWorkers` workers (default 2), one file at a time each, kept for
// `idleMs` after their last file (unref'd, so they never hold the process open), and started
// afresh after one was terminated (deadline) or died (memory limit). Measured from dist/ on this
// 2-core machine (loaded): a worker takes 150–320 ms to start and load packages/formats (the
// import alone is ~130 ms in-process), a typical upload 10–25 ms to parse on a warm one (0.5 s
// for the corpus' 2,305-format trace.dat); and agents report their kernel's tarball when they
// start, so a fleet coming up sends many in a row. Reuse pays; a worker per upload would not.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { RegistryError } from '../errors.js';
import type { ParsedProfile, ParseOutcome, UploadKind } from './upload-parse.js';
import type { ParseRequest } from './upload-parse-worker.js';

export interface UploadParserOptions {
  /** Longest a worker may spend on one file before it is terminated and the upload refused (default 10 s). */
  timeoutMs?: number;
  /** V8 heap of a worker (`resourceLimits.maxOldGenerationSizeMb`, default 256 MiB). */
  maxHeapMb?: number;
  /** Bytes a file may decompress to in all: gzip of a tarball, compressed blocks of a trace.dat (default 64 MiB; the corpus' 2,305-format trace.dat needs 1–4). */
  maxDecompressedBytes?: number;
  /** Files parsed at once, each on its own worker (default 2); more wait their turn. */
  maxWorkers?: number;
  /** An idle worker is stopped after this long (default 30 s). */
  idleMs?: number;
  /** Test-only: the worker spins this long before parsing the file (a stand-in for a file the reader is slow on). */
  spinMs?: (kind: UploadKind) => number;
}

export const defaultUploadParseTimeoutMs = 10_000;

/** Longest wait for a new worker to load its modules (a loaded machine, from TypeScript sources). */
const startupTimeoutMs = 60_000;

const here = import.meta.url;
/** The registry runs from its TypeScript sources (vitest, tsx `--conditions=@probeyard/source`) or from dist/. */
const fromSource = here.endsWith('.ts');
const entry = new URL(`./upload-parse-worker${fromSource ? '.ts' : '.js'}`, here);

function startWorker(resourceLimits: Worker['resourceLimits']): Worker {
  // dist/: plain JavaScript, packages resolved by their default condition. No execArgv of this
  // process (a `--conditions` or loader given to the server is not the worker's business).
  if (!fromSource) return new Worker(entry, { execArgv: [], resourceLimits });
  // Sources: the worker installs tsx's loader on its own thread, then loads the .ts entry with the
  // `@probeyard/source` condition, so it runs the same packages/formats sources as the tests.
  // (tsx is a dev dependency: sources run only in development. Tried and failed on Node 20:
  // `--import tsx` in the worker's execArgv, whose hooks did not apply to its .ts entry, and tsx's
  // CommonJS API from the eval'd code, which resolves its loader wrongly. Hence its ESM API by file.)
  const tsx = pathToFileURL(join(dirname(createRequire(here).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const boot = `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true, execArgv: ['--conditions=@probeyard/source'], resourceLimits });
}

type Reply = { id: number; outcome: ParseOutcome } | { id: number; failed: { message: string; stack?: string } };

class DeadlineExceeded extends Error {}

/** One worker thread and the file it is on. */
class ParseWorker {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  /** Why the worker is gone (terminated, crashed, out of memory), once it is. */
  gone: Error | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  private onReady!: () => void;
  private onGone!: (err: Error) => void;
  private waiting: { id: number; resolve: (r: Reply) => void; reject: (err: Error) => void } | undefined;

  constructor(maxHeapMb: number) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.onReady = resolve;
      this.onGone = reject;
    });
    this.ready.catch(() => {});
    this.worker = startWorker({ maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: Math.min(32, Math.max(4, maxHeapMb / 8)), stackSizeMb: 4 });
    this.worker.on('message', (m: Reply | { type: 'ready' }) => {
      if ('type' in m) this.onReady();
      else if (this.waiting?.id === m.id) {
        const w = this.waiting;
        this.waiting = undefined;
        w.resolve(m);
      }
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`the parser's worker exited (code ${code})`)));
  }

  private fail(err: Error): void {
    this.gone ??= err;
    this.onGone(this.gone);
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(this.gone);
  }

  /** Sends one file; terminates the worker when `timeoutMs` passes first. */
  run(req: ParseRequest, timeoutMs: number): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => {
      if (this.gone) return reject(this.gone);
      const timer = setTimeout(() => {
        this.kill(new DeadlineExceeded());
      }, timeoutMs);
      this.waiting = {
        id: req.id,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.worker.postMessage(req, [req.bytes.buffer]);
    });
  }

  kill(why: Error): void {
    clearTimeout(this.idleTimer);
    this.fail(why);
    void this.worker.terminate();
  }
}

/** The pool of parser workers: one per registry (`RegistryDeps.uploads`); `close()` stops them. */
export class UploadParser {
  readonly timeoutMs: number;
  private readonly maxHeapMb: number;
  private readonly maxDecompressedBytes: number;
  private readonly maxWorkers: number;
  private readonly idleMs: number;
  private readonly spinMs: ((kind: UploadKind) => number) | undefined;
  private readonly idle: ParseWorker[] = [];
  private readonly busy = new Set<ParseWorker>();
  private readonly queue: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private running = 0;
  private nextId = 1;
  private closed = false;

  constructor(opts: UploadParserOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? defaultUploadParseTimeoutMs;
    this.maxHeapMb = opts.maxHeapMb ?? 256;
    this.maxDecompressedBytes = opts.maxDecompressedBytes ?? 64 * 1024 * 1024;
    this.maxWorkers = Math.max(1, opts.maxWorkers ?? 2);
    this.idleMs = opts.idleMs ?? 30_000;
    this.spinMs = opts.spinMs;
  }

  /** Workers alive now (idle or parsing), for tests. */
  get workers(): number {
    return this.idle.length + this.busy.size;
  }

  /**
   * Parses a base64 upload on a worker. A file the parser refuses, one not parsed within the
   * deadline and one that needs more memory than a worker has are `bad_request`.
   */
  async parse(kind: UploadKind, base64: string): Promise<ParsedProfile> {
    const what = kind === 'traceDat' ? 'trace.dat' : 'tarball';
    const decoded = Buffer.from(base64, 'base64');
    // A buffer of its own (small Buffers share a pool), moved to the worker rather than copied.
    const bytes = new Uint8Array(decoded.length);
    bytes.set(decoded);
    await this.acquire();
    let w: ParseWorker | undefined;
    try {
      w = this.takeIdle() ?? new ParseWorker(this.maxHeapMb);
      clearTimeout(w.idleTimer);
      w.worker.ref();
      this.busy.add(w);
      await this.started(w);
      const spinMs = this.spinMs?.(kind) ?? 0;
      const req: ParseRequest = { id: this.nextId++, kind, bytes, limits: { maxDecompressedBytes: this.maxDecompressedBytes }, ...(spinMs ? { spinMs } : {}) };
      let reply: Reply;
      try {
        reply = await w.run(req, this.timeoutMs);
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
    } finally {
      if (w) this.release(w);
    }
  }

  /** The last idle worker still alive (one may have died while idle). */
  private takeIdle(): ParseWorker | undefined {
    for (let w = this.idle.pop(); w; w = this.idle.pop()) {
      if (w.gone === undefined) return w;
      clearTimeout(w.idleTimer);
    }
    return undefined;
  }

  private async started(w: ParseWorker): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        w.ready,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the parser's worker did not start within ${startupTimeoutMs / 1000} s`)), startupTimeoutMs);
        }),
      ]);
    } catch (err) {
      w.kill(err as Error);
      throw this.closed ? shuttingDown() : new Error(`kernel upload: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The error of an upload whose worker was terminated or died. */
  private failure(what: string, err: Error): Error {
    if (err instanceof DeadlineExceeded) {
      return new RegistryError('bad_request', `kernel upload: ${what}: not decoded within ${this.timeoutMs / 1000} s (the file may be hostile or corrupt)`, {
        timeoutMs: this.timeoutMs,
      });
    }
    if ((err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new RegistryError(
        'bad_request',
        `kernel upload: ${what}: decoding it needs more than the parser's ${this.maxHeapMb} MiB of memory (the file may be hostile or corrupt)`,
        { maxHeapMb: this.maxHeapMb },
      );
    }
    if (this.closed) return shuttingDown();
    return new Error(`kernel upload: ${what}: ${err.message}`, { cause: err });
  }

  private acquire(): Promise<void> {
    if (this.closed) return Promise.reject(shuttingDown());
    if (this.running < this.maxWorkers) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.queue.push({ resolve, reject }));
  }

  private release(w: ParseWorker): void {
    this.busy.delete(w);
    if (w.gone === undefined && !this.closed) {
      w.worker.unref();
      w.idleTimer = setTimeout(() => {
        const at = this.idle.indexOf(w);
        if (at >= 0) this.idle.splice(at, 1);
        w.kill(new Error('idle'));
      }, this.idleMs);
      w.idleTimer.unref();
      this.idle.push(w);
    } else if (w.gone === undefined) {
      w.kill(shuttingDown());
    }
    const next = this.queue.shift();
    if (next) next.resolve();
    else this.running--;
  }

  /** Stops every worker; parses in progress and waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const q of this.queue.splice(0)) q.reject(shuttingDown());
    const all = [...this.idle.splice(0), ...this.busy];
    for (const w of all) w.kill(shuttingDown());
    await Promise.all(all.map((w) => w.worker.terminate()));
  }
}

function shuttingDown(): RegistryError {
  return new RegistryError('not_ready', 'kernel upload: the registry is shutting down');
}
