import type { Role } from '../generated/prisma/enums.js';

export type { Role };

/** Roles, strongest first (`owner` > `admin` > `publisher` > `viewer`). */
export const roles = ['owner', 'admin', 'publisher', 'viewer'] as const satisfies readonly Role[];

const rank: Record<Role, number> = { owner: 4, admin: 3, publisher: 2, viewer: 1 };

/** Whether `role` can do what `needed` can. */
export function hasRole(role: Role, needed: Role): boolean {
  return rank[role] >= rank[needed];
}

/** The weaker of two roles (a token's effective role is capped by its user's membership). */
export function weakerRole(a: Role, b: Role): Role {
  return rank[a] <= rank[b] ? a : b;
}
