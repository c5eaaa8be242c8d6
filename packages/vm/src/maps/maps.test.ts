import { describe, expect, it } from 'vitest';
import type { ArrayMap } from './array-map.js';
import { createMap } from './create-map.js';
import { Errno, UpdateFlag } from './errno.js';
import type { HashMap } from './hash-map.js';
import { MapType } from './map.js';
import { QueueStackMap } from './queue-stack-map.js';
import { RingBuffer } from './ring-buffer.js';
import { snapshotMap } from './snapshot.js';
import type { StackTraceMap } from './stack-trace-map.js';

const u32 = (n: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
};
const u64 = (n: number) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
};
const readU32 = (b: Uint8Array | Uint8Array[] | number | undefined) =>
  b instanceof Uint8Array ? new DataView(b.buffer, b.byteOffset).getUint32(0, true) : b;

describe('hash map (BPF_MAP_TYPE_HASH)', () => {
  const make = (max = 2) => createMap({ name: 'h', type: MapType.hash, keySize: 4, valueSize: 8, maxEntries: max }) as HashMap;

  it.each([
    ['BPF_ANY on a new key', [], UpdateFlag.any, 0],
    ['BPF_NOEXIST on a new key', [], UpdateFlag.noExist, 0],
    ['BPF_EXIST on a new key', [], UpdateFlag.exist, -Errno.ENOENT],
    ['BPF_NOEXIST on an existing key', [1], UpdateFlag.noExist, -Errno.EEXIST],
    ['BPF_EXIST on an existing key', [1], UpdateFlag.exist, 0],
    ['a new key when full', [2, 3], UpdateFlag.any, -Errno.E2BIG],
    ['an existing key when full', [1, 2], UpdateFlag.any, 0],
    ['unknown flags', [], 4, -Errno.EINVAL],
  ])('update: %s', (_what, present, flags, expected) => {
    const m = make();
    for (const k of present as number[]) expect(m.update(u32(k), u64(k))).toBe(0);
    expect(m.update(u32(1), u64(42), flags as number)).toBe(expected);
  });

  it('delete returns -ENOENT for a missing key and frees the slot', () => {
    const m = make();
    expect(m.delete(u32(9))).toBe(-Errno.ENOENT);
    m.update(u32(1), u64(1));
    m.update(u32(2), u64(2));
    expect(m.delete(u32(1))).toBe(0);
    expect(m.lookup(u32(1))).toBeUndefined();
    expect(m.update(u32(3), u64(3))).toBe(0);
    expect(m.size).toBe(2);
  });

  it('get_next_key visits every key once; a missing key restarts from the first', () => {
    const m = make(100);
    for (let k = 0; k < 50; k++) m.update(u32(k * 7), u64(k));
    const seen = [...m.keys()].map((k) => readU32(k));
    expect(seen.sort((a, b) => (a as number) - (b as number))).toEqual(Array.from({ length: 50 }, (_, k) => k * 7));
    const first = m.getNextKey(undefined);
    expect(m.getNextKey(u32(12345))).toEqual(first);
    const last = seen.length > 0 ? [...m.keys()].at(-1) : undefined;
    expect(m.getNextKey(last)).toBe(-Errno.ENOENT);
  });

  it('program-side updates write in place and lookups return the value offset', () => {
    const m = make();
    const key = u32(5);
    expect(m.updateFromProgram(key, 0, u64(99), 0, 0, 0)).toBe(0);
    const at = m.lookupFromProgram(key, 0, 0);
    expect(new DataView(m.values.buffer).getBigUint64(at, true)).toBe(99n);
    expect(m.lookupFromProgram(u32(6), 0, 0)).toBe(-1);
  });
});

describe('LRU hash map', () => {
  it('evicts the least recently used key instead of failing', () => {
    const m = createMap({ name: 'l', type: MapType.lruHash, keySize: 4, valueSize: 8, maxEntries: 3 }) as HashMap;
    for (const k of [1, 2, 3]) expect(m.update(u32(k), u64(k))).toBe(0);
    // a program lookup of 1 makes 2 the least recently used
    expect(m.lookupFromProgram(u32(1), 0, 0)).toBeGreaterThanOrEqual(0);
    expect(m.update(u32(4), u64(4), UpdateFlag.noExist)).toBe(0);
    expect(m.lookup(u32(2))).toBeUndefined();
    expect([1, 3, 4].map((k) => m.lookup(u32(k)) !== undefined)).toEqual([true, true, true]);
  });
});

describe('per-CPU maps', () => {
  it('keep one value per CPU; user space sees them all, 8-byte aligned', () => {
    const m = createMap({ name: 'p', type: MapType.percpuHash, keySize: 4, valueSize: 4, maxEntries: 4 }, { cpuCount: 2 }) as HashMap;
    expect(m.updateFromProgram(u32(1), 0, u32(10), 0, 0, 0)).toBe(0);
    expect(m.updateFromProgram(u32(1), 0, u32(20), 0, 0, 1)).toBe(0);
    expect([...(m.lookup(u32(1)) as Uint8Array)]).toEqual([10, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0]);
    expect(snapshotMap(m, { value: { kind: 'int', size: 4 } }).entries[0]?.typedValues).toEqual([10, 20]);
  });

  it('per-CPU array lookups from the program see their own CPU', () => {
    const m = createMap({ name: 'a', type: MapType.percpuArray, keySize: 4, valueSize: 8, maxEntries: 2 }, { cpuCount: 4 }) as ArrayMap;
    expect(m.lookupFromProgram(u32(1), 0, 3)).toBe(1 * 32 + 3 * 8);
    expect(m.lookup(u32(1))?.length).toBe(32);
  });
});

describe('array map (BPF_MAP_TYPE_ARRAY)', () => {
  const make = () => createMap({ name: 'a', type: MapType.array, keySize: 4, valueSize: 4, maxEntries: 3 }) as ArrayMap;
  it.each([
    ['update in range', 2, UpdateFlag.any, 0],
    ['update out of range', 3, UpdateFlag.any, -Errno.E2BIG],
    ['BPF_NOEXIST (every index exists)', 0, UpdateFlag.noExist, -Errno.EEXIST],
    ['BPF_EXIST', 0, UpdateFlag.exist, 0],
  ])('%s', (_what, index, flags, expected) => {
    expect(make().update(u32(index as number), u32(1), flags as number)).toBe(expected);
  });

  it('delete is -EINVAL; lookups past the end are absent; get_next_key counts up', () => {
    const m = make();
    expect(m.delete(u32(0))).toBe(-Errno.EINVAL);
    expect(m.lookup(u32(3))).toBeUndefined();
    expect(readU32(m.getNextKey(undefined))).toBe(0);
    expect(readU32(m.getNextKey(u32(1)))).toBe(2);
    expect(m.getNextKey(u32(2))).toBe(-Errno.ENOENT);
    expect(readU32(m.getNextKey(u32(77)))).toBe(0);
  });
});

describe('ring buffer', () => {
  it('reserve, submit and discard; output -EAGAIN when full; query', () => {
    const rb = createMap({ name: 'rb', type: MapType.ringbuf, keySize: 0, valueSize: 0, maxEntries: 4096 }) as RingBuffer;
    const got: number[][] = [];
    rb.emit = (_m, data) => got.push([...data]);
    const a = rb.reserve(3);
    rb.values.set([1, 2, 3], a);
    const b = rb.reserve(2);
    expect(rb.commit(b, true)).toBe(true);
    expect(rb.commit(a, false)).toBe(true);
    expect(rb.commit(a, false)).toBe(false);
    expect(got).toEqual([[1, 2, 3]]);
    expect(rb.query(1)).toBe(4096);
    expect(rb.query(0)).toBe(16);
    expect(rb.output(new Uint8Array(5000), 0, 5000)).toBe(-Errno.EAGAIN);
    expect(rb.output(new Uint8Array(4060), 0, 4060)).toBe(-Errno.EAGAIN);
    rb.consume();
    expect(rb.output(new Uint8Array(4060), 0, 4060)).toBe(0);
  });

  it('refuses a size that is not a power-of-2 multiple of a page', () => {
    expect(() => createMap({ name: 'rb', type: MapType.ringbuf, keySize: 0, valueSize: 0, maxEntries: 5000 })).toThrow(
      'create map rb: ring buffer size 5000 is not a power of 2 multiple of 4096',
    );
    expect(createMap({ name: 'ok', type: MapType.ringbuf, keySize: 0, valueSize: 0, maxEntries: 8192 })).toBeInstanceOf(RingBuffer);
  });
});

describe('queue and stack maps (BPF_MAP_TYPE_QUEUE, BPF_MAP_TYPE_STACK)', () => {
  const make = (type: MapType, max = 3) => createMap({ name: 'q', type, keySize: 0, valueSize: 4, maxEntries: max }) as QueueStackMap;
  const pop = (m: QueueStackMap) => readU32(m.lookupAndDelete());
  const none = new Uint8Array(0);

  it.each([
    ['queue', MapType.queue, [1, 2, 3]],
    ['stack', MapType.stack, [3, 2, 1]],
  ])('%s: pops in %s order, then -ENOENT; peek does not remove', (_what, type, order) => {
    const m = make(type as MapType);
    for (const v of [1, 2, 3]) expect(m.update(none, u32(v))).toBe(0);
    expect(m.count).toBe(3);
    expect(readU32(m.lookup(none))).toBe((order as number[])[0]);
    expect([pop(m), pop(m), pop(m), pop(m)]).toEqual([...(order as number[]), undefined]);
  });

  it.each([
    // a full map: -E2BIG, or with BPF_EXIST the oldest value goes (for a stack too: the bottom one)
    ['queue', MapType.queue, UpdateFlag.any, -Errno.E2BIG, [1, 2]],
    ['queue', MapType.queue, UpdateFlag.exist, 0, [2, 9]],
    ['stack', MapType.stack, UpdateFlag.any, -Errno.E2BIG, [2, 1]],
    ['stack', MapType.stack, UpdateFlag.exist, 0, [9, 2]],
    ['queue', MapType.queue, UpdateFlag.noExist, -Errno.EINVAL, [1, 2]],
    ['stack', MapType.stack, 3, -Errno.EINVAL, [2, 1]],
  ])('%s, full, push with flags %i: %i, then pops %j', (_what, type, flags, expected, after) => {
    const m = make(type as MapType, 2);
    m.update(none, u32(1));
    m.update(none, u32(2));
    expect(m.update(none, u32(9), flags as number)).toBe(expected);
    expect([pop(m), pop(m)]).toEqual(after);
  });

  it('wraps around its ring many times in step with a model', () => {
    for (const type of [MapType.queue, MapType.stack]) {
      const m = make(type, 4);
      const held: number[] = [];
      let next = 0;
      for (let i = 0; i < 500; i++) {
        if ((i * 7) % 5 < 3) {
          const r = m.update(none, u32(next), i % 3 === 0 ? UpdateFlag.exist : UpdateFlag.any);
          if (held.length === 4 && i % 3 !== 0) expect(r).toBe(-Errno.E2BIG);
          else {
            if (held.length === 4) held.shift();
            held.push(next);
            expect(r).toBe(0);
          }
          next++;
        } else {
          const want = type === MapType.queue ? held.shift() : held.pop();
          expect(pop(m)).toBe(want);
        }
        expect(m.count).toBe(held.length);
      }
    }
  });

  it('program-side pop and peek of an empty map zero the destination', () => {
    const m = make(MapType.queue);
    const dst = Uint8Array.of(9, 9, 9, 9, 9, 9);
    expect(m.take(dst, 1, false)).toBe(-Errno.ENOENT);
    expect([...dst]).toEqual([9, 0, 0, 0, 0, 9]);
    expect(m.lookupFromProgram()).toBe(-1);
    expect(m.updateFromProgram()).toBe(-Errno.EINVAL);
    expect(m.values.length).toBe(0);
  });

  it.each([
    [{ keySize: 4, valueSize: 4, maxEntries: 1 }, "create map q: a queue map's key size must be 0, is 4"],
    [{ keySize: 0, valueSize: 0, maxEntries: 1 }, "create map q: a queue map's value size and max_entries must be > 0"],
    [{ keySize: 0, valueSize: 4, maxEntries: 1, flags: 1 }, 'create map q: flags 0x1 are not valid for a queue map'],
    [{ keySize: 0, valueSize: 4, maxEntries: 1, flags: 0x180 }, 'create map q: flags 0x180 are not valid for a queue map'],
    [{ keySize: 0, valueSize: (1 << 22) + 1, maxEntries: 1 }, 'create map q: value size 4194305 is above 4194304 (E2BIG)'],
  ])('refuses %j', (spec, message) => {
    expect(() => createMap({ name: 'q', type: MapType.queue, ...spec })).toThrow(message);
  });

  it('takes BPF_F_RDONLY_PROG and BPF_F_NUMA_NODE', () => {
    expect(createMap({ name: 's', type: MapType.stack, keySize: 0, valueSize: 8, maxEntries: 1, flags: 0x84 })).toBeInstanceOf(QueueStackMap);
  });
});

describe('stack trace map (BPF_MAP_TYPE_STACK_TRACE)', () => {
  it('is created with the kernel\'s checks and stays empty', () => {
    const m = createMap({ name: 's', type: MapType.stackTrace, keySize: 4, valueSize: 127 * 8, maxEntries: 1000 }) as StackTraceMap;
    expect(m.buckets).toBe(1024);
    expect(m.lookup(u32(0))).toBeUndefined();
    expect(m.getNextKey(undefined)).toBe(-Errno.ENOENT);
    expect(m.delete(u32(1023))).toBe(-Errno.ENOENT);
    expect(m.delete(u32(1024))).toBe(-Errno.E2BIG);
    expect(m.update(u32(0), new Uint8Array(1016))).toBe(-Errno.EINVAL);
    expect(snapshotMap(m)).toMatchObject({ type: 'stack_trace', entries: [] });
  });

  it.each([
    [{ keySize: 8, valueSize: 64 }, "create map s: a stack trace map's key size must be 4, is 8"],
    [{ keySize: 4, valueSize: 12 }, "create map s: a stack trace map's value size must be a multiple of 8 up to 1016, is 12"],
    [{ keySize: 4, valueSize: 128 * 8 }, "create map s: a stack trace map's value size must be a multiple of 8 up to 1016, is 1024"],
    [{ keySize: 4, valueSize: 48, flags: 0x20 }, "create map s: a stack trace map's value size must be a multiple of 32 up to 4064, is 48"],
    [{ keySize: 4, valueSize: 64, flags: 0x1 }, 'create map s: flags 0x1 are not valid for a stack trace map'],
  ])('refuses %j', (spec, message) => {
    expect(() => createMap({ name: 's', type: MapType.stackTrace, maxEntries: 4, ...spec })).toThrow(message);
  });
});

describe('snapshots', () => {
  it('give keys and values as bytes and, with a type description, decoded', () => {
    const m = createMap({ name: 'counts', type: MapType.hash, keySize: 16, valueSize: 8, maxEntries: 8 });
    const key = new Uint8Array(16);
    key.set(new TextEncoder().encode('bash'));
    m.update(key, u64(3));
    const s = snapshotMap(m, {
      key: { kind: 'string', size: 16 },
      value: { kind: 'struct', fields: [{ name: 'count', offset: 0, type: { kind: 'int', size: 8 } }] },
    });
    expect(s).toMatchObject({ name: 'counts', type: 'hash', keySize: 16, valueSize: 8, maxEntries: 8 });
    expect(s.entries).toEqual([{ key, values: [u64(3)], typedKey: 'bash', typedValues: [{ count: 3n }] }]);
  });
});
