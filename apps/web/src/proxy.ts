import { type NextRequest, NextResponse } from 'next/server';

/**
 * Runs before every request:
 * - a request that changes something (any method but GET/HEAD) must come from this site: its
 *   `Origin` (or, without one, `Sec-Fetch-Site`) must be ours, else 403 (the session cookie is
 *   also SameSite=Lax, so a cross-site POST does not carry it);
 * - pages get a Content Security Policy with a fresh nonce (Next.js puts it on its own scripts);
 * - the page's path rides along for the sign-in redirect.
 */
export function proxy(request: NextRequest) {
  const method = request.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD' && !isSameOrigin(request)) {
    return new NextResponse('cross-site request refused: this action must come from the web app itself\n', {
      status: 403,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
  }
  const nonce = btoa(crypto.randomUUID());
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'`,
    // React and the chart library set element styles; style attributes need this.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  const forwarded = new Headers(request.headers);
  forwarded.set('x-nonce', nonce);
  forwarded.set('content-security-policy', csp);
  forwarded.set('x-probeyard-path', `${request.nextUrl.pathname}${request.nextUrl.search}`);
  const response = NextResponse.next({ request: { headers: forwarded } });
  response.headers.set('content-security-policy', csp);
  return response;
}

function isSameOrigin(request: NextRequest): boolean {
  const origin = request.headers.get('origin');
  const host = request.headers.get('host');
  if (origin) {
    if (origin === 'null' || !host) return false;
    try {
      return new URL(origin).host === host;
    } catch {
      return false;
    }
  }
  // Browsers send Origin on every cross-origin POST; without it, fall back to Fetch Metadata.
  const site = request.headers.get('sec-fetch-site');
  return site === null || site === 'same-origin' || site === 'none';
}

export const config = {
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
