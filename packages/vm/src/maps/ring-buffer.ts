import { VmError } from '../errors.js';
import { Errno } from './errno.js';
import { OpaqueMap, type MapSpec } from './map.js';

const BUSY = 0x80000000;
const DISCARD = 0x40000000;
const HEADER = 8;

/** `BPF_RB_*` query flags of `bpf_ringbuf_query`. */
export const RingbufQuery = { availData: 0, ringSize: 1, consPos: 2, prodPos: 3 } as const;

/**
 * `BPF_MAP_TYPE_RINGBUF`: max_entries bytes of data area (a power of 2, a multiple of 4096).
 * Reservations are carved from `values` (the program writes into them in place); a submitted
 * record is handed to `emit` and its space is given back when the consumer (the runtime, after
 * each event) calls {@link RingBuffer.consume}. A reservation that does not fit returns NULL,
 * an output that does not fit -EAGAIN, as in the kernel.
 */
export class RingBuffer extends OpaqueMap {
  /** Next free byte of the data area. */
  private head = 0;
  /** Reservations not yet submitted or discarded. */
  private outstanding = 0;
  /** Bytes submitted since the last consume. */
  private available = 0;
  private producerPos = 0;
  private consumerPos = 0;
  /** Records dropped because they did not fit. */
  dropped = 0;
  /** Receives each submitted record (a copy). */
  emit: (map: RingBuffer, data: Uint8Array) => void = () => {};

  constructor(spec: MapSpec) {
    const size = spec.maxEntries;
    if (spec.keySize !== 0 || spec.valueSize !== 0) {
      throw new VmError('invalid-map', `create map ${spec.name}: a ring buffer's key and value size must be 0`);
    }
    if (size < 4096 || size % 4096 !== 0 || (size & (size - 1)) !== 0) {
      throw new VmError(
        'invalid-map',
        `create map ${spec.name}: ring buffer size ${size} is not a power of 2 multiple of 4096`,
      );
    }
    super(spec, size);
  }

  /** Reserves `size` bytes; returns the data offset in `values`, or -1 when it does not fit. */
  reserve(size: number): number {
    if (size <= 0 || size > this.spec.maxEntries - HEADER) return -1;
    const need = HEADER + ((size + 7) & ~7);
    if (this.head + need > this.values.length) {
      this.dropped++;
      return -1;
    }
    const at = this.head;
    const v = this.values;
    const len = (size | BUSY) >>> 0;
    v[at] = len & 0xff;
    v[at + 1] = (len >>> 8) & 0xff;
    v[at + 2] = (len >>> 16) & 0xff;
    v[at + 3] = len >>> 24;
    this.head += need;
    this.producerPos += need;
    this.outstanding++;
    return at + HEADER;
  }

  private header(dataOffset: number): number {
    const at = dataOffset - HEADER;
    if (at < 0 || at + HEADER > this.values.length) return 0;
    const v = this.values;
    return ((v[at] as number) | ((v[at + 1] as number) << 8) | ((v[at + 2] as number) << 16) | ((v[at + 3] as number) << 24)) >>> 0;
  }

  /**
   * Submits (or discards) the reservation whose data starts at `dataOffset`. Returns false
   * when no reservation is outstanding there (the VM faults: the kernel verifier forbids it).
   */
  commit(dataOffset: number, discard: boolean): boolean {
    const h = this.header(dataOffset);
    if ((h & BUSY) === 0 || (h & DISCARD) !== 0) return false;
    const size = h & 0x3fffffff;
    const at = dataOffset - HEADER;
    const v = this.values;
    const len = discard ? size | DISCARD : size;
    v[at] = len & 0xff;
    v[at + 1] = (len >>> 8) & 0xff;
    v[at + 2] = (len >>> 16) & 0xff;
    v[at + 3] = len >>> 24;
    this.outstanding--;
    if (!discard) {
      this.available += HEADER + ((size + 7) & ~7);
      this.emit(this, v.slice(dataOffset, dataOffset + size));
    }
    return true;
  }

  /** `bpf_ringbuf_output`: copies `size` bytes in as one record; 0 or -EAGAIN. */
  output(bytes: Uint8Array, offset: number, size: number): number {
    const at = this.reserve(size);
    if (at < 0) return -Errno.EAGAIN;
    this.values.set(bytes.subarray(offset, offset + size), at);
    this.commit(at, false);
    return 0;
  }

  query(flag: number): number {
    switch (flag) {
      case RingbufQuery.availData:
        return this.available;
      case RingbufQuery.ringSize:
        return this.spec.maxEntries;
      case RingbufQuery.consPos:
        return this.consumerPos;
      case RingbufQuery.prodPos:
        return this.producerPos;
      default:
        return 0;
    }
  }

  /** The consumer read everything submitted: free the space (once no reservation is open). */
  consume(): void {
    this.consumerPos += this.available;
    this.available = 0;
    if (this.outstanding === 0) this.head = 0;
  }

  /** Discards reservations left open when a run ends (the kernel verifier would refuse them). */
  abandonOutstanding(): void {
    this.outstanding = 0;
    this.head = 0;
  }

  lookup(): Uint8Array | undefined {
    return undefined;
  }
  update(): number {
    return -Errno.EINVAL;
  }
  delete(): number {
    return -Errno.EINVAL;
  }
  getNextKey(): Uint8Array | number {
    return -Errno.EINVAL;
  }
}
