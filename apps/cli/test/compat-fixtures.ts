// Test helpers for the compat commands: the fixture kernels and objects of packages/compat, the
// example objects of examples/c, and records laid out by a format.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type KernelProfile, type ProgramSpec, readProgramSpec } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import type { EventFormat } from '@probeyard/formats';

export const repoRoot = join(import.meta.dirname, '..', '..', '..');
export const compatFixtures = join(repoRoot, 'packages', 'compat', 'test', 'fixtures');
export const examplesDir = join(repoRoot, 'examples', 'c');

export type FixtureKernel = 'linux-6.18' | 'android-3.10.49' | 'android-3.4.0';
export const kernelDir = (k: FixtureKernel) => join(compatFixtures, 'formats', k);

const cache = new Map<string, Promise<KernelProfile>>();
export function fixtureProfile(k: FixtureKernel): Promise<KernelProfile> {
  let p = cache.get(k);
  // packages/compat's fixture folders hold a few events of each kernel: partial profiles
  if (!p) cache.set(k, (p = readProfile(kernelDir(k), { release: k.replace(/^android-/, ''), complete: false })));
  return p;
}

export const exampleSpec = (name: string): Promise<ProgramSpec> => readProgramSpec(new Uint8Array(readFileSync(join(examplesDir, `${name}.o`))));
export const objectSpec = (name: string): Promise<ProgramSpec> => readProgramSpec(new Uint8Array(readFileSync(join(compatFixtures, 'objects', name))));

/** A record of `format` with fields set from `values` (numbers, or strings for char arrays). */
export function recordOf(format: EventFormat, values: Record<string, number | bigint | string>): Uint8Array {
  const bytes = new Uint8Array(format.fixedSize);
  const view = new DataView(bytes.buffer);
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
