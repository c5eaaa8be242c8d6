import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadProgramOrThrow, RunStatus, Vm, type VmTier } from '../src/index.js';
import { assemble, type Insn } from './random-program.js';
import { referenceRun } from './reference-vm.js';

// The interpreter's superinstructions (fused pairs, src/interpreter-code.ts) on programs made of
// the pairs they fuse, with registers that sometimes line up and sometimes not, loops that run
// into the budget on the fused add + jump, jumps into the second slot of a pair, and loads that
// fault in the first half. The interpreter must agree with the BigInt reference VM (programs
// that end within the budget) and with the compiled tier (every program: status, fault text,
// instruction count, registers, stack).

const reg = fc.integer({ min: 0, max: 9 });
const small = fc.integer({ min: -3, max: 3 });
const pair: fc.Arbitrary<{ insns: Insn[]; jumpAt?: number }> = fc.oneof(
  // rX += k; if rX !=/== c goto <part> (the goto offset is set when the program is built)
  fc
    .tuple(reg, fc.boolean(), small, small, fc.constantFrom(0x55, 0x15))
    .map(([d, same, k, c, jop]) => ({ insns: [[0x07, d, 0, 0, k], [jop, same ? d : (d + 1) % 10, 0, 0, c]] as Insn[], jumpAt: 1 })),
  // rX += k; if rX < rY goto <part>
  fc
    .tuple(reg, reg, small)
    .map(([d, s, k]) => ({ insns: [[0x07, d, 0, 0, k], [0xad, d, s, 0, 0]] as Insn[], jumpAt: 1 })),
  // rX = rY; rX >>= / <<= c
  fc
    .tuple(reg, reg, fc.boolean(), fc.constantFrom(0, 1, 7, 31, 32, 33, 63), fc.constantFrom(0x77, 0x67))
    .map(([d, s, same, c, op]) => ({ insns: [[0xbf, d, s, 0, 0], [op, same ? d : (d + 3) % 10, 0, 0, c]] as Insn[] })),
  // rX = *(size *)(r1 + off); rZ += rX (or rZ += another register)
  fc
    .tuple(reg.filter((r) => r !== 1), reg.filter((r) => r !== 1), fc.boolean(), fc.integer({ min: -3, max: 66 }), fc.constantFrom(0x71, 0x61, 0x79))
    .map(([d, z, same, off, op]) => ({ insns: [[op, d, 1, off, 0], [0x0f, z, same ? d : (d + 1) % 10, 0, 0]] as Insn[] })),
  // a plain jump (into the middle of a pair, when the target is a pair's second slot)
  fc.constant({ insns: [[0x05, 0, 0, 0, 0]] as Insn[], jumpAt: 0 }),
);

const programArb = fc
  .tuple(
    fc.array(fc.tuple(reg, fc.integer({ min: -5, max: 40 })), { minLength: 8, maxLength: 8 }),
    fc.array(fc.tuple(pair, fc.nat(), fc.boolean()), { minLength: 1, maxLength: 12 }),
  )
  .map(([inits, parts]) => {
    const slots: Insn[] = [];
    for (const [r, v] of inits) if (r !== 1) slots.push([0xb7, r, 0, 0, v]);
    const starts: number[] = [];
    for (const [p] of parts) {
      starts.push(slots.length);
      slots.push(...p.insns.map((i) => [...i] as Insn));
    }
    const exitAt = slots.length;
    parts.forEach(([p, pick, second], i) => {
      if (p.jumpAt === undefined) return;
      const from = (starts[i] as number) + p.jumpAt;
      // any part start (backward jumps make loops), the slot after a part start, or the exit
      const choices = [...starts, ...starts.map((s) => s + 1), exitAt];
      const target = choices[pick % choices.length] as number;
      (slots[from] as Insn)[3] = target - from - 1;
      if (second && target === exitAt) (slots[from] as Insn)[3] = 0;
    });
    slots.push([0x95, 0, 0, 0, 0]);
    return assemble(slots);
  });

const budget = 1000;
const tiers: VmTier[] = ['interpreter', 'compiled'];
const vms = tiers.map((tier) => new Vm({ tier, budget, standardHelpers: false }));
const regs = (vm: Vm) =>
  Array.from({ length: 11 }, (_, i) => BigInt.asUintN(64, (BigInt(vm.regHi[i] as number) << 32n) | BigInt((vm.regLo[i] as number) >>> 0)));

describe('superinstructions', () => {
  it('agree with the reference VM and the compiled tier on programs of fusable pairs', () => {
    const seen = { ok: 0, fault: 0, budget: 0 };
    fc.assert(
      fc.property(programArb, fc.uint8Array({ minLength: 64, maxLength: 64 }), (bytes, ctx) => {
        const [interp, compiled] = vms.map((vm) => {
          const program = loadProgramOrThrow(bytes, vm.loadOptions());
          expect(vm.tierOf(program)).toBe(vm.tier);
          const status = vm.run(program, ctx);
          return {
            status,
            fault: vm.fault?.message,
            count: vm.insnCount,
            regs: regs(vm),
            stack: (vm.regionBytes[2] as Uint8Array).slice(),
          };
        });
        expect(compiled).toEqual(interp);
        const status = interp?.status;
        if (status === RunStatus.budgetExhausted) {
          seen.budget++;
          return;
        }
        const ref = referenceRun(bytes, ctx, budget + 10);
        expect(ref.status).toBe(status === RunStatus.ok ? 'ok' : 'fault');
        if (ref.status === 'fault') {
          seen.fault++;
          expect(vms[0]?.fault?.pc).toBe(ref.faultPc);
          expect(interp?.count).toBe(ref.steps);
          return;
        }
        seen.ok++;
        expect(interp?.regs).toEqual(ref.regs);
        expect(interp?.count).toBe(ref.steps);
      }),
      { numRuns: 600, seed: 2211 }, // fixed: the coverage counts below are the same on every run
    );
    console.log(`superinstructions: 600 programs agree (${seen.ok} exited, ${seen.fault} faulted, ${seen.budget} ran out of budget)`);
    // the property must have exercised all three endings
    expect(Math.min(seen.ok, seen.fault, seen.budget)).toBeGreaterThan(20);
  }, 120_000);
});
