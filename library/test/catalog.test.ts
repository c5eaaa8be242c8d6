// The committed catalog.json and the generated sections of README.md are what the project's tools
// compute now (packages/compat on the committed objects and the bundled kernels); the display hints
// follow the runtime's conventions; the CLI's `compat --json` agrees with every verdict.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Catalog, computeCatalog, formatCatalog, librarySpec } from '../src/catalog.js';
import { resolveDisplayHint, slotsMember } from '@probeyard/runtime';
import { libraryKernels } from '../src/kernels.js';
import { catalogPath, kernelsDir, programsDir, readmePath } from '../src/paths.js';
import { libraryPrograms } from '../src/programs.js';
import { readmeSections, replaceSections } from '../src/readme.js';
import { probeyard } from './support/cli.js';

const committed = JSON.parse(readFileSync(catalogPath, 'utf8')) as Catalog;

describe('catalog', async () => {
  const computed = await computeCatalog();

  it('catalog.json is what the tools compute from the objects and kernels now (pnpm --filter @probeyard/library catalog)', () => {
    expect(readFileSync(catalogPath, 'utf8')).toBe(formatCatalog(computed));
  });

  it('README.md holds the tables rendered from it', () => {
    const readme = readFileSync(readmePath, 'utf8');
    expect(readme).toBe(replaceSections(readme, readmeSections(computed)));
  });

  it('has every program of programs/*.c, in the order of programs.ts, and a column per kernel', () => {
    const sources = readdirSync(programsDir)
      .filter((f) => f.endsWith('.c'))
      .map((f) => f.slice(0, -2))
      .sort();
    expect(libraryPrograms.map((p) => p.name).sort()).toEqual(sources);
    expect(committed.programs.map((p) => p.name)).toEqual(libraryPrograms.map((p) => p.name));
    for (const p of committed.programs) expect(Object.keys(p.compat)).toEqual(libraryKernels.map((k) => k.id));
  });

  it('every verdict is compatible or relocated where the kernel has the events; incompatible only for an event the kernel lacks', () => {
    for (const p of committed.programs) {
      for (const [kernel, v] of Object.entries(p.compat)) {
        // the kernels are complete dumps: a missing event is a fact (incompatible), never unknown
        const ok = (v.missingEvents ?? []).length > 0 ? v.status === 'incompatible' && v.cell === 'incompatible: event-missing' : ['compatible', 'relocated'].includes(v.status);
        expect([p.name, kernel, ok]).toEqual([p.name, kernel, true]);
      }
    }
  });
});

describe.each(libraryPrograms.map((p) => [p.name, p] as const))('%s: maps and display hints', (name, program) => {
  it("every map draws by the runtime's conventions, but the state maps programs.ts hides by metadata", async () => {
    const spec = await librarySpec(name);
    const entry = committed.programs.find((p) => p.name === name)!;
    for (const m of spec.maps) {
      const hint = entry.maps.find((c) => c.name === m.name)!.display;
      if (Object.hasOwn(program.state, m.name)) expect(hint).toEqual({ kind: 'hidden', source: 'metadata' });
      else expect(hint).toEqual(resolveDisplayHint(m));
    }
    for (const s of Object.keys(program.state)) expect(spec.maps.map((m) => m.name)).toContain(s);
  });

  it('histograms are libbpf-tools `struct hist { __u32 slots[32]; }` values; events maps name their record struct', async () => {
    const spec = await librarySpec(name);
    for (const m of spec.maps.filter((x) => slotsMember(x.valueType) !== undefined)) {
      expect(m.valueType).toEqual({ kind: 'struct', fields: [{ name: 'slots', offset: 0, type: { kind: 'array', element: { kind: 'int', size: 4, signed: false }, length: 32 } }] });
      expect(m.name).toMatch(/_(ns|us|ms|bytes)$/);
    }
    const entry = committed.programs.find((p) => p.name === name)!;
    for (const m of entry.maps.filter((x) => x.display.kind === 'events')) expect(m.recordType).toBe(`${m.name.replace(/_events$/, '')}_event`);
  });

  it('the CLI (`probeyard compat --json`) gives the same status on every kernel', async () => {
    const args = ['compat', join(programsDir, `${name}.o`), ...libraryKernels.flatMap((k) => ['--kernel', join(kernelsDir, k.id)]), '--json'];
    const { out } = await probeyard(args);
    const json = JSON.parse(out) as { digest: string; verdicts: { status: string }[] };
    const entry = committed.programs.find((p) => p.name === name)!;
    expect(json.digest).toBe(entry.digest);
    expect(json.verdicts.map((v) => v.status)).toEqual(libraryKernels.map((k) => entry.compat[k.id]!.status));
  });
});
