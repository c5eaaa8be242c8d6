// The verdict table of README.md: its rows, columns and cell text (shared by the corpus test and
// print-verdict-table.ts, which prints the table to paste into the README).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Verdict } from '../src/verdict.js';

const corpus = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus');
export const androidDir = join(corpus, 'kernel-formats');
export const linuxTarball = join(corpus, 'tracefs', 'linux-6.18', 'all_event_formats_linux-6.18.44.tar.gz');

export const examples = ['syscount', 'execsnoop', 'runqlat', 'biolatency', 'switchcomm', 'forkcomm'];

/** Corpus kernels as the README names them (column headers), with their profile source. */
export function corpusKernels(): { column: string; path: string; release: string }[] {
  const out = readdirSync(androidDir)
    .filter((d) => d.startsWith('android_'))
    .map((d) => {
      const release = /_(\d+\.\d+\.\d+)$/.exec(d)?.[1] ?? '';
      return { column: `android ${release}`, path: join(androidDir, d), release };
    })
    .sort((a, b) => a.release.localeCompare(b.release, 'en', { numeric: true }));
  out.push({ column: 'linux 6.18.44 (here)', path: linuxTarball, release: '6.18.44' });
  return out;
}

/** One table cell: the status, and for anything but compatible the kinds of reasons or changes. */
export function cell(v: Verdict): string {
  if (v.status === 'incompatible' || v.status === 'unknown') return `${v.status}: ${[...new Set(v.reasons.map((r) => `${r.kind}${r.field ? ` ${r.field}` : ''}`))].join(', ')}`;
  if (v.status === 'relocated') {
    const notes = v.programs.flatMap((p) => [...p.changes.map((c) => c.split(':')[0]), ...p.absentFields.map((f) => `no ${f}`)]);
    return `relocated: ${[...new Set(notes)].join(', ')}`;
  }
  return v.status;
}

