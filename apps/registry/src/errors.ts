import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';

/** What went wrong, stable for callers to branch on (never branch on message text). */
export const RegistryErrorCode = {
  badRequest: 'bad_request',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  notFound: 'not_found',
  conflict: 'conflict',
  rateLimited: 'rate_limited',
  payloadTooLarge: 'payload_too_large',
  unsupported: 'unsupported',
  /** The verifier rejected a program (the diagnostics ride in the error's `diagnostics`). */
  programRejected: 'program_rejected',
  notReady: 'not_ready',
  /** The database could not take the request in time (a transaction's wait or deadline, the connection pool): retry later. */
  unavailable: 'unavailable',
  dataFolderLocked: 'data_folder_locked',
  /** The data folder's owner or permissions let other users read or write it, and cannot be fixed. */
  dataFolderUnsafe: 'data_folder_unsafe',
  migrationFailed: 'migration_failed',
  internal: 'internal',
} as const;
export type RegistryErrorCode = (typeof RegistryErrorCode)[keyof typeof RegistryErrorCode];

/** The one table from domain error codes to tRPC codes (and so to HTTP statuses). */
export const trpcCodeOf: Record<RegistryErrorCode, TRPC_ERROR_CODE_KEY> = {
  bad_request: 'BAD_REQUEST',
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  rate_limited: 'TOO_MANY_REQUESTS',
  payload_too_large: 'PAYLOAD_TOO_LARGE',
  unsupported: 'METHOD_NOT_SUPPORTED',
  program_rejected: 'UNPROCESSABLE_CONTENT',
  not_ready: 'PRECONDITION_FAILED',
  unavailable: 'SERVICE_UNAVAILABLE',
  data_folder_locked: 'INTERNAL_SERVER_ERROR',
  data_folder_unsafe: 'INTERNAL_SERVER_ERROR',
  migration_failed: 'INTERNAL_SERVER_ERROR',
  internal: 'INTERNAL_SERVER_ERROR',
};

/** The registry's error: a stable `code`, a lowercase "what: detail" message, structured context. */
export class RegistryError extends Error {
  constructor(
    readonly code: RegistryErrorCode,
    message: string,
    readonly context: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RegistryError';
  }
}

/** A missing row and another tenant's row get this same error. */
export function notFound(what: string, id: string): RegistryError {
  return new RegistryError('not_found', `${what} not found: ${id}`, { what, id });
}

/** Turns a RegistryError into the TRPCError the API answers with (the domain code rides in `cause`). */
export function toTrpcError(err: RegistryError): TRPCError {
  return new TRPCError({ code: trpcCodeOf[err.code], message: err.message, cause: err });
}

/** Seconds an `unavailable` answer tells the client to wait (`Retry-After`). */
export const retryAfterSeconds = 2;

/**
 * Prisma's errors that say the database was too busy, not that the request was wrong: P2028 (an
 * interactive transaction could not start within its `maxWait`, or ran past its `timeout`: on
 * PGlite every transaction waits for the one before it) and P2024 (no connection from the pool in
 * time). As `unavailable` (503 with `Retry-After`): the same request may succeed a moment later.
 */
export function busyDatabaseError(err: unknown): RegistryError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== 'P2028' && code !== 'P2024') return undefined;
  return new RegistryError(
    'unavailable',
    `database busy: ${code === 'P2024' ? 'no connection was free in time' : 'the transaction could not run in time'}; try again in ${retryAfterSeconds} s`,
    { prismaCode: code, retryAfterSeconds },
    { cause: err },
  );
}

/** Prisma's error code for a unique constraint violation. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'P2002';
}
