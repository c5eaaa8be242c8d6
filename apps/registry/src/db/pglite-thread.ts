// PGlite on a thread of its own. PGlite is PostgreSQL compiled to WebAssembly: every statement
// runs synchronously in the thread that owns the database, so in the server's thread an upload's
// insert of thousands of format rows, a profile's deletion or the compat runner's writes held every
// other request (agents' polls answered from memory included) for as long as each statement ran.
// Here the database lives on a worker thread (src/db/pglite-thread-worker.ts) and this class
// forwards to it the part of PGlite's API that the Prisma adapter (pglite-prisma-adapter) and the
// migration runner use: `query`, `exec`, `transaction` (with `rollback`) and `close`.
//
// What crosses the thread: SQL, parameters and rows (structured clone). Values of the types the
// caller gives parsers for come back as PostgreSQL's text and are parsed here by those parsers
// (they are functions, which cannot cross); the others are parsed on the worker by PGlite's own.
// Errors of the database come back as PGlite's `DatabaseError` with their fields (`code`,
// `detail`, `constraint`, …), so the adapter maps them to Prisma's codes as before.
import { messages, type PGlite } from '@electric-sql/pglite';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../jobs/worker-pool.js';

type Parser = (value: string, typeId: number) => unknown;

interface QueryOptions {
  rowMode?: 'array' | 'object';
  parsers?: Record<number, Parser>;
}

/** What a query answers (PGlite's `Results`, as far as its callers read it). */
export interface PgliteResults {
  rows: unknown[];
  fields: { name: string; dataTypeID: number }[];
  affectedRows?: number;
}

/** A request to the worker (`id` matches the reply). */
export type PgliteRequest = { id: number } & (
  | { op: 'open'; dataDir: string }
  | { op: 'query'; tx?: number | undefined; sql: string; params: unknown[]; rowMode: 'array'; rawTypes?: number[] | undefined }
  | { op: 'exec'; tx?: number | undefined; sql: string }
  | { op: 'begin' }
  | { op: 'rollback'; tx: number }
  | { op: 'end'; tx: number }
  | { op: 'close' }
);

/** The worker's answer to one request; `id` 0 is its `ready`. */
export interface PgliteReply {
  id: number;
  result?: unknown;
  error?: { name: string; message: string; stack?: string | undefined; fields: Record<string, unknown>; database: boolean };
}

/** A transaction's handle, as PGlite's `Transaction` (what its callers use of it). */
export interface PgliteThreadTransaction {
  query<T = unknown>(sql: string, params?: unknown[], options?: QueryOptions): Promise<PgliteResults & { rows: T[] }>;
  exec(sql: string): Promise<PgliteResults[]>;
  rollback(): Promise<void>;
  readonly closed: boolean;
}

/** The error a reply carries, as the caller would have seen it in-thread. */
function toError(e: NonNullable<PgliteReply['error']>): Error {
  const err: Error = e.database ? new messages.DatabaseError(e.message, 0, 'error') : new Error(e.message);
  Object.assign(err, e.fields);
  err.name = e.name;
  if (e.stack) err.stack = `${e.stack}\n    at (the pglite thread)`;
  return err;
}

/** PGlite's database on its own thread; `PgliteThread.create(path)` opens it. */
export class PgliteThread {
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (err: Error) => void }>();
  private nextId = 1;
  private gone: Error | undefined;
  private readonly ready: Promise<void>;

  private constructor(private readonly worker: Worker) {
    let onReady!: () => void;
    let onFail!: (err: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      onFail = reject;
    });
    this.ready.catch(() => {});
    worker.on('message', (m: PgliteReply) => {
      if (m.id === 0) {
        if (this.pending.size === 0) this.worker.unref();
        return onReady();
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.error) p.reject(toError(m.error));
      else p.resolve(m.result);
    });
    const fail = (err: Error) => {
      this.gone ??= err;
      onFail(this.gone);
      for (const p of this.pending.values()) p.reject(this.gone);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`pglite thread: the worker exited (code ${code})`)));
    // Held open while it starts and while a request is in flight: an open database alone never keeps the process alive.
  }

  /** Starts the worker and opens the database at `dataDir` on it. */
  static async create(dataDir: string): Promise<PgliteThread> {
    const t = new PgliteThread(startModuleWorker(new URL('./pglite-thread-worker', import.meta.url)));
    try {
      await t.ready;
      await t.call({ op: 'open', dataDir });
      return t;
    } catch (err) {
      await t.worker.terminate();
      throw err;
    }
  }

  /** Posts one request now (so requests reach the worker in the order they are made). */
  private call<T>(req: PgliteRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never): Promise<T> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage({ ...req, id });
    });
  }

  async query<T = unknown>(sql: string, params: unknown[] = [], options: QueryOptions = {}, tx?: number): Promise<PgliteResults & { rows: T[] }> {
    const parsers = options.parsers;
    const rawTypes = parsers ? Object.keys(parsers).map(Number) : undefined;
    const r = await this.call<PgliteResults>({ op: 'query', tx, sql, params, rowMode: 'array', rawTypes });
    const rows = r.rows as unknown[][];
    if (parsers) {
      const columns = r.fields.map((f, i) => ({ i, typeId: f.dataTypeID, parse: parsers[f.dataTypeID] })).filter((c) => c.parse !== undefined);
      if (columns.length > 0) {
        for (const row of rows) {
          for (const c of columns) {
            const v = row[c.i];
            if (v !== null && v !== undefined) row[c.i] = c.parse?.(v as string, c.typeId);
          }
        }
      }
    }
    if (options.rowMode === 'array') return r as PgliteResults & { rows: T[] };
    const named = rows.map((row) => Object.fromEntries(r.fields.map((f, i) => [f.name, row[i]])));
    return { ...r, rows: named as T[] };
  }

  exec(sql: string, tx?: number): Promise<PgliteResults[]> {
    return this.call<PgliteResults[]>({ op: 'exec', tx, sql });
  }

  /**
   * Runs `fn` in a transaction (PGlite's mutex held on the worker meanwhile: other statements wait,
   * as in-thread): committed when `fn` resolves, rolled back when it throws or calls `rollback`.
   */
  async transaction<T>(fn: (tx: PgliteThreadTransaction) => Promise<T>): Promise<T> {
    const id = await this.call<number>({ op: 'begin' });
    let closed = false;
    const rollback = () => {
      if (closed) return Promise.resolve();
      closed = true;
      // The adapter calls this without awaiting it: a failure surfaces at `end`, not as an unhandled rejection.
      const p = this.call<void>({ op: 'rollback', tx: id });
      p.catch(() => {});
      return p;
    };
    const tx: PgliteThreadTransaction = {
      query: (sql, params, options) => this.query(sql, params, options, id),
      exec: (sql) => this.exec(sql, id),
      rollback,
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await fn(tx);
    } catch (err) {
      await rollback().catch(() => {});
      await this.call<void>({ op: 'end', tx: id }).catch(() => {});
      throw err;
    }
    await this.call<void>({ op: 'end', tx: id });
    return result;
  }

  /** Closes the database and stops the worker. */
  async close(): Promise<void> {
    if (!this.gone) await this.call<void>({ op: 'close' }).catch(() => {});
    await this.worker.terminate();
  }

  /** This object where a `PGlite` is expected (the Prisma adapter): it provides what the adapter calls. */
  asPGlite(): PGlite {
    return this as unknown as PGlite;
  }
}
