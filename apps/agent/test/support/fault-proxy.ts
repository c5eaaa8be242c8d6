// A proxy in front of a registry that answers as a broken one would when told to: garbage (HTML,
// or JSON of the wrong shape), HTTP 500s, or dropped connections; otherwise it passes requests
// through unchanged.
import { createServer, type IncomingMessage, type Server } from 'node:http';

export type FaultMode = 'pass' | 'garbage' | 'wrong-shape' | '500' | 'drop';

export interface FaultProxy {
  url: string;
  mode: FaultMode;
  /** Requests answered per mode. */
  counts: Record<FaultMode, number>;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function startFaultProxy(target: () => string): Promise<FaultProxy> {
  const proxy: FaultProxy = { url: '', mode: 'pass', counts: { pass: 0, garbage: 0, 'wrong-shape': 0, '500': 0, drop: 0 }, close: async () => {} };
  const server: Server = createServer(async (req, res) => {
    const mode = proxy.mode;
    proxy.counts[mode]++;
    const data = await body(req);
    if (mode === 'garbage') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>502 bad gateway, but 200</body></html>');
    if (mode === 'wrong-shape') {
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result: { data: { notModified: false, etag: 7, assignments: [{ targetId: 1 }], accepted: 'all' } } }));
    }
    if (mode === '500') return void res.writeHead(500, { 'content-type': 'text/html' }).end('<html>internal server error</html>');
    if (mode === 'drop') return void req.socket.destroy();
    try {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
      const answer = await fetch(`${target()}${req.url}`, { method: req.method ?? 'GET', headers, ...(data.length ? { body: data } : {}) });
      const out = Buffer.from(await answer.arrayBuffer());
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(out);
    } catch {
      req.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address();
  proxy.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return proxy;
}
