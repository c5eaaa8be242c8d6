// The web app's server: Next.js (production build in `.next/`) behind a plain Node HTTP server, so
// it can be started in-process (`startWeb`, what `npm start` composes with the registry and an
// agent) or as its own process (`probeyard-web --registry URL --port P`, bin/probeyard-web.js).
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as nextModule from 'next';

type CreateNext = (typeof import('next'))['default'];
/** `next` is CommonJS: depending on the loader its function sits one or two `default`s deep. */
function createNextFn(): CreateNext {
  let m: unknown = nextModule;
  while (m && typeof m !== 'function') m = (m as { default?: unknown }).default;
  return m as CreateNext;
}
const next = createNextFn();

export interface StartWebOptions {
  /** The registry the web app's server calls with each user's own credential (`http://127.0.0.1:4700`). */
  registryUrl: string;
  /** 0 picks a free port (default 3000). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The web app's folder (holds `.next/`); default: this package. */
  dir?: string;
  /** Mark the session cookie `Secure` (serve behind HTTPS). Default: only when a request came over HTTPS. */
  secureCookies?: boolean;
  /** One line per event (`web listening`, errors); default: nothing. */
  logger?: (entry: Record<string, unknown>) => void;
}

export interface RunningWeb {
  /** `http://host:port`. */
  url: string;
  close(): Promise<void>;
}

export const defaultWebPort = 3000;

/** This package's folder, from `src/server/` (sources) or `dist/server/` (built). */
export function webAppDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

/**
 * Starts the web app against a registry. The registry URL reaches the app's server code through
 * `PROBEYARD_REGISTRY_URL` in this process's environment, so one process serves one web app.
 */
export async function startWeb(opts: StartWebOptions): Promise<RunningWeb> {
  const dir = opts.dir ?? webAppDir();
  if (!existsSync(join(dir, '.next', 'BUILD_ID'))) {
    throw new Error(`web: no production build in ${join(dir, '.next')}: run \`pnpm --filter @probeyard/web build\` first`);
  }
  const registryUrl = new URL(opts.registryUrl).toString().replace(/\/$/, '');
  process.env.PROBEYARD_REGISTRY_URL = registryUrl;
  if (opts.secureCookies !== undefined) process.env.PROBEYARD_WEB_SECURE_COOKIES = opts.secureCookies ? '1' : '0';
  const log = opts.logger ?? (() => {});

  let handle: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
  const server = createServer((req, res) => {
    if (!handle) {
      res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' });
      res.end('web: starting\n');
      return;
    }
    // Headers only this server sets: never what a client sent under those names.
    for (const name of Object.keys(req.headers)) if (name.startsWith('x-probeyard-')) delete req.headers[name];
    req.headers['x-probeyard-client-ip'] = req.socket.remoteAddress ?? '';
    handle(req, res).catch((err: Error) => {
      log({ level: 'error', msg: 'request failed', error: err.message });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end();
    });
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? defaultWebPort, host, () => {
      server.off('error', fail);
      ok();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const app = next({ dev: false, dir, hostname: host, port: address.port, quiet: true });
  try {
    await app.prepare();
  } catch (err) {
    server.close();
    throw err;
  }
  handle = app.getRequestHandler();
  log({ level: 'info', msg: 'web listening', url, registry: registryUrl });
  let closing: Promise<void> | undefined;
  return {
    url,
    close() {
      closing ??= new Promise<void>((done) => {
        // Live dashboards hold event streams open: end them rather than wait.
        server.close(() => done());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      }).then(() => app.close());
      return closing;
    },
  };
}
