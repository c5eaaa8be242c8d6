import { specFromJson } from '@probeyard/compat';
import { resolveDisplayHint } from '@probeyard/runtime';
import { z } from 'zod';
import { getVersionSpec } from '../../data/program-pages.js';
import { slugSchema } from '../../schemas.js';
import { userProcedure } from '../../trpc.js';
import { semverSchema } from '../program/publish.js';

export const versionSpecInput = z.strictObject({ name: slugSchema, version: semverSchema });
export const versionSpecOutput = z.object({
  /** packages/compat `ProgramSpecJson`: programs with their instructions (hex) and field relocations, maps, globals, build layouts. */
  spec: z.record(z.string(), z.unknown()),
  /** packages/compat `Manifest`. */
  manifest: z.record(z.string(), z.unknown()),
  /**
   * How outputs show each map (packages/runtime `resolveDisplayHint`): the spec's own hint, or the
   * convention's (`source: 'convention'`), by map name.
   */
  displays: z.record(z.string(), z.record(z.string(), z.unknown())),
});

/** `version.spec` (viewer): a version's parsed spec and manifest, for an annotated disassembly; another tenant's is `NOT_FOUND`. */
export const versionSpec = userProcedure('viewer')
  .input(versionSpecInput)
  .output(versionSpecOutput)
  .query(async ({ ctx, input }) => {
    const v = await getVersionSpec(ctx.db, ctx.tenantId, input.name, input.version);
    const displays: Record<string, Record<string, unknown>> = {};
    for (const m of specFromJson(v.spec).maps) displays[m.name] = { ...resolveDisplayHint(m) };
    return { spec: v.spec as Record<string, unknown>, manifest: v.manifest as Record<string, unknown>, displays };
  });
