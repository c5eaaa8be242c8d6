// The shared corpus of the benches (perf-workloads, tracefs captures, the big trace.dat): not in
// the repository, it sits beside it (`../shared/corpus` of the checkout, a worktree's `../shared`
// included) or at /work/shared/corpus on the development machines. Bench-only (never imported by
// src/): types in find-corpus.d.mts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const repoRoot = join(import.meta.dirname, '..', '..');

/** Folders searched for the corpus, first found wins. */
export const corpusCandidates = [join(repoRoot, '..', 'shared', 'corpus'), '/work/shared/corpus'];

/**
 * The corpus folder, or `sub` inside it (`'trace-dat/big/big.dat'`) when given, as an absolute
 * path; undefined when it is absent (a bench says what it skips and goes on).
 */
export function findCorpus(sub) {
  for (const dir of corpusCandidates) {
    const p = sub === undefined ? dir : join(dir, sub);
    if (existsSync(p)) return p;
  }
  return undefined;
}
