import { VmError } from '../errors.js';
import { Errno, UpdateFlag } from './errno.js';
import { BpfMap, type InlineLookup, type MapContext, type MapSpec, MapType, readUserValue, roundUp8, type ValueStore, writeUserValue } from './map.js';

function readIndex(bytes: Uint8Array, offset: number): number {
  return (
    ((bytes[offset] as number) |
      ((bytes[offset + 1] as number) << 8) |
      ((bytes[offset + 2] as number) << 16) |
      ((bytes[offset + 3] as number) << 24)) >>>
    0
  );
}

function indexKey(i: number): Uint8Array {
  const k = new Uint8Array(4);
  new DataView(k.buffer).setUint32(0, i, true);
  return k;
}

/**
 * Maps indexed by a u32 key: `BPF_MAP_TYPE_ARRAY`, `PERCPU_ARRAY`, and the fd arrays
 * `PROG_ARRAY` and `PERF_EVENT_ARRAY` (whose values are set from user space only). Every
 * index below max_entries exists (zero-filled); `BPF_NOEXIST` gives -EEXIST, delete -EINVAL.
 */
export class ArrayMap<T = never> extends BpfMap {
  private readonly perCpu: boolean;
  private readonly cpuCount: number;
  private readonly slotBytes: number;
  /** Entries of an fd array (programs of a prog array; unused otherwise). */
  readonly slots: (T | undefined)[];

  constructor(spec: MapSpec, context: MapContext) {
    if (spec.keySize !== 4) {
      throw new VmError('invalid-map', `create map ${spec.name}: an array map's key size must be 4, is ${spec.keySize}`);
    }
    if (spec.maxEntries <= 0 || spec.valueSize <= 0) {
      throw new VmError('invalid-map', `create map ${spec.name}: value size and max_entries must be > 0`);
    }
    const perCpu = spec.type === MapType.percpuArray;
    const fdArray = spec.type === MapType.progArray || spec.type === MapType.perfEventArray;
    if (fdArray && spec.valueSize !== 4) {
      throw new VmError('invalid-map', `create map ${spec.name}: an fd array's value size must be 4`);
    }
    const cpus = perCpu ? context.cpuCount : 1;
    super(spec, fdArray ? 0 : spec.valueSize * cpus * spec.maxEntries);
    this.perCpu = perCpu;
    this.cpuCount = cpus;
    this.slotBytes = spec.valueSize * cpus;
    this.slots = fdArray ? new Array<T | undefined>(spec.maxEntries) : [];
  }

  get isFdArray(): boolean {
    return this.spec.type === MapType.progArray || this.spec.type === MapType.perfEventArray;
  }

  override get inlineLookup(): InlineLookup | undefined {
    const t = this.spec.type;
    if (t !== MapType.array && t !== MapType.percpuArray) return undefined;
    return {
      kind: 'array',
      keySize: 4,
      maxEntries: this.spec.maxEntries,
      slotBytes: this.slotBytes,
      cpuStride: this.perCpu ? this.spec.valueSize : 0,
      cpuCount: this.cpuCount,
      bucketsOffset: 0,
      keysOffset: 0,
      mask: 0,
    };
  }

  override get userValueSize(): number {
    return this.perCpu ? roundUp8(this.spec.valueSize) * this.cpuCount : this.spec.valueSize;
  }

  lookupFromProgram(keyBytes: Uint8Array, keyOffset: number, cpu: number): number {
    if (this.isFdArray) return -1;
    const i = readIndex(keyBytes, keyOffset);
    if (i >= this.spec.maxEntries) return -1;
    return i * this.slotBytes + (this.perCpu ? (cpu % this.cpuCount) * this.spec.valueSize : 0);
  }

  updateFromProgram(
    keyBytes: Uint8Array,
    keyOffset: number,
    valueBytes: Uint8Array,
    valueOffset: number,
    flags: number,
    cpu: number,
  ): number {
    if (this.isFdArray) return -Errno.EINVAL;
    const r = this.checkUpdate(readIndex(keyBytes, keyOffset), flags);
    if (r < 0) return r;
    const at = r * this.slotBytes + (this.perCpu ? (cpu % this.cpuCount) * this.spec.valueSize : 0);
    this.values.set(valueBytes.subarray(valueOffset, valueOffset + this.spec.valueSize), at);
    return 0;
  }

  private checkUpdate(i: number, flags: number): number {
    if (flags < 0 || flags > UpdateFlag.exist) return -Errno.EINVAL;
    if (i >= this.spec.maxEntries) return -Errno.E2BIG;
    if (flags === UpdateFlag.noExist) return -Errno.EEXIST;
    return i;
  }

  deleteFromProgram(keyBytes: Uint8Array, keyOffset: number): number {
    if (!this.isFdArray) return -Errno.EINVAL;
    const i = readIndex(keyBytes, keyOffset);
    if (i >= this.spec.maxEntries) return -Errno.E2BIG;
    if (this.slots[i] === undefined) return -Errno.ENOENT;
    this.slots[i] = undefined;
    return 0;
  }

  lookup(key: Uint8Array): Uint8Array | undefined {
    this.checkKey(key);
    const i = readIndex(key, 0);
    if (i >= this.spec.maxEntries) return undefined;
    if (this.isFdArray) return undefined;
    return readUserValue(this.store(), i);
  }

  private store(): ValueStore {
    const { values, slotBytes, perCpu, cpuCount } = this;
    return { values, slotBytes, valueSize: this.spec.valueSize, perCpu, cpuCount };
  }

  update(key: Uint8Array, value: Uint8Array, flags = 0): number {
    this.checkKey(key);
    if (this.isFdArray) {
      throw new VmError('invalid-argument', `map ${this.spec.name}: set entries of an fd array with setSlot()`);
    }
    this.checkUserValue(value);
    const r = this.checkUpdate(readIndex(key, 0), flags);
    if (r < 0) return r;
    writeUserValue(this.store(), r, value);
    return 0;
  }

  /** Sets (or clears, with undefined) entry `index` of a prog or perf event array. */
  setSlot(index: number, entry: T | undefined): number {
    if (!this.isFdArray) return -Errno.EINVAL;
    if (index < 0 || index >= this.spec.maxEntries) return -Errno.E2BIG;
    this.slots[index] = entry;
    return 0;
  }

  delete(key: Uint8Array): number {
    this.checkKey(key);
    return this.deleteFromProgram(key, 0);
  }

  getNextKey(key: Uint8Array | undefined): Uint8Array | number {
    const max = this.spec.maxEntries;
    if (key === undefined) return indexKey(0);
    this.checkKey(key);
    const i = readIndex(key, 0);
    if (i >= max) return indexKey(0);
    if (i === max - 1) return -Errno.ENOENT;
    return indexKey(i + 1);
  }
}
