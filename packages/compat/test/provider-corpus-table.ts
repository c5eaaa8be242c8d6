// The provider table of README.md: the C programs of provider probes (examples/c/forkprov.o,
// ioprov.o) and their raw-tracepoint twins (forkcomm.o, iodone.o) on the corpus kernels and a
// synthesized layout (shared by provider-corpus.test.ts and print-provider-table.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEventFormat } from '@probeyard/formats';
import type { KernelProfile } from '../src/kernel-profile.js';
import { readProfile } from '../src/node/read-profile.js';
import { parseProvider } from '../src/provider.js';
import { checkCompat, type Verdict } from '../src/verdict.js';
import { cell, corpusKernels } from './corpus-table.js';
import { exampleSpec } from './fixtures.js';

const libraryProviders = join(import.meta.dirname, '..', '..', '..', 'library', 'providers');
/** The library's proc and io providers, as the CLI's `--provider library/providers` reads them. */
export const providers = ['proc', 'io'].map((n) => parseProvider(readFileSync(join(libraryProviders, `${n}.json`), 'utf8')));
export const providerRows = ['forkprov', 'forkcomm', 'ioprov', 'iodone'];

/** A cell: the status and reasons, and the implementation a provider chose. */
export function providerCell(v: Verdict): string {
  const via = v.providers?.map((b) => b.implementation) ?? [];
  return via.length === 0 ? cell(v) : `${cell(v)} via ${via.join(', ')}`;
}

/** 4.4.88 with block_rq_complete's `errors` renamed `error` (nothing else moved). */
function renamedErrors(base: KernelProfile, dir: string): KernelProfile {
  const text = readFileSync(join(dir, 'events', 'block', 'block_rq_complete', 'format'), 'utf8').replace(/\berrors\b/g, 'error');
  const events = new Map(base.events);
  const formats = new Map(base.formats);
  events.set('block/block_rq_complete', 'synthesized-error');
  formats.set('synthesized-error', parseEventFormat(text, { system: 'block' }));
  return { ...base, release: '4.4.88 (errors → error)', hash: `${base.hash}-errors-renamed`, events, formats };
}

let kernels: Promise<{ column: string; profile: KernelProfile }[]> | undefined;
/** The corpus kernels (as the verdict table's columns), then the synthesized one. */
export function providerKernels(): Promise<{ column: string; profile: KernelProfile }[]> {
  kernels ??= (async () => {
    const out: { column: string; profile: KernelProfile }[] = [];
    for (const k of corpusKernels()) out.push({ column: k.column, profile: await readProfile(k.path, { release: k.release }) });
    const k4488 = corpusKernels().find((k) => k.release === '4.4.88')!;
    out.push({ column: 'synthesized: 4.4.88, errors → error', profile: renamedErrors(out.find((k) => k.column === k4488.column)!.profile, k4488.path) });
    return out;
  })();
  return kernels;
}

/** The table: column headers and each row's cells. */
export async function providerTableRows(): Promise<{ header: string[]; rows: [string, string[]][] }> {
  const ks = await providerKernels();
  const rows: [string, string[]][] = [];
  for (const name of providerRows) {
    const spec = await exampleSpec(name);
    rows.push([name, ks.map((k) => providerCell(checkCompat(spec, k.profile, { providers })))]);
  }
  return { header: ks.map((k) => k.column), rows };
}
