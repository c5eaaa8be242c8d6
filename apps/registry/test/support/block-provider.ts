// Fixtures of provider tests (providers.test.ts, provider-agents.test.ts, verify-pool.test.ts):
// block_rq_complete with its error field called `errors` (before 4.20) or `error`, a provider whose
// `done` probe is implemented for one or both, and a script reading it, compiled as a user's CLI
// would (for the `errors` layout, through NAME@1.0.0).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseProvider } from '@probeyard/compat';
import { parseEventFormat } from '@probeyard/formats';
import { compileScript, providerResolver, targetOfFormats } from '@probeyard/script';

const header = `\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
`;

/** The format of block_rq_complete whose error field is called `field`. */
export const completeText = (field: 'errors' | 'error') => `name: block_rq_complete\nID: 392\nformat:\n${header}
\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:int ${field};\toffset:28;\tsize:4;\tsigned:1;
\tfield:char rwbs[8];\toffset:32;\tsize:8;\tsigned:0;

print fmt: "%d", REC->${field}
`;

/** A complete events tree of that one event, as a tarball (base64), for `kernel.upload`. */
export function tarballOf(field: 'errors' | 'error'): string {
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-prov-'));
  try {
    mkdirSync(join(dir, 'block', 'block_rq_complete'), { recursive: true });
    writeFileSync(join(dir, 'block', 'block_rq_complete', 'format'), completeText(field));
    return execFileSync('tar', ['-C', dir, '-czf', '-', '.']).toString('base64');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Provider NAME@VERSION with `done` implemented for `errors`, and (withError) for `error` too; its
 * arguments `dev`, `bytes` and `error` (examples/c/ioprov.o reads `dev`).
 */
export const blockProvider = (name: string, version: string, withError: boolean) =>
  JSON.stringify({
    provider: name,
    version,
    description: 'block I/O',
    probes: {
      done: {
        args: { dev: 'int', bytes: 'int', error: 'int' },
        implementations: [
          { for: 'errors (before 4.20)', tracepoint: 'block/block_rq_complete', when: [{ field: 'errors', kind: 'int' }], args: { dev: 'args.dev', bytes: 'args.nr_sector * 512', error: 'args.errors' } },
          ...(withError ? [{ for: 'error', tracepoint: 'block/block_rq_complete', when: [{ field: 'error', kind: 'int' }], args: { dev: 'args.dev', bytes: 'args.nr_sector * 512', error: 'args.error' } }] : []),
        ],
      },
    },
  });

/**
 * A script reading NAME:::done (counts by error, and with `bytes` their bytes too), compiled through
 * NAME@1.0.0 for the `errors` layout: the artifact, base64.
 */
export async function blockScriptArtifact(name: string, options: { bytes?: boolean } = {}): Promise<string> {
  const r = await compileScript(`${name}:::done /args.error != 0/ { @[args.error] = count();${options.bytes ? ' @bytes = sum(args.bytes);' : ''} }`, {
    target: targetOfFormats([parseEventFormat(completeText('errors'), { system: 'block' })]),
    providers: providerResolver([parseProvider(blockProvider(name, '1.0.0', false))]),
  });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('; '));
  return Buffer.from(r.artifact).toString('base64');
}
