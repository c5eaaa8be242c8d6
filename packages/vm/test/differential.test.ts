import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadProgramOrThrow, RunStatus, STACK_REGION, Vm } from '../src/index.js';
import { randomProgram } from './random-program.js';
import { referenceRun } from './reference-vm.js';

// Fast VM against the BigInt reference VM on random straight-line programs with forward jumps:
// both must agree on the outcome (exit or fault, and where), every register, and every byte of
// the context and the stack.

describe.each(['interpreter', 'compiled'] as const)('fast VM (%s) against the reference VM', (tier) => {
  const vm = new Vm({ standardHelpers: false, tier });
  it('agrees on random programs (registers, memory, faults)', () => {
    fc.assert(
      fc.property(randomProgram(), fc.uint8Array({ minLength: 64, maxLength: 64 }), (bytes, ctx) => {
        const program = loadProgramOrThrow(bytes, vm.loadOptions());
        expect(vm.tierOf(program)).toBe(tier); // no silent fallback to the interpreter
        const status = vm.run(program, ctx);
        const ref = referenceRun(bytes, ctx);
        expect(status === RunStatus.ok ? 'ok' : 'fault').toBe(ref.status);
        if (ref.status === 'fault') {
          expect(vm.fault?.pc).toBe(ref.faultPc);
          return;
        }
        const regs = Array.from({ length: 11 }, (_, i) =>
          BigInt.asUintN(64, (BigInt(vm.regHi[i] as number) << 32n) | BigInt((vm.regLo[i] as number) >>> 0)),
        );
        expect(regs).toEqual(ref.regs);
        expect(vm.regionBytes[STACK_REGION]?.subarray(4096 - 512)).toEqual(ref.stack.subarray(4096 - 512));
        expect(vm.regionBytes[1]?.subarray(0, 64)).toEqual(ref.context);
        expect(vm.insnCount).toBe(ref.steps);
      }),
      { numRuns: 3000 },
    );
  });
});
