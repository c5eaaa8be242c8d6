import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadProgramOrThrow, RunStatus, Vm, type VmTier } from '../src/index.js';
import { Code } from '../src/interpreter/interpreter-code.js';
import { assemble, type Insn } from './random-program.js';
import { referenceRun } from './reference-vm.js';

// The interpreter's scanning-loop superinstructions (Code.scanLdxb and its u16/u32/u64 forms: the
// five slots `rX = *(size *)(rY + off); rZ += rX; rA += k; rB += k2; if rB != c goto`; the
// up-counting Code.scanUpLdxb …: `rX = *(size *)(rY + off); rZ += rX; rA += k; if rA < rE goto`;
// one case that, in the usual shape of registers, loops by itself while the branch comes back to
// its first slot, and else runs the load + add pair alone). On programs of such loops,
// with registers that line up or alias (the pointer stepped as the counter, the load overwriting
// its own pointer, the accumulator being the counter), pointers walking off the end of the
// context (a fault on the load after some iterations), loops that run into the budget, and
// branches into the second to fifth slots, the interpreter must agree with the BigInt reference
// VM (programs that end within the budget: status, count, fault pc, registers) and with the
// compiled tier (every program).

const LOADS = [0x71, 0x69, 0x61, 0x79]; // ldxb, ldxh, ldxw, ldxdw
// few registers, so that they often alias; r1 (the context) is never written
const reg = fc.constantFrom(0, 2, 3, 4, 5, 6);
const loop = fc.record({
  size: fc.nat({ max: 3 }),
  p: reg, // the pointer, set to r1 + start before the loop
  start: fc.integer({ min: 0, max: 60 }),
  x: reg, // the loaded register
  z: reg, // the accumulator
  a: reg, // the advanced register (usually the pointer)
  advancePointer: fc.boolean(),
  k: fc.constantFrom(1, 2, 4, 8, -1, 0x7fffffff),
  b: reg, // the counter
  count: fc.integer({ min: 0, max: 80 }),
  k2: fc.constantFrom(-1, -1, -2, 1),
  sameJump: fc.boolean(),
  off: fc.integer({ min: -4, max: 8 }),
  target: fc.nat({ max: 9 }), // 0-5: the loop's own first slot; else another place
  pick: fc.nat(),
  // a pointer stepped up to an end pointer (`if rA < rB goto`) instead of a count down
  up: fc.boolean(),
  // half the loops in the usual shape: pointer, loaded value, sum and counter four registers
  usual: fc.boolean(),
  four: fc.shuffledSubarray([0, 2, 3, 4, 5, 6, 7, 8, 9], { minLength: 4, maxLength: 4 }),
});

const programArb = fc.array(loop, { minLength: 1, maxLength: 4 }).map((loops) => {
  const slots: Insn[] = [];
  const starts: number[] = [];
  const jumps: number[] = [];
  for (const loop of loops) {
    const [p, x, z, b] = loop.four as [number, number, number, number];
    const l = loop.usual ? { ...loop, p, x, z, b, advancePointer: true } : loop;
    slots.push([0xbf, l.p, 1, 0, 0], [0x07, l.p, 0, 0, l.start]);
    // down-counting: rB = count; up-counting: rB = the end pointer, r1 + count
    if (l.up) slots.push([0xbf, l.b, 1, 0, 0], [0x07, l.b, 0, 0, l.count]);
    else slots.push([0xb7, l.b, 0, 0, l.count]);
    starts.push(slots.length);
    const a = l.advancePointer ? l.p : l.a;
    slots.push([LOADS[l.size] as number, l.x, l.p, l.off, 0], [0x0f, l.z, l.x, 0, 0], [0x07, a, 0, 0, l.k]);
    if (!l.up) slots.push([0x07, l.b, 0, 0, l.k2]);
    jumps.push(slots.length);
    if (l.up) slots.push([0xad, l.sameJump ? a : l.z, l.b, 0, 0]);
    else slots.push([0x55, l.sameJump ? l.b : l.z, 0, 0, 0]);
  }
  const exitAt = slots.length;
  // another loop's first slot, the second to fifth slot of any loop (a branch into it), the exit
  const others = [...starts, ...starts.flatMap((s) => [s + 1, s + 2, s + 3, s + 4]), exitAt];
  loops.forEach((l, i) => {
    // (the branch is the only field the usual shape leaves as drawn)
    const from = jumps[i] as number;
    const to = l.target <= 5 ? (starts[i] as number) : (others[l.pick % others.length] as number);
    (slots[from] as Insn)[3] = to - from - 1;
  });
  slots.push([0x95, 0, 0, 0, 0]);
  return assemble(slots);
});

const budget = 2000;
const tiers: VmTier[] = ['interpreter', 'compiled'];
const vms = tiers.map((tier) => new Vm({ tier, budget, standardHelpers: false }));
const regs = (vm: Vm) =>
  Array.from({ length: 11 }, (_, i) => BigInt.asUintN(64, (BigInt(vm.regHi[i] as number) << 32n) | BigInt((vm.regLo[i] as number) >>> 0)));
const isScan = (w: number) => (w & 0xff) >= Code.scanLdxb && (w & 0xff) <= Code.scanUpLdxdw;
const isUp = (w: number) => (w & 0xff) >= Code.scanUpLdxb;
const field = (w: number, shift: number) => (w >> shift) & 15;
/** The interpreter keeps this scan's registers in locals (the pointer advanced; four registers). */
function usualShape(insn: Int32Array, i: number): boolean {
  const w = insn[i] as number;
  const [s, d, d2, ra] = [field(w, 12), field(w, 8), field(insn[i + 1] as number, 8), field(insn[i + 2] as number, 8)];
  // the counter (down) or the end register (up)
  const rb = isUp(w) ? field(insn[i + 3] as number, 12) : field(insn[i + 3] as number, 8);
  return ra === s && new Set([s, d, d2, rb]).size === 4;
}

describe('the scanning-loop superinstruction', () => {
  it('is the code of the first slot of load + add + add-imm + add-imm + jne-imm (or add-imm + jlt-reg), for each load size', () => {
    const codes = (slots: Insn[]) => Array.from(loadProgramOrThrow(assemble(slots), { helpers: () => true }).insn, (w) => w & 0xff);
    const scan = (load: number): Insn[] => [
      [load, 6, 3, 0, 0],
      [0x0f, 0, 6, 0, 0],
      [0x07, 3, 0, 0, 1],
      [0x07, 5, 0, 0, -1],
      [0x55, 5, 0, -5, 0],
      [0x95, 0, 0, 0, 0],
    ];
    const tail = [Code.add64Reg, Code.addImmAddImmJneImm, Code.addImmJneImm, Code.jneImm, Code.exit];
    expect(codes(scan(0x71))).toEqual([Code.scanLdxb, ...tail]);
    expect(codes(scan(0x69))).toEqual([Code.scanLdxh, ...tail]);
    expect(codes(scan(0x61))).toEqual([Code.scanLdxw, ...tail]);
    expect(codes(scan(0x79))).toEqual([Code.scanLdxdw, ...tail]);
    // up-counting: r3 += 1; if r3 < r4 goto (an add-imm + jlt-reg pair after the load + add)
    const up = (load: number): Insn[] => [[load, 6, 3, 0, 0], [0x0f, 0, 6, 0, 0], [0x07, 3, 0, 0, 1], [0xad, 3, 4, -4, 0], [0x95, 0, 0, 0, 0]];
    const upTail = [Code.add64Reg, Code.addImmJltReg, Code.jltReg, Code.exit];
    expect(codes(up(0x71))).toEqual([Code.scanUpLdxb, ...upTail]);
    expect(codes(up(0x69))).toEqual([Code.scanUpLdxh, ...upTail]);
    expect(codes(up(0x61))).toEqual([Code.scanUpLdxw, ...upTail]);
    expect(codes(up(0x79))).toEqual([Code.scanUpLdxdw, ...upTail]);
    // a sign-extending load is not fused; nor is an add of another register than the loaded one
    expect(codes(scan(0x91))[0]).toBe(Code.ldxsb);
    const other = scan(0x71);
    (other[1] as Insn)[2] = 7;
    expect(codes(other)).toEqual([Code.ldxb, Code.add64Reg, Code.addImmAddImmJneImm, Code.addImmJneImm, Code.jneImm, Code.exit]);
  });

  it('agrees with the reference VM and the compiled tier', () => {
    const seen = { ok: 0, fault: 0, budget: 0, scans: 0, usual: 0, faultAfterLooping: 0, usualFaultAfterLooping: 0, usualExited: 0, usualBudget: 0 };
    const sizes = [0, 0, 0, 0, 0, 0, 0, 0];
    fc.assert(
      fc.property(programArb, fc.uint8Array({ minLength: 64, maxLength: 64 }), (bytes, ctx) => {
        let scanAt = new Set<number>();
        let usualAt = new Set<number>();
        const [interp, compiled] = vms.map((vm) => {
          const program = loadProgramOrThrow(bytes, vm.loadOptions());
          expect(vm.tierOf(program)).toBe(vm.tier);
          if (vm.tier === 'interpreter') {
            scanAt = new Set(Array.from(program.insn, (w, i) => (isScan(w) ? i : -1)));
            usualAt = new Set([...scanAt].filter((i) => i >= 0 && usualShape(program.insn, i)));
            seen.usual += usualAt.size;
            for (const w of program.insn) {
              if (!isScan(w)) continue;
              seen.scans++;
              const i = (w & 0xff) - Code.scanLdxb;
              sizes[i] = (sizes[i] as number) + 1;
            }
          }
          const status = vm.run(program, ctx);
          return { status, fault: vm.fault?.message, faultPc: vm.fault?.pc, count: vm.insnCount, regs: regs(vm) };
        });
        expect(interp).toEqual(compiled);
        if (interp?.status === RunStatus.budgetExhausted) {
          seen.budget++;
          if (usualAt.size > 0) seen.usualBudget++;
          return;
        }
        const ref = referenceRun(bytes, ctx, budget + 10);
        expect(ref.status).toBe(interp?.status === RunStatus.ok ? 'ok' : 'fault');
        expect(interp?.count).toBe(ref.steps);
        if (ref.status === 'fault') {
          seen.fault++;
          expect(interp?.faultPc).toBe(ref.faultPc);
          // a fault on a scanning loop's load after going round several times
          if (scanAt.has(ref.faultPc as number) && (interp?.count as number) > 30) seen.faultAfterLooping++;
          if (usualAt.has(ref.faultPc as number) && (interp?.count as number) > 30) seen.usualFaultAfterLooping++;
          return;
        }
        seen.ok++;
        if (usualAt.size > 0) seen.usualExited++;
        expect(interp?.regs).toEqual(ref.regs);
      }),
      { numRuns: 600, seed: 2226 }, // fixed: the coverage counts below are the same on every run
    );
    console.log(
      `scanning loops: 600 programs agree (${seen.scans} scans, ${seen.usual} in the usual shape, by code ${sizes.join('/')}; ${seen.ok} exited (${seen.usualExited} with a usual one), ${seen.fault} faulted (${seen.faultAfterLooping} after looping, ${seen.usualFaultAfterLooping} in a usual one), ${seen.budget} ran out of budget (${seen.usualBudget} with a usual one))`,
    );
    expect(Math.min(seen.ok, seen.fault, seen.budget, seen.faultAfterLooping, seen.usualFaultAfterLooping, seen.usualExited, seen.usualBudget)).toBeGreaterThan(20);
    expect(Math.min(seen.usual, seen.scans - seen.usual)).toBeGreaterThan(200);
    expect(Math.min(...sizes)).toBeGreaterThan(50);
  }, 120_000);
});
