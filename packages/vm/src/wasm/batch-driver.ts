import { StartFlags, STATE_ADDR, State } from '../memory/layout.js';
import { type WasmModule, wasmApi } from '../memory/wasm-api.js';
import { ByteWriter, Op } from './wasm-encoder.js';

/**
 * The batch driver: one wasm function that runs a VM's queued runs (records of a staged batch,
 * each with the program to run on it) one after the other, calling each program's compiled
 * `start` entry through a table (`call_indirect`), so that a batch crosses from JavaScript into
 * wasm once instead of once per run. It does per run what `Vm.runFast` does around `start`: the
 * flags (zero frame 0 when the last run could write it; store every register unless the register
 * file holds this program's start values), and after a normal exit the program's instruction and
 * run counts. It returns at the first run whose `start` returned 1 (a fault, the budget, a
 * helper's exit, a tail call): the VM finishes that run in JavaScript as `runFast` does, then
 * calls the driver again from the next run. Helpers still run in JavaScript, per call.
 *
 * Its block of linear memory (at `base`, {@link BATCH_BYTES}, kept by the VM after the stage):
 *
 * ```
 *   base +   0  the slot of the program whose fresh run last exited normally (the register file
 *               holds its start values), -1 for none                                     (i32)
 *   base +   4  whether frame 0 may hold bytes a run wrote                                (i32)
 *   base +   8  the index of the run in progress (helpers read its event)                (i32)
 *   base +  64  per program slot: whether its runs can write the stack   [BATCH_SLOTS x i32]
 *   base + 128  per program slot: instructions (i64) and runs (i32) of normal exits [x 16 bytes]
 *   base + 512  the queued runs: program slot, staged address, length, CPU, time (low, high
 *               halves), pid, the owner's tag                                [BATCH_RUNS x 32]
 * ```
 */
export const BATCH_SLOTS = 16;
export const BATCH_RUNS = 1024;
export const BatchAddr = { last: 0, dirty: 4, current: 8, sees: 64, counts: 128, runs: 512 } as const;
/** Bytes of one queued run, and its fields (i32 indexes). */
export const RUN_BYTES = 32;
export const RunField = { slot: 0, staged: 1, length: 2, cpu: 3, timeLo: 4, timeHi: 5, pid: 6, tag: 7 } as const;
export const BATCH_BYTES = BatchAddr.runs + BATCH_RUNS * RUN_BYTES;

let cached: WasmModule | undefined;

/** The driver's module (compiled once per process). */
export function batchDriverModule(): WasmModule {
  if (cached) return cached;
  if (!wasmApi) throw new Error('WebAssembly is not available');
  cached = new wasmApi.Module(encodeDriver());
  return cached;
}

// locals: 0 from (the run index), 1 count, 2 base; 3 d (the run's descriptor), 4 slot, 5 flags, 6 a
const [I, COUNT, BASE, D, SLOT, FLAGS, A] = [0, 1, 2, 3, 4, 5, 6];

function encodeDriver(): Uint8Array {
  const c = new ByteWriter();
  const get = (l: number) => c.byte(Op.localGet).u32(l);
  const set = (l: number) => c.byte(Op.localSet).u32(l);
  const i32 = (v: number) => c.byte(Op.i32Const).s32(v);
  const load = (offset: number) => c.byte(Op.i32Load).u32(2).u32(offset);
  const store = (offset: number) => c.byte(Op.i32Store).u32(2).u32(offset);

  c.byte(Op.loop).byte(0x40);
  // if (i >= count) return count
  get(I);
  get(COUNT);
  c.byte(Op.i32GeU).byte(Op.if).byte(0x40);
  get(COUNT);
  c.byte(Op.return).byte(Op.end);
  // d = base + runs + i * 32; slot = d[0]
  get(BASE);
  get(I);
  i32(5);
  c.byte(Op.i32Shl).byte(Op.i32Add);
  set(D);
  get(D);
  load(BatchAddr.runs);
  set(SLOT);
  // flags = (dirty ? zeroFrame : 0) | (slot == last ? 0 : full)
  get(BASE);
  load(BatchAddr.dirty);
  i32(0);
  c.byte(Op.i32Ne);
  get(SLOT);
  get(BASE);
  load(BatchAddr.last);
  c.byte(Op.i32Ne);
  i32(1);
  c.byte(Op.i32Shl).byte(Op.i32Or);
  set(FLAGS);
  if (StartFlags.zeroFrame !== 1 || StartFlags.full !== 2) throw new Error('batch driver: StartFlags changed');
  // current = i; dirty = sees[slot]
  get(BASE);
  get(I);
  store(BatchAddr.current);
  get(BASE);
  get(BASE);
  get(SLOT);
  i32(2);
  c.byte(Op.i32Shl).byte(Op.i32Add);
  load(BatchAddr.sees);
  store(BatchAddr.dirty);
  // start(0, length, staged, flags) through the table at slot
  i32(0);
  get(D);
  load(BatchAddr.runs + 8);
  get(D);
  load(BatchAddr.runs + 4);
  get(FLAGS);
  get(SLOT);
  c.byte(0x11).u32(1).u32(0); // call_indirect (type 1) (table 0)
  c.byte(Op.if).byte(0x40);
  // stopped early: nothing is known to be in the register file; JavaScript finishes the run
  get(BASE);
  i32(-1);
  store(BatchAddr.last);
  get(I);
  c.byte(Op.return).byte(Op.end);
  get(BASE);
  get(SLOT);
  store(BatchAddr.last);
  // a = base + counts + slot * 16: insns += State.n; runs += 1
  get(BASE);
  get(SLOT);
  i32(4);
  c.byte(Op.i32Shl).byte(Op.i32Add);
  set(A);
  get(A);
  get(A);
  c.byte(Op.i64Load).u32(3).u32(BatchAddr.counts);
  i32(0);
  c.byte(Op.i64Load32U).u32(2).u32(STATE_ADDR + State.n);
  c.byte(Op.i64Add);
  c.byte(Op.i64Store).u32(3).u32(BatchAddr.counts);
  get(A);
  get(A);
  load(BatchAddr.counts + 8);
  i32(1);
  c.byte(Op.i32Add);
  store(BatchAddr.counts + 8);
  // i++
  get(I);
  i32(1);
  c.byte(Op.i32Add);
  set(I);
  c.byte(Op.br).u32(0);
  c.byte(Op.end);
  c.byte(Op.unreachable);

  const out = new ByteWriter();
  out.bytes([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const section = (id: number, body: ByteWriter) => out.byte(id).sized(body);
  // types: 0 the driver (i32 i32 i32) -> i32; 1 a program's start (i32 i32 i32 i32) -> i32
  section(1, new ByteWriter().u32(2).byte(0x60).u32(3).bytes([0x7f, 0x7f, 0x7f]).u32(1).byte(0x7f).byte(0x60).u32(4).bytes([0x7f, 0x7f, 0x7f, 0x7f]).u32(1).byte(0x7f));
  // imports: vm.memory (min 1 page), vm.table (funcref, min 1)
  section(2, new ByteWriter().u32(2).name('vm').name('memory').byte(0x02).byte(0x00).u32(1).name('vm').name('table').byte(0x01).byte(0x70).byte(0x00).u32(1));
  section(3, new ByteWriter().u32(1).u32(0));
  section(7, new ByteWriter().u32(1).name('batch').byte(0x00).u32(0));
  const body = new ByteWriter().u32(1).u32(4).byte(0x7f).bytes(c.view()).byte(Op.end);
  section(10, new ByteWriter().u32(1).sized(body));
  return out.view().slice();
}
