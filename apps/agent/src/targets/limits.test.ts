import { describe, expect, it } from 'vitest';
import { CpuBudget, FaultRate, WindowedCounter } from './limits.js';

describe('WindowedCounter', () => {
  it('measures growth over the trailing window only', () => {
    const w = new WindowedCounter(10_000);
    w.add(0, 0);
    w.add(5_000, 100);
    expect(w.growth()).toBe(100);
    w.add(12_000, 150);
    expect(w.growth()).toBe(150); // the sample at 0 is the window's start until 5,000 is old enough
    w.add(16_000, 160);
    expect(w.growth()).toBe(60); // from the sample at 5,000
  });
});

describe('CpuBudget', () => {
  const ms = 1e6;
  it('throttles a target over 5% of a core across 10 s, resumes it at half, and stops it at the third strike', () => {
    const b = new CpuBudget();
    expect(b.budgetNs).toBe(500 * ms);
    expect(b.check(0, 0)).toBe('ok');
    expect(b.check(1_000, 400 * ms)).toBe('ok');
    expect(b.check(2_000, 600 * ms)).toBe('throttle');
    expect(b.check(3_000, 600 * ms)).toBe('ok'); // throttled, still over half the budget
    expect(b.check(12_500, 600 * ms)).toBe('resume'); // 0 ns used in the last 10 s
    expect(b.check(13_000, 1_200 * ms)).toBe('throttle');
    expect(b.check(30_000, 1_200 * ms)).toBe('resume');
    expect(b.check(31_000, 1_800 * ms)).toBe('stop');
  });

  it('forgets strikes older than its strike window', () => {
    const b = new CpuBudget({ maxStrikes: 2, strikeWindowMs: 20_000 });
    b.check(0, 0);
    expect(b.check(1_000, 600 * ms)).toBe('throttle');
    expect(b.check(15_000, 600 * ms)).toBe('resume');
    expect(b.check(30_000, 1_200 * ms)).toBe('throttle'); // the first strike is 29 s old
  });
});

describe('FaultRate', () => {
  it('trips past N faults in a minute', () => {
    const f = new FaultRate(60);
    f.check(0, 0);
    expect(f.check(30_000, 60)).toBe(false);
    expect(f.check(40_000, 61)).toBe(true);
    expect(f.check(120_000, 61)).toBe(false);
  });
});
