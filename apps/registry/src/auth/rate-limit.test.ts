import { describe, expect, it } from 'vitest';
import { FailureLimiter } from './rate-limit.js';

describe('FailureLimiter', () => {
  it('refuses a key after maxFailures within the window, until the oldest failure leaves it', () => {
    let now = 1_000_000;
    const l = new FailureLimiter(3, 60_000, () => now);
    for (let i = 0; i < 3; i++) {
      expect(l.retryAfterMs('a@x|1.2.3.4')).toBe(0);
      l.fail('a@x|1.2.3.4');
      now += 1000;
    }
    // Failures at 1_000_000, 1_001_000, 1_002_000; now 1_003_000: the first leaves at 1_060_000.
    expect(l.retryAfterMs('a@x|1.2.3.4')).toBe(57_000);
    expect(l.retryAfterMs('a@x|5.6.7.8')).toBe(0);
    now = 1_060_001;
    expect(l.retryAfterMs('a@x|1.2.3.4')).toBe(0);
  });

  it('forgets a key on success', () => {
    const l = new FailureLimiter(2, 60_000, () => 0);
    l.fail('k');
    l.fail('k');
    expect(l.retryAfterMs('k')).toBeGreaterThan(0);
    l.succeed('k');
    expect(l.retryAfterMs('k')).toBe(0);
  });
});
