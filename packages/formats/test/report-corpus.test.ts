// `probeyard report` against the stored `trace-cmd report` output of every corpus trace.dat, line
// for line. The only accepted differences are listed in report-known-differences.tsv, each a
// proven trace-cmd bug (its fixed prev_state table); a listed line that stops differing fails too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTraceDatFile } from '../src/node/trace-dat-file.js';
import {
  compareCase,
  corpusDir,
  corpusPresent,
  kernelStateLetters,
  readKnownDifferences,
  reportCases,
  traceCmdStateLetters,
} from './helpers/report-corpus.js';

if (!corpusPresent) console.log(`report corpus tests skipped: ${corpusDir} is absent`);

const known = corpusPresent ? readKnownDifferences() : [];

describe.runIf(corpusPresent)('probeyard report vs trace-cmd report (corpus)', () => {
  it.each(reportCases.map((c) => [`${c.expected}${c.raw ? ' (-R)' : ''}`, c] as const))(
    '%s: equal line for line except the listed trace-cmd bugs',
    (_name, c) => {
      const { actual, expected, differences } = compareCase(c);
      expect(actual.length).toBe(expected.length);
      const listed = known.filter((k) => k.expected === c.expected);
      // Every difference is listed with the exact letters, and every listed one still differs.
      const seen = differences.map((d) => `${d.line}`);
      expect(seen).toEqual(listed.map((k) => `${k.line}`));
      for (const k of listed) {
        const d = differences.find((x) => x.line === k.line)!;
        expect(d.traceCmd.replace(`] ${k.traceCmd} ==> `, `] ${k.probeyard} ==> `)).toBe(d.probeyard);
      }
      if (c.raw) expect(differences).toEqual([]);
    },
    180_000,
  );

  it('proves each listed difference from the prev_state value and the kernel print fmt', () => {
    const rawOf = new Map<string, string[]>();
    const formatOf = new Map<string, string>();
    for (const k of known) {
      const rawFile = k.expected.replace('.report.txt', '.report_raw.txt');
      if (!k.expected.startsWith('big/')) {
        // trace-cmd's own -R line gives the value.
        if (!rawOf.has(rawFile)) rawOf.set(rawFile, readFileSync(join(corpusDir, rawFile), 'utf8').split('\n'));
        expect(rawOf.get(rawFile)![k.line - 1]).toContain(` prev_state=${k.prevState} `);
      }
      const dat = k.expected.startsWith('big/') ? 'big/big.dat' : k.expected.replace('.report.txt', '.dat');
      if (!formatOf.has(dat)) {
        const file = openTraceDatFile(join(corpusDir, dat));
        formatOf.set(dat, file.reader.formats.find('sched', 'sched_switch')!.printFmtText);
        file.close();
      }
      expect(kernelStateLetters(`print fmt: ${formatOf.get(dat)!}`, k.prevState)).toBe(k.probeyard);
      expect(traceCmdStateLetters(k.prevState)).toBe(k.traceCmd);
      expect(k.probeyard).not.toBe(k.traceCmd);
    }
    expect(known.length).toBeGreaterThan(0);
  });
});
