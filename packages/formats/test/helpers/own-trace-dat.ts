// The input of the zlib fixture Probeyard writes itself: three real ring-buffer pages of a
// Linux 6.18 machine (one per CPU), their event formats and header files.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TraceDatEncodeInput } from '../../src/trace-dat/encode-trace-dat.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const ring = join(fixtures, 'ring-buffer');
export const ownZlibFixturePath = join(fixtures, 'trace-dat', 'own_v7_zlib.dat');
/** The pages, CPU by CPU. */
export const ownFixturePages = ['cpu0_page0.raw', 'time_extend_page.raw', 'missed_page.raw'];

export function ownFixtureInput(compression: 'none' | 'zlib'): TraceDatEncodeInput {
  const events = ['sched_process_exec', 'sched_process_exit', 'sched_process_fork', 'sched_switch', 'sched_wakeup'];
  return {
    compression,
    headerPage: readFileSync(join(ring, 'header_page'), 'utf8'),
    headerEvent: readFileSync(join(ring, 'header_event'), 'utf8'),
    eventFormats: events.map((e) => ({ system: 'sched', text: readFileSync(join(ring, 'events', `${e}.format`), 'utf8') })),
    cmdlines: '1 systemd\n',
    cpus: ownFixturePages.map((p) => new Uint8Array(readFileSync(join(ring, p)))),
  };
}

/** A TIME_SHIFT option (trace-cmd's layout): per CPU, samples of [time, offset, scaling, fraction]. */
export function timeShiftOption(flags: number, cpus: [bigint, bigint, bigint, bigint][][]): { id: number; data: Uint8Array } {
  const words: [bigint, 'u32' | 'u64'][] = [[0x1234n, 'u64'], [BigInt(flags), 'u32'], [BigInt(cpus.length), 'u32']];
  for (const samples of cpus) {
    words.push([BigInt(samples.length), 'u32']);
    for (const k of [0, 1, 2]) for (const s of samples) words.push([s[k]!, 'u64']);
  }
  for (const samples of cpus) for (const s of samples) words.push([s[3], 'u64']);
  const data = new Uint8Array(words.reduce((a, [, t]) => a + (t === 'u32' ? 4 : 8), 0));
  const v = new DataView(data.buffer);
  let at = 0;
  for (const [w, t] of words) {
    if (t === 'u32') v.setUint32(at, Number(w), true);
    else v.setBigUint64(at, BigInt.asUintN(64, w), true);
    at += t === 'u32' ? 4 : 8;
  }
  return { id: 12, data };
}

/** Time shifts the test checks against trace-cmd: interpolated, stepped, one sample, scaled. */
export const timeShiftCases: { name: string; option: { id: number; data: Uint8Array } }[] = [
  {
    name: 'interpolated, three samples on cpu 0, one on cpu 1, two scaled on cpu 2',
    option: timeShiftOption(1, [
      [[278_200_000_000n, 1_000_000n, 1n, 0n], [278_240_000_000n, 5_000_000n, 1n, 0n], [278_270_000_000n, -2_000_000n, 1n, 0n]],
      [[0n, -500_000n, 1n, 0n]],
      [[318_700_000_000n, 100n, 3n, 1n], [318_750_000_000n, 900_100n, 3n, 1n]],
    ]),
  },
  {
    name: 'stepped (no interpolation), samples out of order',
    option: timeShiftOption(0, [
      [[278_270_000_000n, -2_000_000n, 1n, 0n], [278_200_000_000n, 1_000_000n, 1n, 0n], [278_240_000_000n, 5_000_000n, 1n, 0n], [278_250_000_000n, 7_000n, 1n, 0n]],
      [[841_000_000_000n, 10n, 1n, 0n], [843_000_000_000n, 20n, 1n, 0n]],
    ]),
  },
];
