import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BpfMap,
  type LoadedProgram,
  loadAssembly,
  loadProgramOrThrow,
  RunStatus,
  snapshotMap,
  Vm,
  type VmTier,
} from '../src/index.js';
import { randomProgram } from './random-program.js';
import { slot } from './slot.js';

// The compiled (WebAssembly) tier against the interpreter: on the same program and input both
// must end the same way (status, fault pc and message, instruction count), with the same
// registers, stack, context and map contents. Every compiled run is checked to really be
// compiled (no silent fallback).

interface Outcome {
  status: RunStatus;
  fault: string | undefined;
  count: number;
  regs: bigint[];
  stack: Uint8Array;
  context: Uint8Array;
}

function outcome(vm: Vm, status: RunStatus, contextLength: number): Outcome {
  return {
    status,
    fault: vm.fault?.message,
    count: vm.insnCount,
    regs: Array.from({ length: 11 }, (_, i) =>
      BigInt.asUintN(64, (BigInt(vm.regHi[i] as number) << 32n) | BigInt((vm.regLo[i] as number) >>> 0)),
    ),
    stack: (vm.regionBytes[2] as Uint8Array).slice(),
    context: (vm.regionBytes[1] as Uint8Array).slice(0, contextLength),
  };
}

const tiers: VmTier[] = ['interpreter', 'compiled'];
const vms = tiers.map((tier) => new Vm({ tier, budget: 5000, randomSeed: 7 }));

function both(bytes: Uint8Array, ctx: Uint8Array): Outcome[] {
  return vms.map((vm) => {
    const program = loadProgramOrThrow(bytes, vm.loadOptions());
    expect(vm.tierOf(program)).toBe(vm.tier);
    return outcome(vm, vm.run(program, ctx), ctx.length);
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

/** The random body run as a loop: the final exit becomes `if r0 != 0 goto <after the inits>`. */
function looped(bytes: Uint8Array): Uint8Array {
  const last = bytes.length / 8 - 1;
  const inits = 18; // nine lddw of random-program.ts
  return concat(bytes.subarray(0, last * 8), slot(0x55, 0, 0, inits - (last + 1), 0), slot(0x95, 0, 0, 0, 0));
}

/** The random body as a BPF-to-BPF callee (frame 1), then a helper call and a mix in the caller. */
function called(bytes: Uint8Array): Uint8Array {
  return concat(
    slot(0x85, 0, 1, 0, 4), // call pc+4 (the body)
    slot(0xbf, 6, 0, 0, 0), // r6 = r0
    slot(0x85, 0, 0, 0, 7), // call bpf_get_prandom_u32
    slot(0xaf, 0, 6, 0, 0), // r0 ^= r6
    slot(0x95, 0, 0, 0, 0), // exit
    bytes,
  );
}

const ctxArb = fc.uint8Array({ minLength: 64, maxLength: 64 });

describe('compiled tier against the interpreter', () => {
  it.each([
    ['straight-line programs with forward jumps', (b: Uint8Array) => b],
    ['the same bodies as loops (backward jumps, the budget)', looped],
    ['the same bodies as BPF-to-BPF callees, with a helper call', called],
    ['loops inside callees', (b: Uint8Array) => called(looped(b))],
  ])('agrees on random %s', (_what, shape) => {
    let faults = 0;
    let budgets = 0;
    fc.assert(
      fc.property(randomProgram(), ctxArb, (body, ctx) => {
        const [a, b] = both(shape(body), ctx);
        expect(b).toEqual(a);
        if (a?.status === RunStatus.fault) faults++;
        if (a?.status === RunStatus.budgetExhausted) budgets++;
      }),
      { numRuns: 500 },
    );
    console.log(`tier differential (${_what}): 500 programs agree (${faults} faulted, ${budgets} ran out of budget on both)`);
  });

  it('agrees on pointers walking through and out of their region in a loop', () => {
    // r2 = a pointer (into the context, the stack, or an odd 64-bit value); loop: a load and a
    // store through r2, then r2 += step, until the count runs out: the compiled tier looks the
    // region of r2 up once per loop entry, which must not change where or whether it faults
    fc.assert(
      fc.property(
        fc.constantFrom(0, 1, 2),
        fc.integer({ min: -80, max: 80 }),
        fc.integer({ min: -4, max: 4 }),
        fc.constantFrom(-3, -1, 1, 2, 7, -(1 << 20), 1 << 20, (1 << 20) + 1, -8),
        fc.integer({ min: 1, max: 70 }),
        fc.constantFrom(0x71, 0x69, 0x61, 0x79),
        ctxArb,
        (kind, start, off, step, count, load, ctx) => {
          const pointer =
            kind === 0
              ? concat(slot(0xbf, 2, 1, 0, 0), slot(0x07, 2, 0, 0, start))
              : kind === 1
                ? concat(slot(0xbf, 2, 10, 0, 0), slot(0x07, 2, 0, 0, start - 80))
                : concat(slot(0x18, 2, 0, 0, -16 + start), slot(0, 0, 0, 0, 1));
          const bytes = concat(
            pointer,
            slot(0xb7, 3, 0, 0, count), // r3 = count
            slot(0xb7, 0, 0, 0, 0), // r0 = 0
            slot(load, 4, 2, off, 0), // loop: r4 = *(size *)(r2 + off)
            slot(0x0f, 0, 4, 0, 0), // r0 += r4
            slot(0x73, 2, 0, off, 0), // *(u8 *)(r2 + off) = r0
            slot(0x07, 2, 0, 0, step), // r2 += step
            slot(0x07, 3, 0, 0, -1), // r3 += -1
            slot(0x55, 3, 0, -6, 0), // if r3 != 0 goto loop
            slot(0x95, 0, 0, 0, 0),
          );
          const [a, b] = both(bytes, ctx);
          expect(b).toEqual(a);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('agrees at the call depth limit and on recursion', () => {
    // f: r1 += 1; call f  -> 8 frames, then a fault on both tiers
    const bytes = concat(slot(0x07, 1, 0, 0, 1), slot(0x85, 0, 1, 0, -2), slot(0x95, 0, 0, 0, 0));
    const [a, b] = both(bytes, new Uint8Array(8));
    expect(a?.fault).toMatch(/^call stack deeper than 8 frames at pc 1/);
    expect(b).toEqual(a);
  });

  it('agrees on map operations (hash and array maps, atomics, helpers)', () => {
    const source = `
.map h hash key=4 value=8 entries=8
.map a array key=4 value=8 entries=4
  r6 = *(u32 *)(r1 + 0)
  r7 = *(u64 *)(r1 + 8)
  r9 = *(u32 *)(r1 + 4)
  *(u32 *)(r10 - 4) = r6
  *(u64 *)(r10 - 16) = r7
  r1 = h ll
  r2 = r10
  r2 += -4
  r3 = r10
  r3 += -16
  r4 = r9
  r4 &= 3
  call bpf_map_update_elem
  r8 = r0
  if r9 & 4 goto skipdel
  r1 = h ll
  r2 = r10
  r2 += -4
  call bpf_map_delete_elem
  r8 += r0
skipdel:
  r6 &= 7
  *(u32 *)(r10 - 4) = r6
  r1 = a ll
  r2 = r10
  r2 += -4
  call bpf_map_lookup_elem
  if r0 == 0 goto out
  lock *(u64 *)(r0 + 0) += r7
  r1 = *(u64 *)(r0 + 0)
  r8 += r1
out:
  r0 = r8
  exit`;
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 16, maxLength: 16 }), { minLength: 1, maxLength: 30 }), (ctxs) => {
        const results = tiers.map((tier) => {
          const { vm, maps, programs } = loadAssembly(source, { tier });
          const program = [...programs.values()][0] as LoadedProgram;
          expect(vm.tierOf(program)).toBe(tier);
          const r0s = ctxs.map((c) => [vm.run(program, c), vm.r0, vm.insnCount]);
          const snapshots = [...maps.values()].map((m: BpfMap) => snapshotMap(m));
          return { r0s, snapshots };
        });
        expect(results[1]).toEqual(results[0]);
      }),
      { numRuns: 200 },
    );
  });

  // The verifier's accepted programs (packages/verifier/test/programs.ts, read from the sibling
  // package's tests, not a dependency) that assemble without a kernel format (symbolic field
  // operands need one), on several contexts.
  const programsFile = join(import.meta.dirname, '../../verifier/test/programs.ts');
  const present = existsSync(programsFile);
  if (!present) console.log('tier differential: verifier programs skipped: packages/verifier/test/programs.ts is absent');
  it.skipIf(!present)('agrees on the verifier-accepted programs of the test suites', async () => {
    type Case = { name: string; source: string };
    const suite = (await import(/* @vite-ignore */ programsFile)) as { ACCEPTED: Case[]; PACKET_ACCEPTED: Case[] };
    const cases = [...suite.ACCEPTED, ...suite.PACKET_ACCEPTED];
    let compared = 0;
    const skipped: string[] = [];
    for (const c of cases) {
      let runs: { status: RunStatus; r0: bigint; count: number; fault?: string; snapshots: unknown }[][];
      try {
        runs = tiers.map((tier) => {
          const { vm, maps, programs } = loadAssembly(c.source, { tier });
          const out = [];
          for (const program of programs.values()) {
            expect(vm.tierOf(program)).toBe(tier);
            for (let k = 0; k < 8; k++) {
              const ctx = Uint8Array.from({ length: 256 }, (_, i) => Math.imul(i + 1, 2654435761 + k) >>> 24);
              const status = vm.run(program, ctx);
              out.push({ status, r0: vm.r0, count: vm.insnCount, fault: vm.fault?.message, snapshots: [...maps.values()].map((m) => snapshotMap(m)) });
            }
          }
          return out;
        });
      } catch (e) {
        if ((e as Error).name === 'AssertionError') throw e;
        skipped.push(c.name);
        continue;
      }
      expect(runs[1], c.name).toEqual(runs[0]);
      compared++;
    }
    console.log(`tier differential: ${compared}/${cases.length} verifier-accepted programs agree; not assembled without a kernel format: ${skipped.length}`);
    expect(compared).toBeGreaterThan(cases.length / 2);
  });
});
