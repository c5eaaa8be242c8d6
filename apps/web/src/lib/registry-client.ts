// The registry's typed tRPC client for the web app's server. Only the router's *type* comes from
// the registry; every call carries the signed-in user's own credential (never a privileged one).
import type { AppRouter } from '@probeyard/registry';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';

export type { AppRouter };
export type RegistryClient = ReturnType<typeof createTRPCClient<AppRouter>>;

/** The registry's URL, given to this process by `startWeb` / `probeyard-web --registry`. */
export function registryUrl(): string {
  return (process.env.PROBEYARD_REGISTRY_URL ?? 'http://127.0.0.1:4700').replace(/\/$/, '');
}

/**
 * `fetch` to the registry. A query (GET, idempotent) sent on a kept-alive connection that the
 * registry closed at that very moment (its idle timer fires late on a busy server: ECONNRESET)
 * fails before any answer: it is sent once more, on a new connection. A mutation is never repeated.
 */
export async function registryFetch(url: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    if ((init.method ?? 'GET').toUpperCase() !== 'GET' || init.signal?.aborted) throw err;
    return fetch(url, init);
  }
}

/** A client acting as the holder of `token` (anonymous without one: only public procedures answer). */
export function registryClient(token: string | undefined, clientIp?: string): RegistryClient {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${registryUrl()}/trpc`,
        fetch: (url, init) => registryFetch(url, init as RequestInit),
        headers: () => ({
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(clientIp ? { 'x-forwarded-for': clientIp } : {}),
        }),
      }),
    ],
  });
}

/** The tRPC error code of a registry error (`NOT_FOUND`, `UNAUTHORIZED` …), undefined for other errors. */
export function registryErrorCode(err: unknown): string | undefined {
  if (err instanceof TRPCClientError) return (err.data as { code?: string } | undefined)?.code;
  return undefined;
}

/** The registry's error text, or a sentence saying the registry could not be reached. */
export function registryErrorMessage(err: unknown): string {
  if (err instanceof TRPCClientError) {
    if (!err.data) return `the registry at ${registryUrl()} did not answer (${err.message})`;
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
