// A regression suite: every case of the PREVAIL verifier's YAML suite (shared/corpus/prevail) for its verdict:
// a case with `messages` must be rejected (PREVAIL also reports branches that can never be taken,
// as "Code becomes unreachable"), any other case accepted. Disagreements must be exactly the
// checked-in known failures: a listed case that starts agreeing fails the run too.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corpus, loadCases, runCase } from './prevail/harness.js';

const knownFile = join(import.meta.dirname, 'prevail-known-failures.txt');
const present = existsSync(corpus);
if (!present) console.log(`prevail: skipped: corpus not found at ${corpus}`);

describe.skipIf(!present)('PREVAIL YAML suite (verdicts)', () => {
  it('agrees on every case except the known failures', () => {
    const cases = loadCases();
    const known = new Map<string, string>();
    for (const line of readFileSync(knownFile, 'utf8').split('\n')) {
      const m = /^(.+?) -- (.+)$/.exec(line.trim());
      if (m && !line.startsWith('#')) known.set(m[1]!, m[2]!);
    }
    const disagree = new Set<string>();
    for (const c of cases) {
      const got = runCase(c);
      if (got.verdict !== (c.expectReject ? 'reject' : 'accept')) disagree.add(c.key);
    }
    const agreement = ((cases.length - disagree.size) / cases.length) * 100;
    console.log(`prevail: ${cases.length} cases, ${cases.length - disagree.size} agree (${agreement.toFixed(1)}%)`);
    const unexpected = [...disagree].filter((k) => !known.has(k));
    const nowPassing = [...known.keys()].filter((k) => !disagree.has(k));
    expect(unexpected, 'cases that disagree and are not in prevail-known-failures.txt').toEqual([]);
    expect(nowPassing, 'known failures that now agree: remove them from the list').toEqual([]);
    // A regression suite, not a target: where Linux and PREVAIL differ, Linux is the reference
    // (the former 95% target is retired). This floor is where the verifier stands, 702/797 =
    // 88.08% rounded down (a ratchet: raise it). The rest are Linux rules or harness limits, each
    // with its reason in the list.
    expect(agreement).toBeGreaterThanOrEqual(88.0);
  });
});
