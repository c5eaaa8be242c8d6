// How each map of the library is drawn: by packages/runtime's conventions (`resolveDisplayHint`,
// listed in its README: ring buffers are events, `struct hist { __u32 slots[N]; }` values are
// log2 histograms per key, integer values counts, the unit from the name's suffix, scratch and
// global data hidden), except the maps that only hold a program's bookkeeping (start timestamps by
// pid): those look like counts or tables to any convention, so the C source hides them itself
// with `PROBEYARD_DISPLAY("hidden")` (a BTF declaration tag that packages/compat reads into
// `SpecMap.display`, source `metadata`); programs.ts `state` says what each holds.
import type { DisplayHint, SpecMap } from '@probeyard/compat';
import { resolveDisplayHint } from '@probeyard/runtime';

/**
 * The hint a library map is drawn with: the object's own (the state maps' `hidden` tag), else the
 * runtime's convention. A state map without its tag is a mistake of the source: refused here.
 */
export function libraryDisplayHint(map: SpecMap, state: Readonly<Record<string, string>>): DisplayHint {
  if (Object.hasOwn(state, map.name) && map.display?.kind !== 'hidden') {
    throw new Error(`library map ${map.name}: holds the program's bookkeeping but has no PROBEYARD_DISPLAY("hidden") tag`);
  }
  return resolveDisplayHint(map);
}
