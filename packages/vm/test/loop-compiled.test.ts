import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadProgramOrThrow, RunStatus, Vm, type VmTier } from '../src/index.js';
import { randomProgram } from './random-program.js';
import { slot } from './slot.js';

// bpf_loop on the compiled tier (the callback's wasm function called in a loop) against the
// interpreter (the callback run in its frames): status, fault pc and message, instruction count,
// every register, the whole stack and the context must be equal. Every compiled run is checked
// to really be compiled. The kernel's r0 for the same loops: test/kernel.test.ts.

interface Outcome {
  status: RunStatus;
  fault: string | undefined;
  count: number;
  regs: bigint[];
  stack: Uint8Array;
  context: Uint8Array;
}

const tiers: VmTier[] = ['interpreter', 'compiled'];

/** One VM per tier and budget, reused (a VM per case would dominate the test's time). */
const vmsByBudget = new Map<number, Vm[]>();

function both(bytes: Uint8Array, ctx: Uint8Array, budget = 5000): Outcome[] {
  let vms = vmsByBudget.get(budget);
  if (vms === undefined) {
    vms = tiers.map((tier) => new Vm({ tier, budget, randomSeed: 7 }));
    vmsByBudget.set(budget, vms);
  }
  return vms.map((vm) => {
    const tier = vm.tier;
    const program = loadProgramOrThrow(bytes, vm.loadOptions());
    expect(vm.tierOf(program)).toBe(tier);
    const outs: Outcome[] = [];
    // twice: the second run starts from the compiled tier's `start` entry
    for (let k = 0; k < 2; k++) {
      const status = vm.run(program, ctx);
      outs.push({
        status,
        fault: vm.fault?.message,
        count: vm.insnCount,
        regs: Array.from({ length: 11 }, (_, i) =>
          BigInt.asUintN(64, (BigInt(vm.regHi[i] as number) << 32n) | BigInt((vm.regLo[i] as number) >>> 0)),
        ),
        stack: (vm.regionBytes[2] as Uint8Array).slice(),
        context: (vm.regionBytes[1] as Uint8Array).slice(0, ctx.length),
      });
    }
    expect(outs[1]).toEqual(outs[0]);
    return outs[0] as Outcome;
  });
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `lddw rD, <64-bit value>` */
function lddw(d: number, lo: number, hi: number, src = 0): Uint8Array {
  return concat(slot(0x18, d, src, 0, lo), slot(0, 0, 0, 0, hi));
}

interface LoopShape {
  nrLo: number;
  nrHi: number;
  flags: number;
  /** r3 (callback_ctx): 0 the caller's stack, 1 the context, 2 a plain number */
  ctxKind: number;
  /** the callback's r0 is its random r0 & mask: 0 runs every iteration */
  mask: number;
  callx: boolean;
}

/**
 * main: r6 = ctx, r7 = 77, r1 = nr, r2 = the callback, r3 = callback_ctx, r4 = flags,
 * bpf_loop (call or callx), r0 += r7, exit; then the callback: the random body with its exit
 * replaced by `r0 &= mask; exit`.
 */
function loopProgram(body: Uint8Array, s: LoopShape): Uint8Array {
  const head = (cb: number) =>
    concat(
      slot(0xbf, 6, 1, 0, 0), // 0: r6 = r1
      slot(0xb7, 7, 0, 0, 77), // 1: r7 = 77
      lddw(1, s.nrLo, s.nrHi), // 2-3: r1 = nr
      lddw(2, cb - 5, 0, 4), // 4-5: r2 = callback
      s.ctxKind === 0
        ? concat(slot(0xbf, 3, 10, 0, 0), slot(0x07, 3, 0, 0, -8)) // r3 = r10 - 8
        : s.ctxKind === 1
          ? concat(slot(0xbf, 3, 6, 0, 0), slot(0x07, 3, 0, 0, 0)) // r3 = ctx
          : concat(slot(0xb7, 3, 0, 0, 12345), slot(0x05, 0, 0, 0, 0)), // r3 = 12345; nop
      slot(0xb7, 4, 0, 0, s.flags), // 8: r4 = flags
      s.callx ? concat(slot(0xb7, 5, 0, 0, 181), slot(0x8d, 5, 0, 0, 0)) : concat(slot(0x05, 0, 0, 0, 0), slot(0x85, 0, 0, 0, 181)), // 9-10
      slot(0x0f, 0, 7, 0, 0), // 11: r0 += r7
      slot(0x95, 0, 0, 0, 0), // 12: exit
    );
  const cb = head(0).length / 8;
  const last = body.length / 8 - 1;
  return concat(head(cb), body.subarray(0, last * 8), slot(0x57, 0, 0, 0, s.mask), slot(0x95, 0, 0, 0, 0));
}

const shapeArb: fc.Arbitrary<LoopShape> = fc.record({
  nrLo: fc.oneof(
    fc.integer({ min: 0, max: 12 }),
    fc.constantFrom(0, 1, 100, 8 * 1024 * 1024, 8 * 1024 * 1024 + 1, -1, 0x80000000 | 0),
  ),
  nrHi: fc.constantFrom(0, 0, 0, 1, -1),
  flags: fc.constantFrom(0, 0, 0, 0, 1, -1),
  ctxKind: fc.integer({ min: 0, max: 2 }),
  mask: fc.constantFrom(0, 0, 0, 1, 7, -1),
  callx: fc.boolean(),
});

const ctxArb = fc.uint8Array({ minLength: 64, maxLength: 64 });

describe('bpf_loop: compiled tier against the interpreter', () => {
  it('agrees on random callbacks, iteration counts, flags and contexts', () => {
    const seen = { ok: 0, fault: 0, budget: 0 };
    fc.assert(
      fc.property(randomProgram(), shapeArb, ctxArb, fc.constantFrom(5000, 300, 40), (body, shape, ctx, budget) => {
        const [a, b] = both(loopProgram(body, shape), ctx, budget);
        expect(b).toEqual(a);
        if (a?.status === RunStatus.ok) seen.ok++;
        else if (a?.status === RunStatus.fault) seen.fault++;
        else seen.budget++;
      }),
      { numRuns: 300, seed: 2215 }, // fixed: the coverage counts below are the same on every run
    );
    console.log(`bpf_loop differential: 300 programs agree (${seen.ok} exited, ${seen.fault} faulted, ${seen.budget} ran out of budget)`);
    // the property must have exercised every ending
    expect(seen.ok).toBeGreaterThan(50);
    expect(seen.fault).toBeGreaterThan(10);
    expect(seen.budget).toBeGreaterThan(10);
  }, 300_000);

  it('gives r0 = the iterations made, runs every callback, and stops on a non-zero return', () => {
    // callback: *(u64 *)(r2) += r1 + 1; r0 = (r1 == stop)
    const program = (nr: number, stop: number) =>
      concat(
        slot(0x7a, 10, 0, -8, 0), // 0: *(u64 *)(r10 - 8) = 0
        slot(0xb7, 1, 0, 0, nr), // 1
        lddw(2, 12 - 3, 0, 4), // 2-3: r2 = the callback at 12
        slot(0xbf, 3, 10, 0, 0), // 4
        slot(0x07, 3, 0, 0, -8), // 5
        slot(0xb7, 4, 0, 0, 0), // 6
        slot(0x85, 0, 0, 0, 181), // 7
        slot(0x79, 1, 10, -8, 0), // 8: r1 = the sum
        slot(0x67, 0, 0, 0, 32), // 9: r0 = iterations << 32 | sum
        slot(0x4f, 0, 1, 0, 0), // 10
        slot(0x95, 0, 0, 0, 0), // 11
        slot(0x79, 4, 2, 0, 0), // 12: callback
        slot(0x0f, 4, 1, 0, 0),
        slot(0x07, 4, 0, 0, 1),
        slot(0x7b, 2, 4, 0, 0),
        slot(0xb7, 0, 0, 0, 0),
        slot(0x55, 1, 0, 1, stop),
        slot(0xb7, 0, 0, 0, 1),
        slot(0x95, 0, 0, 0, 0),
      );
    for (const [nr, stop, iterations] of [
      [0, -1, 0],
      [1, -1, 1],
      [10, -1, 10],
      [10, 0, 1],
      [10, 4, 5],
      [1000, 999, 1000],
    ] as const) {
      const [a, b] = both(program(nr, stop), new Uint8Array(8), 1_000_000);
      expect(b).toEqual(a);
      expect(a?.status).toBe(RunStatus.ok);
      const sum = (iterations * (iterations + 1)) / 2;
      expect(a?.regs[0]).toBe((BigInt(iterations) << 32n) | BigInt(sum));
    }
  });

  it('agrees on nested loops, the call depth limit and budget exhaustion inside callbacks', () => {
    // the callback calls bpf_loop with itself: depth grows until the 8-frame limit faults
    const recursive = (nr: number) =>
      concat(
        slot(0xb7, 1, 0, 0, nr), // 0
        lddw(2, 5 - 2, 0, 4), // 1-2: r2 = callback at 5
        slot(0xb7, 3, 0, 0, 0), // 3
        slot(0x05, 0, 0, 0, 0), // 4: (falls into the callback as the main body)
        slot(0xb7, 1, 0, 0, nr), // 5: callback: bpf_loop(nr, itself)
        lddw(2, 5 - 7, 0, 4), // 6-7: r2 = the callback itself
        slot(0xb7, 4, 0, 0, 0), // 8
        slot(0x07, 6, 0, 0, 1), // 9: r6 += 1 (restored per frame)
        slot(0x85, 0, 0, 0, 181), // 10
        slot(0x0f, 0, 6, 0, 0), // 11
        slot(0x95, 0, 0, 0, 0), // 12
      );
    const [a, b] = both(recursive(2), new Uint8Array(8), 1_000_000);
    expect(a?.fault).toMatch(/^call stack deeper than 8 frames at pc 10/);
    expect(b).toEqual(a);
    for (const budget of [1, 5, 9, 10, 11, 20, 33, 34, 35, 100]) {
      const [c, d] = both(recursive(1), new Uint8Array(8), budget);
      expect(d).toEqual(c);
    }
    // a counted loop of a trivial callback: the budget runs out at each possible place
    const counted = concat(
      slot(0xb7, 1, 0, 0, 50),
      lddw(2, 6 - 2, 0, 4), // callback at 6
      slot(0xb7, 3, 0, 0, 0),
      slot(0x85, 0, 0, 0, 181),
      slot(0x95, 0, 0, 0, 0), // 5
      slot(0xb7, 0, 0, 0, 0), // 6: callback: r0 = 0; exit
      slot(0x95, 0, 0, 0, 0),
    );
    const statuses = new Set<RunStatus>();
    for (let budget = 1; budget <= 110; budget += budget < 20 || budget > 95 ? 1 : 7) {
      const [c, d] = both(counted, new Uint8Array(8), budget);
      expect(d, `budget ${budget}`).toEqual(c);
      statuses.add(c?.status as RunStatus);
    }
    expect(statuses).toEqual(new Set([RunStatus.ok, RunStatus.budgetExhausted]));
  }, 120_000);

  it('refuses a callback address that is not one of the program\'s on both tiers', () => {
    for (const add of [0, 1, 2, -1, 0x100000000]) {
      const bytes = concat(
        slot(0xb7, 1, 0, 0, 3),
        lddw(2, 7 - 2, 0, 4), // callback at 7
        add > 0xffffffff ? lddw(5, 0, 1) : lddw(5, add, add < 0 ? -1 : 0),
        slot(0x0f, 2, 5, 0, 0), // r2 += r5
        slot(0x85, 0, 0, 0, 181), // 6
        slot(0xb7, 0, 0, 0, 0), // 7: callback (and the main exit path)
        slot(0x95, 0, 0, 0, 0),
      );
      const [a, b] = both(bytes, new Uint8Array(8), 1000);
      expect(b).toEqual(a);
      if (add === 0) expect(a?.status).toBe(RunStatus.ok);
      else expect(a?.fault).toMatch(/^bpf_loop: r2 is not a callback address at pc 6/);
    }
  });

  it('agrees on bpf_loop in a program without callbacks, and in a VM without the helper', () => {
    for (const callx of [false, true]) {
      const bytes = concat(
        slot(0xb7, 1, 0, 0, 3),
        slot(0xb7, 2, 0, 0, 0), // r2 = 0: no callback
        slot(0xb7, 5, 0, 0, 181),
        callx ? slot(0x8d, 5, 0, 0, 0) : slot(0x85, 0, 0, 0, 181), // 3
        slot(0x95, 0, 0, 0, 0),
      );
      const [a, b] = both(bytes, new Uint8Array(8), 1000);
      expect(b).toEqual(a);
      expect(a?.fault).toMatch(/^bpf_loop: r2 is not a callback address at pc 3/);
    }
    // no bpf_loop among the VM's helpers: a callx of 181 is an unknown helper on both tiers
    const bytes = concat(slot(0xb7, 5, 0, 0, 181), slot(0x8d, 5, 0, 0, 0), slot(0x95, 0, 0, 0, 0));
    const faults = tiers.map((tier) => {
      const vm = new Vm({ tier, standardHelpers: false });
      const program = loadProgramOrThrow(bytes, vm.loadOptions());
      expect(vm.tierOf(program)).toBe(tier);
      expect(vm.run(program, new Uint8Array(8))).toBe(RunStatus.fault);
      return [vm.fault?.message, vm.insnCount];
    });
    expect(faults[0]?.[0]).toMatch(/^call to unknown helper 181 at pc 1/);
    expect(faults[1]).toEqual(faults[0]);
  });

  it('picks the callback by its address when a program has several', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 9 }), (which, nr) => {
        const cb = [12, 15, 18];
        const bytes = concat(
          slot(0xb7, 1, 0, 0, nr), // 0
          lddw(2, (cb[which] as number) - 2, 0, 4), // 1-2
          slot(0xb7, 3, 0, 0, 0), // 3
          slot(0xb7, 4, 0, 0, 0), // 4
          slot(0xb7, 7, 0, 0, 0), // 5
          slot(0x85, 0, 0, 0, 181), // 6
          slot(0x67, 0, 0, 0, 8), // 7
          slot(0x4f, 0, 6, 0, 0), // 8: r0 = iterations << 8 | r6 (r6 survives)
          slot(0x95, 0, 0, 0, 0), // 9
          lddw(0, 0, 0), // 10-11: filler
          slot(0xb7, 0, 0, 0, 0), // 12: callback A: r0 = 0
          slot(0x05, 0, 0, 0, 0),
          slot(0x95, 0, 0, 0, 0),
          slot(0xbf, 0, 1, 0, 0), // 15: callback B: r0 = (r1 == 3)
          slot(0x57, 0, 0, 0, 2), // r0 &= 2: stops once bit 1 of the index is set
          slot(0x95, 0, 0, 0, 0),
          slot(0x07, 6, 0, 0, 5), // 18: callback C: r6 += 5 (restored), r0 = 0
          slot(0xb7, 0, 0, 0, 0),
          slot(0x95, 0, 0, 0, 0),
        );
        const [a, b] = both(bytes, new Uint8Array(8), 100_000);
        expect(b).toEqual(a);
        expect(a?.status).toBe(RunStatus.ok);
        const iterations = nr === 0 ? 0 : which === 1 ? Math.min(nr, 3) : nr;
        expect(a?.regs[0]).toBe(BigInt(iterations << 8));
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
