// Every library program loads into this machine's kernel, two ways (as root; skipped, saying why,
// otherwise): relocated by Probeyard for the live tracefs formats (reads a `field exists` check
// cuts off poisoned, as libbpf does) and verified by packages/verifier, then BPF_PROG_LOAD through
// packages/verifier's kernel helper; and with libbpf's own CO-RE against the kernel's BTF
// (`bpftool prog loadall`, pinned in a private bpffs that is unmounted afterwards).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkCompat, type KernelProfile, mapDefsOf, profileOfFiles } from '@probeyard/compat';
import { verify } from '@probeyard/verifier';
import { KernelLoader } from '@probeyard/verifier/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachEvents, libraryEvents, librarySpec } from '../src/catalog.js';
import { objectPath } from '../src/paths.js';
import { libraryPrograms } from '../src/programs.js';

const opened = await KernelLoader.open();
const loader = 'unavailable' in opened ? null : opened;
if ('unavailable' in opened) console.log(`library programs in the kernel skipped: ${opened.unavailable}`);
afterAll(() => loader?.close());

const tracefsEvents = '/sys/kernel/tracing/events';
const noTracefs = existsSync(join(tracefsEvents, 'header_page')) ? undefined : `no readable tracefs at ${tracefsEvents}`;
if (noTracefs) console.log(`library programs relocated for the live kernel skipped: ${noTracefs}`);

async function liveProfile(): Promise<KernelProfile> {
  const events = await libraryEvents();
  const files = ['header_page', 'header_event', ...events.map((e) => `${e}/format`)]
    .filter((p) => existsSync(join(tracefsEvents, p)))
    .map((path) => ({ path, text: readFileSync(join(tracefsEvents, path), 'utf8') }));
  return profileOfFiles(files);
}

describe.skipIf(!loader || noTracefs !== undefined)('relocated by Probeyard for this kernel, loaded by BPF_PROG_LOAD', () => {
  let profile: KernelProfile;
  beforeAll(async () => {
    profile = await liveProfile();
  });
  it.each(libraryPrograms.map((p) => [p.name] as const))('%s', async (name) => {
    const spec = await librarySpec(name);
    const verdict = checkCompat(spec, profile);
    if (verdict.status === 'unknown') {
      console.log(`${name}: this kernel lacks ${attachEvents(spec).filter((e) => !profile.events.has(e)).join(', ')}`);
      return;
    }
    const relocated = verdict.relocated!;
    for (const p of relocated.programs) {
      expect(verify(p.instructions, { maps: mapDefsOf(relocated) }).ok).toBe(true);
      // as relocated, not sanitized: the kernel's own CFG check refuses code a sanitized copy
      // leaves unreachable (that copy is for packages/vm, which does not verify it again)
      const k = await loader!.load(p.instructions, mapDefsOf(relocated));
      expect([p.name, k.ok, k.ok ? '' : k.message]).toEqual([p.name, true, '']);
    }
  });
});

/** A private bpffs for bpftool's pins, or why bpftool cannot be used here. */
function privateBpffs(): { dir: string } | { unavailable: string } {
  if (process.getuid?.() !== 0) return { unavailable: 'not root' };
  if (!existsSync('/sys/kernel/btf/vmlinux')) return { unavailable: 'the kernel has no BTF (/sys/kernel/btf/vmlinux)' };
  try {
    execFileSync('bpftool', ['version'], { stdio: 'pipe' });
  } catch (e) {
    return { unavailable: `no bpftool: ${(e as Error).message.split('\n')[0]}` };
  }
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-library-bpffs-'));
  try {
    execFileSync('mount', ['-t', 'bpf', 'bpf', dir], { stdio: 'pipe' });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return { unavailable: `cannot mount a bpffs: ${(e as Error).message.split('\n')[0]}` };
  }
  return { dir };
}
const bpffs = privateBpffs();
if ('unavailable' in bpffs) console.log(`library programs through bpftool skipped: ${bpffs.unavailable}`);
afterAll(() => {
  if (!('dir' in bpffs)) return;
  execFileSync('umount', [bpffs.dir]);
  rmSync(bpffs.dir, { recursive: true, force: true });
});

describe.skipIf(!('dir' in bpffs))('libbpf CO-RE against the kernel BTF (bpftool prog loadall)', () => {
  it.each(libraryPrograms.map((p) => [p.name] as const))('%s', async (name) => {
    const spec = await librarySpec(name);
    const missing = attachEvents(spec).filter((e) => !existsSync(join(tracefsEvents, e)));
    if (missing.length > 0) {
      console.log(`${name}: this kernel lacks ${missing.join(', ')}`);
      return;
    }
    const dir = join((bpffs as { dir: string }).dir, name);
    execFileSync('bpftool', ['prog', 'loadall', objectPath(name), dir], { stdio: 'pipe' });
    expect(readdirSync(dir).sort()).toEqual(spec.programs.map((p) => p.name).sort());
  });
});
