import { createHash, randomBytes } from 'node:crypto';

/**
 * The kinds of bearer secret, told apart by prefix: user API token, login session, agent
 * credential, enrolment token, instance admin credential, invitation (redeemed by `auth.acceptInvitation`,
 * never a bearer token).
 */
export const SecretKind = {
  apiToken: 'pyt_',
  session: 'pys_',
  agent: 'pya_',
  enrollment: 'pye_',
  admin: 'pyi_',
  invitation: 'pyv_',
} as const;
export type SecretKind = (typeof SecretKind)[keyof typeof SecretKind];

/** A new secret: the prefix and 32 random bytes (256 bits) in base64url. */
export function newSecret(kind: SecretKind): string {
  return `${kind}${randomBytes(32).toString('base64url')}`;
}

/**
 * sha256 (hex) of a secret. Secrets carry 256 bits of entropy, so a fast hash is enough, and a
 * lookup by hash leaks nothing usable through timing.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The first characters of a secret, shown in listings to recognise a token. */
export function secretPrefix(secret: string): string {
  return secret.slice(0, 12);
}
