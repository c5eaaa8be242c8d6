// Writes test/report-known-differences.tsv: every line where `probeyard report` differs from the
// stored `trace-cmd report` output of the corpus, with the prev_state value that proves why.
// Run: pnpm --filter @probeyard/formats exec tsx --conditions=@probeyard/source test/tools/write-known-differences.ts
import { writeFileSync } from 'node:fs';
import { compareCase, knownDifferencesPath, rawLinesFor, rawPrevState, reportCases, switchState } from '../helpers/report-corpus.js';

const rows: string[] = [];
for (const c of reportCases) {
  const { expected, differences } = compareCase(c);
  if (differences.length === 0) continue;
  const raw = c.raw ? undefined : rawLinesFor(c, expected.length);
  for (const d of differences) {
    const prevState = raw ? rawPrevState(raw[d.line - 1] ?? '') : undefined;
    const tc = switchState(d.traceCmd);
    const py = switchState(d.probeyard);
    if (prevState === undefined || tc === undefined || py === undefined) {
      throw new Error(`${c.expected}:${d.line}: a difference that is not a sched_switch state:\n  trace-cmd ${d.traceCmd}\n  probeyard ${d.probeyard}`);
    }
    rows.push([c.expected, d.line, tc, py, prevState].join('\t'));
  }
}
const header = [
  '# Lines where `probeyard report` differs from the stored `trace-cmd report` (3.1.6) output of',
  '# /work/shared/corpus/trace-dat, each a trace-cmd bug: its sched_switch handler maps prev_state',
  '# with a fixed table (bits 0..7 = S D T t Z X x W, R when none) where the 6.18 kernel\'s own print',
  '# fmt (in each trace.dat) says 0x10 = X, 0x20 = Z, 0x80 = I, and adds + for 0x100 (preempted).',
  '# Evidence per line: prev_state as trace-cmd itself prints it with -R (same line of the',
  '# *.report_raw.txt; for big.dat, probeyard -R, which matches trace-cmd -R on every stored file).',
  '# The test recomputes both letters from that value and fails when a listed line stops differing.',
  '# Written by test/tools/write-known-differences.ts.',
  '# expected-file\tline\ttrace-cmd\tprobeyard\tprev_state',
];
writeFileSync(knownDifferencesPath, `${[...header, ...rows].join('\n')}\n`);
console.log(`${rows.length} known differences written to ${knownDifferencesPath}`);
