// The providers the library ships (issue 19): stable probes over the tracepoints its programs
// attach to, each with an implementation per way the corpus kernels lay those events out. The
// registry publishes them instance-wide; scripts use them as `proc:::exec { … }`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseProvider, type ProviderDefinition } from '@probeyard/compat';
import { providersDir } from './paths.js';

/** The library's providers, by file name under `providers/`. */
export const libraryProviderNames = ['proc', 'sched', 'io', 'syscall'] as const;

/** The JSON text of one library provider (what the registry publishes). */
export function libraryProviderText(name: (typeof libraryProviderNames)[number]): string {
  return readFileSync(join(providersDir, `${name}.json`), 'utf8');
}

/** Every library provider, parsed and checked. */
export function libraryProviders(): ProviderDefinition[] {
  return libraryProviderNames.map((n) => parseProvider(libraryProviderText(n)));
}
