// Benchmarks of the text side of packages/formats:
//  - profile: parse every format of the 6.18 tarball (2323 files) into an EventFormatSet (hashes included)
//  - render: formatRecord / formatRecordRaw per record for real 6.18 formats (records built from
//    values trace-cmd printed), compiled evaluator vs the tree-walking reference, and the report's
//    compiled byte writer (compileRecordWriter) where the event has one
//  - hostile: parsePrintFmt on the robustness test's hostile print fmts (100k-deep nesting, 50k
//    arguments): each parses or is refused; the time of all five is printed (the test asserts only
//    what they give)
// Run: pnpm --filter @probeyard/formats exec tsx --conditions=@probeyard/source bench/print-fmt.ts
import { existsSync, readFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEventFormat } from '../src/event-format/event-format.js';
import { formatRecordRaw, formatRecordWith } from '../src/print-fmt/format-record.js';
import { compileRecordWriter } from '../src/print-fmt/record-writer.js';
import type { RenderEnv } from '../src/print-fmt/render-env.js';
import { TextWriter } from '../src/print-fmt/text-writer.js';
import { readEventsTarball } from '../src/profile/event-format-set.js';
import { buildRecord, type FieldInput } from '../test/support/build-record.js';
import { hostilePrintFmts } from '../test/support/hostile-inputs.js';
import { parsePrintFmt } from '../src/print-fmt/parse-print-fmt.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, '../test/fixtures/formats/linux-6.18');
const tarball = join(here, '../../../../shared/corpus/tracefs/linux-6.18/all_event_formats_linux-6.18.44.tar.gz');

const cpu = cpus()[0];
console.log(`machine: ${cpu?.model ?? 'unknown cpu'} x${cpus().length}, Linux ${release()}, node ${process.version}`);

/** µs per call: the best of several short batches (robust to a busy machine). */
function perCall(budgetMs: number, f: () => unknown): number {
  let best = Infinity;
  const t0 = performance.now();
  while (performance.now() - t0 < budgetMs) {
    const t1 = performance.now();
    for (let i = 0; i < 500; i++) f();
    best = Math.min(best, ((performance.now() - t1) * 1000) / 500);
  }
  return best;
}

if (existsSync(tarball)) {
  const bytes = readFileSync(tarball);
  let best = Infinity;
  let count = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const set = await readEventsTarball(bytes);
    best = Math.min(best, performance.now() - t0);
    count = set.formats.size;
  }
  console.log(`profile: ${count} formats of the 6.18 tarball (gunzip + tar + parse + sha256) in ${best.toFixed(0)} ms, ${((best * 1000) / count).toFixed(1)} µs/format`);
} else {
  console.log(`profile: skipped, ${tarball} is absent`);
}

const symbols: RenderEnv['lookupSymbol'] = () => ({ name: 'tick_nohz_handler', offset: 0 });
const cases: [string, Record<string, FieldInput>, RenderEnv][] = [
  ['raw_syscalls/sys_enter', { id: 262, args: [0xffffff9cn, 0x7fb1a7b7da85n, 0x7fff828169a0n, 0, 0x7fff82816d20n, 0] }, {}],
  ['raw_syscalls/sys_exit', { id: 262, ret: 0 }, {}],
  ['sched/sched_switch', { prev_comm: 'stat', prev_pid: 26555, prev_prio: 120, prev_state: 1, next_comm: 'swapper/1', next_pid: 0, next_prio: 120 }, {}],
  ['sched/sched_switch', { prev_comm: 'stat', prev_pid: 26555, prev_prio: 120, prev_state: 1, next_comm: 'swapper/1', next_pid: 0, next_prio: 120 }, { handlers: 'print-fmt' }],
  ['sched/sched_wakeup', { comm: 'xargs', pid: 26413, prio: 120, target_cpu: 0 }, {}],
  ['timer/hrtimer_start', { hrtimer: 0xffff888627d1c6f8n, function: 0xffffffff81234560n, expires: 2659948000000n, softexpires: 2659948000000n, mode: 1 }, { lookupSymbol: symbols }],
  ['block/block_rq_issue', { dev: (8 << 20) | 16, sector: 123456n, nr_sector: 8, bytes: 4096, ioprio: 0x4004, rwbs: 'WS', comm: 'kworker/0:1', cmd: '' }, {}],
];
console.log('render (µs per record):           compiled  reference  raw (-R)  byte writer');
const out = new TextWriter();
for (const [event, values, env] of cases) {
  const format = parseEventFormat(readFileSync(join(fixtures, event, 'format'), 'utf8'), { system: event.split('/')[0]! });
  const record = buildRecord(format, values);
  const compiled = perCall(600, () => formatRecordWith(format, record, env, false));
  const reference = perCall(600, () => formatRecordWith(format, record, env, true));
  const raw = perCall(600, () => formatRecordRaw(format, record, env));
  const writer = compileRecordWriter(format, env);
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const written = writer
    ? perCall(600, () => {
        writer(view, 0, record.byteLength, out);
        out.truncate(0);
      }).toFixed(2)
    : '-';
  const label = `${event}${env.handlers === 'print-fmt' ? ' (print fmt)' : ''}`;
  console.log(`  ${label.padEnd(32)} ${compiled.toFixed(2).padStart(8)}  ${reference.toFixed(2).padStart(9)}  ${raw.toFixed(2).padStart(8)}  ${written.padStart(11)}`);
}

{
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    for (const text of hostilePrintFmts) {
      try {
        parsePrintFmt(text);
      } catch {
        // refused: a FormatError (test/robustness.test.ts checks which)
      }
    }
    best = Math.min(best, performance.now() - t0);
  }
  console.log(`hostile print fmts: all ${hostilePrintFmts.length} (up to 100k deep or long) parsed or refused in ${best.toFixed(0)} ms (best of 3)`);
}
