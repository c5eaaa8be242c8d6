import { z } from 'zod';
import { getCompatJob, listCompatJobs } from '../../data/compat.js';
import { idSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { compatJobView, toCompatJobView } from './compat-view.js';

export const compatJobInput = z.strictObject({ id: idSchema });
export const compatJobOutput = z.object({ job: compatJobView });

/** `compat.job`: one compat job's progress (done of total) and status; another tenant's is `NOT_FOUND`. */
export const compatJob = userProcedure('viewer')
  .input(compatJobInput)
  .output(compatJobOutput)
  .query(async ({ ctx, input }) => ({ job: toCompatJobView(await getCompatJob(ctx.db, ctx.tenantId, input.id)) }));

export const compatJobsInput = z
  .strictObject({ limit: z.number().int().min(1).max(500).default(50), active: z.boolean().default(false) })
  .optional();
export const compatJobsOutput = z.object({ jobs: z.array(compatJobView) });

/** `compat.jobs`: the tenant's compat jobs, newest first (`active`: only queued and running ones). */
export const compatJobs = userProcedure('viewer')
  .input(compatJobsInput)
  .output(compatJobsOutput)
  .query(async ({ ctx, input }) => ({
    jobs: (await listCompatJobs(ctx.db, ctx.tenantId, { limit: input?.limit ?? 50, active: input?.active ?? false })).map(toCompatJobView),
  }));
