import { describe, expect, it } from 'vitest';
import { addressKey, LoginLimiter } from './rate-limit.js';

describe('LoginLimiter', () => {
  it('counts attempts when they start: the sixth of one account from one address is refused until the oldest leaves the window', () => {
    let now = 1_000_000;
    const l = new LoginLimiter({ perAccountAddress: 3, perAddress: 10, perAccount: 10, windowMs: 60_000 }, () => now);
    for (let i = 0; i < 3; i++) {
      expect(l.begin('a@x', '1.2.3.4').ok).toBe(true);
      now += 1000;
    }
    // Attempts at 1_000_000, 1_001_000, 1_002_000; now 1_003_000: the first leaves at 1_060_000.
    expect(l.begin('a@x', '1.2.3.4')).toEqual({ ok: false, retryAfterMs: 57_000, limit: 'account and address' });
    expect(l.begin('a@x', '5.6.7.8').ok).toBe(true);
    now = 1_060_001;
    expect(l.begin('a@x', '1.2.3.4').ok).toBe(true);
  });

  it('limits one address across accounts, and one account across addresses', () => {
    const l = new LoginLimiter({ perAccountAddress: 100, perAddress: 4, perAccount: 6, windowMs: 60_000 }, () => 0);
    for (let i = 0; i < 4; i++) expect(l.begin(`u${i}@x`, '9.9.9.9').ok).toBe(true);
    expect(l.begin('u9@x', '9.9.9.9')).toMatchObject({ ok: false, limit: 'address' });
    for (let i = 0; i < 6; i++) expect(l.begin('victim@x', `10.0.0.${i}`).ok).toBe(true);
    expect(l.begin('victim@x', '10.0.0.99')).toMatchObject({ ok: false, limit: 'account' });
  });

  it('a success forgets only its own account’s failures: the address’s guesses at others still count', () => {
    const l = new LoginLimiter({ perAccountAddress: 3, perAddress: 5, perAccount: 100, windowMs: 60_000 }, () => 0);
    for (let i = 0; i < 3; i++) expect(l.begin('victim@x', 'ip').ok).toBe(true);
    expect(l.begin('victim@x', 'ip').ok).toBe(false);
    const own = l.begin('me@x', 'ip');
    if (!own.ok) throw new Error('own login refused');
    own.attempt.succeed();
    // Still refused for the victim: the success did not reset the pair or the address.
    expect(l.begin('victim@x', 'ip').ok).toBe(false);
    // The address has 3 attempts left on record (the success was taken back out): 2 more, then refused.
    expect(l.begin('other1@x', 'ip').ok).toBe(true);
    expect(l.begin('other2@x', 'ip').ok).toBe(true);
    expect(l.begin('other3@x', 'ip')).toMatchObject({ ok: false, limit: 'address' });
  });
});

describe('LoginLimiter.cancel', () => {
  it('takes back an attempt that never reached the hash, from every window', () => {
    const l = new LoginLimiter({ perAccountAddress: 1, perAddress: 1, perAccount: 1, windowMs: 60_000 }, () => 0);
    const r = l.begin('a@x', 'ip');
    if (!r.ok) throw new Error('refused');
    expect(l.begin('a@x', 'ip').ok).toBe(false);
    r.attempt.cancel();
    expect(l.begin('a@x', 'ip').ok).toBe(true);
  });
});

describe('addressKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::ffff', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['local', 'local'],
  ])('%s → %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it('counts every address of one IPv6 /64 together', () => {
    const l = new LoginLimiter({ perAccountAddress: 100, perAddress: 3, perAccount: 100, windowMs: 60_000 }, () => 0);
    for (let i = 1; i <= 3; i++) expect(l.begin(`u${i}@x`, `2001:db8:5:6::${i}`).ok).toBe(true);
    expect(l.begin('u9@x', '2001:db8:5:6:ffff:ffff:ffff:ffff')).toMatchObject({ ok: false, limit: 'address' });
    expect(l.begin('u9@x', '2001:db8:5:7::1').ok).toBe(true);
  });
});
