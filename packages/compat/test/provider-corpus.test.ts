// Provider probes in C on the corpus kernels: examples/c/forkprov.o (proc:::fork) and ioprov.o
// (io:::done), through the library's providers, against their raw-tracepoint twins forkcomm.o and
// iodone.o, on every kernel of ../shared/corpus and a synthesized layout (4.4.88's
// block_rq_complete with `errors` renamed `error`). The README's provider table must be what this
// computes; skipped with a printed reason when the corpus is absent.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCompat } from '../src/verdict.js';
import { androidDir, linuxTarball } from './corpus-table.js';
import { exampleSpec } from './fixtures.js';
import { providerKernels, providerRows, providers, providerTableRows } from './provider-corpus-table.js';

const present = existsSync(androidDir) && existsSync(linuxTarball);
if (!present) console.log(`compat provider corpus test skipped: ${androidDir} or ${linuxTarball} is absent`);

function readmeTable(): Map<string, string[]> {
  const text = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
  const start = text.indexOf('<!-- provider-table -->');
  const end = text.indexOf('<!-- /provider-table -->');
  const rows = new Map<string, string[]>();
  for (const line of text.slice(start, end).split('\n')) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length < 2 || cells[0] === 'program' || cells[0]!.startsWith('---')) continue;
    rows.set(cells[0]!.replace(/`/g, ''), cells.slice(1));
  }
  return rows;
}

describe.skipIf(!present)('provider C programs on the corpus kernels', () => {
  it('every cell of the README provider table is what checkCompat computes', async () => {
    const { rows } = await providerTableRows();
    const table = readmeTable();
    expect([...table.keys()]).toEqual(providerRows);
    for (const [name, cells] of rows) expect(cells).toEqual(table.get(name));
  }, 120_000);

  it('the provider programs run on every kernel; each raw twin is refused on at least one', async () => {
    const ks = await providerKernels();
    for (const [prov, raw] of [
      ['forkprov', 'forkcomm'],
      ['ioprov', 'iodone'],
    ] as const) {
      const p = await exampleSpec(prov);
      const r = await exampleSpec(raw);
      expect(ks.map((k) => checkCompat(p, k.profile, { providers }).status).filter((s) => s !== 'compatible' && s !== 'relocated')).toEqual([]);
      expect(ks.some((k) => checkCompat(r, k.profile).status === 'incompatible')).toBe(true);
    }
  }, 120_000);
});
