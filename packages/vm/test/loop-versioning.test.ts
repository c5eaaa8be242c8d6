import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assembleInstructions, encode } from '@probeyard/isa';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadProgramOrThrow, RunStatus, Vm, type VmTier } from '../src/index.js';
import { compileToWasm } from '../src/wasm/compile-wasm.js';
import { FAST_LOOPS_ADDR } from '../src/memory/layout.js';
import { corpusRoot } from './conformance-corpus.js';
import { referenceRun } from './reference-vm.js';

// Loop versioning in the compiled tier (compile-wasm.ts, versionPlan): a counted self-loop runs
// an unchecked, uncounted copy of its body when the trip count, the budget and every access's
// whole address range check out on entry, else the checked loop. Neither may be visible: random
// counted self-loops (ALU ops, loads, stores and atomics through stepping and fixed bases, random
// starts, steps, bounds and budgets; loops that fault part-way, wrap, run out of budget, never
// qualify) must end exactly as on the interpreter, and as on the BigInt reference VM when they
// end within the budget. The fast copy counts its entries in linear memory (FAST_LOOPS_ADDR),
// which is how these tests see which path ran.

const tiers: VmTier[] = ['interpreter', 'compiled'];
const budgets = [150, 2_000, 100_000];
const vmsByBudget = budgets.map((budget) => tiers.map((tier) => new Vm({ tier, budget, standardHelpers: false })));

function asm(text: string): Uint8Array {
  return encode(assembleInstructions(text, { syntax: 'llvm' }));
}

/** The compiler's report on `bytes` (which self-loops got a fast copy). */
function compileReport(bytes: Uint8Array) {
  const vm = (vmsByBudget[0] as Vm[])[1] as Vm;
  return compileToWasm(loadProgramOrThrow(bytes, vm.loadOptions()));
}

/** Entries into fast copies so far on this (compiled) VM. */
function fastEntries(vm: Vm): number {
  return new Int32Array(vm.regLo.buffer, FAST_LOOPS_ADDR, 1)[0] as number;
}

function outcome(vm: Vm, status: RunStatus, contextLength: number) {
  const f = vm.fault;
  return {
    status,
    fault: f && { message: f.message, pc: f.pc, address: f.address, region: f.region },
    count: vm.insnCount,
    regs: Array.from({ length: 11 }, (_, i) =>
      BigInt.asUintN(64, (BigInt(vm.regHi[i] as number) << 32n) | BigInt((vm.regLo[i] as number) >>> 0)),
    ),
    stack: (vm.regionBytes[2] as Uint8Array).slice(4096 - 512, 4096),
    context: (vm.regionBytes[1] as Uint8Array).slice(0, contextLength),
  };
}

/** Runs `bytes` on both tiers with `budget`; returns both outcomes and the fast entries of the compiled run. */
function both(bytes: Uint8Array, ctx: Uint8Array, budget = 100_000) {
  const vms = vmsByBudget[budgets.indexOf(budget)] as Vm[];
  let fast = 0;
  const outs = vms.map((vm) => {
    const program = loadProgramOrThrow(bytes, vm.loadOptions());
    expect(vm.tierOf(program)).toBe(vm.tier);
    const before = vm.tier === 'compiled' ? fastEntries(vm) : 0;
    const out = outcome(vm, vm.run(program, ctx), ctx.length);
    if (vm.tier === 'compiled') fast = fastEntries(vm) - before;
    return out;
  });
  return { interpreted: outs[0] as ReturnType<typeof outcome>, compiled: outs[1] as ReturnType<typeof outcome>, fast };
}

const hex = (v: bigint) => `0x${BigInt.asUintN(64, v).toString(16)}`;
const dataReg = fc.constantFrom('r0', 'r6', 'r7', 'r8', 'r9');
const baseReg = fc.constantFrom('r1', 'r2', 'r3', 'r4');
const anyReg = fc.constantFrom('r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9', 'r10');
const offset = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -4, max: 24 }) },
  { weight: 2, arbitrary: fc.integer({ min: -12, max: 70 }) },
  { weight: 1, arbitrary: fc.constantFrom(-512, -8, 0, 63, 64, 0x7fff, -0x8000) },
);
const mem = (size: string, base: string, off: number) => `*(${size} *)(${base} ${off < 0 ? '-' : '+'} ${Math.abs(off)})`;
const step = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -9, max: 9 }) },
  { weight: 1, arbitrary: fc.constantFrom(1 << 20, -(1 << 20), (1 << 24) + 1, 0x7fffffff, -0x80000000, 4096, -4095) },
);

/** One body line: ALU, a load, a store, an atomic, a base step, or (rarely) a write that breaks the plan. */
const line: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .tuple(fc.boolean(), dataReg, fc.constantFrom('+', '-', '*', '^', '|', '&', '<<', '>>', 's>>', '/', '%'), fc.oneof(anyReg, fc.integer({ min: -100, max: 100 })))
      .map(([is32, d, op, src]) => {
        if (typeof src === 'number') return `${is32 ? d.replace('r', 'w') : d} ${op}= ${src}`;
        return is32 ? `${d.replace('r', 'w')} ${op}= ${src === 'r10' ? 'w1' : src.replace('r', 'w')}` : `${d} ${op}= ${src}`;
      }),
  },
  {
    weight: 8,
    arbitrary: fc
      .tuple(dataReg, fc.constantFrom('u8', 'u16', 'u32', 'u64', 's8', 's16', 's32'), baseReg, offset)
      .map(([d, size, b, off]) => `${d} = ${mem(size, b, off)}`),
  },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('u8', 'u16', 'u32', 'u64'), fc.constantFrom('r1', 'r2', 'r3', 'r4', 'r10'), offset, fc.oneof(anyReg, fc.integer({ min: -5, max: 5 })))
      .map(([size, b, off, v]) => `${mem(size, b, b === 'r10' ? -Math.min(Math.abs(off) + 1, 0x8000) : off)} = ${typeof v === 'number' ? v : size === 'u64' ? v : v.replace('r', 'w').replace('w10', 'w1')}`),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(baseReg, offset, dataReg, fc.constantFrom('+=', '|=', '^='), fc.boolean())
      .map(([b, off, s, op, fetch]) =>
        fetch ? `${s} = atomic_fetch_add((u64 *)(${b} ${off < 0 ? '-' : '+'} ${Math.abs(off)}), ${s})` : `lock ${mem('u64', b, off)} ${op} ${s}`,
      ),
  },
  { weight: 6, arbitrary: fc.tuple(baseReg, fc.boolean(), step).map(([b, add, k]) => `${b} ${add ? '+=' : '-='} ${k}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('w5 += -1', 'r3 = r0', 'r2 *= 1', 'r5 <<= 0', 'r3 = *(u8 *)(r1 + 0)', 'w2 += 1', 'r4 = r5', 'r5 = r5', 'r5 += r0'),
  },
);

const conds = ['!=', '<', '<=', '>', '>=', 's<', 's<=', 's>', 's>=', '=='];

/**
 * A counted self-loop: random registers, r1 the context and pointers in r2..r4 (into the context,
 * the stack, or raw 64-bit values next to region edges and half boundaries), a counter (r5, or
 * the base r3 against a bound or an end pointer in r4), a random body with the counter's step, a
 * random exit test (mostly one that can be versioned), sometimes an access after the loop.
 */
const loopProgram = fc
  .record({
    data: fc.array(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), { minLength: 5, maxLength: 5 }),
    pointers: fc.array(
      fc.oneof(
        { weight: 3, arbitrary: fc.tuple(fc.constant('ctx'), fc.integer({ min: -16, max: 80 })) },
        { weight: 2, arbitrary: fc.tuple(fc.constant('stack'), fc.integer({ min: -530, max: 12 })) },
        fc.tuple(
          fc.constant('raw'),
          fc.constantFrom(0n, 1n, 2n, 3n, 0xffffffffn),
          fc.oneof(fc.integer({ min: 0, max: 80 }), fc.integer({ min: -80, max: -1 }).map((k) => 0x1_0000_0000 + k), fc.constantFrom(4096 - 512, 4000)),
        ),
      ),
      { minLength: 3, maxLength: 3 },
    ),
    counterIsBase: fc.boolean(),
    /** 0..6: an exit test matching the step's direction (the ones that can be versioned), else any */
    condKind: fc.integer({ min: 0, max: 9 }),
    cond: fc.constantFrom(...conds),
    after: fc.constantFrom('', 'r6 = *(u8 *)(r3 + 0)', 'r6 = *(u32 *)(r2 - 4)', 'r0 += r5'),
    is32: fc.integer({ min: 0, max: 9 }).map((k) => k === 0),
    boundInRegister: fc.boolean(),
    bound: fc.oneof(fc.integer({ min: -3, max: 40 }).map(BigInt), fc.constantFrom(-1n, 0x7fffffffn, -0x80000000n)),
    counterStep: fc.oneof(fc.constantFrom(1, -1, 2, -2, 3, -3, 4, -4, 8, 7, -7), step),
    trips: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 41, max: 3000 })),
    jitter: fc.oneof({ weight: 4, arbitrary: fc.constant(0n) }, { weight: 1, arbitrary: fc.bigInt({ min: -3n, max: 3n }) }, { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }) }),
    body: fc.array(line, { minLength: 0, maxLength: 8 }),
    counterAt: fc.nat(),
    ctx: fc.uint8Array({ minLength: 64, maxLength: 64 }),
    budget: fc.constantFrom(...budgets),
  })
  .map((c) => {
    const lines: string[] = [];
    for (const [i, r] of ['r0', 'r6', 'r7', 'r8', 'r9'].entries()) lines.push(`${r} = ${hex(c.data[i] as bigint)} ll`);
    c.pointers.forEach((p, i) => {
      const r = `r${i + 2}`;
      if (p[0] === 'ctx') lines.push(`${r} = r1`, `${r} += ${p[1]}`);
      else if (p[0] === 'stack') lines.push(`${r} = r10`, `${r} += ${p[1]}`);
      else lines.push(`${r} = ${hex(((p[1] as bigint) << 32n) | BigInt(p[2] as number))} ll`);
    });
    // the counter: x = bound - trips x step (+ jitter), so the loop often ends after `trips`
    const counter = c.counterIsBase ? 'r3' : 'r5';
    const boundValue = c.counterIsBase && c.boundInRegister ? 0n : c.bound;
    const start = BigInt.asUintN(64, boundValue - BigInt(c.trips) * BigInt(c.counterStep) + c.jitter);
    if (c.counterIsBase && c.boundInRegister) {
      // pointer loop: r3 walks towards the end pointer r4 = r3 + trips x step
      lines.push(`r4 = r3`, `r4 += ${Math.max(-0x80000000, Math.min(0x7fffffff, c.trips * c.counterStep))}`);
    } else if (c.counterIsBase) lines.push(`r3 = ${hex(start)} ll`);
    else lines.push(`r5 = ${hex(start)} ll`);
    if (c.boundInRegister && !c.counterIsBase) lines.push(`r4 = ${hex(c.bound)} ll`);
    const body = [...c.body];
    body.splice(c.counterAt % (body.length + 1), 0, `${counter} += ${c.counterStep}`);
    const x = c.is32 ? counter.replace('r', 'w') : counter;
    const matching = c.counterStep > 0 ? ['!=', '<', '<=', 's<', 's<='] : ['!=', '>', '>=', 's>', 's>='];
    const cond = c.condKind < 7 ? (matching[conds.indexOf(c.cond) % 5] as string) : c.cond;
    const bound = c.boundInRegister ? (c.is32 ? 'w4' : 'r4') : String(BigInt.asIntN(32, c.bound));
    // then, sometimes, an instruction that sees the registers the loop left (and may fault)
    lines.push('loop:', ...body, `if ${x} ${cond} ${bound} goto loop`, ...(c.after ? [c.after] : []), 'exit');
    return { text: lines.join('\n'), ctx: c.ctx, budget: c.budget };
  });

describe('loop versioning (compiled tier) against the interpreter', () => {
  it('agrees on random counted self-loops, fast path or not', () => {
    const seen = { fast: 0, checked: 0, unversioned: 0, ok: 0, fault: 0, budget: 0, faultAfterFast: 0, reference: 0 };
    fc.assert(
      fc.property(loopProgram, ({ text, ctx, budget }) => {
        const bytes = asm(text);
        const compiled = compileReport(bytes);
        expect(compiled.ok).toBe(true);
        const versioned = compiled.ok && compiled.versionedLoops.length > 0;
        const r = both(bytes, ctx, budget);
        expect(r.compiled).toEqual(r.interpreted);
        if (!versioned) {
          expect(r.fast).toBe(0);
          seen.unversioned++;
        } else if (r.fast > 0) seen.fast++;
        else seen.checked++;
        const status = r.interpreted.status;
        if (status === RunStatus.ok) seen.ok++;
        if (status === RunStatus.fault) seen.fault++;
        if (status === RunStatus.budgetExhausted) seen.budget++;
        if (status === RunStatus.fault && r.fast > 0) seen.faultAfterFast++;
        if (status !== RunStatus.budgetExhausted) {
          // within the budget: the BigInt reference VM too (it knows frame 0 only: no r10 below it)
          const ref = referenceRun(bytes, ctx, budget + 10);
          expect(ref.status).toBe(status === RunStatus.ok ? 'ok' : 'fault');
          if (ref.status === 'fault') expect(r.interpreted.fault?.pc).toBe(ref.faultPc);
          else {
            expect(r.interpreted.regs.slice(0, 10)).toEqual(ref.regs.slice(0, 10));
            expect(r.interpreted.context).toEqual(ref.context);
            expect(r.interpreted.count).toBe(ref.steps);
          }
          seen.reference++;
        }
      }),
      { numRuns: 2500, seed: 2213 }, // fixed: the coverage counts below are the same on every run
    );
    console.log(
      `loop versioning: 2500 random self-loops agree: ${seen.fast} took the fast copy, ${seen.checked} versioned but checked (an entry check failed), ${seen.unversioned} not versioned; ${seen.ok} ok, ${seen.fault} faulted (${seen.faultAfterFast} after a fast loop), ${seen.budget} ran out of budget; ${seen.reference} also against the reference VM`,
    );
    // every path is exercised, not just one
    expect(seen.fast).toBeGreaterThan(250);
    expect(seen.checked).toBeGreaterThan(200);
    expect(seen.unversioned).toBeGreaterThan(200);
    expect(seen.fault).toBeGreaterThan(200);
    expect(seen.budget).toBeGreaterThan(150);
  });

  it('agrees on trip counts: every exit test, steps and starts next to the bound, 64-bit edges', () => {
    // only the counter and registers: every error in the trip count shows in r0 (a sum over the
    // iterations), r5 or the count
    const edge = fc.constantFrom(0n, 1n, -1n, 0x7fffffffn, -0x80000000n, 0x7fffffffffffffffn, -0x8000000000000000n, 0xffffffffn);
    const seen = { fast: 0, ok: 0, budget: 0 };
    fc.assert(
      fc.property(
        fc.constantFrom(...conds),
        fc.boolean(),
        fc.oneof(fc.constantFrom(1, -1, 2, -2, 3, -3, 4, -4, 7, -8, 16), step),
        fc.oneof(edge, fc.integer({ min: -40, max: 40 }).map(BigInt)),
        fc.integer({ min: 0, max: 400 }),
        fc.oneof(fc.bigInt({ min: -3n, max: 3n }), edge, fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })),
        fc.constantFrom(2_000, 100_000),
        (cond, inRegister, k, boundValue, trips, jitter, budget) => {
          const bound = inRegister ? boundValue : BigInt.asIntN(32, boundValue);
          const start = BigInt.asUintN(64, bound - BigInt(trips * k) + jitter);
          const text = [
            `r5 = ${hex(start)} ll`,
            `r4 = ${hex(bound)} ll`,
            'r0 = 0',
            'loop:',
            'r0 *= 3',
            'r0 += r5',
            `r5 += ${k}`,
            `if r5 ${cond} ${inRegister ? 'r4' : String(bound)} goto loop`,
            'exit',
          ].join('\n');
          const r = both(asm(text), new Uint8Array(8), budget);
          expect(r.compiled).toEqual(r.interpreted);
          if (r.fast > 0) seen.fast++;
          if (r.interpreted.status === RunStatus.ok) seen.ok++;
          else seen.budget++;
        },
      ),
      { numRuns: 2000, seed: 2214 }, // fixed: the coverage counts below are the same on every run
    );
    console.log(`loop versioning: 2000 counter loops agree: ${seen.fast} took the fast copy; ${seen.ok} ended, ${seen.budget} ran out of budget`);
    expect(seen.fast).toBeGreaterThan(400);
    expect(seen.budget).toBeGreaterThan(200);
  });

  const memSumLike = (length: number) => `
    r0 = 0
    r4 = 3
  pass:
    r3 = r1
    r5 = ${length}
  byte:
    r6 = *(u8 *)(r3 + 0)
    r0 += r6
    r3 += 1
    r5 += -1
    if r5 != 0 goto byte
    r4 += -1
    if r4 != 0 goto pass
    exit`;

  it('takes the fast path on mem_sum-shaped loops, and only where it is exact', () => {
    const ctx = Uint8Array.from({ length: 2048 }, (_, i) => Math.imul(i, 2654435761) >>> 24);
    const bytes = asm(memSumLike(2048));
    const compiled = compileReport(bytes);
    expect(compiled.ok && compiled.versionedLoops).toEqual([4]); // the byte loop; the pass loop is no self-loop
    let r = both(bytes, ctx);
    expect(r.interpreted.status).toBe(RunStatus.ok);
    expect(r.interpreted.regs[0]).toBe(0xbf20bn); // the corpus README's r0 for L = 2048
    expect(r.compiled).toEqual(r.interpreted);
    expect(r.fast).toBe(3); // one fast entry per pass
    // the range check fails on entry (the last pass would read past the record): checked loop, same fault
    r = both(asm(memSumLike(2049)), ctx);
    expect(r.interpreted.status).toBe(RunStatus.fault);
    expect(r.interpreted.fault?.pc).toBe(4);
    expect(r.compiled).toEqual(r.interpreted);
    expect(r.fast).toBe(0);
    // the budget check fails on entry: the checked loop runs out where the interpreter does
    r = both(asm(memSumLike(2048)), ctx, 2_000);
    expect(r.interpreted.status).toBe(RunStatus.budgetExhausted);
    expect(r.compiled).toEqual(r.interpreted);
    expect(r.fast).toBe(0);
    // a 32-bit counter is no induction register: not versioned, still the same
    const w = asm(memSumLike(64).replace('r5 += -1', 'w5 += -1'));
    const cw = compileReport(w);
    expect(cw.ok && cw.versionedLoops).toEqual([]);
    r = both(w, ctx);
    expect(r.compiled).toEqual(r.interpreted);
  });

  it.each([
    ['a pointer walking to an end pointer', 'r3 = r1\nr4 = r1\nr4 += r2\nr0 = 0\nloop:\nr6 = *(u8 *)(r3 + 0)\nr0 += r6\nr3 += 1\nif r3 < r4 goto loop\nexit', 1],
    ['a signed countdown storing to the stack', 'r5 = 40\nr3 = r10\nr3 += -320\nloop:\n*(u64 *)(r3 + 0) = r5\nr3 += 8\nr5 += -1\nif r5 s> 0 goto loop\nr0 = *(u64 *)(r10 - 8)\nexit', 1],
    ['an unsigned count up to a register bound', 'r5 = 0\nr4 = 16\nr0 = 0\nloop:\nr6 = *(u32 *)(r1 + 4)\nr0 ^= r6\nr5 += 1\nif r5 <= r4 goto loop\nexit', 1],
    ['a step that never hits the bound (wraps)', 'r5 = 5\nloop:\nr0 += 1\nr5 += 2\nif r5 != 0 goto loop\nexit', 0],
  ])('%s', (_what, text, fast) => {
    const ctx = Uint8Array.from({ length: 256 }, (_, i) => i);
    const r = both(asm(text), ctx);
    expect(r.compiled).toEqual(r.interpreted);
    expect(r.fast).toBe(fast);
  });

  const memSumFile = corpusRoot && join(corpusRoot, 'perf-workloads', 'mem_sum.hex');
  if (!memSumFile || !existsSync(memSumFile)) console.log('loop versioning: corpus mem_sum skipped: ../shared/corpus/perf-workloads is absent');
  it.skipIf(!memSumFile || !existsSync(memSumFile))('takes the fast path on the corpus mem_sum (64 KiB, 3 passes)', () => {
    const bytes = new Uint8Array(Buffer.from(readFileSync(memSumFile as string, 'utf8').trim(), 'hex'));
    const buffer = Uint8Array.from({ length: 65536 }, (_, i) => Math.imul(i, 2654435761) >>> 24);
    const vm = new Vm({ tier: 'compiled' });
    const program = loadProgramOrThrow(bytes, vm.loadOptions());
    const compiled = compileToWasm(program);
    expect(compiled.ok && compiled.versionedLoops).toEqual([4]);
    const before = fastEntries(vm);
    expect(vm.run(program, buffer)).toBe(RunStatus.ok);
    expect(vm.r0).toBe(0x017e7f67n);
    expect(vm.insnCount).toBe(983_055);
    expect(fastEntries(vm) - before).toBe(3);
  });
});
