// How each map of the library is drawn: by packages/runtime's conventions (`resolveDisplayHint`,
// listed in its README: ring buffers are events, `struct hist { __u32 slots[N]; }` values are
// log2 histograms per key, integer values counts, the unit from the name's suffix, scratch and
// global data hidden), except the maps that only hold a program's bookkeeping (start timestamps by
// pid): those look like counts or tables to any convention, so the library hides them by
// metadata (programs.ts `state`), to be given to the spec (`SpecMap.display`) when published.
import type { DisplayHint, SpecMap } from '@probeyard/compat';
import { resolveDisplayHint } from '@probeyard/runtime';

/** The hint a library map is published with: hidden by metadata for state maps, else the runtime's convention. */
export function libraryDisplayHint(map: SpecMap, state: Readonly<Record<string, string>>): DisplayHint {
  if (Object.hasOwn(state, map.name)) return { kind: 'hidden', source: 'metadata' };
  return resolveDisplayHint(map);
}
