import { initTRPC, TRPCError } from '@trpc/server';
import { ZodError, ZodRealError } from 'zod';
import { hasRole, type Role } from './auth/roles.js';
import type { Context, Principal } from './context.js';
import { busyDatabaseError, RegistryError, toTrpcError } from './errors.js';
import { checkInput } from './schemas.js';

type Issue = ZodError['issues'][number];

/**
 * One zod issue in words. A value that fits none of a union's forms says what each form missed
 * (zod says only "Invalid input"): `target: fits none of its 2 forms: (1) agentId: expected string,
 * received undefined (2) selector: …`.
 */
function issueText(issue: Issue, parent: PropertyKey[], withPath = true): string {
  const path = [...parent, ...issue.path].map(String).join('.');
  let message = issue.message.replace(/^Invalid input: /, '');
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const forms = issue.errors.map((branch, n) => `(${n + 1}) ${branch.map((i) => issueText(i as Issue, [])).join(', ')}`);
    message = `fits none of its ${issue.errors.length} forms: ${forms.join(' ')}`;
  }
  return withPath && path ? `${path}: ${message}` : message;
}

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    return {
      ...shape,
      message:
        cause instanceof RegistryError
          ? shape.message
          : error.code === 'PAYLOAD_TOO_LARGE'
            ? 'request too large: the body exceeds the size limit'
            : error.code === 'INTERNAL_SERVER_ERROR'
              ? // Database and library messages stay in the server log, not in answers.
                'internal error (see the registry log)'
              : cause instanceof ZodError
                ? // Bad input in words (`version: not a semantic version …`), not zod's JSON.
                  `invalid input: ${cause.issues.map((i) => issueText(i, [])).join('; ')}`
                : shape.message,
      data: {
        ...shape.data,
        // The domain code, for clients to branch on; zod issues for bad input.
        registryCode: cause instanceof RegistryError ? cause.code : undefined,
        // A rejected program's verifier diagnostics (instruction index, text, reason).
        diagnostics: cause instanceof RegistryError && cause.code === 'program_rejected' ? cause.context.diagnostics : undefined,
        issues: cause instanceof ZodError ? cause.issues.map((i) => ({ path: i.path.join('.'), message: issueText(i, [], false) })) : undefined,
        stack: undefined,
      },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

// RegistryErrors thrown by a procedure or the data layer become the tRPC error of the code table.
// A busy database (Prisma P2028/P2024) becomes `unavailable`: 503 with Retry-After, not a 500.
const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    if (result.error.cause instanceof RegistryError) throw toTrpcError(result.error.cause);
    const busy = busyDatabaseError(result.error.cause);
    if (busy) throw toTrpcError(busy);
  }
  return result;
});

function unauthorized(principal: Principal, needed: string): TRPCError {
  const message =
    principal.kind === 'invalid'
      ? `unauthorized: ${principal.reason}`
      : principal.kind === 'anonymous'
        ? `unauthorized: this needs ${needed}; pass a token (Authorization: Bearer …)`
        : `unauthorized: this needs ${needed}, not ${principal.kind === 'user' ? 'a user token' : `an ${principal.kind} credential`}`;
  return new TRPCError({ code: 'UNAUTHORIZED', message });
}

type UserPrincipal = Extract<Principal, { kind: 'user' }>;
type AgentPrincipal = Extract<Principal, { kind: 'agent' }>;
type AdminPrincipal = Extract<Principal, { kind: 'admin' }>;

/*
 * Authorization happens here and nowhere else: every procedure is built from exactly one of these.
 */

/**
 * Every input, before its procedure's schema parses it: text PostgreSQL can store (no U+0000, no
 * lone surrogate) and at most `maxInputDepth` levels of nesting (schemas recurse, and a deep
 * enough value would overflow the stack). A refusal is a 400 shaped as zod's, naming the field.
 */
const guardInput = t.middleware(async ({ getRawInput, next }) => {
  const problem = checkInput(await getRawInput());
  if (problem) {
    const cause = new ZodRealError([{ code: 'custom', path: problem.path, message: problem.message, input: undefined }]);
    throw new TRPCError({ code: 'BAD_REQUEST', message: problem.message, cause });
  }
  return next();
});

/** Anyone. */
export const publicProcedure = t.procedure.use(mapErrors).use(guardInput);

/** A user token of a member with at least `role` in the token's tenant. */
export function userProcedure(role: Role) {
  return publicProcedure.use(({ ctx, next }) => {
    const p = ctx.principal;
    if (p.kind !== 'user') throw unauthorized(p, 'a user token');
    ctx.log.tenant = p.tenantName;
    if (!hasRole(p.role, role)) {
      throw new TRPCError({ code: 'FORBIDDEN', message: `forbidden: this needs the ${role} role, the token has ${p.role}` });
    }
    return next({ ctx: { ...ctx, principal: p as UserPrincipal, tenantId: p.tenantId } });
  });
}

/** An enrolled agent's credential. */
export const agentProcedure = publicProcedure.use(({ ctx, next }) => {
  const p = ctx.principal;
  if (p.kind !== 'agent') throw unauthorized(p, 'an agent credential');
  ctx.log.tenant = p.tenantId;
  return next({ ctx: { ...ctx, principal: p as AgentPrincipal, tenantId: p.tenantId } });
});

/** The instance admin credential (from the data folder). */
export const adminProcedure = publicProcedure.use(({ ctx, next }) => {
  const p = ctx.principal;
  if (p.kind !== 'admin') throw unauthorized(p, 'the instance admin credential');
  return next({ ctx: { ...ctx, principal: p as AdminPrincipal } });
});

export type UserContext = Context & { principal: UserPrincipal; tenantId: string };
export type AgentContext = Context & { principal: AgentPrincipal; tenantId: string };
