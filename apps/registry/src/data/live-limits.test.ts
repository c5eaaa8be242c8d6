import { describe, expect, it } from 'vitest';
import { defaultLiveCeilings, envLiveCeilings } from './live-limits.js';

describe('envLiveCeilings', () => {
  it('takes each ceiling from its variable, the default for one unset or empty', () => {
    expect(envLiveCeilings({})).toEqual(defaultLiveCeilings);
    expect(envLiveCeilings({ PROBEYARD_LIVE_MAX_SESSIONS_CEILING: '32', PROBEYARD_LIVE_DURATION_CEILING_SECONDS: '', PROBEYARD_LIVE_CPU_CEILING_PERCENT: '100' })).toEqual({
      maxSessions: 32,
      maxDurationSeconds: 3600,
      cpuBudgetPercent: 100,
    });
  });

  it.each([
    ['PROBEYARD_LIVE_MAX_SESSIONS_CEILING', '0', 'PROBEYARD_LIVE_MAX_SESSIONS_CEILING: a whole number from 1 to 1000, not 0'],
    ['PROBEYARD_LIVE_DURATION_CEILING_SECONDS', '1.5', 'PROBEYARD_LIVE_DURATION_CEILING_SECONDS: a whole number from 1 to 86400, not 1.5'],
    ['PROBEYARD_LIVE_DURATION_CEILING_SECONDS', 'an hour', 'PROBEYARD_LIVE_DURATION_CEILING_SECONDS: a whole number from 1 to 86400, not an hour'],
    ['PROBEYARD_LIVE_CPU_CEILING_PERCENT', '101', 'PROBEYARD_LIVE_CPU_CEILING_PERCENT: a whole number from 1 to 100, not 101'],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => envLiveCeilings({ [name]: value })).toThrow(message);
  });
});
