import { z } from 'zod';
import { roles } from './auth/roles.js';

/** Shared zod pieces of procedure inputs and outputs. Inputs are strict: unknown fields are refused. */
export const idSchema = z.string().uuid();
export const roleSchema = z.enum(roles);
export const emailSchema = z
  .string()
  .trim()
  .max(254)
  .email()
  .transform((s) => s.toLowerCase());
/** Tenant and program names: lowercase slug. */
export const slugSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'lowercase letters, digits, ".", "_" and "-", 1 to 63 characters, starting with a letter or digit');
export const passwordSchema = z.string().min(12, 'at least 12 characters').max(256);
/** A human label (token names, hostnames): printable, no control characters. */
export const labelSchema = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^\p{Cc}]+$/u, 'no control characters');
/** Agent labels: `{ "env": "prod" }`. */
export const labelsSchema = z
  .record(z.string().regex(/^[A-Za-z0-9._/-]{1,63}$/), z.string().max(63))
  .refine((l) => Object.keys(l).length <= 64, 'at most 64 labels');
export const isoDate = z.string().datetime();
export const listInput = z.strictObject({
  limit: z.number().int().min(1).max(500).default(100),
  /** The `nextCursor` of the previous page. */
  cursor: idSchema.optional(),
});

export function iso(d: Date): string;
export function iso(d: Date | null): string | null;
export function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}
