// The browser's only way to the registry: this route forwards a tRPC call (queries as GET,
// mutations as POST, subscriptions as server-sent events) to the registry with the session
// cookie's credential. Only procedures a signed-in user calls from pages pass; sign-in itself, the
// agent API and the instance admin's procedures do not. Cross-site POSTs never get here
// (src/proxy.ts checks the Origin), and the cookie is SameSite.
import { registryFetch, registryUrl } from '../../../../lib/registry-client';
import { sessionToken } from '../../../../lib/session';
import { browserProcedures } from '../../../../lib/browser-procedures';

export const dynamic = 'force-dynamic';


async function forward(request: Request, path: string[]): Promise<Response> {
  const name = path.join('/');
  if (!browserProcedures.has(name)) {
    return Response.json({ error: { message: `not found: ${name} is not available from the web app`, data: { code: 'NOT_FOUND', httpStatus: 404 } } }, { status: 404 });
  }
  const token = await sessionToken();
  const url = new URL(request.url);
  const headers = new Headers({ accept: request.headers.get('accept') ?? 'application/json' });
  if (token) headers.set('authorization', `Bearer ${token}`);
  const contentType = request.headers.get('content-type');
  if (contentType) headers.set('content-type', contentType);
  // The browser's address (set by this server from its socket, src/server/start-web.ts): the
  // registry believes it when this server is one of its trusted proxies.
  const clientIp = request.headers.get('x-probeyard-client-ip');
  if (clientIp) headers.set('x-forwarded-for', clientIp);
  const lastEventId = request.headers.get('last-event-id');
  if (lastEventId) headers.set('last-event-id', lastEventId);
  let upstream: Response;
  try {
    upstream = await registryFetch(`${registryUrl()}/trpc/${name}${url.search}`, {
      method: request.method,
      headers,
      body: request.method === 'POST' ? await request.arrayBuffer() : undefined,
      signal: request.signal,
      cache: 'no-store',
    });
  } catch (err) {
    if (request.signal.aborted) return new Response(null, { status: 499 });
    return Response.json(
      { error: { message: `registry unreachable: ${(err as Error).message}`, data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 502 } } },
      { status: 502 },
    );
  }
  const out = new Headers({ 'content-type': upstream.headers.get('content-type') ?? 'application/json', 'cache-control': 'no-store' });
  return new Response(upstream.body, { status: upstream.status, headers: out });
}

type Params = { params: Promise<{ path: string[] }> };

export async function GET(request: Request, { params }: Params) {
  return forward(request, (await params).path);
}

export async function POST(request: Request, { params }: Params) {
  return forward(request, (await params).path);
}
