import { z } from 'zod';
import { profileEventFormat } from '../../data/kernel-format.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { layoutFieldView } from '../compat/compat-view.js';

export const kernelFormatInput = z.strictObject({
  profile: slugSchema,
  /** `system/event` or a bare event name. */
  event: z.string().regex(/^[\w.-]+(\/[\w.-]+)?$/).max(128),
});
export const kernelFormatOutput = z.object({
  profile: z.string(),
  release: z.string(),
  /** Null when the profile lacks the event. */
  event: z.object({ system: z.string(), name: z.string(), fields: z.array(layoutFieldView), text: z.string() }).nullable(),
});

/** `kernel.format` (viewer): one event's format in a profile of the tenant, field by field. */
export const kernelFormat = userProcedure('viewer')
  .input(kernelFormatInput)
  .output(kernelFormatOutput)
  .query(({ ctx, input }) => profileEventFormat(ctx.db, ctx.tenantId, input.profile, input.event));
