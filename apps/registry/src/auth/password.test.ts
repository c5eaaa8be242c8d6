import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from './password.js';

describe('scrypt passwords', () => {
  it('hashes with a fresh salt and the stated cost, and verifies', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery staple', a)).toBe(true);
  });

  it.each([
    ['a wrong password', 'correct horse battery stapler', true],
    ['no stored hash (unknown user)', 'correct horse battery staple', false],
  ])('refuses %s', async (_, attempt, withHash) => {
    const stored = withHash ? await hashPassword('correct horse battery staple') : null;
    expect(await verifyPassword(attempt, stored)).toBe(false);
  });

  it('refuses a malformed stored hash', async () => {
    expect(await verifyPassword('x', 'md5$abc')).toBe(false);
  });
});
