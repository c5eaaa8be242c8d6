import type { Role } from '@probeyard/registry';

export type { Role };

/** Strongest first, as the registry orders them (apps/registry src/auth/roles.ts). */
export const roles = ['owner', 'admin', 'publisher', 'viewer'] as const satisfies readonly Role[];

/** Whether `role` may do what `needed` may (the registry refuses anyway; this only hides controls). */
export function hasRole(role: Role, needed: Role): boolean {
  return roles.indexOf(role) <= roles.indexOf(needed);
}
