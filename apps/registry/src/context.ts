import { PasswordGate } from './auth/password-gate.js';
import { LoginLimiter } from './auth/rate-limit.js';
import { type Role, weakerRole } from './auth/roles.js';
import { hashSecret, SecretKind } from './auth/secrets.js';
import { UploadParser } from './data/upload-parser.js';
import { VerifierPool } from './jobs/verifier-pool.js';
import type { Db } from './db/open.js';
import { FleetState } from './fleet/fleet-state.js';
import type { JobNotifier } from './jobs/compat-runner.js';
import { defaultLiveCeilings, type LiveCeilings } from './data/live-limits.js';

/** Who is calling, resolved once per request from the bearer secret. */
export type Principal =
  | { kind: 'anonymous' }
  /** A secret was given but is unusable; `reason` is told to the caller of a protected procedure. */
  | { kind: 'invalid'; reason: string }
  | {
      kind: 'user';
      tenantId: string;
      tenantName: string;
      userId: string;
      email: string;
      /** The effective role: the weaker of the token's own and the member's. */
      role: Role;
      tokenId: string;
      /**
       * True when the token's own role is below the member's: the token acts for less than the
       * account, so it may not do what only the account may (set a first password, accept an invitation).
       */
      capped: boolean;
    }
  | { kind: 'agent'; tenantId: string; agentId: string }
  | { kind: 'admin'; credentialId: string };

/** What lives as long as the server: the database and process-wide state. */
export interface RegistryDeps {
  db: Db;
  /** Login attempts, counted before the password hash (per account, address, and both). */
  loginLimiter: LoginLimiter;
  /** At most a few password hashes at a time, a bounded queue, then 429. */
  passwordGate: PasswordGate;
  now: () => Date;
  /** True when the database answers and every migration is applied (`/readyz`). */
  isReady: () => Promise<boolean>;
  /** Agent credential cache, poll generations and batched last-seen times (src/fleet/). */
  fleet: FleetState;
  /** Parses uploaded tarballs and trace.dat files on worker threads, with a deadline and a memory cap. */
  uploads: UploadParser;
  /** Verifies published programs and computes compat cells on worker threads, with a deadline and per-tenant fairness. */
  verifier: VerifierPool;
  /** The most an admin may set each of their tenant's live limits to (`live.setLimits`; the server reads them from the environment). */
  liveCeilings: LiveCeilings;
  /** Wakes the compat job runner after a job is queued (absent in tests, which drain the queue themselves). */
  compatJobs?: JobNotifier | undefined;
  /** Test-only fault injection (the crash-safety test pauses a publish inside its transaction). */
  hooks?: RegistryHooks | undefined;
}

export interface RegistryHooks {
  /** Awaited inside the publish transaction, after the rows are written and before the commit. */
  publishInTransaction?: () => Promise<void>;
}

/** What the HTTP layer (or a test) knows of one request. */
export interface RequestInfo {
  /** The `Authorization` header (`Bearer <secret>`), or the bare secret. */
  authorization?: string | undefined;
  /** The client address, for rate limits and audit. */
  ip?: string | undefined;
  requestId?: string | undefined;
}

/** Filled in while the request runs, read by the request log line. */
export interface RequestLog {
  tenant?: string;
}

export interface Context {
  db: Db;
  deps: RegistryDeps;
  principal: Principal;
  ip: string;
  requestId: string;
  log: RequestLog;
}

export function createDeps(db: Db, opts: Partial<Omit<RegistryDeps, 'db'>> = {}): RegistryDeps {
  return {
    db,
    loginLimiter: opts.loginLimiter ?? new LoginLimiter(),
    passwordGate: opts.passwordGate ?? new PasswordGate(),
    now: opts.now ?? (() => new Date()),
    isReady: opts.isReady ?? (async () => true),
    fleet: opts.fleet ?? new FleetState(db),
    // Workers start on the first upload and stop when idle, so a default one costs nothing.
    uploads: opts.uploads ?? new UploadParser(),
    verifier: opts.verifier ?? new VerifierPool(),
    liveCeilings: opts.liveCeilings ?? defaultLiveCeilings,
    compatJobs: opts.compatJobs,
    hooks: opts.hooks,
  };
}

// last-used times are written at most this often per token, so busy tokens do not write per request.
const lastUsedEveryMs = 60_000;

async function resolvePrincipal(deps: RegistryDeps, secret: string | undefined): Promise<Principal> {
  if (!secret) return { kind: 'anonymous' };
  const { db } = deps;
  const now = deps.now();
  const hash = hashSecret(secret);
  if (secret.startsWith(SecretKind.apiToken) || secret.startsWith(SecretKind.session)) {
    const token = await db.apiToken.findUnique({
      where: { hash },
      select: {
        id: true,
        tenantId: true,
        userId: true,
        role: true,
        expiresAt: true,
        revokedAt: true,
        lastUsedAt: true,
        tenant: { select: { name: true } },
        user: { select: { email: true, memberships: { select: { tenantId: true, role: true } } } },
      },
    });
    if (!token) return { kind: 'invalid', reason: 'unknown token' };
    if (token.revokedAt) return { kind: 'invalid', reason: 'token revoked' };
    if (token.expiresAt && token.expiresAt <= now) return { kind: 'invalid', reason: 'token expired' };
    const membership = token.user.memberships.find((m) => m.tenantId === token.tenantId);
    if (!membership) return { kind: 'invalid', reason: 'token of a user who is no longer a member' };
    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() > lastUsedEveryMs) {
      await db.apiToken.update({ where: { id: token.id }, data: { lastUsedAt: now }, select: { id: true } });
    }
    return {
      kind: 'user',
      tenantId: token.tenantId,
      tenantName: token.tenant.name,
      userId: token.userId,
      email: token.user.email,
      role: weakerRole(token.role, membership.role),
      tokenId: token.id,
      capped: weakerRole(token.role, membership.role) !== membership.role,
    };
  }
  if (secret.startsWith(SecretKind.agent)) {
    // Agents poll often: a known credential is answered from memory (revocation forgets it).
    const cached = deps.fleet.cachedCredential(hash);
    if (cached) return { kind: 'agent', ...cached };
    const agent = await db.agent.findUnique({ where: { credentialHash: hash }, select: { id: true, tenantId: true, revokedAt: true } });
    if (!agent) return { kind: 'invalid', reason: 'unknown agent credential' };
    if (agent.revokedAt) return { kind: 'invalid', reason: 'agent credential revoked' };
    deps.fleet.rememberCredential(hash, { tenantId: agent.tenantId, agentId: agent.id });
    return { kind: 'agent', tenantId: agent.tenantId, agentId: agent.id };
  }
  if (secret.startsWith(SecretKind.admin)) {
    const cred = await db.instanceCredential.findUnique({ where: { hash }, select: { id: true, revokedAt: true } });
    if (!cred || cred.revokedAt) return { kind: 'invalid', reason: 'unknown admin credential' };
    return { kind: 'admin', credentialId: cred.id };
  }
  return { kind: 'invalid', reason: 'unknown token' };
}

/** Context creation, apart from HTTP: tests call `createCaller(await createContext({ authorization }))`. */
export function createContextFactory(deps: RegistryDeps): (req: RequestInfo) => Promise<Context> {
  return async (req) => {
    const raw = req.authorization?.trim();
    const secret = raw?.toLowerCase().startsWith('bearer ') ? raw.slice(7).trim() : raw;
    return {
      db: deps.db,
      deps,
      principal: await resolvePrincipal(deps, secret || undefined),
      ip: req.ip ?? 'local',
      requestId: req.requestId ?? crypto.randomUUID(),
      log: {},
    };
  };
}
