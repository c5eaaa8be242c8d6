// Helpers for tests: the fixture profiles (test/fixtures/formats) and the example objects.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEventFormat, type EventFormat } from '@probeyard/formats';
import type { KernelProfile } from '../src/kernel-profile.js';
import { readProfileTree } from '../src/node/read-profile.js';
import { type ProgramSpec, type ReadProgramOptions, readProgramSpec } from '../src/program-spec.js';

const here = dirname(fileURLToPath(import.meta.url));
export const fixturesDir = join(here, 'fixtures');
export const examplesDir = join(here, '..', '..', '..', 'examples', 'c');

export type FixtureKernel = 'linux-6.18' | 'android-3.10.49' | 'android-3.4.0';

const profiles = new Map<string, Promise<KernelProfile>>();
/** A fixture kernel's profile (cached). */
export function fixtureProfile(kernel: FixtureKernel): Promise<KernelProfile> {
  let p = profiles.get(kernel);
  if (!p) {
    // subsets of their kernels' events (test/fixtures/README.md): partial profiles
    p = readProfileTree(join(fixturesDir, 'formats', kernel), { release: kernel.replace(/^android-/, ''), complete: false });
    profiles.set(kernel, p);
  }
  return p;
}

/** One fixture format file, parsed. */
export function fixtureFormat(kernel: FixtureKernel, event: string): EventFormat {
  const [system] = event.split('/') as [string];
  return parseEventFormat(readFileSync(join(fixturesDir, 'formats', kernel, event, 'format'), 'utf8'), { system });
}

/** An example program of examples/c as a spec. */
export function exampleSpec(name: string, options: ReadProgramOptions = {}): Promise<ProgramSpec> {
  return readProgramSpec(new Uint8Array(readFileSync(join(examplesDir, `${name}.o`))), options);
}

/** The bytes of a record of `format`, each field set from `values` (numbers, or strings for char arrays). */
export function recordOf(format: EventFormat, values: Record<string, number | bigint | string>, extra: Uint8Array = new Uint8Array(0)): Uint8Array {
  const bytes = new Uint8Array(format.fixedSize + extra.length);
  const view = new DataView(bytes.buffer);
  bytes.set(extra, format.fixedSize);
  view.setUint16(0, format.id, true);
  for (const f of [...format.commonFields, ...format.fields]) {
    const v = values[f.name];
    if (v === undefined) continue;
    if (typeof v === 'string') {
      bytes.set(new TextEncoder().encode(v).subarray(0, f.size - 1), f.byteOffset);
      continue;
    }
    const big = BigInt(v);
    if (f.size === 8) view.setBigUint64(f.byteOffset, BigInt.asUintN(64, big), true);
    else if (f.size === 4) view.setUint32(f.byteOffset, Number(BigInt.asUintN(32, big)), true);
    else if (f.size === 2) view.setUint16(f.byteOffset, Number(BigInt.asUintN(16, big)), true);
    else if (f.size === 1) view.setUint8(f.byteOffset, Number(BigInt.asUintN(8, big)));
  }
  return bytes;
}
