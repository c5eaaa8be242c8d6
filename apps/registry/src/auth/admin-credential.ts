import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../db/open.js';
import { RegistryError } from '../errors.js';
import { hashSecret, newSecret, SecretKind } from './secrets.js';

/** The instance admin credential's file in a data folder (mode 0600, readable only by its owner). */
export const adminCredentialFileName = 'admin-credential';

export function adminCredentialPath(dataDir: string): string {
  return join(dataDir, adminCredentialFileName);
}

/** Reads the admin credential of a data folder, or `undefined` when there is none. */
export function readAdminCredential(dataDir: string): string | undefined {
  const path = adminCredentialPath(dataDir);
  if (!existsSync(path)) return undefined;
  const secret = readFileSync(path, 'utf8').trim();
  if (!secret.startsWith(SecretKind.admin)) {
    throw new RegistryError('bad_request', `admin credential ${path}: not a probeyard admin credential`, { path });
  }
  return secret;
}

/**
 * Makes sure the data folder holds an admin credential whose hash the database knows: creates one
 * on first start (mode 0600), and re-registers an existing one (a fresh database, or another
 * replica's data folder on a shared PostgreSQL). Returns the secret.
 */
export async function ensureAdminCredential(dataDir: string, db: Db): Promise<string> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = adminCredentialPath(dataDir);
  let secret = readAdminCredential(dataDir);
  if (!secret) {
    secret = newSecret(SecretKind.admin);
    writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const hash = hashSecret(secret);
  await db.instanceCredential.upsert({ where: { hash }, create: { hash }, update: {}, select: { id: true } });
  return secret;
}
