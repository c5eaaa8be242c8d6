// irqtime over recordings/io.dat: the time per hard IRQ (entry → exit on the same CPU) and per
// softirq vector, and the histogram of softirq runs, as the irq records say.
import { describe, expect, it } from 'vitest';
import { recording } from './support/recordings.js';
import { entriesOf, runOverRecording } from './support/run-recording.js';
import { log2Slot, readRecords } from './support/trace-records.js';

const io = recording('io');
const softirqNames = ['HI', 'TIMER', 'NET_TX', 'NET_RX', 'BLOCK', 'IRQ_POLL', 'TASKLET', 'SCHED', 'HRTIMER', 'RCU'];

describe('irqtime over io.dat', async () => {
  const run = await runOverRecording('irqtime', io);
  const records = await readRecords(io, ['irq/irq_handler_entry', 'irq/irq_handler_exit', 'irq/softirq_entry', 'irq/softirq_exit']);
  const hard = new Map<string, bigint>();
  const soft = new Map<string, bigint>();
  const softHist = new Map<string, number[]>();
  const hardRunning = new Map<number, { ts: bigint; irq: number; name: string }>();
  const softRunning = new Map<number, { ts: bigint; vec: number }>();
  for (const r of records) {
    if (r.event === 'irq/irq_handler_entry') hardRunning.set(r.cpu, { ts: r.ts, irq: r.fields.irq as number, name: (r.fields.name as string).slice(0, 23) });
    else if (r.event === 'irq/softirq_entry') softRunning.set(r.cpu, { ts: r.ts, vec: r.fields.vec as number });
    else if (r.event === 'irq/irq_handler_exit') {
      const s = hardRunning.get(r.cpu);
      if (!s || s.irq !== r.fields.irq) continue;
      hardRunning.delete(r.cpu);
      const key = `${s.irq} ${s.name}`;
      hard.set(key, (hard.get(key) ?? 0n) + (r.ts - s.ts));
    } else {
      const s = softRunning.get(r.cpu);
      if (!s || s.vec !== r.fields.vec) continue;
      softRunning.delete(r.cpu);
      const key = `${s.vec} ${softirqNames[s.vec] ?? '?'}`;
      soft.set(key, (soft.get(key) ?? 0n) + (r.ts - s.ts));
      let slots = softHist.get(key);
      if (!slots) softHist.set(key, (slots = new Array<number>(32).fill(0)));
      slots[log2Slot((r.ts - s.ts) / 1000n)]!++;
    }
  }

  it('hardirq_time_ns: per (irq, handler name), the nanoseconds in its handler', () => {
    expect(hard.size).toBeGreaterThan(0);
    expect(new Map(entriesOf(run, 'hardirq_time_ns').map(([k, v]) => [`${(k as { irq: number }).irq} ${(k as { name: string }).name}`, v]))).toEqual(hard);
  });

  it('softirq_time_ns and softirq_duration_us: per vector, by name', () => {
    expect(soft.size).toBeGreaterThan(2);
    expect([...soft.keys()]).toContain('1 TIMER');
    const key = (k: unknown) => `${(k as { vec: number }).vec} ${(k as { name: string }).name}`;
    expect(new Map(entriesOf(run, 'softirq_time_ns').map(([k, v]) => [key(k), v]))).toEqual(soft);
    expect(new Map(entriesOf(run, 'softirq_duration_us').map(([k, v]) => [key(k), (v as { slots: number[] }).slots]))).toEqual(softHist);
    expect(Object.values(run.faults)).toEqual([0, 0, 0, 0]);
  });
});
