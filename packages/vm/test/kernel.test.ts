import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createMap, Errno, loadProgramOrThrow, MapType, RunStatus, STACK_REGION, Vm } from '../src/index.js';
import { KernelProgType, KernelRunner } from '../src/node/index.js';
import { existsSync, readFileSync } from 'node:fs';
import { parseEventFormat } from '@probeyard/formats';
import { assembleForKernel } from './kernel-program.js';
import { expectedResults, queueStackCase, queueStackProgram, resultBytes } from './queue-stack-program.js';
import { randomProgram } from './random-program.js';
import { slot } from './slot.js';
import { syscountSource } from './runtime.test-program.js';

// The kernel as the reference: the same random programs through BPF_PROG_TEST_RUN (as XDP), and
// the same map operation sequences through bpf(). Needs root and the bpf() syscall.
const opened = KernelRunner.open();
const kernel = opened instanceof KernelRunner ? opened : undefined;
if (!kernel) console.log(`kernel differential tests: skipped: ${(opened as { unavailable: string }).unavailable}`);
afterAll(() => kernel?.close());

const RESULT_BYTES = 80 + 512;

/** The program inside a wrapper: zero the stack, run, then copy r0-r9 and the stack into map 0. */
function wrapForKernel(program: Uint8Array): Uint8Array {
  const out: number[] = [];
  const insn = (op: number, dst: number, src: number, off: number, imm: number) => out.push(...slot(op, dst, src, off, imm));
  for (let k = 1; k <= 64; k++) insn(0x7a, 10, 0, -8 * k, 0); // *(u64 *)(r10 - 8k) = 0
  out.push(...program.subarray(0, program.length - 8)); // without its exit
  insn(0x7b, 10, 9, -8, 0); // *(u64 *)(r10 - 8) = r9
  insn(0x18, 9, 2, 0, 0); // r9 = &map[0].value (BPF_PSEUDO_MAP_VALUE)
  insn(0, 0, 0, 0, 0);
  for (let r = 0; r <= 8; r++) insn(0x7b, 9, r, 8 * r, 0);
  insn(0x79, 8, 10, -8, 0);
  insn(0x7b, 9, 8, 72, 0);
  for (let k = 2; k <= 64; k++) {
    insn(0x79, 8, 10, -8 * k, 0);
    insn(0x7b, 9, 8, 80 + 512 - 8 * k, 0);
  }
  insn(0xb7, 0, 0, 0, 0);
  insn(0x95, 0, 0, 0, 0);
  return Uint8Array.from(out);
}

describe.skipIf(!kernel)('VM against the kernel', () => {
  const vm = new Vm({ standardHelpers: false });
  const compiledVm = new Vm({ standardHelpers: false, tier: 'compiled' });

  it('random programs give the same registers and stack as BPF_PROG_TEST_RUN', async () => {
    const cases = fc.sample(randomProgram({ kernel: true }), { numRuns: 500, seed: 20261129 });
    let compared = 0;
    const refused: string[] = [];
    for (const bytes of cases) {
      const r = await (kernel as KernelRunner).runProgram({
        progType: KernelProgType.xdp,
        insns: wrapForKernel(bytes),
        data: new Uint8Array(64),
        maps: [{ type: MapType.array, keySize: 4, valueSize: RESULT_BYTES, maxEntries: 1 }],
      });
      if (!r.ok) {
        refused.push(`errno ${r.errno}: ${r.log}`);
        continue;
      }
      for (const v of [vm, compiledVm]) {
        const status = v.run(loadProgramOrThrow(bytes, v.loadOptions()), new Uint8Array(64));
        expect(status).toBe(RunStatus.ok);
        const k = new DataView((r.mapValues[0] as Uint8Array).buffer);
        for (let reg = 0; reg <= 9; reg++) {
          const mine = BigInt.asUintN(64, (BigInt(v.regHi[reg] as number) << 32n) | BigInt((v.regLo[reg] as number) >>> 0));
          expect([v.tier, reg, mine.toString(16)]).toEqual([v.tier, reg, k.getBigUint64(8 * reg, true).toString(16)]);
        }
        const stack = v.regionBytes[STACK_REGION] as Uint8Array;
        // compare [r10-512, r10-16) (r10-8 holds the wrapper's spill)
        expect(stack.subarray(4096 - 512, 4096 - 16)).toEqual((r.mapValues[0] as Uint8Array).subarray(80, 80 + 512 - 16));
      }
      compared++;
    }
    console.log(`kernel differential: ${compared}/${cases.length} random programs compared on both tiers; kernel refused ${refused.length}${refused.length ? ` (first: ${refused[0]})` : ''}`);
    expect(compared).toBeGreaterThan(cases.length * 0.9);
  }, 180_000);

  it('the perf workloads return the same r0', async () => {
    const { readFileSync, existsSync } = await import('node:fs');
    const dir = '/work/shared/corpus/perf-workloads';
    if (!existsSync(dir)) return;
    for (const name of ['alu_loop_100k']) {
      const bytes = new Uint8Array(Buffer.from(readFileSync(`${dir}/${name}.hex`, 'utf8').trim(), 'hex'));
      const r = await (kernel as KernelRunner).runProgram({ progType: KernelProgType.xdp, insns: bytes, data: new Uint8Array(64) });
      expect(r.ok).toBe(true);
      const status = vm.run(loadProgramOrThrow(bytes, vm.loadOptions()), new Uint8Array(0));
      expect(status).toBe(RunStatus.ok);
      expect(r.ok && r.retval).toBe(Number(vm.r0 & 0xffffffffn));
    }
  });

  type Op = { op: 'update'; key: number; value: number; flags: number } | { op: 'delete'; key: number } | { op: 'lookup'; key: number } | { op: 'next'; key: number | undefined };
  const opArb = (keys: number) =>
    fc.oneof(
      fc.record({ op: fc.constant('update' as const), key: fc.integer({ min: 0, max: keys }), value: fc.integer({ min: 0, max: 1000 }), flags: fc.constantFrom(0, 1, 2, 3) }),
      fc.record({ op: fc.constant('delete' as const), key: fc.integer({ min: 0, max: keys }) }),
      fc.record({ op: fc.constant('lookup' as const), key: fc.integer({ min: 0, max: keys }) }),
      fc.record({ op: fc.constant('next' as const), key: fc.option(fc.integer({ min: 0, max: keys }), { nil: undefined }) }),
    );
  const u32 = (n: number) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, n, true);
    return b;
  };

  it.each([
    ['hash', MapType.hash, 4],
    ['array', MapType.array, 4],
  ])('%s map: the same operations give the same results as the kernel', async (_name, type, maxEntries) => {
    const k = kernel as KernelRunner;
    const sequences = fc.sample(fc.array(opArb(6), { minLength: 5, maxLength: 40 }), { numRuns: 40, seed: 7 });
    let ops = 0;
    for (const seq of sequences) {
      const spec = { type, keySize: 4, valueSize: 8, maxEntries };
      const fd = await k.mapCreate(spec);
      expect(fd).toBeGreaterThan(0);
      const m = createMap({ name: 'm', ...spec, type: type as MapType });
      for (const o of seq as Op[]) {
        ops++;
        let mine: unknown;
        let theirs: unknown;
        if (o.op === 'update') {
          const v = new Uint8Array(8);
          new DataView(v.buffer).setUint32(0, o.value, true);
          mine = m.update(u32(o.key), v, o.flags);
          theirs = await k.mapUpdate(fd, u32(o.key), v, o.flags);
        } else if (o.op === 'delete') {
          mine = m.delete(u32(o.key));
          theirs = await k.mapDelete(fd, u32(o.key));
        } else if (o.op === 'lookup') {
          mine = m.lookup(u32(o.key)) ?? -Errno.ENOENT;
          theirs = await k.mapLookup(fd, u32(o.key), 8);
        } else {
          // iteration order of a hash map is the kernel's own; compare the set of keys instead
          if (type === MapType.hash) {
            const all: number[] = [];
            for (let kk = await k.mapNextKey(fd, undefined, 4); typeof kk !== 'number'; kk = await k.mapNextKey(fd, kk, 4)) {
              all.push(new DataView(kk.buffer).getUint32(0, true));
            }
            mine = [...m.keys()].map((b) => new DataView(b.buffer).getUint32(0, true)).sort();
            theirs = all.sort();
          } else {
            mine = m.getNextKey(o.key === undefined ? undefined : u32(o.key));
            theirs = await k.mapNextKey(fd, o.key === undefined ? undefined : u32(o.key), 4);
          }
        }
        expect([o, mine]).toEqual([o, theirs]);
      }
      await k.closeFd(fd);
    }
    console.log(`kernel map differential (${_name}): ${ops} operations agree`);
  });
});

describe.skipIf(!kernel)('per-CPU maps against the kernel', () => {
  it('percpu_array and percpu_hash take and give every CPU\'s value, 8-byte aligned, like the kernel', async () => {
    const { readFileSync } = await import('node:fs');
    // "0-1" -> 2 possible CPUs
    const possible = readFileSync('/sys/devices/system/cpu/possible', 'utf8').trim();
    const cpus = possible.split(',').reduce((n, part) => {
      const [a, b] = part.split('-').map(Number);
      return n + ((b ?? a) as number) - (a as number) + 1;
    }, 0);
    const k = kernel as KernelRunner;
    for (const type of [MapType.percpuArray, MapType.percpuHash]) {
      const spec = { type, keySize: 4, valueSize: 4, maxEntries: 4 };
      const fd = await k.mapCreate(spec);
      const m = createMap({ name: 'p', ...spec }, { cpuCount: cpus });
      const user = new Uint8Array(8 * cpus);
      for (let c = 0; c < cpus; c++) new DataView(user.buffer).setUint32(8 * c, 100 + c, true);
      const key = new Uint8Array([2, 0, 0, 0]);
      expect(m.update(key, user)).toBe(await k.mapUpdate(fd, key, user));
      const theirs = await k.mapLookup(fd, key, user.length);
      expect(m.lookup(key)).toEqual(theirs);
      expect(m.update(key, user, 1)).toBe(await k.mapUpdate(fd, key, user, 1));
      await k.closeFd(fd);
    }
  });
});

// Syscall counting attached in the kernel to a real tracepoint: the kernel runs it on its own
// events (tracepoint programs have no test run) and reports its run count and run time.
const tracefsRoot = ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'].find((d) => existsSync(`${d}/events/raw_syscalls/sys_enter/id`));
if (kernel && !tracefsRoot) console.log('kernel tracepoint test: skipped: tracefs (raw_syscalls/sys_enter) is not mounted');

describe.skipIf(!kernel || !tracefsRoot)('a tracing program attached in the kernel', () => {
  it('syscount counts every getppid() of the runner in its hash map, and the VM counts the same records alike', async () => {
    const dir = `${tracefsRoot}/events/raw_syscalls/sys_enter`;
    const format = parseEventFormat(readFileSync(`${dir}/format`, 'utf8'), { system: 'raw_syscalls' });
    // the program reads `id` at offset 8, as a u64: true of this kernel's format, or the test is moot
    expect(format.fields.find((f) => f.name === 'id')).toMatchObject({ byteOffset: 8, size: 8 });
    const { insns, maps } = assembleForKernel(syscountSource);
    const calls = 5000;
    const got = await (kernel as KernelRunner).attachTracepoint({ tracepointId: format.id, syscalls: calls, insns, maps });
    if (!got.ok) throw new Error(`the kernel refused: ${got.errno} ${got.log}`);
    // every getppid() of the runner is a sys_enter; the kernel runs a tracepoint's programs for
    // every task, so the node's other syscalls meanwhile are counted too (getppid is rare)
    expect(got.map0Value).toBeGreaterThanOrEqual(BigInt(calls));
    expect(got.map0Value).toBeLessThanOrEqual(BigInt(got.runs));
    expect(got.runs).toBeGreaterThanOrEqual(calls);
    expect(got.runTimeNs).toBeGreaterThan(0);

    // The same bytes in the VM, on sys_enter records of getppid: the same count.
    const vm = new Vm({ maps: maps.map((m, i) => createMap({ name: `m${i}`, ...m, type: m.type as MapType, flags: 0 })) });
    const program = loadProgramOrThrow(insns, vm.loadOptions('syscount'));
    const record = new Uint8Array(format.fixedSize);
    const view = new DataView(record.buffer);
    view.setUint16(0, format.id, true);
    view.setBigUint64(8, BigInt(got.getppid), true);
    for (let i = 0; i < calls; i++) expect(vm.run(program, record)).toBe(RunStatus.ok);
    const key = new Uint8Array(4);
    new DataView(key.buffer).setUint32(0, got.getppid, true);
    const value = vm.maps[0]?.lookup(key);
    expect(value && new DataView(value.buffer, value.byteOffset).getBigUint64(0, true)).toBe(BigInt(calls));
  });
});

// bpf_loop: the callback is a BPF-to-BPF call per iteration (the interpreter runs it in its
// frames, the compiled tier calls the callback's wasm function in a loop). The same programs
// through BPF_PROG_TEST_RUN (XDP): r0 must match on both tiers.
describe.skipIf(!kernel)('bpf_loop against the kernel', () => {
  /** sum(i*i + 1) over the iterations into a stack slot of the caller, stop at `stop`; r0 folds it with bpf_loop's result. */
  function loopProgram(nr: number, stop: number, flags: number): Uint8Array {
    const out: number[] = [];
    const insn = (op: number, dst: number, src: number, off: number, imm: number) => out.push(...slot(op, dst, src, off, imm));
    insn(0x7a, 10, 0, -8, 0); // 0: *(u64 *)(r10 - 8) = 0
    insn(0xb7, 1, 0, 0, nr); // 1: r1 = nr
    insn(0xb7, 4, 0, 0, flags); // 2: r4 = flags
    insn(0x18, 2, 4, 0, 13 - 4); // 3: r2 = callback (BPF_PSEUDO_FUNC, insn 13)
    insn(0, 0, 0, 0, 0); // 4
    insn(0xbf, 3, 10, 0, 0); // 5: r3 = r10
    insn(0x07, 3, 0, 0, -8); // 6: r3 += -8
    insn(0x85, 0, 0, 0, 181); // 7: call bpf_loop
    insn(0xbf, 7, 0, 0, 0); // 8: r7 = r0
    insn(0x79, 0, 10, -8, 0); // 9: r0 = *(u64 *)(r10 - 8)
    insn(0x27, 0, 0, 0, 1000003); // 10: r0 *= 1000003
    insn(0x0f, 0, 7, 0, 0); // 11: r0 += r7
    insn(0x95, 0, 0, 0, 0); // 12: exit
    insn(0x79, 3, 2, 0, 0); // 13: callback: r3 = *(u64 *)(r2 + 0)
    insn(0xbf, 4, 1, 0, 0); // 14: r4 = r1
    insn(0x2f, 4, 1, 0, 0); // 15: r4 *= r1
    insn(0x0f, 3, 4, 0, 0); // 16: r3 += r4
    insn(0x07, 3, 0, 0, 1); // 17: r3 += 1
    insn(0x7b, 2, 3, 0, 0); // 18: *(u64 *)(r2 + 0) = r3
    insn(0xb7, 0, 0, 0, 0); // 19: r0 = 0
    insn(0x55, 1, 0, 1, stop); // 20: if r1 != stop goto +1
    insn(0xb7, 0, 0, 0, 1); // 21: r0 = 1
    insn(0x95, 0, 0, 0, 0); // 22: exit
    return new Uint8Array(out);
  }

  it.each([
    [0, -1, 0],
    [1, -1, 0],
    [7, -1, 0],
    [7, 3, 0],
    [7, 0, 0],
    [7, 6, 0],
    [1000, 999, 0],
    [5000, -1, 0],
    [5, -1, 1],
    [8 * 1024 * 1024 + 1, -1, 0],
  ])('nr_loops %i, stop at %i, flags %i: the same r0', async (nr, stop, flags) => {
    const bytes = loopProgram(nr, stop, flags);
    const theirs = await (kernel as KernelRunner).runProgram({ progType: KernelProgType.xdp, insns: bytes, data: new Uint8Array(64) });
    if (!theirs.ok) throw new Error(`the kernel refused: ${theirs.errno} ${theirs.log}`);
    for (const tier of ['interpreter', 'compiled'] as const) {
      const vm = new Vm({ tier });
      const program = loadProgramOrThrow(bytes, vm.loadOptions('loop'));
      expect(vm.tierOf(program)).toBe(tier);
      expect(vm.run(program, new Uint8Array(64))).toBe(RunStatus.ok);
      // XDP's test run returns the low 32 bits of r0
      expect(Number(vm.r0 & 0xffffffffn), tier).toBe(theirs.retval >>> 0);
    }
  });
});

// Queue and stack maps (allowed in XDP programs): random push/pop/peek sequences as one program
// that writes every r0 and every popped or peeked value into an array map (queue-stack-program.ts),
// through BPF_PROG_TEST_RUN and on both VM tiers; the results must be equal byte for byte (and
// equal to the model the unit tests use without a kernel).
describe.skipIf(!kernel)('queue and stack maps against the kernel', () => {
  it('random push/pop/peek sequences give the same r0s and values', async () => {
    const cases = fc.sample(queueStackCase, { numRuns: 120, seed: 42 });
    let ops = 0;
    for (const c of cases) {
      const insns = queueStackProgram(c);
      const specs = [
        { type: MapType.array, keySize: 4, valueSize: resultBytes(c), maxEntries: 1 },
        { type: c.type, keySize: 0, valueSize: c.valueSize, maxEntries: c.maxEntries },
      ];
      const theirs = await (kernel as KernelRunner).runProgram({ progType: KernelProgType.xdp, insns, data: new Uint8Array(64), maps: specs });
      if (!theirs.ok) throw new Error(`the kernel refused: ${theirs.errno} ${theirs.log}`);
      const kernelResults = theirs.mapValues[0] as Uint8Array;
      expect([c, kernelResults]).toEqual([c, expectedResults(c)]);
      for (const tier of ['interpreter', 'compiled'] as const) {
        const maps = specs.map((s, i) => createMap({ name: `m${i}`, ...s, type: s.type as MapType }));
        const vm = new Vm({ tier, maps });
        const program = loadProgramOrThrow(insns, vm.loadOptions('seq'));
        expect(vm.tierOf(program)).toBe(tier);
        expect(vm.run(program, new Uint8Array(64))).toBe(RunStatus.ok);
        expect([tier, c, maps[0]?.lookup(new Uint8Array(4))]).toEqual([tier, c, kernelResults]);
      }
      ops += c.ops.length;
    }
    console.log(`kernel queue/stack differential: ${cases.length} sequences, ${ops} operations agree on both tiers`);
  }, 120_000);

  it.each([
    // type, key size, value size, max entries, flags
    [MapType.queue, 0, 8, 4, 0],
    [MapType.queue, 4, 8, 4, 0],
    [MapType.queue, 0, 0, 4, 0],
    [MapType.queue, 0, 8, 0, 0],
    [MapType.queue, 0, 8, 4, 1], // BPF_F_NO_PREALLOC
    [MapType.queue, 0, 8, 4, 0x80], // BPF_F_RDONLY_PROG
    [MapType.stack, 0, 8, 4, 0x180], // RDONLY_PROG | WRONLY_PROG
    [MapType.stack, 0, 8, 4, 0x18], // RDONLY | WRONLY
    [MapType.stack, 0, 4097, 1, 0],
    [MapType.stackTrace, 4, 1016, 16, 0],
    [MapType.stackTrace, 4, 1024, 16, 0],
    [MapType.stackTrace, 4, 12, 16, 0],
    [MapType.stackTrace, 8, 64, 16, 0],
    [MapType.stackTrace, 4, 64, 16, 0x20], // BPF_F_STACK_BUILD_ID
    [MapType.stackTrace, 4, 48, 16, 0x20],
    [MapType.stackTrace, 4, 64, 16, 1],
  ])('creating map type %i key %i value %i entries %i flags %i: the kernel and the VM agree', async (type, keySize, valueSize, maxEntries, flags) => {
    const fd = await (kernel as KernelRunner).mapCreate({ type, keySize, valueSize, maxEntries }, flags);
    if (fd > 0) await (kernel as KernelRunner).closeFd(fd);
    let mine = 'created';
    try {
      createMap({ name: 'm', type: type as MapType, keySize, valueSize, maxEntries, flags });
    } catch (e) {
      mine = (e as Error).message;
    }
    expect([mine === 'created', mine]).toEqual([fd > 0, mine]);
  });
});
