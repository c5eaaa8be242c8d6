import { z } from 'zod';
import { publicProcedure } from '../trpc.js';

export const healthOutput = z.object({ ok: z.literal(true), service: z.literal('probeyard-registry'), version: z.string() });

/** `health`: the API answers (no database access; `/readyz` checks the database). */
export const health = publicProcedure.output(healthOutput).query(() => ({ ok: true as const, service: 'probeyard-registry' as const, version: '0.1.0' }));
