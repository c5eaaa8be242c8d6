import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BpfMap,
  createMap,
  type LoadedProgram,
  loadAssembly,
  MapType,
  RunStatus,
  snapshotMap,
  type Vm,
  type VmTier,
} from '../src/index.js';
import { compileToWasm } from '../src/wasm/compile-wasm.js';

// `bpf_map_lookup_elem` compiled inline (array, per-CPU array, hash and per-CPU hash maps: no
// call into JavaScript) against the interpreter, which calls the helper, and against a map of
// the same spec that no VM holds (its table in JavaScript memory): the same r0 (the value's
// address, or 0) or the same fault, and the same map contents, after random sequences of
// updates and deletes from user space and from the program (collisions, tombstones and their
// rehash, full maps, misses, out-of-range indexes, bad key pointers, per-CPU values).

/** How the program passes the key: copied to the stack (the usual), or a pointer that may be bad. */
type KeyPointer =
  | { kind: 'stack' }
  | { kind: 'stack-copied' }
  | { kind: 'context'; offset: number }
  | { kind: 'scalar'; value: number }
  | { kind: 'above-frame' }
  | { kind: 'map-handle' };

function lookupSource(type: string, keySize: number, valueSize: number, entries: number, pointer: KeyPointer): string {
  const copy = Array.from({ length: keySize }, (_, k) => `  r3 = *(u8 *)(r6 + ${k})\n  *(u8 *)(r10 - ${128 - k}) = r3`).join('\n');
  const r2 =
    pointer.kind === 'stack'
      ? '  r2 = r10\n  r2 += -128'
      : pointer.kind === 'stack-copied'
        ? '  r5 = r10\n  r5 += -128\n  r2 = r5'
        : pointer.kind === 'context'
        ? `  r2 = r6\n  r2 += ${pointer.offset}`
        : pointer.kind === 'scalar'
          ? `  r2 = ${pointer.value}`
          : pointer.kind === 'above-frame'
            ? `  r2 = r10\n  r2 += ${-Math.max(1, keySize - 1)}`
            : '  r2 = m ll';
  return `
.map m ${type} key=${keySize} value=${valueSize} entries=${entries}
  r6 = r1
${copy}
  r1 = m ll
${r2}
  call bpf_map_lookup_elem
  exit
.text
update:
  r6 = r1
${copy}
  r7 = *(u64 *)(r6 + 128)
  *(u64 *)(r10 - 64) = r7
  *(u64 *)(r10 - 56) = r7
  r1 = m ll
  r2 = r10
  r2 += -128
  r3 = r10
  r3 += -64
  r4 = 0
  call bpf_map_update_elem
  exit
`;
}

interface System {
  vm: Vm;
  map: BpfMap;
  lookup: LoadedProgram;
  update: LoadedProgram;
  /** Calls of the map's lookupFromProgram (the helper's path) since the system was made. */
  helperLookups: number;
}

function system(source: string, tier: VmTier, cpuCount: number): System {
  const { vm, maps, programs } = loadAssembly(source, { tier, cpuCount });
  const map = maps.get('m') as BpfMap;
  const [lookup, update] = [...programs.values()] as [LoadedProgram, LoadedProgram];
  expect(vm.tierOf(lookup)).toBe(tier);
  const s: System = { vm, map, lookup, update, helperLookups: 0 };
  const original = map.lookupFromProgram.bind(map);
  map.lookupFromProgram = (bytes, offset, cpu) => {
    s.helperLookups++;
    return original(bytes, offset, cpu);
  };
  return s;
}

type Op =
  | { kind: 'lookup'; key: number; cpu: number }
  | { kind: 'update'; key: number; value: number }
  | { kind: 'program-update'; key: number; value: number }
  | { kind: 'delete'; key: number };

const opArb = (keys: number): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('lookup' as const), key: fc.nat(keys - 1), cpu: fc.nat(7) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('update' as const), key: fc.nat(keys - 1), value: fc.nat(255) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('program-update' as const), key: fc.nat(keys - 1), value: fc.nat(255) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: fc.nat(keys - 1) }) },
  );

const types = ['hash', 'percpu_hash', 'array', 'percpu_array', 'lru_hash'] as const;
const typeIds: Record<(typeof types)[number], MapType> = {
  hash: MapType.hash,
  percpu_hash: MapType.percpuHash,
  array: MapType.array,
  percpu_array: MapType.percpuArray,
  lru_hash: MapType.lruHash,
};

const caseArb = fc
  .record({
    type: fc.constantFrom(...types),
    keySize: fc.constantFrom(1, 2, 3, 4, 5, 7, 8, 12, 16, 33),
    valueSize: fc.constantFrom(1, 4, 8, 12),
    entries: fc.integer({ min: 1, max: 12 }),
    cpuCount: fc.constantFrom(1, 3),
  })
  .chain((c) => {
    const keySize = c.type === 'array' || c.type === 'percpu_array' ? 4 : c.keySize;
    return fc.record({
      type: fc.constant(c.type),
      keySize: fc.constant(keySize),
      valueSize: fc.constant(c.valueSize),
      entries: fc.constant(c.entries),
      cpuCount: fc.constant(c.cpuCount),
      // a small pool of keys (hits, collisions in 8-32 buckets, full maps); array indexes
      // around max_entries (some out of range)
      keys: fc.array(
        keySize === 4 && (c.type === 'array' || c.type === 'percpu_array')
          ? fc.integer({ min: 0, max: c.entries + 2 }).map((i) => Uint8Array.of(i & 0xff, (i >> 8) & 0xff, 0, i > c.entries + 1 ? 0x80 : 0))
          : fc.uint8Array({ minLength: keySize, maxLength: keySize }),
        { minLength: 1, maxLength: 20 },
      ),
      ops: fc.array(opArb(20), { minLength: 20, maxLength: 80 }),
    });
  });

/** The 136-byte context: the key at 0, eight bytes `value` at 128 (what the update program stores). */
function context(key: Uint8Array, value: number): Uint8Array {
  const ctx = new Uint8Array(136);
  ctx.set(key, 0);
  ctx.fill(value, 128, 136);
  return ctx;
}

function r0(vm: Vm): bigint {
  return vm.r0;
}

function entries(map: BpfMap): unknown {
  return snapshotMap(map).entries.map((e) => [Array.from(e.key), e.values.map((v) => Array.from(v))]);
}

describe('bpf_map_lookup_elem compiled inline', () => {
  it('agrees with the interpreter and with the map itself on random operation sequences', () => {
    let lookups = 0;
    let hits = 0;
    fc.assert(
      fc.property(caseArb, (c) => {
        const source = lookupSource(c.type, c.keySize, c.valueSize, c.entries, { kind: 'stack' });
        const [interp, compiled] = (['interpreter', 'compiled'] as const).map((t) => system(source, t, c.cpuCount)) as [System, System];
        const reference = createMap(
          { name: 'm', type: typeIds[c.type], keySize: c.keySize, valueSize: c.valueSize, maxEntries: c.entries },
          { cpuCount: c.cpuCount },
        );
        const valueBytes = (v: number) => new Uint8Array(reference.userValueSize).fill(v);
        for (const op of c.ops) {
          const key = c.keys[op.key % c.keys.length] as Uint8Array;
          if (op.kind === 'lookup') {
            const at = reference.lookupFromProgram(key, 0, op.cpu);
            const expected = at < 0 ? 0n : (BigInt(3) << 32n) | BigInt(at);
            for (const s of [interp, compiled]) {
              s.vm.cpu = op.cpu;
              expect(s.vm.run(s.lookup, context(key, 0))).toBe(RunStatus.ok);
              expect(r0(s.vm)).toBe(expected);
            }
            lookups++;
            if (at >= 0) hits++;
          } else if (op.kind === 'update') {
            const want = reference.update(key, valueBytes(op.value));
            for (const s of [interp, compiled]) expect(s.map.update(key, valueBytes(op.value))).toBe(want);
          } else if (op.kind === 'program-update') {
            const want = reference.updateFromProgram(key, 0, new Uint8Array(16).fill(op.value), 0, 0, 0);
            for (const s of [interp, compiled]) {
              s.vm.cpu = 0;
              expect(s.vm.run(s.update, context(key, op.value))).toBe(RunStatus.ok);
              expect(Number(BigInt.asIntN(64, r0(s.vm)))).toBe(want);
            }
          } else {
            const want = reference.delete(key);
            for (const s of [interp, compiled]) expect(s.map.delete(key)).toBe(want);
          }
        }
        expect(entries(compiled.map)).toEqual(entries(reference));
        expect(entries(interp.map)).toEqual(entries(reference));
        // the compiled lookups never called the helper, except on an LRU map (a lookup moves the key)
        expect(compiled.helperLookups).toBe(c.type === 'lru_hash' ? interp.helperLookups : 0);
      }),
      { seed: 0x5eed22, numRuns: 400 },
    );
    console.log(`inline lookups: ${lookups} lookups on both tiers agree (${hits} hits)`);
  });

  it.each<[string, KeyPointer]>([
    ['a key read from the context, in range', { kind: 'context', offset: 3 }],
    ['a key on the stack through a copied pointer (checked at run time)', { kind: 'stack-copied' }],
    ['a key running past the end of the context', { kind: 'context', offset: 133 }],
    ['a key before the start of the context', { kind: 'context', offset: -2 }],
    ['a NULL key', { kind: 'scalar', value: 0 }],
    ['a small scalar as the key', { kind: 'scalar', value: 4096 }],
    ['a key above the top of the stack frame', { kind: 'above-frame' }],
    ['a map handle as the key', { kind: 'map-handle' }],
  ])('agrees on %s (the helper checks the pointer and faults)', (_what, pointer) => {
    for (const type of ['hash', 'array', 'percpu_hash'] as const) {
      for (const keySize of type === 'array' ? [4] : [4, 8, 13]) {
        const source = lookupSource(type, keySize, 8, 16, pointer);
        const [interp, compiled] = (['interpreter', 'compiled'] as const).map((t) => system(source, t, 2)) as [System, System];
        const ctx = context(Uint8Array.from({ length: keySize + 3 }, (_, i) => i + 1), 0);
        // the key a good pointer names is present (for an array: index 1)
        const keyAt = pointer.kind === 'context' ? 3 : 0;
        if (type === 'array') ctx.set([1, 0, 0, 0], keyAt);
        for (const s of [interp, compiled]) {
          expect(s.map.update(ctx.slice(keyAt, keyAt + keySize), new Uint8Array(s.map.userValueSize).fill(9))).toBe(0);
        }
        const outcomes = [interp, compiled].map((s) => {
          const status = s.vm.run(s.lookup, ctx);
          return { status, fault: s.vm.fault?.message, r0: status === RunStatus.ok ? r0(s.vm) : undefined, count: s.vm.insnCount };
        });
        expect(outcomes[1]).toEqual(outcomes[0]);
        if ((pointer.kind === 'context' && pointer.offset === 3) || pointer.kind === 'stack-copied') {
          expect(outcomes[0]?.status).toBe(RunStatus.ok);
          expect(outcomes[0]?.r0).not.toBe(0n);
          expect(compiled.helperLookups).toBe(0);
        } else {
          expect(outcomes[0]?.fault).toMatch(/^helper fault: bpf_map_lookup_elem key \(r2\): \d+ bytes are not inside one memory region at pc \d+/);
        }
      }
    }
  });
});

describe('the hash index in linear memory', () => {
  const source = `
.map m hash key=4 value=8 entries=64
.map n array key=4 value=8 entries=4
  r6 = *(u32 *)(r1 + 0)
  *(u32 *)(r10 - 4) = r6
  r1 = m ll
  if r6 > 999 goto look
  r1 = n ll
look:
  r2 = r10
  r2 += -4
  call bpf_map_lookup_elem
  if r0 == 0 goto out
  r0 = *(u64 *)(r0 + 0)
  r0 += 1
out:
  exit`;

  it('looks up the map r1 holds when another block set it (maps tested at run time)', () => {
    const sys = (['interpreter', 'compiled'] as const).map((tier) => loadAssembly(source, { tier }));
    for (const { maps } of sys) {
      const m = maps.get('m') as BpfMap;
      const n = maps.get('n') as BpfMap;
      for (const k of [1, 2, 2000, 3000]) m.update(Uint8Array.of(k & 0xff, k >> 8, 0, 0), new Uint8Array(8).fill(k & 0x7f));
      for (let k = 0; k < 4; k++) n.update(Uint8Array.of(k, 0, 0, 0), new Uint8Array(8).fill(0x10 + k));
    }
    for (const k of [0, 1, 2, 3, 5, 2000, 3000, 4000]) {
      const ctx = Uint8Array.of(k & 0xff, k >> 8, 0, 0);
      const [a, b] = sys.map(({ vm, programs }) => {
        expect(vm.run([...programs.values()][0] as LoadedProgram, ctx)).toBe(RunStatus.ok);
        return vm.r0;
      });
      expect(b).toBe(a);
    }
    const program = [...(sys[1]?.programs.values() ?? [])][0] as LoadedProgram;
    const m = sys[1]?.maps.get('m') as BpfMap;
    const n = sys[1]?.maps.get('n') as BpfMap;
    const compiled = compileToWasm(program, { lookups: [m.inlineLookup, n.inlineLookup] });
    expect(compiled.ok && compiled.inlineLookups).toBe(1);
  });

  it('reads a key on the stack of a BPF-to-BPF callee (its own frame)', () => {
    const callee = `
.map m hash key=4 value=8 entries=16
  r6 = *(u32 *)(r1 + 0)
  *(u32 *)(r10 - 4) = r6
  r1 = r6
  r1 += 1
  call sub
  exit
sub:
  *(u32 *)(r10 - 4) = r1
  r1 = m ll
  r2 = r10
  r2 += -4
  call bpf_map_lookup_elem
  if r0 == 0 goto miss
  r0 = *(u64 *)(r0 + 0)
  exit
miss:
  r0 = 77
  exit`;
    const results = (['interpreter', 'compiled'] as const).map((tier) => {
      const { vm, maps, programs } = loadAssembly(callee, { tier });
      const program = [...programs.values()][0] as LoadedProgram;
      expect(vm.tierOf(program)).toBe(tier);
      const m = maps.get('m') as BpfMap;
      for (let k = 0; k < 8; k++) m.update(Uint8Array.of(k, 0, 0, 0), Uint8Array.of(k * 10, 0, 0, 0, 0, 0, 0, 0));
      return [0, 3, 6, 7, 9].map((k) => {
        expect(vm.run(program, Uint8Array.of(k, 0, 0, 0))).toBe(RunStatus.ok);
        return vm.r0;
      });
    });
    // the key is the callee's (k + 1), not frame 0's k at the same offset
    expect(results[0]).toEqual([10n, 40n, 70n, 77n, 77n]);
    expect(results[1]).toEqual(results[0]);
  });

  it('is shared by VMs that share the map, and survives memory.grow', async () => {
    const { Vm, loadProgramOrThrow } = await import('../src/index.js');
    const { assemble, encode } = await import('@probeyard/isa');
    const m = createMap({ name: 'm', type: MapType.hash, keySize: 4, valueSize: 8, maxEntries: 64 });
    const n = createMap({ name: 'n', type: MapType.array, keySize: 4, valueSize: 8, maxEntries: 4 });
    const object = assemble(source);
    const prog = object.programs[0];
    if (!prog) throw new Error('no program');
    const bytes = encode(prog.instructions);
    const view = new DataView(bytes.buffer);
    for (const r of prog.mapRelocations) view.setInt32(r.insnIndex * 8 + 4, r.map === 'm' ? 0 : 1, true);
    const a = new Vm({ maps: [m, n] });
    const b = new Vm({ maps: [m, n] });
    const pa = loadProgramOrThrow(bytes, a.loadOptions());
    const pb = loadProgramOrThrow(bytes, b.loadOptions());
    expect(a.tierOf(pa)).toBe('compiled');
    expect(b.tierOf(pb)).toBe('compiled');
    const run = (vm: Vm, p: LoadedProgram, k: number, size = 4) => {
      const ctx = new Uint8Array(size);
      ctx.set([k & 0xff, k >> 8, 0, 0]);
      expect(vm.run(p, ctx)).toBe(RunStatus.ok);
      return vm.r0;
    };
    const expected = (k: number) => BigInt(k & 0x7f) * 0x0101010101010101n + 1n;
    for (let k = 1000; k < 1060; k++) {
      // inserted from user space while VMs a and b take the storage in turn
      expect(m.update(Uint8Array.of(k & 0xff, k >> 8, 0, 0), new Uint8Array(8).fill(k & 0x7f))).toBe(0);
      expect(run(k % 2 ? a : b, k % 2 ? pa : pb, k)).toBe(expected(k));
      if (k % 3 === 0) expect(m.delete(Uint8Array.of((k - 1) & 0xff, (k - 1) >> 8, 0, 0))).toBe(0);
    }
    // every key on both VMs: present unless deleted (k - 1 for k a multiple of 3)
    for (let k = 1000; k < 1060; k++) {
      const want = (k + 1) % 3 === 0 && k + 1 < 1060 ? 0n : expected(k);
      expect(run(a, pa, k)).toBe(want);
      expect(run(b, pb, k)).toBe(want);
    }
    // a 200 KiB context grows a's memory: the table moves with the views
    expect(run(a, pa, 1057, 200_000)).toBe(expected(1057));
    expect(run(b, pb, 1001)).toBe(0n);
    expect(run(b, pb, 1003)).toBe(expected(1003));
    expect(run(a, pa, 1003, 200_000)).toBe(expected(1003));
    expect(m.update(Uint8Array.of(1001 & 0xff, 1001 >> 8, 0, 0), new Uint8Array(8).fill(5))).toBe(0);
    expect(run(a, pa, 1001)).toBe(0x0505050505050505n + 1n);
  });
});
