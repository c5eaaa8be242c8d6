// Shared by the corpus report test and the tool that writes its known-differences list: renders
// the corpus trace.dat files with probeyard's report and lines them up with trace-cmd's output.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventFormat } from '../../src/event-format/event-format.js';
import { openTraceDatFile } from '../../src/node/trace-dat-file.js';
import { formatRecord, formatRecordRaw } from '../../src/print-fmt/format-record.js';
import { compileRecordWriter } from '../../src/print-fmt/record-writer.js';
import { reportChunks } from '../../src/trace-dat/report.js';

const here = dirname(fileURLToPath(import.meta.url));
export const corpusDir = join(here, '../../../../../shared/corpus/trace-dat');
export const corpusPresent = existsSync(join(corpusDir, 'trace.dat'));
export const knownDifferencesPath = join(here, '../report-known-differences.tsv');

/** One compared output: a trace.dat, a mode, and the stored trace-cmd output it must match. */
export interface ReportCase {
  dat: string;
  raw: boolean;
  expected: string;
  /** Only a window of the output is stored (big.dat): 'head' = first lines, 'tail' = last lines. */
  window?: 'head' | 'tail';
}

export const reportCases: ReportCase[] = [
  ...['trace', 'trace_v6', 'trace_v7_nocompress'].flatMap((n) => [
    { dat: `${n}.dat`, raw: false, expected: `${n}.report.txt` },
    { dat: `${n}.dat`, raw: true, expected: `${n}.report_raw.txt` },
  ]),
  { dat: 'big/big.dat', raw: false, expected: 'big/big.report.head2000.txt', window: 'head' },
  { dat: 'big/big.dat', raw: false, expected: 'big/big.report.tail2000.txt', window: 'tail' },
];

function render(dat: string, raw: boolean, window: 'head' | 'tail' | undefined, lines: number): string[] {
  const file = openTraceDatFile(join(corpusDir, dat));
  try {
    let startRecord = 0;
    if (window === 'tail') {
      let count = 0;
      const it = file.reader.records();
      while (it.next()) count++;
      startRecord = count - lines;
    }
    const out: string[] = [];
    let rest = '';
    for (const chunk of reportChunks<EventFormat>(file.reader, { formatRecord, formatRecordRaw, compileWriter: compileRecordWriter, raw, startRecord })) {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      out.push(...parts);
      if (window === 'head' && out.length >= lines) break;
    }
    if (rest !== '') out.push(rest);
    return window === 'head' ? out.slice(0, lines) : out;
  } finally {
    file.close();
  }
}

/** A line where probeyard's output and trace-cmd's differ. */
export interface LineDifference {
  expected: string;
  line: number;
  traceCmd: string;
  probeyard: string;
}

/** Renders a case and returns its lines, trace-cmd's lines, and where they differ. */
export function compareCase(c: ReportCase): { actual: string[]; expected: string[]; differences: LineDifference[] } {
  const expected = readFileSync(join(corpusDir, c.expected), 'utf8').replace(/\n$/, '').split('\n');
  const actual = render(c.dat, c.raw, c.window, expected.length);
  const differences: LineDifference[] = [];
  const n = Math.max(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    if (actual[i] !== expected[i]) differences.push({ expected: c.expected, line: i + 1, traceCmd: expected[i] ?? '<none>', probeyard: actual[i] ?? '<none>' });
  }
  return { actual, expected, differences };
}

/** The raw lines (`-R`) of probeyard for the same records as a case (evidence for big.dat). */
export function rawLinesFor(c: ReportCase, lines: number): string[] {
  return render(c.dat, true, c.window, lines);
}

/** sched_switch's state column: `... [prio] <state> ==> ...`. */
export function switchState(line: string): string | undefined {
  return /: sched_switch: +.*?\[-?\d+\] (\S+) ==> /.exec(line)?.[1];
}

export function rawPrevState(line: string): number | undefined {
  const m = /: sched_switch: .* prev_state=(\d+) /.exec(line);
  return m ? Number(m[1]) : undefined;
}

/**
 * The letters the kernel's own sched_switch print fmt gives for a prev_state value, computed from
 * the `__print_flags` table and the `+` rule in the format text (independent of the renderer).
 */
export function kernelStateLetters(formatText: string, prevState: number): string {
  const fmt = /print fmt: (.*)$/m.exec(formatText)![1]!;
  const table = [...fmt.matchAll(/\{ *0x([0-9a-f]+), *"(\w)" *\}/g)].map((m) => ({ bit: parseInt(m[1]!, 16), letter: m[2]! }));
  const maxBit = Math.max(...table.map((t) => t.bit)); // TASK_REPORT_MAX is the next bit
  const reportMax = maxBit << 1;
  const masked = prevState & (reportMax - 1);
  const letters = masked === 0 ? 'R' : table.filter((t) => (masked & t.bit) !== 0).map((t) => t.letter).join('|');
  return letters + ((prevState & reportMax) !== 0 ? '+' : '');
}

/** trace-cmd 3.1.6's fixed table (its sched_switch handler): bits 0..7 = S D T t Z X x W, else R. */
export function traceCmdStateLetters(prevState: number): string {
  const table = 'SDTtZXxW';
  let out = '';
  for (let bit = 0; bit < table.length; bit++) if ((prevState & (1 << bit)) !== 0) out += table[bit];
  return out === '' ? 'R' : out;
}

export interface KnownDifference {
  expected: string;
  line: number;
  traceCmd: string;
  probeyard: string;
  prevState: number;
}

export function readKnownDifferences(): KnownDifference[] {
  return readFileSync(knownDifferencesPath, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [expected, line, traceCmd, probeyard, prevState] = l.split('\t');
      return { expected: expected!, line: Number(line), traceCmd: traceCmd!, probeyard: probeyard!, prevState: Number(prevState) };
    });
}
