// `/metrics` (Prometheus text format) and `/healthz` on the address of `--metrics`.
import { createServer, type Server } from 'node:http';
import { AgentError } from '../errors.js';
import type { AgentMetrics } from './agent-metrics.js';

export interface Health {
  ok: boolean;
  [key: string]: unknown;
}

/** `127.0.0.1:9464`, `[::1]:9464`, `:9464` or `9464` → host and port. */
export function parseListenAddress(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*))?:?(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || !(port >= 0 && port <= 65535)) throw new AgentError('usage', `--metrics: '${text}' is not HOST:PORT`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

export interface MetricsServer {
  /** `http://host:port` it listens on. */
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(address: string, metrics: AgentMetrics, health: () => Health): Promise<MetricsServer> {
  const { host, port } = parseListenAddress(address);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      metrics.text().then(
        (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics: ${err.message}\n`),
      );
      return;
    }
    if (path === '/healthz') {
      const h = health();
      res.writeHead(h.ok ? 200 : 503, { 'content-type': 'application/json' }).end(`${JSON.stringify(h)}\n`);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: /metrics and /healthz are served here\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(new AgentError('usage', `--metrics ${address}: ${e.message}`, { cause: e })));
    server.listen(port, host, () => resolve());
  });
  const a = server.address();
  const where = typeof a === 'object' && a ? `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` : address;
  return {
    url: `http://${where}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
