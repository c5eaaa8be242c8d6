// The committed objects are what build.sh makes of the sources (rebuilt with clang 14 into a
// temporary copy, byte for byte; skipped, saying why, without clang 14), and every field read of
// every program is a CO-RE relocation named against a `trace_event_raw_*` record (nothing pinned to
// a layout), verified by packages/verifier on this machine's build-time layout.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildManifest } from '@probeyard/compat';
import { afterAll, describe, expect, it } from 'vitest';
import { librarySpec } from '../src/catalog.js';
import { libraryDir, programsDir } from '../src/paths.js';
import { libraryPrograms } from '../src/programs.js';

function clang14(): string | undefined {
  try {
    const v = execFileSync('clang', ['--version'], { encoding: 'utf8' });
    return /clang version 14\./.test(v) ? undefined : `clang is not version 14: ${v.split('\n')[0]}`;
  } catch (e) {
    return `no clang: ${(e as Error).message.split('\n')[0]}`;
  }
}
const noClang = clang14();
if (noClang) console.log(`library objects rebuild skipped: ${noClang}`);

describe.skipIf(noClang !== undefined)('build.sh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-library-build-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('rebuilds every committed object byte for byte from its source', { timeout: 120_000 }, () => {
    cpSync(join(libraryDir, 'build.sh'), join(dir, 'build.sh'));
    cpSync(programsDir, join(dir, 'programs'), { recursive: true, filter: (src) => !src.endsWith('.o') });
    execFileSync('sh', [join(dir, 'build.sh')], { stdio: 'pipe' });
    const objects = readdirSync(programsDir).filter((f) => f.endsWith('.o'));
    expect(objects.sort()).toEqual(libraryPrograms.map((p) => `${p.name}.o`).sort());
    for (const o of objects) expect([o, Buffer.compare(readFileSync(join(dir, 'programs', o)), readFileSync(join(programsDir, o)))]).toEqual([o, 0]);
  });
});

describe.each(libraryPrograms.map((p) => [p.name] as const))('%s.o', (name) => {
  it('reads every field by name through CO-RE, tagged module-like, no ABI', async () => {
    const manifest = buildManifest(await librarySpec(name));
    expect(manifest.tag).toBe('module-like, no ABI');
    expect(manifest.layoutPinned).toBe(false);
    expect(manifest.fields.length).toBeGreaterThan(0);
    expect(new Set(manifest.fields.map((f) => f.source))).toEqual(new Set(['core']));
  });
});
