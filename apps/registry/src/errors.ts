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

/** Prisma's error code for a unique constraint violation. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'P2002';
}
