// Prints every PREVAIL case where our verdict differs, with our reason and the expected messages:
//   pnpm --filter @probeyard/verifier exec tsx test/prevail/report.ts [--all] [--slow]
import { loadCases, runCase } from './harness.js';

const all = process.argv.includes('--all');
let agree = 0;
const cases = loadCases();
for (const c of cases) {
  const got = runCase(c);
  const want = c.expectReject ? 'reject' : 'accept';
  const ok = got.verdict === want;
  if (ok) agree++;
  if (!ok || all || (process.argv.includes('--slow') && got.ms > 200)) {
    const msgs = ((c.doc.messages as string[] | undefined) ?? []).join(' | ');
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${c.key} (${got.ms.toFixed(0)} ms): want ${want} [${msgs}] got ${got.verdict} [${got.detail}]`);
  }
}
console.log(`${agree}/${cases.length} agree (${((agree / cases.length) * 100).toFixed(1)}%)`);
