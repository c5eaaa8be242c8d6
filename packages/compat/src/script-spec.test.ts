import { describe, expect, it } from 'vitest';
import { fixtureProfile } from '../test/fixtures.js';
import { readProgramSpec } from './program-spec.js';
import { runtimeProbeOf, runtimeProbeSection } from './script-spec.js';
import { checkCompat } from './verdict.js';

const asm = (text: string) => readProgramSpec(new TextEncoder().encode(text));

describe('runtime probes', () => {
  it.each([
    ['BEGIN', { kind: 'begin' }],
    ['END', { kind: 'end' }],
    ['interval/1000000000', { kind: 'interval', periodNs: 1_000_000_000 }],
    ['interval/0', undefined],
    ['interval/01', undefined],
    ['interval/1e9', undefined],
    ['begin', undefined],
    ['kprobe/do_sys_open', undefined],
  ])('section %s is %j', (section, probe) => {
    expect(runtimeProbeOf({ kind: 'other', section })).toEqual(probe);
    if (probe !== undefined) expect(runtimeProbeSection(probe as Parameters<typeof runtimeProbeSection>[0])).toBe(section);
  });

  it('a tracepoint attach point is never a runtime probe', () => {
    expect(runtimeProbeOf({ kind: 'tracepoint', system: 'sched', event: 'BEGIN' })).toBeUndefined();
  });

  it('checkCompat: runtime probes run on every kernel the verifier accepts them for', async () => {
    const spec = await asm(`.section BEGIN\nbegin:\n  r0 = 0\n  exit\n.section interval/500000000\ntick:\n  r0 = 0\n  exit\n.section tracepoint/sched/sched_switch\nsw:\n  r0 = *(u32 *)(r1 + sched_switch.next_pid)\n  exit\n`);
    for (const kernel of ['linux-6.18', 'android-3.4.0'] as const) {
      const v = checkCompat(spec, await fixtureProfile(kernel));
      expect(v.programs.map((p) => [p.program, p.status])).toEqual([
        ['begin', 'compatible'],
        ['tick', 'compatible'],
        ['sw', 'relocated'], // assembled without build formats: placeholder offsets
      ]);
      expect(v.relocated).toBeDefined();
    }
  });

  it('checkCompat: a runtime probe the verifier refuses makes the spec incompatible, with the diagnostic', async () => {
    const v = checkCompat(await asm(`.section END\nend:\n  r0 = r5\n  exit\n`), await fixtureProfile('linux-6.18'));
    expect(v.status).toBe('incompatible');
    expect(v.reasons[0]).toMatchObject({ kind: 'verifier-rejected', program: 'end', event: 'END', insnIndex: 0 });
  });

  it('checkCompat: any other non-tracepoint section stays unknown', async () => {
    const v = checkCompat(await asm(`.section kprobe/do_sys_open\nk:\n  r0 = 0\n  exit\n`), await fixtureProfile('linux-6.18'));
    expect(v.status).toBe('unknown');
    expect(v.reasons[0]).toMatchObject({ kind: 'unsupported-attach' });
  });
});
