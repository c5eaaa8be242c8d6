import { assembleInstructions, encode } from '@probeyard/isa';
import { describe, expect, it } from 'vitest';
import { loadAssembly } from '../load-assembly.js';
import { ArrayMap } from '../maps/array-map.js';
import { loadProgramOrThrow } from '../program.js';
import { RunStatus, Vm, type VmTier } from '../vm.js';
import { compileToWasm } from './compile-wasm.js';

function loadAssemblyForTest(text: string, tier: VmTier) {
  return loadAssembly(text, { tier });
}

function asm(text: string): Uint8Array {
  return encode(assembleInstructions(text, { syntax: 'llvm' }));
}

/** Runs `text` on both tiers; checks the compiled one really ran compiled; returns both results. */
function bothTiers(text: string, context = new Uint8Array(16)) {
  return (['interpreter', 'compiled'] as VmTier[]).map((tier) => {
    const vm = new Vm({ tier, budget: 10_000 });
    const program = loadProgramOrThrow(asm(text), vm.loadOptions());
    expect(vm.tierOf(program)).toBe(tier);
    const status = vm.run(program, context);
    return { status, r0: vm.r0, count: vm.insnCount, fault: vm.fault?.message, pc: vm.fault?.pc, address: vm.fault?.address };
  });
}

describe('the compiled tier (BPF → WebAssembly)', () => {
  it.each([
    // RFC 9669 division and modulo: no trap, by zero → 0 / the dividend, INT_MIN / -1 wraps
    ['udiv by zero', 'r0 = 7\nr1 = 0\nr0 /= r1\nexit', 0n],
    ['umod by zero keeps the dividend', 'r0 = -7\nr1 = 0\nr0 %= r1\nexit', 0xfffffffffffffff9n],
    ['32-bit umod by zero zero-extends the dividend', 'r0 = -7\nw1 = 0\nw0 %= w1\nexit', 0xfffffff9n],
    ['sdiv INT64_MIN / -1 wraps', 'r0 = 0x8000000000000000 ll\nr1 = -1\nr0 s/= r1\nexit', 0x8000000000000000n],
    ['smod INT64_MIN % -1 is 0', 'r0 = 0x8000000000000000 ll\nr1 = -1\nr0 s%= r1\nexit', 0n],
    ['sdiv32 INT_MIN / -1 (immediate) wraps', 'w0 = 0x80000000\nw0 s/= -1\nexit', 0x80000000n],
    ['smod truncates toward zero', 'r0 = -7\nr0 s%= 2\nexit', 0xffffffffffffffffn],
    ['sdiv by zero (register)', 'r0 = -7\nr1 = 0\nr0 s/= r1\nexit', 0n],
    // sign extension and byte swaps
    ['movsx 8 → 64', 'r1 = 0x80\nr0 = (s8)r1\nexit', 0xffffffffffffff80n],
    ['movsx 16 → 32 zero-extends', 'r1 = 0x8000\nw0 = (s16)w1\nexit', 0xffff8000n],
    ['bswap64', 'r0 = 0x0102030405060708 ll\nr0 = bswap64 r0\nexit', 0x0807060504030201n],
    ['be16 clears the rest', 'r0 = 0x11223344 ll\nr0 = be16 r0\nexit', 0x4433n],
    ['le32 zero-extends', 'r0 = -1\nr0 = le32 r0\nexit', 0xffffffffn],
    // shifts masked, 32-bit results zero-extended
    ['shift counts are masked', 'r0 = 1\nr1 = 65\nr0 <<= r1\nexit', 2n],
    ['arsh32 zero-extends', 'w0 = -16\nw0 s>>= 2\nexit', 0xfffffffcn],
    // atomics on the stack
    ['atomic fetch_add', 'r1 = 5\n*(u64 *)(r10 - 8) = r1\nr2 = 3\nr2 = atomic_fetch_add((u64 *)(r10 - 8), r2)\nr0 = *(u64 *)(r10 - 8)\nr0 <<= 8\nr0 += r2\nexit', 0x805n],
    ['cmpxchg', 'r1 = 5\n*(u64 *)(r10 - 8) = r1\nr0 = 5\nr2 = 9\nr0 = cmpxchg_64(r10 - 8, r0, r2)\nr0 = *(u64 *)(r10 - 8)\nexit', 9n],
    // a BPF-to-BPF call keeps r6..r9 and sees its own frame
    ['local call', 'r6 = 40\ncall f\nr0 += r6\nexit\nf:\nr6 = 1\n*(u64 *)(r10 - 8) = r6\nr0 = *(u64 *)(r10 - 8)\nr0 += 1\nexit', 42n],
  ])('%s', (_what, text, expected) => {
    const [interpreted, compiled] = bothTiers(text);
    expect(compiled?.status).toBe(RunStatus.ok);
    expect(compiled?.r0).toBe(expected);
    expect(compiled).toEqual(interpreted);
  });

  it.each([
    ['an access past the context', 'r0 = *(u64 *)(r1 + 12)\nexit', 0],
    ['an access below the frame', 'r0 = *(u64 *)(r10 - 520)\nexit', 0],
    ['a NULL pointer', 'r1 = 0\nr0 = *(u8 *)(r1 + 0)\nexit', 1],
    ['a scalar used as a pointer', 'r1 = 0x200000100 ll\n*(u32 *)(r1 + 0) = 1\nexit', 2], // after the two slots of lddw
  ])('faults like the interpreter on %s (pc, message, address)', (_what, text, pc) => {
    const [interpreted, compiled] = bothTiers(text);
    expect(compiled?.status).toBe(RunStatus.fault);
    expect(compiled?.pc).toBe(pc);
    expect(compiled?.fault).toMatch(/^memory fault: /);
    expect(compiled).toEqual(interpreted);
  });

  it('stops at the budget at the same pc and count as the interpreter', () => {
    const [interpreted, compiled] = bothTiers('r0 = 0\nl:\nr0 += 1\nif r0 != 0 goto l\nexit');
    expect(compiled?.status).toBe(RunStatus.budgetExhausted);
    expect(compiled).toEqual(interpreted);
  });

  it('refuses a program whose atomic fetch writes r10 (it stays interpreted)', () => {
    const bytes = asm('r1 = 0\nr10 = atomic_fetch_add((u64 *)(r10 - 8), r10)\nr0 = 0\nexit');
    const vm = new Vm();
    const program = loadProgramOrThrow(bytes, vm.loadOptions());
    expect(compileToWasm(program)).toEqual({ ok: false, reason: 'an atomic fetch writes r10 at 1' });
    expect(vm.tierOf(program)).toBe('interpreter');
    expect(vm.tierCounters.lastFallbackReason).toBe('an atomic fetch writes r10 at 1');
  });

  it('caches modules per program digest across VMs', () => {
    const bytes = asm('r0 = 12345\nr0 *= 3\nexit');
    const a = new Vm();
    const b = new Vm();
    expect(a.tierOf(loadProgramOrThrow(bytes, a.loadOptions()))).toBe('compiled');
    expect(b.tierOf(loadProgramOrThrow(bytes, b.loadOptions()))).toBe('compiled');
    // the second VM instantiated the cached module: no compile time of its own
    expect(b.tierCounters).toMatchObject({ compiledPrograms: 1, compileNs: 0, compiledInstructions: 0 });
  });

  it('grows its memory for a large event record and keeps the maps (views renewed)', () => {
    const text = '.map m array key=4 value=8 entries=1\n' +
      'r6 = r1\nr7 = r2\n*(u32 *)(r10 - 4) = 0\nr1 = m ll\nr2 = r10\nr2 += -4\ncall bpf_map_lookup_elem\n' +
      'if r0 == 0 goto out\nr1 = 1\nlock *(u64 *)(r0 + 0) += r1\nr7 += -1\nr6 += r7\nr0 = *(u8 *)(r6 + 0)\nexit\nout:\nr0 = 99\nexit';
    const big = new Uint8Array(300_000);
    big[big.length - 1] = 0x5a;
    const results = (['interpreter', 'compiled'] as VmTier[]).map((tier) => {
      const { vm, programs, maps } = loadAssemblyForTest(text, tier);
      const program = [...programs.values()][0]!;
      const r = [vm.run(program, new Uint8Array(8)), vm.r0, vm.run(program, big), vm.r0, vm.run(program, new Uint8Array(8)), vm.r0];
      const count = new DataView(maps.get('m')!.lookup(new Uint8Array(4))!.buffer).getBigUint64(0, true);
      expect(vm.tierOf(program)).toBe(tier);
      return { r, count };
    });
    expect(results[1]).toEqual({ r: [0, 0n, 0, 0x5an, 0, 0n], count: 3n });
    expect(results[1]).toEqual(results[0]);
  });

  it('shares maps between VMs of both tiers (the values follow the VM that runs)', () => {
    const map = new ArrayMap({ name: 'm', type: 2, keySize: 4, valueSize: 8, maxEntries: 1 }, { cpuCount: 1 });
    const text = '*(u32 *)(r10 - 4) = 0\nr1 = 0 ll\nr2 = r10\nr2 += -4\ncall bpf_map_lookup_elem\nif r0 == 0 goto out\nr1 = 1\nlock *(u64 *)(r0 + 0) += r1\nout:\nr0 = 0\nexit';
    const bytes = asm(text.replace('r1 = 0 ll', 'r1 = 0 ll'));
    // lddw r1 = map 0 (BPF_PSEUDO_MAP_FD)
    bytes[1 * 8 + 1] = (1 << 4) | 1;
    const vms = [new Vm({ maps: [map] }), new Vm({ maps: [map], tier: 'interpreter' }), new Vm({ maps: [map] })];
    const programs = vms.map((vm) => loadProgramOrThrow(bytes, vm.loadOptions()));
    for (let i = 0; i < 9; i++) expect(vms[i % 3]!.run(programs[i % 3]!, new Uint8Array(0))).toBe(RunStatus.ok);
    expect(new DataView(map.lookup(new Uint8Array(4))!.buffer).getBigUint64(0, true)).toBe(9n);
  });
});
