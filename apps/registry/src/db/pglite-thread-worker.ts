// The worker side of src/db/pglite-thread.ts: holds the PGlite database (PostgreSQL compiled to
// WebAssembly, whose every statement runs synchronously in the thread that owns it) and answers
// the server thread's queries, execs and transactions, in the order they arrive. Values of the
// types the caller parses itself (`rawTypes`) come back as PostgreSQL's text; the others parsed by
// PGlite's own parsers, as they would be in-thread.
import { messages, PGlite, type Transaction } from '@electric-sql/pglite';
import { parentPort } from 'node:worker_threads';
import type { PgliteReply, PgliteRequest, PgliteResults } from './pglite-thread.js';

const port = parentPort;
let db: PGlite | undefined;
/** Open transactions by id: the handle, and the resolver that ends the transaction's callback. */
const transactions = new Map<number, { tx: Transaction; end: () => void }>();
let nextTx = 1;

const identity = (x: string) => x;

function parsersFor(rawTypes: readonly number[] | undefined): Record<number, (x: string) => string> | undefined {
  if (!rawTypes || rawTypes.length === 0) return undefined;
  return Object.fromEntries(rawTypes.map((t) => [t, identity]));
}

function errorOf(err: unknown): PgliteReply['error'] {
  const e = err as Error & Record<string, unknown>;
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e ?? {})) if (v === undefined || ['string', 'number', 'boolean'].includes(typeof v)) fields[k] = v;
  return { name: e?.name ?? 'Error', message: String(e?.message ?? err), stack: e?.stack, fields, database: err instanceof messages.DatabaseError };
}

function results(r: Awaited<ReturnType<PGlite['query']>>): PgliteResults {
  return { rows: r.rows as unknown[], fields: r.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })), ...(r.affectedRows !== undefined ? { affectedRows: r.affectedRows } : {}) };
}

function open(): PGlite {
  if (!db) throw new Error('pglite thread: the database is not open');
  return db;
}

function queryable(txId: number | undefined): Pick<Transaction, 'query' | 'exec'> {
  if (txId === undefined) return open();
  const t = transactions.get(txId);
  if (!t) throw new Error(`pglite thread: transaction ${txId} is over`);
  return t.tx;
}

async function handle(req: PgliteRequest): Promise<unknown> {
  switch (req.op) {
    case 'open':
      db = await PGlite.create(req.dataDir);
      return undefined;
    case 'query': {
      const parsers = parsersFor(req.rawTypes);
      return results(await queryable(req.tx).query(req.sql, req.params, { rowMode: req.rowMode, ...(parsers ? { parsers } : {}) }));
    }
    case 'exec':
      return (await queryable(req.tx).exec(req.sql)).map(results);
    case 'begin':
      // Answered from inside PGlite's transaction (its mutex held until `end`): the id to query with.
      return new Promise<number>((resolve, reject) => {
        const id = nextTx++;
        let started = false;
        open()
          .transaction(
            (tx) =>
              new Promise<void>((end) => {
                started = true;
                transactions.set(id, { tx, end });
                resolve(id);
              }),
          )
          .then(
            () => settle(id, undefined),
            (err: unknown) => (started ? settle(id, err) : reject(err)),
          );
      });
    case 'rollback':
      await queryable(req.tx);
      await transactions.get(req.tx)?.tx.rollback();
      return undefined;
    case 'end': {
      const t = transactions.get(req.tx);
      if (!t) throw new Error(`pglite thread: transaction ${req.tx} is over`);
      const done = new Promise<unknown>((resolve) => ending.set(req.tx, resolve));
      t.end();
      const err = await done;
      if (err) throw err;
      return undefined;
    }
    case 'close':
      await db?.close();
      db = undefined;
      return undefined;
  }
}

/** How each transaction ended (commit or its error), for the `end` request waiting on it. */
const ending = new Map<number, (err: unknown) => void>();
function settle(id: number, err: unknown): void {
  transactions.delete(id);
  const waiting = ending.get(id);
  ending.delete(id);
  waiting?.(err);
}

port?.on('message', (req: PgliteRequest) => {
  handle(req).then(
    (result) => port.postMessage({ id: req.id, result } satisfies PgliteReply),
    (err: unknown) => port.postMessage({ id: req.id, error: errorOf(err) } satisfies PgliteReply),
  );
});
port?.postMessage({ id: 0, result: 'ready' } satisfies PgliteReply);
