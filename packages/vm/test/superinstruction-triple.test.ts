import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadProgramOrThrow, RunStatus, Vm, type VmTier } from '../src/index.js';
import { Code } from '../src/interpreter/interpreter-code.js';
import { assemble, type Insn } from './random-program.js';
import { referenceRun } from './reference-vm.js';

// The interpreter's triple `rA += k; rB += k2; if rB != c goto` (Code.addImmAddImmJneImm: an
// add-imm before a fused add-imm + jne-imm pair; the byte loop of mem_sum ends with it). On
// programs of such triples, with registers that line up or not, loops that run into the budget
// on the fused jump, and jumps into the second and third slots, the interpreter must agree with
// the BigInt reference VM (programs that end within the budget) and with the compiled tier.

const reg = fc.integer({ min: 0, max: 9 }).filter((r) => r !== 1);
const small = fc.integer({ min: -3, max: 3 });
// rA += k; rB += k2; if rB (or another register) != c goto <part>; sometimes a load + add first
const part = fc.record({
  a: reg,
  b: reg,
  sameJump: fc.boolean(),
  k: fc.oneof(small, fc.constantFrom(-0x80000000, 0x7fffffff, -1)),
  k2: small,
  c: small,
  load: fc.boolean(),
  off: fc.integer({ min: -2, max: 66 }),
  pick: fc.nat(),
});

const programArb = fc
  .tuple(fc.array(fc.tuple(reg, fc.integer({ min: -5, max: 40 })), { minLength: 8, maxLength: 8 }), fc.array(part, { minLength: 1, maxLength: 8 }))
  .map(([inits, parts]) => {
    const slots: Insn[] = inits.map(([r, v]) => [0xb7, r, 0, 0, v] as Insn);
    const starts: number[] = [];
    const jumps: number[] = [];
    for (const p of parts) {
      starts.push(slots.length);
      if (p.load) slots.push([0x71, p.a, 1, p.off, 0], [0x0f, 0, p.a, 0, 0]);
      slots.push([0x07, p.a, 0, 0, p.k], [0x07, p.b, 0, 0, p.k2]);
      jumps.push(slots.length);
      slots.push([0x55, p.sameJump ? p.b : (p.b + 1) % 10, 0, 0, p.c]);
    }
    const exitAt = slots.length;
    // any part start, the second or third slot of a triple (a jump into it), or the exit
    const choices = [...starts, ...jumps.map((j) => j - 1), ...jumps, exitAt];
    parts.forEach((p, i) => {
      const from = jumps[i] as number;
      (slots[from] as Insn)[3] = (choices[p.pick % choices.length] as number) - from - 1;
    });
    slots.push([0x95, 0, 0, 0, 0]);
    return assemble(slots);
  });

const budget = 1000;
const tiers: VmTier[] = ['interpreter', 'compiled'];
const vms = tiers.map((tier) => new Vm({ tier, budget, standardHelpers: false }));
const regs = (vm: Vm) =>
  Array.from({ length: 11 }, (_, i) => BigInt.asUintN(64, (BigInt(vm.regHi[i] as number) << 32n) | BigInt((vm.regLo[i] as number) >>> 0)));

describe('the add-imm + add-imm + jne-imm triple', () => {
  it('is the code of the first slot only when the second and third form a fused pair', () => {
    const codes = (slots: Insn[]) => Array.from(loadProgramOrThrow(assemble(slots), { helpers: () => true }).insn, (w) => w & 0xff);
    // mem_sum's byte loop (a scanning loop: its first slot takes the five): r6 = *(u8 *)(r3 + 0); r0 += r6; r3 += 1; r5 += -1; if r5 != 0 goto -5
    expect(
      codes([
        [0x71, 6, 3, 0, 0],
        [0x0f, 0, 6, 0, 0],
        [0x07, 3, 0, 0, 1],
        [0x07, 5, 0, 0, -1],
        [0x55, 5, 0, -5, 0],
        [0x95, 0, 0, 0, 0],
      ]),
    ).toEqual([Code.scanLdxb, Code.add64Reg, Code.addImmAddImmJneImm, Code.addImmJneImm, Code.jneImm, Code.exit]);
    // the jump tests another register: no pair, so no triple
    expect(
      codes([
        [0x07, 3, 0, 0, 1],
        [0x07, 5, 0, 0, -1],
        [0x55, 4, 0, -3, 0],
        [0x95, 0, 0, 0, 0],
      ]),
    ).toEqual([Code.add64Imm, Code.add64Imm, Code.jneImm, Code.exit]);
  });

  it('agrees with the reference VM and the compiled tier', () => {
    const seen = { ok: 0, fault: 0, budget: 0, triples: 0 };
    fc.assert(
      fc.property(programArb, fc.uint8Array({ minLength: 64, maxLength: 64 }), (bytes, ctx) => {
        const [interp, compiled] = vms.map((vm) => {
          const program = loadProgramOrThrow(bytes, vm.loadOptions());
          expect(vm.tierOf(program)).toBe(vm.tier);
          if (vm.tier === 'interpreter') seen.triples += Array.from(program.insn).filter((w) => (w & 0xff) === Code.addImmAddImmJneImm).length;
          const status = vm.run(program, ctx);
          return { status, fault: vm.fault?.message, count: vm.insnCount, regs: regs(vm) };
        });
        expect(interp).toEqual(compiled);
        if (interp?.status === RunStatus.budgetExhausted) {
          seen.budget++;
          return;
        }
        const ref = referenceRun(bytes, ctx, budget + 10);
        expect(ref.status).toBe(interp?.status === RunStatus.ok ? 'ok' : 'fault');
        expect(interp?.count).toBe(ref.steps);
        if (ref.status === 'fault') {
          seen.fault++;
          expect(vms[0]?.fault?.pc).toBe(ref.faultPc);
          return;
        }
        seen.ok++;
        expect(interp?.regs).toEqual(ref.regs);
      }),
      { numRuns: 500, seed: 2212 }, // fixed: the coverage counts below are the same on every run
    );
    console.log(`triples: 500 programs agree (${seen.triples} triples; ${seen.ok} exited, ${seen.fault} faulted, ${seen.budget} ran out of budget)`);
    expect(Math.min(seen.ok, seen.fault, seen.budget)).toBeGreaterThan(20);
    expect(seen.triples).toBeGreaterThan(500);
  }, 120_000);
});
