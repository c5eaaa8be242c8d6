import { describe, expect, it } from 'vitest';
import { RegistryError } from '../errors.js';
import { PasswordGate } from './password-gate.js';

describe('PasswordGate', () => {
  it('runs at most `concurrency` at a time, queues up to `maxQueued`, refuses the rest with rate_limited', async () => {
    const gate = new PasswordGate(2, 3);
    let running = 0;
    let peak = 0;
    const releases: (() => void)[] = [];
    const job = () =>
      gate.run('login', async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((r) => releases.push(r));
        running--;
      });
    const results = Array.from({ length: 8 }, () => job().then(() => 'done', (e: unknown) => (e instanceof RegistryError ? e.code : 'other')));
    await new Promise((r) => setTimeout(r, 10));
    expect(releases.length).toBe(2);
    while (releases.length > 0) {
      releases.shift()?.();
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await Promise.all(results)).toEqual(['done', 'done', 'done', 'done', 'done', 'rate_limited', 'rate_limited', 'rate_limited']);
    expect(peak).toBe(2);
    expect(gate.started).toBe(5);
  });
});
