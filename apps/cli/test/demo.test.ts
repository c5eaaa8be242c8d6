// `probeyard demo` (the registry-free tour of the README) ends by running the example over the bundled recording:
// its counts must equal what trace-cmd itself printed for the same records (`report -R` text,
// an independent decoder), and untyped map keys and values print as integers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../src/main.js';
import { bufferIo } from './support/buffer-io.js';

const root = join(import.meta.dirname, '../../..');

function traceCmdCounts(): Map<number, number> {
  const raw = readFileSync(join(root, 'packages/formats/test/fixtures/trace-dat/small_v6.report_raw.txt'), 'utf8');
  const counts = new Map<number, number>();
  for (const line of raw.split('\n')) {
    if (!line.includes('sched_switch:')) continue;
    const pid = Number(/next_pid=(\d+)/.exec(line)?.[1]);
    counts.set(pid, (counts.get(pid) ?? 0) + 1);
  }
  return counts;
}

describe('probeyard demo', () => {
  it('counts sched_switch per next_pid over the bundled recording exactly as trace-cmd reports them', async () => {
    const io = bufferIo({ disk: true });
    expect(await run(['demo', '--examples', join(root, 'examples')], io)).toBe(0);
    const printed = new Map<number, number>();
    for (const m of io.out.matchAll(/^@counts\[(\d+)\]: (\d+)$/gm)) printed.set(Number(m[1]), Number(m[2]));
    const expected = traceCmdCounts();
    expect(expected.size).toBeGreaterThan(10);
    expect(printed).toEqual(expected);
    expect(io.err).toMatch(/relocated for this feed's kernel \(count_switch: next_pid: offset 0 → 56\); 869 records/);
  });
});
