import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { createContextFactory, type RegistryDeps, type RequestLog } from '../context.js';
import { appRouter, createCaller } from '../router.js';
import { clientAddress, type TrustedProxies } from './client-address.js';
import { busyDatabaseError, retryAfterSeconds, toTrpcError } from '../errors.js';
import type { Logger } from './log.js';

/** The largest request body the API reads (bigger requests get 413 before any work is done). */
export const defaultMaxBodyBytes = 8 * 1024 * 1024;

export interface HttpServerOptions {
  deps: RegistryDeps;
  logger: Logger;
  maxBodyBytes?: number;
  /** Peers whose `X-Forwarded-For` is believed (the web app's server); nobody's when left out. */
  trustedProxies?: TrustedProxies | undefined;
}

export interface HttpServer {
  readonly server: Server;
  /** `http://host:port` once listening. */
  url(): string;
  listen(port: number, host: string): Promise<void>;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes idle sockets. */
  close(graceMs?: number): Promise<void>;
}

const logs = new WeakMap<IncomingMessage, RequestLog>();

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The registry's HTTP server: `/healthz`, `/readyz`, and the tRPC API under `/trpc/`. */
export function createHttpServer(opts: HttpServerOptions): HttpServer {
  const maxBodyBytes = opts.maxBodyBytes ?? defaultMaxBodyBytes;
  const createContext = createContextFactory(opts.deps);
  const ipOf = (req: IncomingMessage) => clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], opts.trustedProxies);
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: '/trpc/',
    maxBodySize: maxBodyBytes,
    // No batches: one HTTP request is one call, so nothing limited per request (logins, password
    // hashes, body size) is multiplied by packing calls together. Every client uses httpLink.
    allowBatching: false,
    createContext: async ({ req }) => {
      const ctx = await createContext({
        authorization: req.headers.authorization,
        ip: ipOf(req),
        requestId: (req.headers['x-request-id'] as string | undefined) ?? randomUUID(),
      }).catch((err: unknown) => {
        // Resolving the caller's token reads the database: a busy one is a 503 here too.
        const busy = busyDatabaseError(err);
        throw busy ? toTrpcError(busy) : err;
      });
      logs.set(req, ctx.log);
      return ctx;
    },
    // A 503 (the database was busy) says when to come back.
    responseMeta: ({ errors }) => (errors.some((e) => e.code === 'SERVICE_UNAVAILABLE') ? { headers: { 'retry-after': String(retryAfterSeconds) } } : {}),
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') opts.logger({ level: 'error', procedure: path, error: error.message, stack: error.cause?.stack });
    },
  });

  /**
   * The hot path of a fleet: `agent.poll` as a plain GET (not batched) goes straight to a server
   * caller, the same procedure with the same middleware, input and output validation, written in
   * tRPC's response shape (`{"result":{"data":…}}`), without the fetch-API adaptation the generic
   * handler does per request. Any error re-runs the request through that handler (a poll is a
   * read), so errors keep exactly the generic handler's status codes and shape.
   */
  const fastQueries: Record<string, (caller: ReturnType<typeof createCaller>, input: unknown) => Promise<unknown>> = {
    'agent.poll': (caller, input) => caller.agent.poll(input as Parameters<typeof caller.agent.poll>[0]),
  };
  const fastQuery = async (req: IncomingMessage, res: ServerResponse, url: URL, run: (typeof fastQueries)[string]): Promise<void> => {
    try {
      const raw = url.searchParams.get('input');
      const input: unknown = raw === null ? undefined : JSON.parse(raw);
      const ctx = await createContext({
        authorization: req.headers.authorization,
        ip: ipOf(req),
        requestId: (req.headers['x-request-id'] as string | undefined) ?? randomUUID(),
      });
      logs.set(req, ctx.log);
      const data = await run(createCaller(ctx), input);
      sendJson(res, 200, { result: { data } });
    } catch {
      trpc(req, res);
    }
  };

  const server = createServer((req, res) => {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://registry');
    res.on('finish', () => {
      opts.logger({
        level: 'info',
        msg: 'request',
        method: req.method,
        path: url.pathname.startsWith('/trpc/') ? undefined : url.pathname,
        procedure: url.pathname.startsWith('/trpc/') ? url.pathname.slice(6) : undefined,
        tenant: logs.get(req)?.tenant,
        status: res.statusCode,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
      });
    });
    if (url.pathname === '/healthz') return sendJson(res, 200, { ok: true });
    if (url.pathname === '/readyz') {
      opts.deps
        .isReady()
        .then((ready) => sendJson(res, ready ? 200 : 503, { ready }))
        .catch((err: Error) => sendJson(res, 503, { ready: false, error: err.message }));
      return;
    }
    if (!url.pathname.startsWith('/trpc/')) return sendJson(res, 404, { error: { message: `not found: ${url.pathname}` } });
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBodyBytes) {
      // Discard the body unread (bounded by requestTimeout), then answer: a client still sending
      // would otherwise see a reset instead of the 413.
      res.setHeader('connection', 'close');
      req.once('error', () => {});
      req.once('end', () =>
        sendJson(res, 413, {
          // tRPC's error shape (JSON-RPC code -32013), so typed clients read it as a TRPCClientError.
          error: {
            message: `request too large: ${declared} bytes, the limit is ${maxBodyBytes}`,
            code: -32013,
            data: { code: 'PAYLOAD_TOO_LARGE', httpStatus: 413, path: url.pathname.slice(6) },
          },
        }),
      );
      req.resume();
      return;
    }
    req.url = `${url.pathname}${url.search}`;
    const fast = req.method === 'GET' && !url.searchParams.has('batch') ? fastQueries[url.pathname.slice(6)] : undefined;
    if (fast) return void fastQuery(req, res, url, fast);
    trpc(req, res);
  });
  server.requestTimeout = 60_000;
  server.headersTimeout = 20_000;
  // An idle kept-alive connection is closed after 65 s, not Node's 5 s. Clients (agents, the web
  // app, the CLI: undici) reuse a connection until 1 s before the time this server announces; on a
  // busy host this thread may run its timers late, close the connection as a request arrives on it
  // and the client sees a reset ("socket hang up"). Agents poll every few seconds: with 5 s the
  // window was every poll's, with 65 s it is only a connection's that sat idle for a minute.
  server.keepAliveTimeout = 65_000;

  return {
    server,
    url() {
      const a = server.address() as AddressInfo;
      return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
    },
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      }),
    close: (graceMs = 10_000) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
