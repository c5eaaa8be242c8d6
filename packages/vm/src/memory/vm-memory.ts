import {
  addressToBigInt,
  CONTEXT_REGION,
  formatAddress,
  MAP_HANDLE_REGION,
  MAX_FRAMES,
  STACK_FRAME_SIZE,
  STACK_REGION,
} from '../address.js';
import { type RegionKind, VmFault } from '../errors.js';
import { formatInsn } from '../insn-text.js';
import type { BpfMap } from '../maps/map.js';
import { RingBuffer } from '../maps/ring-buffer.js';
import type { LoadedProgram } from '../program.js';
import { RunStatus, TAIL_CALL } from '../run-status.js';
import {
  BASE_ADDR,
  LEN_ADDR,
  LOW_ADDR,
  MAPS_ADDR,
  Misc,
  MISC_ADDR,
  PAGE,
  REG_HI_ADDR,
  REG_LO_ADDR,
  STACK_ADDR,
  State,
  STATE_ADDR,
} from './layout.js';
import { RecordCopy } from './record-copy.js';
import { createWasmMemory, type WasmMemory } from './wasm-api.js';

/**
 * The memory model at the bottom of the VM: the register file, the region table (context,
 * stack, each map's values, each ring buffer) and address resolution over it, the WebAssembly
 * linear memory that holds them all when the compiled tier runs (layout.ts), the context (the
 * event record), and where a run stopped and why (faults as {@link VmFault}s). It imports no
 * helper, no interpreter, no compiler and not vm.ts: `Vm` (vm.ts) is built on it, and the
 * interpreter and helpers reach it through the hosts they declare (`InterpreterHost`,
 * `HelperHost`), whose memory members are the ones here.
 */
export class VmMemory {
  /** Low and high 32-bit halves of r0..r10. */
  regLo = new Int32Array(11);
  regHi = new Int32Array(11);
  readonly maps: readonly BpfMap[];
  readonly budget: number;
  /**
   * The compiled tier's linear memory: registers, region table, stack, map values and the
   * context live here (layout.ts), and the typed arrays of this VM and its maps are
   * views of it. Undefined when the VM interprets only.
   */
  protected memory: WasmMemory | undefined;
  protected runState = new Int32Array(8);
  /** The state compiled code reads besides the run state (layout.ts, MISC_ADDR): the current CPU. */
  protected miscState = new Int32Array(4);
  private cpuValue = 0;
  private regionBase = new Int32Array(0);
  private mapAddr: number[] = [];
  /** Bytes of each map's values (kept apart: a view's length reads 0 once memory.grow detached it). */
  private mapBytes: number[] = [];
  private regionCount = 0;
  protected contextAddr = 0;
  /** Linear address of the bytes kept for staged pages (see {@link createMemory}). */
  protected stageAddr = 0;
  /** The whole linear memory, bytes (compiled tier). */
  protected memoryBytes = new Uint8Array(0);

  // Region table: index = region id (high half of an address).
  readonly regionBytes: Uint8Array[] = [];
  readonly regionViews: DataView[] = [];
  regionLength: Int32Array;
  /**
   * First accessible byte of each region: 0, except for the stack, where it is the bottom of the
   * current frame (a frame reaches its own 512 bytes and its callers', never a callee's).
   */
  regionLow: Int32Array;
  readonly regionKind: RegionKind[] = [];
  protected contextBuffer = new Uint8Array(256);
  /** {@link contextBuffer} as 32-bit words (its length rounded down), for copying records by words. */
  private contextWords = new Int32Array(this.contextBuffer.buffer, 0, 64);
  /** Copies records into the context in JavaScript (record-copy.ts), its sources cached. */
  private readonly recordCopy = new RecordCopy();
  /** The stack as 8-byte words (zeroing frame 0 per run: one `fill`). */
  protected stackWords: Float64Array;

  /** Instructions executed by the last run. */
  insnCount = 0;
  /** Program and pc where the last run stopped. */
  lastProgram: LoadedProgram | undefined;
  lastPc = 0;
  /** Current call depth (0 = the program's main frame). */
  frame = 0;
  protected faultValue: VmFault | undefined;
  // where the interpreter loop left a fault: base register of a memory access, its size, a message
  faultBase = -1;
  faultSize = 0;
  faultMsg = '';
  /** A fault a helper recorded (`Vm.helperFault`), turned into a {@link VmFault} by {@link conclude}. */
  protected pendingFault: { message: string; address?: [number, number]; region?: RegionKind } | undefined;

  /** The region table of `maps` (each map's values a region, from id 3), in JavaScript memory. */
  constructor(maps: readonly BpfMap[], budget: number) {
    this.maps = maps;
    this.budget = budget;
    const regionCount = 3 + this.maps.length;
    this.regionLength = new Int32Array(regionCount);
    this.regionLow = new Int32Array(regionCount);
    this.addRegion(0, new Uint8Array(0), 'none');
    this.addRegion(CONTEXT_REGION, this.contextBuffer, 'context');
    this.regionLength[CONTEXT_REGION] = 0;
    const stack = new Uint8Array(STACK_FRAME_SIZE * MAX_FRAMES);
    this.stackWords = new Float64Array(stack.buffer);
    this.addRegion(STACK_REGION, stack, 'stack');
    this.maps.forEach((map, i) => {
      const id = 3 + i;
      map.regionId = id;
      this.addRegion(id, map.values, map instanceof RingBuffer ? 'ringbuf' : 'map-value');
    });
  }

  /**
   * Moves the registers, the region table, the stack, every map's values and the context into
   * one WebAssembly memory (see layout.ts) so compiled code and the interpreter share them, with
   * `stageBytes` kept free between the maps' values and the context (the compiled tier's staged
   * pages, at {@link stageAddr}). Returns why it could not (the VM then interprets only).
   */
  protected createMemory(stageBytes: number): string | undefined {
    let at = MAPS_ADDR;
    this.mapBytes = this.maps.map((m) => m.valuesBytes);
    this.regionCount = this.regionLength.length;
    this.mapAddr = this.maps.map((m) => {
      const a = at;
      at += (m.storageBytes + 7) & ~7;
      return a;
    });
    this.stageAddr = at;
    at += stageBytes;
    this.contextAddr = at;
    const contextCapacity = Math.max(65536, this.contextBuffer.length);
    const pages = Math.ceil((at + contextCapacity) / PAGE);
    let memory: WasmMemory;
    try {
      memory = createWasmMemory(pages);
    } catch (e) {
      return `memory of ${pages} pages: ${(e as Error).message}`;
    }
    const old = {
      lo: this.regLo,
      hi: this.regHi,
      low: this.regionLow,
      len: this.regionLength,
      stack: this.regionBytes[STACK_REGION] as Uint8Array,
      context: this.contextBuffer,
    };
    this.memory = memory;
    const buf = memory.buffer;
    // each map's storage (values, and a hash map's index) moves into this memory, with its bytes
    this.maps.forEach((m, i) => {
      m.placeStorage(buf, this.mapAddr[i] as number, true);
      this.regionBytes[3 + i] = m.values;
    });
    this.bindViews();
    new Uint8Array(buf, STACK_ADDR, old.stack.length).set(old.stack);
    this.regLo.set(old.lo);
    this.regHi.set(old.hi);
    this.regionLow.set(old.low);
    this.regionLength.set(old.len);
    this.regionLength[CONTEXT_REGION] = 0;
    const base = this.regionBase;
    base[CONTEXT_REGION] = this.contextAddr;
    base[STACK_REGION] = STACK_ADDR;
    this.maps.forEach((_, i) => {
      base[3 + i] = this.mapAddr[i] as number;
    });
    this.runState[State.regionCount / 4] = this.regionLength.length;
    this.runState[State.budget / 4] = this.budget;
    this.miscState[Misc.cpu / 4] = this.cpuValue;
    return undefined;
  }

  /** (Re)creates every typed-array view of the compiled tier's memory (after creating or growing it). */
  protected bindViews(): void {
    const memory = this.memory as WasmMemory;
    const buf = memory.buffer;
    // lengths come from fields, never from the old views: after memory.grow they read 0
    const nr = this.regionCount;
    this.regLo = new Int32Array(buf, REG_LO_ADDR, 11);
    this.regHi = new Int32Array(buf, REG_HI_ADDR, 11);
    this.runState = new Int32Array(buf, STATE_ADDR, 8);
    this.miscState = new Int32Array(buf, MISC_ADDR, 4);
    this.regionLow = new Int32Array(buf, LOW_ADDR, nr);
    this.regionLength = new Int32Array(buf, LEN_ADDR, nr);
    this.regionBase = new Int32Array(buf, BASE_ADDR, nr);
    const stack = new Uint8Array(buf, STACK_ADDR, STACK_FRAME_SIZE * MAX_FRAMES);
    this.stackWords = new Float64Array(buf, STACK_ADDR, (STACK_FRAME_SIZE * MAX_FRAMES) / 8);
    this.setRegionBytes(STACK_REGION, stack);
    this.maps.forEach((m, i) => {
      const at = this.mapAddr[i] as number;
      if (m.values === this.regionBytes[3 + i]) {
        m.placeStorage(buf, at, false);
        this.setRegionBytes(3 + i, m.values);
      } else {
        // another VM took the storage since (maps can be shared): it stays there, and the next
        // run here takes it back with its bytes (syncMapRegions)
        this.setRegionBytes(3 + i, new Uint8Array(buf, at, this.mapBytes[i] as number));
      }
    });
    this.memoryBytes = new Uint8Array(buf);
    this.contextBuffer = new Uint8Array(buf, this.contextAddr, buf.byteLength - this.contextAddr);
    this.contextWords = new Int32Array(buf, this.contextAddr & ~3, this.contextAddr % 4 === 0 ? this.contextBuffer.length >> 2 : 0);
    this.setRegionBytes(CONTEXT_REGION, this.contextBuffer);
  }

  private setRegionBytes(id: number, bytes: Uint8Array): void {
    this.regionBytes[id] = bytes;
    this.regionViews[id] = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /**
   * A map's storage may have been taken by another VM since this one last ran (several VMs can
   * share maps): take it back (the compiled tier copies its values and index into its memory).
   */
  protected syncMapRegions(): void {
    const maps = this.maps;
    for (let i = 0; i < maps.length; i++) {
      const m = maps[i] as BpfMap;
      const id = 3 + i;
      if (m.values === this.regionBytes[id]) continue;
      if (this.memory) {
        m.placeStorage(this.memory.buffer, this.mapAddr[i] as number, true);
        this.setRegionBytes(id, m.values);
      } else this.addRegion(id, m.values, this.regionKind[id] as RegionKind);
    }
  }

  private addRegion(id: number, bytes: Uint8Array, kind: RegionKind): void {
    this.regionBytes[id] = bytes;
    this.regionViews[id] = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.regionLength[id] = bytes.length;
    this.regionKind[id] = kind;
  }

  /**
   * CPU of the current event (`bpf_get_smp_processor_id`, the value a per-CPU map's lookup
   * gives). Kept in linear memory too, where compiled per-CPU lookups read it.
   */
  get cpu(): number {
    return this.cpuValue;
  }
  set cpu(cpu: number) {
    this.cpuValue = cpu;
    this.miscState[Misc.cpu / 4] = cpu;
  }

  /** Why the last run stopped, when it did not end with `exit`. */
  get fault(): VmFault | undefined {
    return this.faultValue;
  }

  /**
   * Checks that [address, address + size) lies inside one region; returns the byte offset in
   * that region (the region id is the address's high half), or -1.
   */
  resolve(lo: number, hi: number, size: number): number {
    if (hi <= 0 || hi >= this.regionLength.length) return -1;
    const a = lo >>> 0;
    if (size < 0 || a < (this.regionLow[hi] as number) || a + size > (this.regionLength[hi] as number)) return -1;
    return a;
  }

  /** Kind of the region an address names ('none' when it names none). */
  regionOf(hi: number): RegionKind {
    if (hi === MAP_HANDLE_REGION) return 'map';
    return this.regionKind[hi] ?? 'none';
  }

  /** Copies `context` into the context region (the event record, read in place by the program). */
  setContext(context: Uint8Array, byteOffset = 0, length = context.length - byteOffset): void {
    const n = length;
    if (n > this.contextBuffer.length) {
      if (this.memory) {
        // the context is last in the compiled tier's memory: grow it, then renew every view
        let size = this.contextBuffer.length;
        while (size < n) size *= 2;
        const pages = Math.ceil((this.contextAddr + size) / PAGE) - this.memory.buffer.byteLength / PAGE;
        if (pages > 0) this.memory.grow(pages);
        this.bindViews();
      } else {
        let size = this.contextBuffer.length;
        while (size < n) size *= 2;
        this.contextBuffer = new Uint8Array(size);
        this.contextWords = new Int32Array(this.contextBuffer.buffer, 0, size >> 2);
        this.addRegion(CONTEXT_REGION, this.contextBuffer, 'context');
      }
    }
    this.recordCopy.copy(this.contextBuffer, this.contextWords, context, byteOffset, n);
    this.regionLength[CONTEXT_REGION] = n;
  }

  /**
   * Records where a run stopped and turns a fault left by the loop (`faultBase`/`faultSize` for
   * memory, `faultMsg` otherwise) into a {@link VmFault}. Shared by the interpreter and the
   * compiled tier.
   */
  conclude(prog: LoadedProgram, pc: number, n: number, frame: number, status: number): number {
    const L = this.regLo;
    const H = this.regHi;
    const LEN = this.regionLength;
    const NR = LEN.length;
    const OFF = prog.off;
    const budget = this.budget;
    this.insnCount = n;
    if (status === TAIL_CALL) return status;
    this.lastPc = pc;
    this.lastProgram = prog;
    this.frame = frame;
    const faultBase = this.faultBase;
    const faultSize = this.faultSize;
    const faultMsg = this.faultMsg;
    if (faultBase >= 0) {
      // memory fault: compute the address reg + off as 64 bits
      const lo = L[faultBase] as number;
      const hi = H[faultBase] as number;
      const s = (lo >>> 0) + (OFF[pc] as number);
      const aLo = s | 0;
      const aHi = (hi + (s > 0xffffffff ? 1 : s < 0 ? -1 : 0)) | 0;
      const region = this.regionOf(hi);
      const regionLen = hi > 0 && hi < NR ? (LEN[hi] as number) : 0;
      const where =
        region === 'none'
          ? 'no region'
          : region === 'map'
            ? 'a map handle (not memory)'
            : (this.regionLow[hi] as number) > 0
              ? `region ${region} bytes [${this.regionLow[hi]}, ${regionLen}) (the current frame and its callers)`
              : `region ${region} of ${regionLen} bytes`;
      this.faultValue = new VmFault(
        `memory fault: ${faultSize}-byte access at ${formatAddress(aLo, aHi)} outside ${where} at pc ${pc} (${formatInsn(prog.bytes, pc)})`,
        pc,
        formatInsn(prog.bytes, pc),
        addressToBigInt(aLo, aHi),
        region,
      );
      status = RunStatus.fault;
    } else if (faultMsg !== '') {
      if (faultMsg === 'helper') {
        const f = this.pendingFault;
        this.pendingFault = undefined;
        const addr = f?.address;
        this.faultValue = new VmFault(
          `helper fault: ${f?.message ?? 'unknown'} at pc ${pc} (${formatInsn(prog.bytes, pc)})`,
          pc,
          formatInsn(prog.bytes, pc),
          addr ? addressToBigInt(addr[0], addr[1]) : undefined,
          f?.region,
        );
      } else {
        this.faultValue = new VmFault(`${faultMsg} at pc ${pc} (${formatInsn(prog.bytes, pc)})`, pc, formatInsn(prog.bytes, pc));
      }
      status = RunStatus.fault;
    } else if (status === RunStatus.budgetExhausted) {
      this.faultValue = new VmFault(
        `instruction budget of ${budget} exhausted at pc ${pc} (${formatInsn(prog.bytes, pc)})`,
        pc,
        formatInsn(prog.bytes, pc),
        undefined,
        undefined,
        'budget-exhausted',
      );
    }
    return status;
  }
}
