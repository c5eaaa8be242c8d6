import { describe, expect, it } from 'vitest';
import { verify } from '../src/index.js';
import { ACCEPTED, PACKET_ACCEPTED, PACKET_REJECTED, type ProgramCase, REJECTED } from './programs.js';
import { asm, loadFormat } from './support.js';

export function run(c: ProgramCase) {
  const { bytes, maps } = asm(c.source);
  return verify(bytes, {
    maps,
    ...(c.event ? { context: { kind: 'tracepoint' as const, event: loadFormat(c.event) } } : {}),
    ...(c.xdp ? { context: { kind: 'xdp' as const } } : {}),
    ...(c.socketFilter ? { context: { kind: 'raw' as const, size: 0, legacyPacketLoads: true } } : {}),
    ...c.options,
  });
}

describe('accepted tracepoint programs', () => {
  it.each([...ACCEPTED, ...PACKET_ACCEPTED].map((c) => [c.name, c] as const))('%s', (_, c) => {
    const r = run(c);
    expect(r.diagnostics).toEqual([]);
    expect(r.ok).toBe(true);
  });
});

describe('rejected programs', () => {
  it.each([...REJECTED, ...PACKET_REJECTED].map((c) => [c.name, c] as const))('%s', (_, c) => {
    const r = run(c);
    expect(r.ok).toBe(false);
    expect(r.diagnostics[0]?.message).toBe(c.reject);
  });
});

describe('verifier log', () => {
  it('level 2: each instruction with the state after it', () => {
    // r0 = 0; if r0 == 0 goto +1; r0 = 1; exit
    const r = verify(asm('r0 = 0\nif r0 == 0 goto +1\nr0 = 1\nexit').bytes, { logLevel: 2 });
    expect(r.log).toEqual([
      'from 0: R1=ctx() R10=fp0',
      '0: (b7) r0 = 0                        ; R0=0 R1=ctx() R10=fp0',
      '1: (15) if r0 == 0x0 goto pc+1        ; R0=0 R1=ctx() R10=fp0',
      '3: (95) exit                          ; R0=0 R1=ctx() R10=fp0',
      'processed 3 insns (limit 1000000) max_states_per_insn 64 total_states 1 peak_states 1',
    ]);
  });

  it('level 1: the failing instruction and the reason', () => {
    const r = verify(asm('r0 = *(u32 *)(r1 + 0)\nexit').bytes, { logLevel: 1 });
    expect(r.log.slice(1, 3)).toEqual(['0: (61) r0 = *(u32 *)(r1 +0)', '0: invalid bpf_context access off=0 size=4']);
  });

  it('statistics', () => {
    const r = run(ACCEPTED.find((c) => c.name === 'bounded loop summing 0..99')!);
    expect(r.stats.insnsProcessed).toBe(304); // Linux 6.18 processes 304 too
    expect(r.stats.states).toBeGreaterThan(0);
    expect(r.stats.peakStates).toBeGreaterThanOrEqual(1);
  });

  // precision: values that decide nothing do not split the state space (Linux 6.18's counts beside)
  it.each([
    ['bpf_loop callback counting in the caller stack', 25], // Linux: 25
    ['bounded loop counting in the stack', 504], // Linux: 504
    ['fourteen branches whose only effect is a flag stored in the stack', 86], // Linux: 141
  ])('processed instructions: %s', (name, processed) => {
    const r = run(ACCEPTED.find((c) => c.name === name)!);
    expect(r.ok).toBe(true);
    expect(r.stats.insnsProcessed).toBe(processed);
  });
});
