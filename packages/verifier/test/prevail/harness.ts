// Loading and running the PREVAIL YAML cases (shared by the test and `report.ts`).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { encodeInsns, isVerifierError, verify } from '../../src/index.js';
import { checkObservations, readObservations } from './observe.js';
import { assemblePrevail, parsePreVariants } from './parse.js';

export const corpus = join(import.meta.dirname, '../../../../../shared/corpus/prevail');

export interface Case {
  file: string;
  /** `file: test-case`, with `#n` appended when a file repeats a name. */
  key: string;
  expectReject: boolean;
  doc: Record<string, unknown>;
}

export function loadCases(): Case[] {
  const cases: Case[] = [];
  for (const file of readdirSync(corpus).filter((f) => f.endsWith('.yaml') && f !== 'test-schema.yaml').sort()) {
    const seen = new Map<string, number>();
    for (const d of parseAllDocuments(readFileSync(join(corpus, file), 'utf8'))) {
      const doc = d.toJS() as Record<string, unknown> | null;
      if (!doc || typeof doc['test-case'] !== 'string' || 'expected-exception' in doc) continue;
      const name = doc['test-case'];
      const n = (seen.get(name) ?? 0) + 1;
      seen.set(name, n);
      const messages = doc.messages as unknown[] | undefined;
      cases.push({
        file,
        key: `${file}: ${name}${n > 1 ? ` #${n}` : ''}`,
        expectReject: (messages?.length ?? 0) > 0,
        doc,
      });
    }
  }
  return cases;
}

export interface Outcome {
  verdict: 'accept' | 'reject' | 'error';
  /** Our reason: the diagnostic, the branch never taken, or the harness error. */
  detail: string;
  ms: number;
}

/** Runs one case through the verifier with PREVAIL's test platform as far as it maps. */
export function runCase(c: Case): Outcome {
  const t0 = performance.now();
  const done = (verdict: Outcome['verdict'], detail: string): Outcome => ({ verdict, detail, ms: performance.now() - t0 });
  try {
    const options = (c.doc.options as string[] | undefined) ?? [];
    const prog = assemblePrevail(c.doc.code as Record<string, unknown>);
    const bytes = encodeInsns(prog.insns);
    const observations = readObservations(c.doc.observe);
    let last: Outcome | null = null;
    for (const pre of parsePreVariants((c.doc.pre as string[] | undefined) ?? [])) {
    const result = verify(bytes, {
      maps: pre.maps,
      // PREVAIL's test context: 64 bytes, data and data_end pointer slots at 0 and 4 (no meta)
      // PREVAIL allows the legacy socket-filter loads (skb[...]) on it
      context: { kind: 'raw', size: 64, writable: true, packet: { data: 0, dataEnd: 4 }, legacyPacketLoads: true },
      allowUninitStack: false,
      rejectDivisionByZero: options.includes('!allow_division_by_zero'),
      initialRegs: pre.regs,
      initialStackBytes: pre.stackBytes,
      stopAt: prog.stopAt,
      timeLimitMs: 20_000,
      // PREVAIL bounds loops at 100,000 iterations; this keeps its non-terminating cases fast
      insnLimit: 200_000,
      // the states, for the `observe` checks
      logLevel: observations.length > 0 ? 2 : 0,
    });
    if (!result.ok) {
      const d = result.diagnostics[0]!;
      return done('reject', `${d.insnIndex}: ${d.message}`);
    }
    for (const check of prog.checks) {
      const cov = result.coverage[check.index]!;
      if (cov & 1 && (cov & check.edges) !== check.edges) return done('reject', `${check.index}: a branch is never taken`);
    }
    // PREVAIL's observation checks, against the verifier's states at the label
    const observed = checkObservations(observations, result, prog, pre);
    if (observed.failed) return done('reject', observed.failed);
    const unchecked = observed.unchecked;
    const ignored = [...pre.unsupported.map((u) => `pre ${u}`), ...unchecked.map((u) => `observe ${u}`)];
    if (ignored.length > 0) last = done('accept', `ignored: ${ignored.join(', ')}`);
    }
    return last ?? done('accept', '');
  } catch (e) {
    if (isVerifierError(e) || e instanceof Error) return done('error', e.message);
    throw e;
  }
}
