import { describe, expect, it } from 'vitest';
import { asm } from '../test/support.js';
import { buildCfg } from './cfg.js';
import { computePrecision } from './precision.js';
import { decodeProgram } from './program.js';

function precisionOf(source: string, decided?: number[]) {
  const p = decodeProgram(asm(source).bytes);
  let d: Uint8Array | null = null;
  if (decided) {
    d = new Uint8Array(p.length);
    for (const i of decided) d[i] = 1;
  }
  return computePrecision(p, buildCfg(p, true).cfg!, d);
}

const R10 = 1 << 10;

describe('computePrecision', () => {
  // [program, instruction, precise registers, precise slots 0..31]
  it.each([
    ['a value only stored decides nothing', 'r6 = 1\n*(u64 *)(r10 - 8) = r6\nr0 = 0\nexit', 1, R10, 0],
    [
      'a stored value read back into a branch is precise, and its slot',
      'r6 = 1\n*(u64 *)(r10 - 8) = r6\nr1 = *(u64 *)(r10 - 8)\nif r1 > 3 goto +0\nr0 = 0\nexit',
      1,
      R10 | (1 << 6),
      0,
    ],
    [
      'the slot between the store and the load',
      'r6 = 1\n*(u64 *)(r10 - 8) = r6\nr1 = *(u64 *)(r10 - 8)\nif r1 > 3 goto +0\nr0 = 0\nexit',
      2,
      R10,
      1,
    ],
    [
      'a whole-slot store hides what the slot held before',
      'r1 = *(u64 *)(r10 - 16)\n*(u64 *)(r10 - 16) = 0\nr2 = *(u64 *)(r10 - 16)\nif r2 > 3 goto +0\nr0 = 0\nexit',
      1,
      R10,
      0,
    ],
    [
      'a helper that reads memory makes every slot precise',
      '.map m hash key=4 value=8 entries=4\n*(u64 *)(r10 - 8) = r6\nr2 = r10\nr2 += -8\nr1 = m ll\ncall bpf_map_lookup_elem\nr0 = 0\nexit',
      0,
      // the stored r6 (it lands in a precise slot), not slot 0; r3-r5 are no arguments of map_lookup_elem
      R10 | (1 << 6),
      0xfffffffe,
    ],
    [
      'a load through a copied stack pointer makes every slot precise',
      'r2 = r10\nr2 += -8\nr3 = *(u64 *)(r2 + 0)\nif r3 == 0 goto +0\nr0 = 0\nexit',
      2,
      R10 | (1 << 2),
      0xffffffff,
    ],
    ['a scalar added to a register is precise (it may be pointer arithmetic)', 'r2 = r10\nr3 = 8\nr2 += r3\nr0 = 0\nexit', 2, R10 | (1 << 2) | (1 << 3), 0],
  ])('%s', (_, source, insnIndex, regs, slotsLo) => {
    const pr = precisionOf(source)!;
    expect([pr.regs[insnIndex], pr.slotsLo[insnIndex]]).toEqual([regs, slotsLo]);
  });

  it('a branch explored both ways decides nothing; one found decided makes its operands precise', () => {
    const source = 'call bpf_get_prandom_u32\nr6 = r0\nr7 = 5\nif r6 > r7 goto +0\nr0 = 0\nexit';
    expect(precisionOf(source, [])!.regs[3]).toBe(R10);
    expect(precisionOf(source, [3])!.regs[3]).toBe(R10 | (1 << 6) | (1 << 7));
    // the value flows back through the copy
    expect(precisionOf(source, [3])!.regs[1]).toBe(R10 | 1);
    // no `decided` at all: every branch is a decision (the static analysis alone)
    expect(precisionOf(source)!.regs[3]).toBe(R10 | (1 << 6) | (1 << 7));
  });

  it('arguments a helper does not check decide nothing (bpf_perf_event_read flags)', () => {
    const source = '.map m perf_event_array key=4 value=4 entries=4\nr1 = m ll\nr2 = 7\ncall bpf_perf_event_read\nr0 = 0\nexit';
    expect(precisionOf(source, [])!.regs[3]! & (1 << 2)).toBe(0);
  });

  it('flows through subprograms: arguments into the callee, its r0 back to the caller', () => {
    // main: r6 = 5; r1 = r6; call f; if r0 > 3 (decided at 4); f: r0 = r1; exit
    const source = 'r6 = 5\nr1 = r6\ncall pc+3\nr0 += 0\nif r0 > 3 goto +0\nexit\nr0 = r1\nexit';
    const pr = precisionOf(source, [4])!;
    expect(pr.regs[6]! & (1 << 1)).not.toBe(0); // the callee's r1, because its r0 is needed
    expect(pr.regs[2]! & (1 << 1)).not.toBe(0); // the caller's argument
    expect(pr.regs[1]! & (1 << 6)).not.toBe(0); // and r6 it came from
    // nothing decided: no value flows into a decision
    expect(precisionOf(source, [])!.regs[1]! & (1 << 6)).toBe(0);
  });

  it('a subprogram that reads memory through a pointer makes its callers\' slots precise', () => {
    const source = 'r1 = r10\nr1 += -8\ncall pc+2\nr0 = 0\nexit\nr0 = *(u64 *)(r1 + 0)\nexit';
    expect(precisionOf(source, [])!.touches[1]).toBe(1);
    expect(precisionOf('call pc+2\nr0 = 0\nexit\nr0 = 0\nexit', [])!.touches[1]).toBe(0);
  });

  it('is not computed for programs with callbacks (every scalar stays precise)', () => {
    expect(precisionOf('r1 = 1\nld_pseudo r2, 4, 6\nr3 = 0\nr4 = 0\ncall bpf_loop\nr0 = 0\nexit\nr0 = 0\nexit')).toBeNull();
  });
});
