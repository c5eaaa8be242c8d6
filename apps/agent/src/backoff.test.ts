import { describe, expect, it } from 'vitest';
import { Backoff, jitter } from './backoff.js';

describe('Backoff', () => {
  it('doubles its ceiling up to the cap, waits a random share of it, and starts over after a success', () => {
    const b = new Backoff({ baseMs: 100, capMs: 1000, minMs: 0, random: () => 0.5 });
    expect([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([50, 100, 200, 400, 500, 500]);
    expect(b.attempts).toBe(6);
    b.reset();
    expect(b.next()).toBe(50);
  });

  it.each([
    [0, 10],
    [0.999999, 1000],
  ])('never waits less than its minimum or more than the ceiling (random %f)', (r, expected) => {
    const b = new Backoff({ baseMs: 1000, capMs: 1000, minMs: 10, random: () => r });
    expect(b.next()).toBe(expected === 1000 ? 999 : expected);
  });

  it('spreads a regular interval by ±20%', () => {
    expect(jitter(10_000, 0.2, () => 0)).toBe(8000);
    expect(jitter(10_000, 0.2, () => 0.5)).toBe(10_000);
    expect(jitter(10_000, 0.2, () => 0.99999)).toBe(12_000);
  });
});
