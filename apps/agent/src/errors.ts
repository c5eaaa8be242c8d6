/** Stable error codes of the agent; callers branch on these, never on message text. */
export type AgentErrorCode =
  /** The command line or a configuration file cannot be used. */
  | 'usage'
  /** The state folder cannot be used (permissions, another agent holds it, not enrolled). */
  | 'state'
  /** The registry refused or could not be reached for a call that is not retried. */
  | 'registry'
  /** The registry does not accept the agent's credential (revoked, or another registry). */
  | 'unauthorized'
  /** The node's kernel profile cannot be read. */
  | 'profile'
  /** The on-disk spool cannot be written or read. */
  | 'spool'
  /** The trace feed cannot be opened or read. */
  | 'feed'
  /** A target's artifact does not match its digest, or cannot be read. */
  | 'artifact';

export interface AgentErrorContext {
  targetId?: string;
  path?: string;
  /** The registry's tRPC code (`NOT_FOUND`, `INTERNAL_SERVER_ERROR`), or `NETWORK`/`GARBAGE`. */
  registryCode?: string;
  /** HTTP status of a registry answer, when there was one. */
  status?: number;
  /** Whether trying the same call later may succeed. */
  retryable?: boolean;
  cause?: unknown;
}

/** The one error class of the agent: lowercase "what: detail" messages with a stable `code`. */
export class AgentError extends Error {
  readonly code: AgentErrorCode;
  readonly context: Omit<AgentErrorContext, 'cause'>;

  constructor(code: AgentErrorCode, message: string, context: AgentErrorContext = {}) {
    const { cause, ...rest } = context;
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AgentError';
    this.code = code;
    this.context = rest;
  }

  get retryable(): boolean {
    return this.context.retryable === true;
  }
}

export function isAgentError(e: unknown): e is AgentError {
  return e instanceof AgentError;
}
