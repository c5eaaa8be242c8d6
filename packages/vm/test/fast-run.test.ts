import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type LoadedProgram, loadProgramOrThrow, RunStatus, Vm } from '../src/index.js';
import { RecordCopy } from '../src/memory/record-copy.js';
import { slot } from './slot.js';

// The compiled tier's short path (Vm.runFast): a run of the program that ran last, fresh and
// compiled, to a normal exit takes it, and `start` then stores only the registers the program
// can write and zeroes frame 0 itself. Every run of a random sequence of programs, contexts
// (lengths, buffers, offsets), staged and unstaged records must end exactly as on a VM that
// interprets the same sequence: status, fault, count, every register, the stack, the context.

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const programs: Record<string, Uint8Array> = {
  // ctx_hash's shape: writes r0, r2, r3 only; faults when the context is shorter than 60 bytes
  hash: concat(
    slot(0x61, 2, 1, 24, 0), // r2 = *(u32 *)(r1 + 24)
    slot(0x61, 3, 1, 56, 0), // r3 = *(u32 *)(r1 + 56)
    slot(0x67, 3, 0, 0, 32), // r3 <<= 32
    slot(0x4f, 2, 3, 0, 0), // r2 |= r3
    slot(0xbf, 0, 2, 0, 0), // r0 = r2
    slot(0x77, 0, 0, 0, 33), // r0 >>= 33
    slot(0xaf, 0, 2, 0, 0), // r0 ^= r2
    slot(0x95, 0, 0, 0, 0),
  ),
  // reads the stack before writing it (a frame not zeroed shows the last run's value), r0 only
  stack: concat(
    slot(0x79, 0, 10, -8, 0), // r0 = *(u64 *)(r10 - 8)
    slot(0x61, 4, 1, 0, 0), // r4 = *(u32 *)(r1 + 0)   (faults on a context under 4 bytes)
    slot(0x0f, 0, 4, 0, 0), // r0 += r4
    slot(0x7b, 10, 4, -8, 0), // *(u64 *)(r10 - 8) = r4
    slot(0x7b, 10, 1, -16, 0), // *(u64 *)(r10 - 16) = r1
    slot(0x95, 0, 0, 0, 0),
  ),
  // writes every register r3..r9 with junk, then a load that faults under 44 bytes: the fault
  // leaves the junk in the register file for the next run to overwrite
  junk: concat(
    ...[3, 4, 5, 6, 7, 8, 9].map((r) => slot(0xb7, r, 0, 0, 0x1111 * r)),
    slot(0x61, 0, 1, 40, 0), // r0 = *(u32 *)(r1 + 40)
    slot(0x95, 0, 0, 0, 0),
  ),
  // a helper call (r0..r5 written), a byte loop over the context's r2 bytes, the budget on long ones
  loop: concat(
    slot(0xbf, 6, 1, 0, 0), // r6 = r1
    slot(0xbf, 7, 2, 0, 0), // r7 = r2
    slot(0x85, 0, 0, 0, 7), // call bpf_get_prandom_u32
    slot(0x57, 0, 0, 0, 0xff), // r0 &= 0xff
    slot(0x15, 7, 0, 5, 0), // if r7 == 0 goto exit
    slot(0x71, 3, 6, 0, 0), // r3 = *(u8 *)(r6 + 0)
    slot(0x0f, 0, 3, 0, 0), // r0 += r3
    slot(0x07, 6, 0, 0, 1), // r6 += 1
    slot(0x07, 7, 0, 0, -1), // r7 -= 1   then back to the test
    slot(0x05, 0, 0, -6, 0),
    slot(0x95, 0, 0, 0, 0),
  ),
};
// the loop jumps back by -6 to `if r7 == 0`: fix the offsets above if the program changes
const names = Object.keys(programs);

interface Outcome {
  status: RunStatus;
  fault: string | undefined;
  pc: number | undefined;
  count: number;
  regs: bigint[];
  /** The whole stack and the context, as hex (compared natively, not element by element). */
  stack: string;
  context: string;
}

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

function outcome(vm: Vm, status: RunStatus, length: number): Outcome {
  return {
    status,
    fault: vm.fault?.message,
    pc: vm.fault?.pc,
    count: vm.insnCount,
    regs: Array.from({ length: 11 }, (_, i) => BigInt.asUintN(64, (BigInt(vm.regHi[i] as number) << 32n) | BigInt((vm.regLo[i] as number) >>> 0))),
    stack: hex(vm.regionBytes[2] as Uint8Array),
    context: hex((vm.regionBytes[1] as Uint8Array).subarray(0, length)),
  };
}

/** The buffers records come from: a page, a bigger buffer, and a record in its own array. */
function buffers(): Uint8Array[] {
  const page = Uint8Array.from({ length: 4096 }, (_, i) => (i * 37 + 11) & 0xff);
  const big = new Uint8Array(new ArrayBuffer(20000), 4, 12000).map((_, i) => (i * 101 + 3) & 0xff);
  const own = Uint8Array.from({ length: 64 }, (_, i) => (i * 7) & 0xff);
  return [page, big, own];
}

const step = fc.record({
  program: fc.integer({ min: 0, max: names.length - 1 }),
  buffer: fc.integer({ min: 0, max: 2 }),
  offset: fc.nat({ max: 3000 }),
  length: fc.oneof(fc.constant(64), fc.integer({ min: 0, max: 300 })),
  /** 0: run; 1: staging on (drops the windows); 2: staging off; 3: change the buffer's bytes */
  action: fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) }),
  repeat: fc.integer({ min: 1, max: 3 }),
});

describe('the short path of a repeated compiled run', () => {
  it('ends every run as the interpreter does, over programs, contexts, staged and unstaged records', () => {
    let fast = 0;
    let runs = 0;
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        const compiled = new Vm({ budget: 3000, randomSeed: 5 });
        const reference = new Vm({ budget: 3000, randomSeed: 5, tier: 'interpreter' });
        const loaded = [compiled, reference].map((vm) => names.map((n) => loadProgramOrThrow(programs[n] as Uint8Array, vm.loadOptions(n))));
        for (const p of loaded[0] as LoadedProgram[]) expect(compiled.tierOf(p)).toBe('compiled');
        const bufs = buffers();
        for (const s of steps) {
          const bytes = bufs[s.buffer] as Uint8Array;
          if (s.action === 1) compiled.stageRecords(true);
          else if (s.action === 2) compiled.stageRecords(false);
          else if (s.action === 3) {
            for (let i = 0; i < bytes.length; i += 3) bytes[i] = ((bytes[i] as number) + 1) & 0xff;
            compiled.stageRecords(compiled.stagedWindows >= 0); // the caller's promise: renew
          }
          const offset = Math.min(s.offset, Math.max(0, bytes.length - 1));
          const length = Math.min(s.length, bytes.length - offset);
          for (let r = 0; r < s.repeat; r++) {
            const before = compiled.tierCounters.fastRuns;
            const got = outcome(compiled, compiled.run((loaded[0] as LoadedProgram[])[s.program] as LoadedProgram, bytes, offset, length), length);
            fast += compiled.tierCounters.fastRuns - before;
            runs++;
            const want = outcome(reference, reference.run((loaded[1] as LoadedProgram[])[s.program] as LoadedProgram, bytes, offset, length), length);
            expect(got).toEqual(want);
          }
        }
      }),
      { numRuns: 100, seed: 2216 }, // fixed: the coverage count below is the same on every run
    );
    console.log(`short path: ${fast} of ${runs} compiled runs took it, all equal to the interpreter's`);
    expect(fast).toBeGreaterThan(runs / 4);
  });

  it('keeps the registers a program never writes right after another program filled them', () => {
    const vm = new Vm({ budget: 3000 });
    const hash = loadProgramOrThrow(programs.hash as Uint8Array, vm.loadOptions('hash'));
    const junk = loadProgramOrThrow(programs.junk as Uint8Array, vm.loadOptions('junk'));
    const ctx = Uint8Array.from({ length: 64 }, (_, i) => i);
    // hash writes r0, r2 and r3: r1 stays the context, r4..r9 zero, r10 the top of frame 0
    const expectStart = () => {
      expect(vm.regLo[1]).toBe(0);
      expect(vm.regHi[1]).toBe(1); // the context region
      expect([vm.regLo[10], vm.regHi[10]]).toEqual([4096, 2]);
      for (let r = 4; r <= 9; r++) expect([vm.regLo[r], vm.regHi[r]]).toEqual([0, 0]);
    };
    for (const first of [true, false]) {
      vm.run(hash, ctx);
      const fastBefore = vm.tierCounters.fastRuns;
      vm.run(hash, ctx, 0, 60);
      expect(vm.tierCounters.fastRuns).toBe(fastBefore + 1);
      expectStart();
      // junk faults (the context is 40 bytes) and leaves r3..r9 = junk in the register file
      expect(vm.run(junk, ctx, 0, 40)).toBe(RunStatus.fault);
      expect(vm.regLo[9]).toBe(0x1111 * 9);
      if (first) expect(vm.run(junk, ctx, 0, 40)).toBe(RunStatus.fault);
      // the next run of hash (still a short-path program) stores every register again
      const fastBeforeFull = vm.tierCounters.fastRuns;
      expect(vm.run(hash, ctx)).toBe(RunStatus.ok);
      expect(vm.tierCounters.fastRuns).toBe(fastBeforeFull + 1);
      expectStart();
      expect(vm.run(hash, ctx)).toBe(RunStatus.ok);
      expectStart();
    }
  });

  it('takes the short path for two programs that alternate on one VM (a spec of two events)', () => {
    const vm = new Vm({ budget: 3000 });
    const reference = new Vm({ budget: 3000, tier: 'interpreter' });
    const [a, b] = [vm, reference].map((v) => ['hash', 'stack'].map((n) => loadProgramOrThrow(programs[n] as Uint8Array, v.loadOptions(n))));
    const page = Uint8Array.from({ length: 4096 }, (_, i) => (i * 13) & 0xff);
    vm.stageRecords(true);
    for (let k = 0; k < 40; k++) {
      const which = k % 2;
      const got = outcome(vm, vm.run((a as LoadedProgram[])[which] as LoadedProgram, page, 64 * k, 64), 64);
      const want = outcome(reference, reference.run((b as LoadedProgram[])[which] as LoadedProgram, page, 64 * k, 64), 64);
      expect(got).toEqual(want);
    }
    // the first run of each is general, every later one short
    expect(vm.tierCounters.fastRuns).toBe(38);
  });

  it('reports a fault on the short path at the same instruction, then runs normally again', () => {
    const vm = new Vm({ budget: 3000 });
    const hash = loadProgramOrThrow(programs.hash as Uint8Array, vm.loadOptions('hash'));
    const page = Uint8Array.from({ length: 4096 }, (_, i) => i & 0xff);
    vm.stageRecords(true);
    for (let k = 0; k < 3; k++) {
      expect(vm.run(hash, page, 64 * k, 64)).toBe(RunStatus.ok);
      const fastBefore = vm.tierCounters.fastRuns;
      // 58 bytes: the load at offset 56 (4 bytes) is out of the context, pc 1
      expect(vm.run(hash, page, 64 * k, 58)).toBe(RunStatus.fault);
      expect(vm.tierCounters.fastRuns).toBe(fastBefore + 1);
      expect(vm.fault?.pc).toBe(1);
      expect(vm.fault?.message).toContain('outside region context of 58 bytes');
      expect(vm.insnCount).toBe(2);
      // the general path again, then the short one
      expect(vm.run(hash, page, 64 * k + 64, 64)).toBe(RunStatus.ok);
      expect(vm.fault).toBeUndefined();
    }
  });

  it('zeroes frame 0 between runs of a program that writes it', () => {
    const vm = new Vm({ budget: 3000 });
    const stack = loadProgramOrThrow(programs.stack as Uint8Array, vm.loadOptions('stack'));
    const ctx = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
    for (let k = 0; k < 4; k++) {
      ctx[0] = k + 10;
      expect(vm.run(stack, ctx)).toBe(RunStatus.ok);
      // r0 = the stack slot before the write (0) + the context's first word
      expect(vm.r0).toBe(BigInt(0x04030200 + k + 10));
    }
    expect(vm.tierCounters.fastRuns).toBe(3);
  });
});

describe('RecordCopy (a record copied into the context in JavaScript)', () => {
  it('copies exactly the bytes `set` copies, whatever the array, its offset in its buffer and the record', () => {
    const copier = new RecordCopy();
    const dst = new Uint8Array(1024);
    const dstWords = new Int32Array(dst.buffer);
    const backing = [new ArrayBuffer(8192), new ArrayBuffer(70), new ArrayBuffer(4096)];
    for (const b of backing) {
      const a = new Uint8Array(b);
      for (let i = 0; i < a.length; i++) a[i] = (i * 131 + b.byteLength) & 0xff;
    }
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 }),
        fc.nat({ max: 60 }),
        fc.nat({ max: 600 }),
        fc.nat({ max: 600 }),
        fc.boolean(),
        (b, arrayOffset, byteOffset, n, fresh) => {
          const buffer = backing[b] as ArrayBuffer;
          const start = Math.min(arrayOffset, buffer.byteLength);
          // a new array object over a known buffer, or the same one again
          const array = new Uint8Array(buffer, start, buffer.byteLength - start);
          const at = Math.min(byteOffset, array.length);
          const len = Math.min(n, array.length - at, dst.length);
          dst.fill(0xee);
          copier.copy(dst, dstWords, array, at, len);
          if (!fresh) copier.copy(dst, dstWords, array, at, len);
          expect(hex(dst.subarray(0, len))).toBe(hex(array.subarray(at, at + len)));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
