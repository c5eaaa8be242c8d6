import { CONTEXT_REGION, FIRST_MAP_REGION, FUNC_REGION, MAP_HANDLE_REGION, MAX_FRAMES, STACK_FRAME_SIZE, STACK_REGION } from '../address.js';
import { callbackEntries } from '../callbacks.js';
import { HelperId } from '../helper-ids.js';
import { Errno } from '../maps/errno.js';
import { HashConst } from '../maps/hash-table.js';
import type { InlineLookup } from '../maps/map.js';
import { InternalOp, type LoadedProgram } from '../program.js';
import { BLOCK_VOID, ByteWriter, encodeModule, type FuncBody, Op, OpFc, ValType } from './wasm-encoder.js';
import {
  AbortKind,
  BASE_ADDR,
  FAST_LOOPS_ADDR,
  LEN_ADDR,
  LOW_ADDR,
  Misc,
  MISC_ADDR,
  REG_HI_ADDR,
  REG_LO_ADDR,
  STACK_ADDR,
  STACK_BYTES,
  StartFlags,
  State,
  STATE_ADDR,
} from '../memory/layout.js';

/**
 * The compiled tier's code generator: a loaded program becomes a WebAssembly module.
 *
 * - Registers r0..r9 are i64 locals (r10 too, computed from the call depth); 32-bit ALU works on
 *   wrapped halves and zero-extends, as RFC 9669 says.
 * - Every BPF function (the entry and each BPF-to-BPF call target) is a wasm function over the
 *   basic blocks it reaches; a call passes r0..r9 and returns r0..r5, so r6..r9 come back as the
 *   caller left them and r0..r5 as the callee left them, exactly like the interpreter's frames.
 * - Control flow: blocks in address order inside nested wasm `block`s under one `loop` with a
 *   `br_table` dispatcher. A forward jump is a direct `br` to its block; a backward jump sets the
 *   block index and re-enters the dispatcher; a block that jumps to its own start becomes a
 *   native wasm `loop`.
 * - Memory: every access translates a VM address (region id : offset, see address.ts) through
 *   the region table in linear memory, checking it against the region's lowest byte and length;
 *   a stack access through r10 with a constant offset inside the frame is checked at compile time.
 * - Helpers (map operations included) are one imported function; r0..r5 go through the
 *   register file in memory around the call. Except `bpf_map_lookup_elem` on a map whose shape
 *   the VM gives ({@link CompileOptions.lookups}: array, per-CPU array, hash and per-CPU hash
 *   maps): when r1 holds that map's handle and r2 points at a key inside one region, the lookup
 *   runs here, without JavaScript (an array's index bound, or the probe of the hash table that
 *   the map keeps in linear memory, see emitHashFind); any other case calls the helper, which
 *   answers or faults as it always does.
 * - Instruction counting and the budget check match the interpreter: counts per block, the check
 *   at every taken jump, call and after helper calls; a fault reports the same pc and count.
 * - Loop versioning: a counted self-loop whose trip count and access ranges can be computed on
 *   entry gets a second copy of its body without counting or checks, taken when the budget and
 *   every access's whole range pass once on entry (see versionPlan).
 *
 * Programs it does not take (an atomic fetch into r10) stay on the interpreter.
 */
export type WasmCompileResult =
  | {
      ok: true;
      bytes: Uint8Array;
      functions: number;
      instructions: number;
      /** Self-loops compiled with an unchecked fast copy (versionPlan), by start pc. */
      versionedLoops: number[];
      /** `bpf_map_lookup_elem` call sites compiled with an inline lookup (CompileOptions.lookups). */
      inlineLookups: number;
    }
  | { ok: false; reason: string };

// local indexes
const N = 10;
const FRAME = 11;
const R10 = 12;
const A64 = 13;
const T64 = 14;
const U64 = 15;
/** Length of the event record (region 1), fixed for a run. */
const CTXLEN = 16;
const PC = 17;
const KIND = 18;
const FB = 19;
const FS = 20;
const ID = 21;
const NR1 = 22;
const BUDGET = 23;
const R10_32 = 24;
const BLK = 25;
const X = 26;
const Y = 27;
/** Linear address of the event record's byte 0, fixed for a run. */
const CTXBASE = 28;
/** Per base register r0..r9, in a self-loop: the region's lowest byte and length (i64), its base (i32). */
const CLOW = 29;
const CLEN = 39;
const CBASE = 49;
/** A versioned self-loop's trip count (i64) and two i64 scratch locals for its entry checks. */
const TRIPS = 59;
const VA = 60;
const VB = 61;
/**
 * Per access site in a self-loop (i64 pairs from here): the lowest valid `lo` shifted by the
 * site's offset, and the span it may move in (see {@link compileToWasm}'s `address`). After
 * them, one i32 per site: the fast copy's linear base (region base + offset), see versionPlan.
 */
const SITES = 62;
/** Sum of |step| per induction register over one loop body, at most (keeps the range arithmetic exact). */
const MAX_STEP = 1 << 24;

const HELPER_FUNC = 0;
const RUN_FUNC = 1;
const FIRST_BPF_FUNC = 2;
const ABORT_GLOBAL = 0;
/**
 * 1 when a normal exit from frame 0 must store every register; 0 (a `start` with
 * {@link StartFlags.full} clear) when only those the entry function may write (see
 * {@link writtenRegisters}): the VM knows the register file already holds the others' start values.
 */
const FULL_GLOBAL = 1;

const STACK_TOP = STACK_BYTES;
const NONE: ReadonlySet<number> = new Set();
const NO_SITES: ReadonlyMap<number, number> = new Map();

/**
 * Registers some instruction of `p` may write (a superset of what its entry function writes):
 * the destination of every ALU, load and `lddw`, the source of an atomic fetch, r0 of a
 * compare-and-exchange, r0..r5 for any call (helper, BPF-to-BPF, `callx`, bpf_loop), and r0.
 * A register outside it keeps the value it entered frame 0 with until the exit, so a `start`
 * run need not store it when the register file already holds its start value.
 */
export function writtenRegisters(p: LoadedProgram): Set<number> {
  const { op: OP, dst: DST, src: SRC, imm: IMM } = p;
  const out = new Set<number>([0]);
  for (let i = 0; i < p.length; i++) {
    const o = OP[i] as number;
    const cls = o & 0x07;
    if (o === 0x85 || o === InternalOp.callLocal || o === InternalOp.callReg) {
      for (let r = 0; r <= 5; r++) out.add(r);
    } else if (o === 0xc3 || o === 0xdb) {
      const k = IMM[i] as number;
      if (k === 0xf1) out.add(0);
      else if ((k & 1) !== 0) out.add(SRC[i] as number);
    } else if (cls === 0x00 || cls === 0x01 || cls === 0x04 || cls === 0x07) out.add(DST[i] as number);
    if (o === InternalOp.loadImm64) i++;
  }
  return out;
}

/** Whether an instruction (opcode `o`, not an `lddw`) writes register `r`. */
function writesRegister(o: number, dst: number, src: number, imm: number, r: number): boolean {
  if (o === 0x85 || o === InternalOp.callLocal || o === InternalOp.callReg) return r <= 5;
  if (o === 0xc3 || o === 0xdb) return imm === 0xf1 ? r === 0 : (imm & 1) !== 0 && src === r;
  const cls = o & 0x07;
  return (cls === 0x00 || cls === 0x01 || cls === 0x04 || cls === 0x07) && dst === r;
}

/** The base register and size of the memory access at `i`, if it is one. */
function accessOfInsn(o: number, dst: number, src: number): { base: number; size: number } | undefined {
  const cls = o & 0x07;
  if (o === 0xc3) return { base: dst, size: 4 };
  if (o === 0xdb) return { base: dst, size: 8 };
  if (cls !== 0x01 && cls !== 0x02 && cls !== 0x03) return undefined;
  const sizeCode = o & 0x18;
  const size = sizeCode === 0x00 ? 4 : sizeCode === 0x08 ? 2 : sizeCode === 0x10 ? 1 : 8;
  return { base: cls === 0x01 ? src : dst, size };
}

/** A memory access in a versioned self-loop that needs a check (not an `r10 + constant` inside the frame). */
interface LoopSite {
  i: number;
  base: number;
  off: number;
  size: number;
  /** What the body adds to `base` before this access, and per iteration. */
  partial: number;
  step: number;
}

/**
 * A self-loop whose trip count can be computed exactly on entry (see versionPlan): the exit
 * register and its step per iteration, the exit test normalised to `x != bound` (`ne`) or
 * `(x ^ mask) < (bound ^ mask)` unsigned (`lt`, `le` for `<=`), and the sites to range-check.
 */
interface VersionPlan {
  exitReg: number;
  step: number;
  mode: 'ne' | 'lt';
  /** i64 XOR mask as [lo, hi]: 0, ~0 (a decreasing `>`), the sign bit (signed), or both. */
  mask: [number, number];
  le: boolean;
  /** The bound's register, or -1 for the jump's immediate. */
  boundReg: number;
  length: number;
  sites: LoopSite[];
}

/** wasm comparison by BPF jump code >> 4 (JEQ 1, JGT 2, JGE 3, JSET 4, JNE 5, JSGT 6, JSGE 7, JLT 10, JLE 11, JSLT 12, JSLE 13). */
const CMP32 = [0, Op.i32Eq, Op.i32GtU, Op.i32GeU, Op.i32And, Op.i32Ne, Op.i32GtS, Op.i32GeS, 0, 0, Op.i32LtU, Op.i32LeU, Op.i32LtS, Op.i32LeS];
const CMP64 = [0, Op.i64Eq, Op.i64GtU, Op.i64GeU, Op.i64And, Op.i64Ne, Op.i64GtS, Op.i64GeS, 0, 0, Op.i64LtU, Op.i64LeU, Op.i64LtS, Op.i64LeS];

function isJumpClass(o: number): boolean {
  const cls = o & 0x07;
  return cls === 0x05 || cls === 0x06;
}
function isUnconditional(o: number): boolean {
  return (o === 0x05 || o === 0x06);
}
function isConditional(o: number): boolean {
  if (!isJumpClass(o)) return false;
  const code = o & 0xf0;
  return code !== 0x00 && code !== 0x80 && code !== 0x90;
}

/** What a VM tells the compiler besides the program. */
export interface CompileOptions {
  /**
   * By map index, the maps whose `bpf_map_lookup_elem` compiled code may do itself (the VM's
   * lookup helper is the standard one, and the map's type allows it: `BpfMap.inlineLookup`).
   * Hash maps with keys above {@link MAX_INLINE_KEY} bytes still call the helper.
   */
  lookups?: readonly (InlineLookup | undefined)[];
}

/** Largest hash key looked up inline (its hash and compare are unrolled per byte and per 8 bytes). */
export const MAX_INLINE_KEY = 128;
/** At a lookup whose r1 the block does not set from a map handle: the most maps tested at run time. */
const MAX_LOOKUP_GUESSES = 4;

export function compileToWasm(p: LoadedProgram, options: CompileOptions = {}): WasmCompileResult {
  const n = p.length;
  const { op: OP, dst: DST, src: SRC, off: OFF, imm: IMM, immHi: IMMHI, target: TGT } = p;
  const lookups = options.lookups ?? [];
  /** Maps the program loads a handle of that can be looked up inline, in order of first load. */
  const inlineMaps: number[] = [];
  for (let i = 0; i < n; i++) {
    if (OP[i] !== InternalOp.loadImm64) continue;
    const m = IMM[i] as number;
    const l = IMMHI[i] === MAP_HANDLE_REGION ? lookups[m] : undefined;
    if (l && (l.kind === 'array' || l.keySize <= MAX_INLINE_KEY) && !inlineMaps.includes(m)) inlineMaps.push(m);
    i++;
  }

  for (let i = 0; i < n; i++) {
    const o = OP[i] as number;
    if ((o === 0xc3 || o === 0xdb) && SRC[i] === 10 && (((IMM[i] as number) & 1) !== 0 || (IMM[i] as number) === 0xf1)) {
      return { ok: false, reason: `an atomic fetch writes r10 at ${i}` };
    }
    if (o === InternalOp.loadImm64) i++;
  }

  // basic blocks
  const leader = new Uint8Array(n + 1);
  leader[0] = 1;
  for (let i = 0; i < n; i++) {
    const o = OP[i] as number;
    const t = TGT[i] as number;
    if (t >= 0) {
      leader[t] = 1;
      leader[i + 1] = 1;
    }
    if (o === 0x95 || o === 0x85 || o === InternalOp.callReg || o === InternalOp.callLocal) leader[i + 1] = 1;
    if (o === InternalOp.loadImm64) i++;
  }
  // bpf_loop's callbacks: each one a wasm function like a BPF-to-BPF call target
  const callbacks = callbackEntries(p);
  for (const c of callbacks) leader[c] = 1;
  const starts: number[] = [];
  for (let i = 0; i < n; i++) if (leader[i] && OP[i] !== InternalOp.lddwTail) starts.push(i);
  const blockAt = new Int32Array(n).fill(-1);
  starts.forEach((s, b) => {
    blockAt[s] = b;
  });
  const blockEnd = starts.map((_, b) => (b + 1 < starts.length ? (starts[b + 1] as number) : n));
  const lastInsn = (b: number) => {
    let last = starts[b] as number;
    for (let i = starts[b] as number; i < (blockEnd[b] as number); i++) {
      last = i;
      if (OP[i] === InternalOp.loadImm64) i++;
    }
    return last;
  };
  const insnsBetween = (from: number, to: number) => {
    let k = 0;
    for (let i = from; i < to; i++) {
      k++;
      if (OP[i] === InternalOp.loadImm64) i++;
    }
    return k;
  };

  /**
   * Loop versioning. A self-loop block is straight-line (calls, helpers and exits end blocks), so
   * when its exit test is a 64-bit compare of an induction register (written in the body only by
   * `+=`/`-=` of constants) against a constant or a register the body does not write, its trip
   * count follows from the register's value on entry; and when every access goes through a base
   * register the body does not write or only steps by constants, each access's addresses over the
   * whole loop form one arithmetic sequence, checked against its region by its first and last
   * element. On entry the compiled code computes the trip count, checks the budget for the whole
   * loop and every access's range once; when all pass it runs a copy of the body with no counting
   * and no checks (nothing in it can fault or run out of budget: the checked loop would end the
   * same way) and adds trips x length to the count; otherwise it runs the checked loop, which
   * stops where the interpreter stops. Memory stores cannot change a register (they are locals)
   * nor the region table (outside every region), so the proof made on entry holds throughout.
   * Returns undefined when the loop does not qualify (then there is only the checked loop).
   */
  function versionPlan(start: number, last: number): VersionPlan | undefined {
    const o = OP[last] as number;
    // 64-bit conditional jumps only: a JMP32 test sees a wrapped half
    if ((o & 0x07) !== 0x05 || !isConditional(o)) return undefined;
    const code = o & 0xf0;
    const x = DST[last] as number;
    const boundReg = (o & 0x08) === 0 ? -1 : (SRC[last] as number);
    const steps = new Float64Array(11);
    const spread = new Float64Array(11);
    const varying = new Uint8Array(11);
    const raw: Omit<LoopSite, 'step'>[] = [];
    for (let i = start; i < last; i++) {
      const op = OP[i] as number;
      const d = DST[i] as number;
      const sr = SRC[i] as number;
      const k = IMM[i] as number;
      if (op === 0x95 || op === InternalOp.callLocal || op === InternalOp.callReg || isJumpClass(op)) return undefined;
      const access = accessOfInsn(op, d, sr);
      if (access) {
        raw.push({ i, base: access.base, off: OFF[i] as number, size: access.size, partial: steps[access.base] as number });
        if (op === 0xc3 || op === 0xdb) {
          if (k === 0xf1) varying[0] = 1;
          else if ((k & 1) !== 0) varying[sr] = 1;
        } else if ((op & 0x07) === 0x01) varying[d] = 1;
      } else if (op === 0x07 || op === 0x17) {
        // 64-bit add/sub of a sign-extended constant: an induction step (32-bit ones zero-extend)
        const step = op === 0x07 ? k : -k;
        steps[d] = (steps[d] as number) + step;
        spread[d] = (spread[d] as number) + Math.abs(step);
      } else varying[d] = 1; // every other instruction in a block body writes dst (ALU, moves, lddw)
      if (op === InternalOp.loadImm64) i++;
    }
    for (let r = 0; r <= 10; r++) if ((spread[r] as number) > MAX_STEP) varying[r] = 1;
    if (varying[10] || spread[10]) return undefined;
    const step = steps[x] as number;
    if (varying[x] || step === 0) return undefined;
    if (boundReg >= 0 && (boundReg === x || varying[boundReg] || spread[boundReg])) return undefined;
    let mode: 'ne' | 'lt' = 'lt';
    let mask: [number, number] = [0, 0];
    let le = false;
    switch (code) {
      case 0x50: // jne
        mode = 'ne';
        break;
      case 0xa0: // jlt, jle: counting up
      case 0xb0:
        if (step < 0) return undefined;
        le = code === 0xb0;
        break;
      case 0x20: // jgt, jge: counting down, x > b <=> ~x < ~b
      case 0x30:
        if (step > 0) return undefined;
        mask = [-1, -1];
        le = code === 0x30;
        break;
      case 0xc0: // jslt, jsle: x <s b <=> (x ^ sign) <u (b ^ sign)
      case 0xd0:
        if (step < 0) return undefined;
        mask = [0, 0x80000000 | 0];
        le = code === 0xd0;
        break;
      case 0x60: // jsgt, jsge
      case 0x70:
        if (step > 0) return undefined;
        mask = [-1, 0x7fffffff];
        le = code === 0x70;
        break;
      default:
        return undefined;
    }
    const sites: LoopSite[] = [];
    for (const site of raw) {
      if (site.base === 10 && site.off >= -STACK_FRAME_SIZE && site.off + site.size <= 0) continue; // checked at compile time
      if (varying[site.base]) return undefined;
      sites.push({ ...site, step: steps[site.base] as number });
    }
    return { exitReg: x, step, mode, mask, le, boundReg, length: insnsBetween(start, last + 1), sites };
  }
  const versionedLoops: number[] = [];
  /** Call sites compiled with an inline lookup (a set: a block can be emitted twice, see emitFastCopy). */
  const inlineSites = new Set<number>();

  // functions: the entry and every reachable call target, each over the blocks it reaches
  const funcEntries: number[] = [0];
  const funcIndex = new Map<number, number>([[0, 0]]);
  for (const c of callbacks) {
    if (funcIndex.has(c)) continue;
    funcIndex.set(c, funcEntries.length);
    funcEntries.push(c);
  }
  const funcBlocks: number[][] = [];
  for (let f = 0; f < funcEntries.length; f++) {
    const entry = funcEntries[f] as number;
    const seen = new Uint8Array(starts.length);
    const work = [blockAt[entry] as number];
    seen[work[0] as number] = 1;
    while (work.length > 0) {
      const b = work.pop() as number;
      const last = lastInsn(b);
      const o = OP[last] as number;
      const succ: number[] = [];
      if (o === 0x95) {
        // exit
      } else if (isUnconditional(o)) succ.push(TGT[last] as number);
      else {
        if (isConditional(o)) succ.push(TGT[last] as number);
        if (o === InternalOp.callLocal) {
          const t = TGT[last] as number;
          if (!funcIndex.has(t)) {
            funcIndex.set(t, funcEntries.length);
            funcEntries.push(t);
          }
        }
        if ((blockEnd[b] as number) < n) succ.push(blockEnd[b] as number);
      }
      for (const s of succ) {
        const sb = blockAt[s] as number;
        if (sb < 0) return { ok: false, reason: `jump into the middle of a block at ${s}` };
        if (!seen[sb]) {
          seen[sb] = 1;
          work.push(sb);
        }
      }
    }
    const blocks: number[] = [];
    for (let b = 0; b < starts.length; b++) if (seen[b]) blocks.push(b);
    funcBlocks.push(blocks);
  }

  const written = writtenRegisters(p);
  written.add(2);
  /** The hash probe function of each key size used (emitHashFind), after `start`. */
  const findFuncs = new Map<number, number>();
  const findFunc = (keySize: number) => {
    let f = findFuncs.get(keySize);
    if (f === undefined) {
      f = FIRST_BPF_FUNC + funcEntries.length + 1 + findFuncs.size;
      findFuncs.set(keySize, f);
    }
    return f;
  };
  const bodies: FuncBody[] = [];
  for (let f = 0; f < funcEntries.length; f++) {
    bodies.push(emitFunction(funcEntries[f] as number, funcBlocks[f] as number[]));
  }

  // run(n0) -> aborted: r0..r9 from the register file, frame 0
  const run = new ByteWriter();
  run.byte(Op.i32Const).s32(0).byte(Op.globalSet).u32(ABORT_GLOBAL);
  run.byte(Op.i32Const).s32(1).byte(Op.globalSet).u32(FULL_GLOBAL);
  for (let r = 0; r < 10; r++) {
    run.byte(Op.i32Const).s32(0).byte(Op.i64Load32U).u32(0).u32(REG_LO_ADDR + 4 * r);
    run.byte(Op.i32Const).s32(0).byte(Op.i64Load32U).u32(0).u32(REG_HI_ADDR + 4 * r);
    run.byte(Op.i64Const).s32(32).byte(Op.i64Shl).byte(Op.i64Or);
  }
  run.byte(Op.localGet).u32(0).byte(Op.i32Const).s32(0).byte(Op.call).u32(FIRST_BPF_FUNC);
  for (let k = 0; k < 7; k++) run.byte(Op.drop);
  run.byte(Op.globalGet).u32(ABORT_GLOBAL);

  // start(n0, length, src, flags) -> aborted: a fresh run, frame 0, the registers set here
  // instead of read from the register file (r1 = the context, r2 = its length, the rest 0): the
  // VM writes none. It sets the context's length in the region table and frame 0's lowest byte.
  // src != 0: the record is staged at linear address src (Vm.stage): copied into the context
  // region here, by memory.copy, instead of by the VM in JavaScript. flags: StartFlags
  const start = new ByteWriter();
  start.byte(Op.i32Const).s32(0).byte(Op.localGet).u32(1).byte(Op.i32Store).u32(2).u32(LEN_ADDR + 4 * CONTEXT_REGION);
  start.byte(Op.i32Const).s32(0).byte(Op.i32Const).s32(STACK_TOP - STACK_FRAME_SIZE).byte(Op.i32Store).u32(2).u32(LOW_ADDR + 4 * STACK_REGION);
  start.byte(Op.localGet).u32(3).byte(Op.i32Const).s32(StartFlags.zeroFrame).byte(Op.i32And);
  start.byte(Op.if).byte(BLOCK_VOID);
  start.byte(Op.i32Const).s32(STACK_ADDR + STACK_TOP - STACK_FRAME_SIZE).byte(Op.i32Const).s32(0).byte(Op.i32Const).s32(STACK_FRAME_SIZE);
  start.byte(0xfc).u32(OpFc.memoryFill).byte(0x00);
  start.byte(Op.end);
  start.byte(Op.localGet).u32(3).byte(Op.i32Const).s32(StartFlags.full).byte(Op.i32And).byte(Op.globalSet).u32(FULL_GLOBAL);
  start.byte(Op.localGet).u32(2);
  start.byte(Op.if).byte(BLOCK_VOID);
  start.byte(Op.i32Const).s32(0).byte(Op.i32Load).u32(2).u32(BASE_ADDR + 4 * CONTEXT_REGION);
  start.byte(Op.localGet).u32(2).byte(Op.localGet).u32(1);
  start.byte(0xfc).u32(OpFc.memoryCopy).byte(0x00).byte(0x00);
  start.byte(Op.end);
  start.byte(Op.i32Const).s32(0).byte(Op.globalSet).u32(ABORT_GLOBAL);
  for (let r = 0; r < 10; r++) {
    if (r === 1) start.byte(Op.i64Const).s64(0, CONTEXT_REGION);
    else if (r === 2) start.byte(Op.localGet).u32(1).byte(Op.i64ExtendI32U);
    else start.byte(Op.i64Const).s32(0);
  }
  start.byte(Op.localGet).u32(0).byte(Op.i32Const).s32(0).byte(Op.call).u32(FIRST_BPF_FUNC);
  for (let k = 0; k < 7; k++) start.byte(Op.drop);
  start.byte(Op.globalGet).u32(ABORT_GLOBAL);

  const i64x10 = Array.from({ length: 10 }, () => ValType.i64);
  const bytes = encodeModule({
    types: [
      { params: [ValType.i32, ValType.i32, ValType.i32], results: [ValType.i32] },
      { params: [...i64x10, ValType.i32, ValType.i32], results: [...i64x10.slice(0, 6), ValType.i32] },
      { params: [ValType.i32], results: [ValType.i32] },
      { params: [ValType.i32, ValType.i32, ValType.i32, ValType.i32], results: [ValType.i32] },
    ],
    importFuncs: [{ module: 'vm', name: 'helper', typeIndex: 0 }],
    importMemory: { module: 'vm', name: 'memory', minPages: 1 },
    globals: [
      { type: ValType.i32, mutable: true, init: 0 },
      { type: ValType.i32, mutable: true, init: 1 },
    ],
    funcs: [
      { typeIndex: 2, locals: [], code: run },
      ...bodies,
      { typeIndex: 3, locals: [], code: start },
      ...[...findFuncs.keys()].map((keySize) => emitHashFind(keySize)),
    ],
    exports: [
      { name: 'run', funcIndex: RUN_FUNC },
      { name: 'start', funcIndex: FIRST_BPF_FUNC + bodies.length },
    ],
  });
  return { ok: true, bytes, functions: funcEntries.length, instructions: insnsBetween(0, n), versionedLoops, inlineLookups: inlineSites.size };

  /**
   * `find(key, buckets, keys, mask) -> slot or -1` for keys of `keySize` bytes: the same hash
   * and probe as `HashTable.find` (maps/hash-table.ts) over the table's bytes in linear memory.
   * FNV-1a 32 over the key's bytes, then `h ^= h >>> 16; h = imul(h, mix) ^ (h >>> 13)`; from
   * bucket `h & mask`, linear probing: an empty bucket (-1) ends the probe (not found), a
   * tombstone (-2) is passed over, a slot whose key equals the key is the answer. The table
   * always keeps an empty bucket (at most half its buckets hold keys, a quarter tombstones).
   */
  function emitHashFind(keySize: number): FuncBody {
    const KEY = 0;
    const BUCKETS = 1;
    const KEYS = 2;
    const MASK = 3;
    const H = 4;
    const S = 5;
    const AT = 6;
    const f = new ByteWriter();
    const get = (l: number) => f.byte(Op.localGet).u32(l);
    const c32 = (v: number) => f.byte(Op.i32Const).s32(v);
    const load = (op: number, local: number, offset: number) => get(local).byte(op).u32(0).u32(offset);
    c32(HashConst.basis);
    for (let k = 0; k < keySize; k++) {
      load(Op.i32Load8U, KEY, k);
      f.byte(Op.i32Xor);
      c32(HashConst.prime);
      f.byte(Op.i32Mul);
    }
    f.byte(Op.localTee).u32(H);
    get(H);
    c32(16);
    f.byte(Op.i32ShrU).byte(Op.i32Xor).byte(Op.localTee).u32(H);
    c32(HashConst.mix);
    f.byte(Op.i32Mul);
    get(H);
    c32(13);
    f.byte(Op.i32ShrU).byte(Op.i32Xor);
    get(MASK);
    f.byte(Op.i32And).byte(Op.localSet).u32(H);
    f.byte(Op.loop).byte(BLOCK_VOID);
    // S = buckets[H]
    get(H);
    c32(2);
    f.byte(Op.i32Shl);
    get(BUCKETS);
    f.byte(Op.i32Add).byte(Op.i32Load).u32(0).u32(0).byte(Op.localTee).u32(S);
    c32(-1);
    f.byte(Op.i32Eq);
    f.byte(Op.if).byte(BLOCK_VOID);
    c32(-1);
    f.byte(Op.return);
    f.byte(Op.end);
    get(S);
    c32(0);
    f.byte(Op.i32GeS);
    f.byte(Op.if).byte(BLOCK_VOID);
    // AT = keys + S * keySize; equal when every 8-, 4-, 2- and 1-byte piece is
    get(KEYS);
    get(S);
    c32(keySize);
    f.byte(Op.i32Mul).byte(Op.i32Add).byte(Op.localSet).u32(AT);
    let at = 0;
    let pieces = 0;
    for (const [size, ld, eq] of [
      [8, Op.i64Load, Op.i64Eq],
      [4, Op.i32Load, Op.i32Eq],
      [2, Op.i64Load16U, Op.i64Eq],
      [1, Op.i32Load8U, Op.i32Eq],
    ] as const) {
      while (keySize - at >= size) {
        load(ld, AT, at);
        load(ld, KEY, at);
        f.byte(eq);
        if (pieces++ > 0) f.byte(Op.i32And);
        at += size;
      }
    }
    f.byte(Op.if).byte(BLOCK_VOID);
    get(S);
    f.byte(Op.return);
    f.byte(Op.end);
    f.byte(Op.end);
    // H = (H + 1) & mask
    get(H);
    c32(1);
    f.byte(Op.i32Add);
    get(MASK);
    f.byte(Op.i32And).byte(Op.localSet).u32(H);
    f.byte(Op.br).u32(0);
    f.byte(Op.end);
    f.byte(Op.unreachable);
    return { typeIndex: 3, locals: [[3, ValType.i32]], code: f };
  }

  function emitFunction(entry: number, blocks: number[]): FuncBody {
    const w = new ByteWriter();
    const labels: string[] = [];
    // where the unique labels (function blocks, the dispatcher, basic blocks) sit in `labels`;
    // the repeated ones ('if', 'self') are found from the top, where they are
    const labelAt = new Map<string, number>();
    const open = (kind: number, label: string, type = BLOCK_VOID) => {
      w.byte(kind).byte(type);
      if (label !== 'if' && label !== 'self') labelAt.set(label, labels.length);
      labels.push(label);
    };
    const close = () => {
      w.byte(Op.end);
      const label = labels.pop() as string;
      if (label !== 'if' && label !== 'self') labelAt.delete(label);
    };
    const depth = (label: string) => {
      const at = labelAt.get(label) ?? labels.lastIndexOf(label);
      if (at < 0) throw new Error(`compile: no label ${label}`);
      return labels.length - 1 - at;
    };
    let cached: ReadonlySet<number> = NONE;
    let sites: ReadonlyMap<number, number> = NO_SITES;
    /** In the fast copy of a versioned loop: access pc -> its FSITE local index. */
    let fastSites: ReadonlyMap<number, number> | undefined;
    // locals per access site of a self-loop: the most any self-loop block of this function has
    let maxSites = 0;
    for (const b of blocks) {
      const last = lastInsn(b);
      if (TGT[last] !== starts[b] || !isJumpClass(OP[last] as number)) continue;
      let accesses = 0;
      for (let i = starts[b] as number; i < (blockEnd[b] as number); i++) if (accessOfInsn(OP[i] as number, DST[i] as number, SRC[i] as number)) accesses++;
      maxSites = Math.max(maxSites, accesses);
    }
    const FSITE = SITES + 2 * maxSites;
    const indexInFunction = new Map<number, number>();
    blocks.forEach((b, k) => {
      indexInFunction.set(b, k);
    });
    const br = (label: string) => w.byte(Op.br).u32(depth(label));
    const get = (r: number) => w.byte(Op.localGet).u32(r === 10 ? R10 : r);
    const set = (r: number) => w.byte(Op.localSet).u32(r);
    const i32c = (v: number) => w.byte(Op.i32Const).s32(v);
    const i64c = (lo: number, hi: number) => w.byte(Op.i64Const).s64(lo, hi);
    const mem = (opcode: number, offset: number) => w.byte(opcode).u32(0).u32(offset);
    const abort = (pc: number, kind: number, after: number, base = -1, size = 0) => {
      i32c(pc);
      set(PC);
      i32c(kind);
      set(KIND);
      if (base >= 0) {
        i32c(base);
        set(FB);
        i32c(size);
        set(FS);
      }
      if (after > 0) {
        w.byte(Op.localGet).u32(N);
        i32c(after);
        w.byte(Op.i32Sub);
        set(N);
      }
      br('exit');
    };
    const budgetCheck = (pcAfter: number) => {
      w.byte(Op.localGet).u32(N).byte(Op.localGet).u32(BUDGET).byte(Op.i32GtS);
      open(Op.if, 'if');
      abort(pcAfter, AbortKind.budget, 0);
      close();
    };
    const storeRegs = (from: number, to: number) => {
      for (let r = from; r <= to; r++) {
        i32c(0);
        get(r);
        w.byte(Op.i32WrapI64);
        mem(Op.i32Store, REG_LO_ADDR + 4 * r);
        i32c(0);
        get(r);
        w.byte(Op.i64Const).s32(32).byte(Op.i64ShrU).byte(Op.i32WrapI64);
        mem(Op.i32Store, REG_HI_ADDR + 4 * r);
      }
    };
    const storeState = (field: number, local: number) => {
      i32c(0);
      w.byte(Op.localGet).u32(local);
      mem(Op.i32Store, STATE_ADDR + field);
    };

    // prologue: r10 from the call depth, the region count and the budget from the run state
    i32c(STACK_TOP);
    w.byte(Op.localGet).u32(FRAME);
    i32c(STACK_FRAME_SIZE);
    w.byte(Op.i32Mul).byte(Op.i32Sub).byte(Op.localTee).u32(R10_32);
    w.byte(Op.i64ExtendI32U);
    i64c(0, STACK_REGION);
    w.byte(Op.i64Or);
    set(R10);
    i32c(0);
    mem(Op.i32Load, STATE_ADDR + State.regionCount);
    i32c(1);
    w.byte(Op.i32Sub);
    set(NR1);
    i32c(0);
    mem(Op.i32Load, STATE_ADDR + State.budget);
    set(BUDGET);
    i32c(0);
    mem(Op.i64Load32U, LEN_ADDR + 4 * CONTEXT_REGION);
    set(CTXLEN);
    i32c(0);
    mem(Op.i32Load, BASE_ADDR + 4 * CONTEXT_REGION);
    set(CTXBASE);
    const entryIndex = indexInFunction.get(blockAt[entry] as number) as number;
    i32c(entryIndex);
    set(BLK);

    open(Op.block, 'prop');
    open(Op.block, 'exit');
    open(Op.block, 'ret');
    budgetCheck(entry);
    open(Op.loop, 'dispatch');
    for (let k = blocks.length - 1; k >= 0; k--) open(Op.block, `b${k}`);
    w.byte(Op.localGet).u32(BLK);
    w.byte(Op.brTable).u32(blocks.length);
    for (let k = 0; k < blocks.length; k++) w.u32(k);
    w.u32(0);
    for (let k = 0; k < blocks.length; k++) {
      close(); // end of block b{k}: its code follows
      emitBlock(k);
    }
    w.byte(Op.unreachable);
    close(); // dispatch
    w.byte(Op.unreachable);
    close(); // ret
    // normal return (exit): frame 0 leaves every register, the pc and the count for the VM
    w.byte(Op.localGet).u32(FRAME).byte(Op.i32Eqz);
    open(Op.if, 'if');
    for (let r = 0; r <= 10; r++) if (written.has(r)) storeRegs(r, r);
    if (written.size < 11) {
      w.byte(Op.globalGet).u32(FULL_GLOBAL);
      open(Op.if, 'if');
      for (let r = 0; r <= 10; r++) if (!written.has(r)) storeRegs(r, r);
      close();
    }
    storeState(State.pc, PC);
    storeState(State.n, N);
    close();
    for (let r = 0; r <= 5; r++) get(r);
    w.byte(Op.localGet).u32(N).byte(Op.return);
    close(); // exit
    // abort: the whole state for the VM's fault report
    storeRegs(0, 10);
    storeState(State.pc, PC);
    storeState(State.n, N);
    storeState(State.frame, FRAME);
    storeState(State.kind, KIND);
    storeState(State.faultBase, FB);
    storeState(State.faultSize, FS);
    i32c(1);
    w.byte(Op.globalSet).u32(ABORT_GLOBAL);
    close(); // prop
    for (let r = 0; r <= 5; r++) i64c(0, 0);
    i32c(0);
    return {
      typeIndex: 1,
      locals: [
        [5, ValType.i64],
        [12, ValType.i32],
        [20, ValType.i64],
        [10, ValType.i32],
        [3, ValType.i64],
        ...(maxSites > 0 ? [[2 * maxSites, ValType.i64] as [number, ValType], [maxSites, ValType.i32] as [number, ValType]] : []),
      ],
      code: w,
    };

    function jumpTo(fromK: number, target: number) {
      const tk = indexInFunction.get(blockAt[target] as number) as number;
      if (tk > fromK) br(`b${tk}`);
      else {
        i32c(tk);
        set(BLK);
        br('dispatch');
      }
    }

    function emitBlock(k: number) {
      const b = blocks[k] as number;
      const start = starts[b] as number;
      const end = blockEnd[b] as number;
      const last = lastInsn(b);
      const lastOp = OP[last] as number;
      const selfLoop = (isConditional(lastOp) || isUnconditional(lastOp)) && TGT[last] === start;
      const count = insnsBetween(start, end);
      const plan = selfLoop ? versionPlan(start, last) : undefined;
      if (plan) {
        versionedLoops.push(start);
        emitFastCopy(k, start, last, plan);
      }
      if (selfLoop) {
        cached = loopInvariantRegions(start, end);
        for (const b of cached) {
          // the region of b, looked up once per entry into the loop (see loopInvariantRegions)
          regionIndex(b);
          w.byte(Op.localGet).u32(ID);
          mem(Op.i32Load, LOW_ADDR);
          w.byte(Op.i64ExtendI32U).byte(Op.localSet).u32(CLOW + b);
          w.byte(Op.localGet).u32(ID);
          mem(Op.i32Load, LEN_ADDR);
          w.byte(Op.i64ExtendI32U).byte(Op.localSet).u32(CLEN + b);
          w.byte(Op.localGet).u32(ID);
          mem(Op.i32Load, BASE_ADDR);
          w.byte(Op.localSet).u32(CBASE + b);
        }
        // per access site: SLOW = low - off, SLIM = length - low - size; a region smaller than
        // the access gets SLOW = 2^62 (every lo is below it) and SLIM = 0
        const siteMap = new Map<number, number>();
        sites = siteMap;
        for (let i = start; i < end; i++) {
          const site = accessOf(i);
          if (site === undefined || !cached.has(site.base)) continue;
          const j = siteMap.size;
          siteMap.set(i, j);
          const b = site.base;
          w.byte(Op.localGet).u32(CLEN + b).byte(Op.localGet).u32(CLOW + b).byte(Op.i64Sub);
          i64c(site.size, 0);
          w.byte(Op.i64Sub).byte(Op.localTee).u32(T64);
          i64c(0, 0);
          w.byte(Op.i64LtS).byte(Op.localSet).u32(X);
          i64c(0, 1 << 30);
          w.byte(Op.localGet).u32(CLOW + b);
          const off = OFF[i] as number;
          i64c(off, off >> 31);
          w.byte(Op.i64Sub).byte(Op.localGet).u32(X).byte(Op.select).byte(Op.localSet).u32(SITES + 2 * j);
          i64c(0, 0);
          w.byte(Op.localGet).u32(T64).byte(Op.localGet).u32(X).byte(Op.select).byte(Op.localSet).u32(SITES + 2 * j + 1);
          if (OP[i] === InternalOp.loadImm64) i++;
        }
        open(Op.loop, 'self');
      }
      w.byte(Op.localGet).u32(N);
      i32c(count);
      w.byte(Op.i32Add);
      set(N);
      let after = count;
      for (let i = start; i < end; i++) {
        after--;
        if (i === last && selfLoop) {
          if (isConditional(lastOp)) {
            condition(i);
            open(Op.if, 'if');
            budgetCheck(start);
            br('self');
            close();
          } else {
            budgetCheck(start);
            br('self');
          }
          close(); // self
          cached = NONE;
          sites = NO_SITES;
          continue;
        }
        emitInsn(k, i, after);
        if (OP[i] === InternalOp.loadImm64) i++;
      }
      if (plan) close(); // vdone
    }

    /**
     * The entry checks and the fast copy of a versioned self-loop (see versionPlan), inside
     * `vdone { vslow { checks; fast loop; count; br vdone } <checked loop> }`: any check that
     * fails (or cannot decide) leaves for the checked loop.
     */
    function emitFastCopy(k: number, start: number, last: number, plan: VersionPlan) {
      open(Op.block, 'vdone');
      open(Op.block, 'vslow');
      const slow = () => w.byte(Op.brIf).u32(depth('vslow'));
      const x = plan.exitReg;
      const s = Math.abs(plan.step);
      const pow2 = (s & (s - 1)) === 0;
      const bound = () => (plan.boundReg >= 0 ? get(plan.boundReg) : i64c(IMM[last] as number, IMMHI[last] as number));
      /** value on the stack divided by s (unsigned) */
      const divS = () => {
        if (s === 1) return;
        if (pow2) i64c(31 - Math.clz32(s), 0).byte(Op.i64ShrU);
        else i64c(s, 0).byte(Op.i64DivU);
      };
      const local = (op: number, l: number) => w.byte(op).u32(l);
      if (plan.mode === 'ne') {
        // x_j = x + j*step != bound until j = trips: trips*|step| = the distance, exactly
        // (a smaller solution modulo 2^64 would be a smaller distance); distance 0 means 2^64/|step|
        if (plan.step > 0) {
          bound();
          get(x);
        } else {
          get(x);
          bound();
        }
        w.byte(Op.i64Sub);
        local(Op.localTee, VA);
        w.byte(Op.i64Eqz);
        slow();
        if (s !== 1) {
          local(Op.localGet, VA);
          if (pow2) i64c(s - 1, 0).byte(Op.i64And);
          else i64c(s, 0).byte(Op.i64RemU);
          i64c(0, 0);
          w.byte(Op.i64Ne);
          slow();
        }
        local(Op.localGet, VA);
        divS();
        // above 2^32 trips: the checked loop (keeps trips x step and x length far from overflow)
        local(Op.localTee, TRIPS);
        i64c(0, 1);
        w.byte(Op.i64GtU);
        slow();
      } else {
        // y = x ^ mask counts up by s while y < c: trips = y < c ? (c - y - 1) / s + 1 : 1, valid
        // when y + trips*s does not wrap (else the register wraps around and the loop goes on)
        get(x);
        i64c(plan.mask[0], plan.mask[1]);
        w.byte(Op.i64Xor);
        local(Op.localSet, VA);
        bound();
        i64c(plan.mask[0], plan.mask[1]);
        w.byte(Op.i64Xor);
        if (plan.le) {
          // y <= c is y < c + 1, unless c is the largest value (then the loop never ends)
          local(Op.localTee, VB);
          i64c(-1, -1);
          w.byte(Op.i64Eq);
          slow();
          local(Op.localGet, VB);
          i64c(1, 0);
          w.byte(Op.i64Add);
        }
        local(Op.localTee, VB);
        local(Op.localGet, VA);
        w.byte(Op.i64Sub);
        i64c(1, 0);
        w.byte(Op.i64Sub);
        divS();
        i64c(1, 0);
        w.byte(Op.i64Add);
        i64c(1, 0);
        local(Op.localGet, VA);
        local(Op.localGet, VB);
        w.byte(Op.i64LtU).byte(Op.select);
        // above 2^32 trips: the checked loop (keeps trips x step and x length far from overflow)
        local(Op.localTee, TRIPS);
        i64c(0, 1);
        w.byte(Op.i64GtU);
        slow();
        local(Op.localGet, VA);
        local(Op.localGet, TRIPS);
        i64c(s, 0);
        w.byte(Op.i64Mul).byte(Op.i64Add);
        local(Op.localGet, VA);
        w.byte(Op.i64LtU);
        slow();
      }
      // the budget: the checked loop tests n + j*length > budget at the taken jumps, j < trips
      local(Op.localGet, N);
      w.byte(Op.i64ExtendI32S);
      local(Op.localGet, TRIPS);
      i64c(1, 0);
      w.byte(Op.i64Sub);
      i64c(plan.length, 0);
      w.byte(Op.i64Mul).byte(Op.i64Add);
      local(Op.localGet, BUDGET);
      w.byte(Op.i64ExtendI32S).byte(Op.i64GtS);
      slow();
      // each access: base + partial + j*step for j < trips, all in one region (same high half,
      // hence no carry between the halves) and inside [low, length) with the offset and size
      const fast = new Map<number, number>();
      plan.sites.forEach((site, j) => {
        fast.set(site.i, FSITE + j);
        get(site.base);
        if (site.partial !== 0) i64c(site.partial, site.partial < 0 ? -1 : 0).byte(Op.i64Add);
        local(Op.localTee, VA);
        if (site.step !== 0) {
          local(Op.localGet, TRIPS);
          i64c(1, 0);
          w.byte(Op.i64Sub);
          i64c(site.step, site.step < 0 ? -1 : 0);
          w.byte(Op.i64Mul).byte(Op.i64Add);
          local(Op.localTee, VB);
          local(Op.localGet, VA);
          w.byte(Op.i64Xor);
          i64c(0, 1);
          w.byte(Op.i64GeU);
          slow();
        } else w.byte(Op.drop);
        local(Op.localGet, VA);
        w.byte(Op.i64Const).s32(32).byte(Op.i64ShrU).byte(Op.i32WrapI64).byte(Op.localTee).u32(ID);
        i32c(1);
        w.byte(Op.i32Sub).byte(Op.localGet).u32(NR1).byte(Op.i32GeU);
        slow();
        local(Op.localGet, ID);
        i32c(2);
        w.byte(Op.i32Shl);
        local(Op.localSet, ID);
        const first = site.step < 0 ? VB : VA;
        const lastA = site.step > 0 ? VB : VA;
        local(Op.localGet, first);
        i64c(-1, 0);
        w.byte(Op.i64And);
        if (site.off !== 0) i64c(site.off, site.off >> 31).byte(Op.i64Add);
        local(Op.localGet, ID);
        mem(Op.i32Load, LOW_ADDR);
        w.byte(Op.i64ExtendI32U).byte(Op.i64LtS);
        slow();
        local(Op.localGet, lastA);
        i64c(-1, 0);
        w.byte(Op.i64And);
        i64c(site.off + site.size, (site.off + site.size) >> 31);
        w.byte(Op.i64Add);
        local(Op.localGet, ID);
        mem(Op.i32Load, LEN_ADDR);
        w.byte(Op.i64ExtendI32U).byte(Op.i64GtS);
        slow();
        local(Op.localGet, ID);
        mem(Op.i32Load, BASE_ADDR);
        if (site.off !== 0) i32c(site.off).byte(Op.i32Add);
        local(Op.localSet, FSITE + j);
      });
      // nothing below counts or checks: the count of the whole loop now
      local(Op.localGet, N);
      local(Op.localGet, TRIPS);
      w.byte(Op.i32WrapI64);
      i32c(plan.length);
      w.byte(Op.i32Mul).byte(Op.i32Add);
      local(Op.localSet, N);
      // the fast copy, unrolled for short bodies: trips / unroll rounds of `unroll` bodies, then
      // trips % unroll single bodies. Driven by the trip count, not by the exit test (which the
      // proof says is true for j < trips and false at trips): an error in the proof would show
      // as a different result in the differential tests instead of a loop without end.
      const body = () => {
        for (let i = start; i < last; i++) {
          emitInsn(k, i, 0);
          if (OP[i] === InternalOp.loadImm64) i++;
        }
      };
      const countedLoop = (counter: number, bodies: number) => {
        open(Op.loop, 'fast');
        for (let u = 0; u < bodies; u++) body();
        local(Op.localGet, counter);
        i64c(1, 0);
        w.byte(Op.i64Sub).byte(Op.localTee).u32(counter).byte(Op.i64Eqz).byte(Op.i32Eqz);
        w.byte(Op.brIf).u32(depth('fast'));
        close(); // fast
      };
      const unroll = plan.length <= 8 ? 4 : plan.length <= 24 ? 2 : 1;
      fastSites = fast;
      if (unroll === 1) countedLoop(TRIPS, 1); // trips >= 1
      else {
        local(Op.localGet, TRIPS);
        i64c(unroll - 1, 0);
        w.byte(Op.i64And);
        local(Op.localSet, VA);
        local(Op.localGet, TRIPS);
        i64c(Math.log2(unroll), 0);
        w.byte(Op.i64ShrU).byte(Op.localTee).u32(TRIPS).byte(Op.i64Eqz).byte(Op.i32Eqz);
        open(Op.if, 'if');
        countedLoop(TRIPS, unroll);
        close(); // if
        local(Op.localGet, VA);
        w.byte(Op.i64Eqz).byte(Op.i32Eqz);
        open(Op.if, 'if');
        countedLoop(VA, 1);
        close(); // if
      }
      fastSites = undefined;
      // count the fast entries where tests can see them (memory/layout.ts)
      i32c(0);
      i32c(0);
      mem(Op.i32Load, FAST_LOOPS_ADDR);
      i32c(1);
      w.byte(Op.i32Add);
      mem(Op.i32Store, FAST_LOOPS_ADDR);
      br('vdone');
      close(); // vslow
    }

    function accessOf(i: number) {
      return accessOfInsn(OP[i] as number, DST[i] as number, SRC[i] as number);
    }

    /** ID = 4 x the region id of `base` when it names a region, else 0 (region 0: nothing is inside). */
    function regionIndex(base: number) {
      get(base);
      w.byte(Op.i64Const).s32(32).byte(Op.i64ShrU).byte(Op.i32WrapI64).byte(Op.localTee).u32(ID);
      i32c(0);
      w.byte(Op.localGet).u32(ID);
      i32c(1);
      w.byte(Op.i32Sub).byte(Op.localGet).u32(NR1).byte(Op.i32LtU);
      w.byte(Op.select);
      i32c(2);
      w.byte(Op.i32Shl).byte(Op.localSet).u32(ID);
    }

    /**
     * Base registers of a self-loop block whose region can be looked up once on entry: every
     * access through the register comes before any write to it in the block, and every write is
     * `+=`/`-=` of a constant of at most 2^20. Then each iteration's first access sees either the
     * value checked by the previous iteration plus less than 2^24 (no carry into the region id:
     * a checked offset is below 2^31) or, after a borrow, an offset above 2^32 - 2^24 that fails
     * the check exactly where the interpreter faults too.
     */
    function loopInvariantRegions(start: number, end: number): Set<number> {
      const firstWrite = new Int32Array(11).fill(-1);
      const lastAccess = new Int32Array(11).fill(-1);
      const bad = new Uint8Array(11);
      const write = (r: number, i: number, ok: boolean) => {
        if (firstWrite[r] === -1) firstWrite[r] = i;
        if (!ok) bad[r] = 1;
      };
      for (let i = start; i < end; i++) {
        const o = OP[i] as number;
        const cls = o & 0x07;
        const d = DST[i] as number;
        const sr = SRC[i] as number;
        const k = IMM[i] as number;
        if (o === 0x07 || o === 0x17) write(d, i, k >= -(1 << 20) && k <= 1 << 20);
        else if (o === 0xc3 || o === 0xdb) {
          lastAccess[d] = i;
          if (k === 0xf1) write(0, i, false);
          else if ((k & 1) !== 0) write(sr, i, false);
        } else if (cls === 0x01) {
          lastAccess[sr] = i;
          write(d, i, false);
        } else if (cls === 0x02 || cls === 0x03) lastAccess[d] = i;
        else if (cls === 0x04 || cls === 0x07 || cls === 0x00) write(d, i, false);
        if (o === InternalOp.loadImm64) i++;
      }
      const out = new Set<number>();
      for (let r = 0; r < 10; r++) {
        if (lastAccess[r] === -1 || bad[r]) continue;
        if (firstWrite[r] !== -1 && (firstWrite[r] as number) <= (lastAccess[r] as number)) continue;
        out.add(r);
      }
      return out;
    }

    /** Leaves the linear address on the stack; returns the memarg offset to use with it. */
    function address(i: number, base: number, size: number, after: number): number {
      const off = OFF[i] as number;
      if (base === 10 && off >= -STACK_FRAME_SIZE && off + size <= 0) {
        w.byte(Op.localGet).u32(R10_32);
        return STACK_ADDR + off;
      }
      if (fastSites) {
        // the fast copy of a versioned loop: the range was checked on entry
        w.byte(Op.localGet).u32(fastSites.get(i) as number);
        get(base).byte(Op.i32WrapI64).byte(Op.i32Add);
        return 0;
      }
      const site = sites.get(i);
      if (site !== undefined) {
        // in a self-loop, the region of base was looked up on entry: one unsigned compare,
        // (lo - (low - off)) > (length - low - size), which also catches lo + off < low
        get(base);
        i64c(-1, 0);
        w.byte(Op.i64And).byte(Op.localGet).u32(SITES + 2 * site).byte(Op.i64Sub);
        w.byte(Op.localGet).u32(SITES + 2 * site + 1).byte(Op.i64GtU);
        open(Op.if, 'if');
        abort(i, AbortKind.memory, after, base, size);
        close();
        w.byte(Op.localGet).u32(CBASE + base);
        get(base).byte(Op.i32WrapI64).byte(Op.i32Add);
        if (off >= 0) return off;
        i32c(off);
        w.byte(Op.i32Add);
        return 0;
      }
      const useOffset = off >= 0;
      const lowHalf = () => {
        if (useOffset) get(base).byte(Op.i32WrapI64);
        else w.byte(Op.localGet).u32(A64).byte(Op.i32WrapI64);
      };
      get(base);
      i64c(-1, 0);
      w.byte(Op.i64And);
      if (off !== 0) {
        i64c(off, off >> 31);
        w.byte(Op.i64Add);
      }
      set(A64);
      // the event record (region 1) first: its base and length are fixed for the run (locals)
      get(base);
      w.byte(Op.i64Const).s32(32).byte(Op.i64ShrU);
      i64c(CONTEXT_REGION, 0);
      w.byte(Op.i64Eq);
      w.byte(Op.if).byte(ValType.i32);
      labels.push('if');
      w.byte(Op.localGet).u32(A64);
      i64c(size, 0);
      w.byte(Op.i64Add).byte(Op.localGet).u32(CTXLEN).byte(Op.i64GtS);
      if (off < 0) {
        w.byte(Op.localGet).u32(A64);
        i64c(0, 0);
        w.byte(Op.i64LtS).byte(Op.i32Or);
      }
      open(Op.if, 'if');
      abort(i, AbortKind.memory, after, base, size);
      close();
      w.byte(Op.localGet).u32(CTXBASE);
      lowHalf();
      w.byte(Op.i32Add);
      w.byte(Op.else);
      regionIndex(base);
      // a < low
      w.byte(Op.localGet).u32(A64).byte(Op.localGet).u32(ID);
      mem(Op.i32Load, LOW_ADDR);
      w.byte(Op.i64ExtendI32U).byte(Op.i64LtS);
      // a + size > length
      w.byte(Op.localGet).u32(A64);
      i64c(size, 0);
      w.byte(Op.i64Add).byte(Op.localGet).u32(ID);
      mem(Op.i32Load, LEN_ADDR);
      w.byte(Op.i64ExtendI32U).byte(Op.i64GtS);
      w.byte(Op.i32Or);
      open(Op.if, 'if');
      abort(i, AbortKind.memory, after, base, size);
      close();
      w.byte(Op.localGet).u32(ID);
      mem(Op.i32Load, BASE_ADDR);
      lowHalf();
      w.byte(Op.i32Add);
      close(); // if (result i32)
      return useOffset ? off : 0;
    }

    /** Pushes the i32 condition of the jump at i. */
    function condition(i: number) {
      const o = OP[i] as number;
      const d = DST[i] as number;
      const s = SRC[i] as number;
      const isImm = (o & 0x08) === 0;
      const code = o & 0xf0;
      if ((o & 0x07) === 0x06) {
        get(d);
        w.byte(Op.i32WrapI64);
        if (isImm) i32c(IMM[i] as number);
        else get(s).byte(Op.i32WrapI64);
        w.byte(CMP32[code >> 4] as number);
        return;
      }
      get(d);
      if (isImm) i64c(IMM[i] as number, IMMHI[i] as number);
      else get(s);
      w.byte(CMP64[code >> 4] as number);
      if (code === 0x40) w.byte(Op.i64Eqz).byte(Op.i32Eqz);
    }

    /** A call at `i` from the deepest frame faults, as the interpreter's does. */
    function callDepthCheck(i: number) {
      w.byte(Op.localGet).u32(FRAME);
      i32c(MAX_FRAMES - 1);
      w.byte(Op.i32GeS);
      open(Op.if, 'if');
      abort(i, AbortKind.callDepth, 0);
      close();
    }

    /** Zeroes the callee's frame and makes it the lowest reachable stack byte. */
    function enterCallee() {
      w.byte(Op.localGet).u32(R10_32);
      i32c(STACK_ADDR - 2 * STACK_FRAME_SIZE);
      w.byte(Op.i32Add);
      i32c(0);
      i32c(STACK_FRAME_SIZE);
      w.byte(0xfc).u32(OpFc.memoryFill).byte(0x00);
      i32c(0);
      w.byte(Op.localGet).u32(R10_32);
      i32c(2 * STACK_FRAME_SIZE);
      w.byte(Op.i32Sub);
      mem(Op.i32Store, LOW_ADDR + 4 * STACK_REGION);
    }

    /** Calls the function at pc `t` with r0..r9 on the stack; takes back r0..r5 and the count. */
    function callCallee(t: number) {
      w.byte(Op.localGet).u32(N);
      w.byte(Op.localGet).u32(FRAME);
      i32c(1);
      w.byte(Op.i32Add);
      w.byte(Op.call).u32(FIRST_BPF_FUNC + (funcIndex.get(t) as number));
      set(N);
      for (let r = 5; r >= 0; r--) set(r);
    }

    /** After a callee returned: its abort leaves this function too; else this frame is the lowest again. */
    function leaveCallee() {
      w.byte(Op.globalGet).u32(ABORT_GLOBAL).byte(Op.brIf).u32(depth('prop'));
      i32c(0);
      w.byte(Op.localGet).u32(R10_32);
      i32c(STACK_FRAME_SIZE);
      w.byte(Op.i32Sub);
      mem(Op.i32Store, LOW_ADDR + 4 * STACK_REGION);
    }

    /**
     * `bpf_loop(nr_loops, callback, callback_ctx, flags)` at `i`, as the interpreter runs it
     * (Vm.interpret): r2 must be one of the program's callback addresses (else a fault); flags
     * other than 0 give -EINVAL, nr_loops (u32) 0 gives 0 and above 2^23 -E2BIG, all without
     * a budget check; otherwise the callback's wasm function is called per iteration in the
     * next frame (zeroed) with r1 = the index, r2 = callback_ctx, r3..r5 = 0, r0 and r6..r9 as
     * they are (the callee's prologue checks the budget, as the interpreter does on entering it),
     * until it returns non-zero or nr_loops iterations ran; r0 = the iterations made, r1..r5 as
     * the last callback left them, then the budget check of a helper call.
     */
    function emitLoop(i: number) {
      // VA: nr_loops, VB: the index, TRIPS: callback_ctx, Y: which callback
      get(2);
      w.byte(Op.i64Const).s32(32).byte(Op.i64ShrU).byte(Op.i32WrapI64);
      i32c(FUNC_REGION);
      w.byte(Op.i32Ne);
      open(Op.if, 'if');
      abort(i, AbortKind.loopCallback, 0);
      close();
      i32c(-1);
      w.byte(Op.localSet).u32(Y);
      callbacks.forEach((c, k) => {
        get(2).byte(Op.i32WrapI64);
        i32c(c);
        w.byte(Op.i32Eq);
        open(Op.if, 'if');
        i32c(k);
        w.byte(Op.localSet).u32(Y);
        close();
      });
      w.byte(Op.localGet).u32(Y);
      i32c(-1);
      w.byte(Op.i32Eq);
      open(Op.if, 'if');
      abort(i, AbortKind.loopCallback, 0);
      close();
      get(4).byte(Op.i64Eqz).byte(Op.i32Eqz);
      open(Op.if, 'if');
      i64c(-Errno.EINVAL, -1);
      set(0);
      w.byte(Op.else);
      get(1);
      i64c(-1, 0);
      w.byte(Op.i64And).byte(Op.localTee).u32(VA).byte(Op.i64Eqz);
      open(Op.if, 'if');
      i64c(0, 0);
      set(0);
      w.byte(Op.else);
      w.byte(Op.localGet).u32(VA);
      i64c(8 * 1024 * 1024, 0);
      w.byte(Op.i64GtU);
      open(Op.if, 'if');
      i64c(-Errno.E2BIG, -1);
      set(0);
      w.byte(Op.else);
      callDepthCheck(i);
      get(3);
      set(TRIPS);
      i64c(0, 0);
      set(VB);
      open(Op.loop, 'bloop');
      enterCallee();
      const call = (c: number) => {
        get(0);
        w.byte(Op.localGet).u32(VB);
        w.byte(Op.localGet).u32(TRIPS);
        for (let r = 3; r <= 5; r++) i64c(0, 0);
        for (let r = 6; r <= 9; r++) get(r);
        callCallee(c);
      };
      if (callbacks.length === 1) call(callbacks[0] as number);
      else {
        callbacks.forEach((c, k) => {
          w.byte(Op.localGet).u32(Y);
          i32c(k);
          w.byte(Op.i32Eq);
          open(Op.if, 'if');
          call(c);
          close();
        });
      }
      leaveCallee();
      w.byte(Op.localGet).u32(VB);
      i64c(1, 0);
      w.byte(Op.i64Add).byte(Op.localTee).u32(VB);
      w.byte(Op.localGet).u32(VA).byte(Op.i64LtU);
      get(0).byte(Op.i64Eqz).byte(Op.i32And);
      w.byte(Op.brIf).u32(depth('bloop'));
      close(); // bloop
      w.byte(Op.localGet).u32(VB);
      set(0);
      budgetCheck(i + 1);
      close(); // E2BIG
      close(); // nr 0
      close(); // flags
    }

    /** A helper call through the import (id `imm`, or r`s` for callx): r0..r5 through the register file. */
    function helperCall(i: number, o: number, s: number, imm: number) {
      storeRegs(0, 5);
      if (o === 0x85) i32c(imm);
      else get(s).byte(Op.i32WrapI64);
      i32c(i);
      w.byte(Op.localGet).u32(FRAME).byte(Op.call).u32(HELPER_FUNC).byte(Op.localSet).u32(X);
      i32c(0);
      mem(Op.i64Load32U, REG_LO_ADDR);
      i32c(0);
      mem(Op.i64Load32U, REG_HI_ADDR);
      w.byte(Op.i64Const).s32(32).byte(Op.i64Shl).byte(Op.i64Or);
      set(0);
      w.byte(Op.localGet).u32(X);
      open(Op.if, 'if');
      i32c(i);
      set(PC);
      w.byte(Op.localGet).u32(X);
      i32c(AbortKind.helper);
      w.byte(Op.i32Add);
      set(KIND);
      br('exit');
      close();
    }

    /**
     * The maps the lookup at `i` may name in r1, each then tested at run time: the map whose
     * handle the block loads into r1 last before the call (the usual `r1 = map ll` a few
     * instructions above); none when the block sets r1 to another map or a constant; otherwise
     * (r1 set in another block, or computed) the first few maps of the program.
     */
    function lookupGuesses(i: number): number[] {
      let from = i;
      while (from > 0 && !leader[from]) from--;
      let known = -3; // -3: r1 not set in this block; -2: computed; -1: a constant
      for (let j = from; j < i; j++) {
        const o = OP[j] as number;
        if (o === InternalOp.loadImm64) {
          if (DST[j] === 1) known = IMMHI[j] === MAP_HANDLE_REGION ? (IMM[j] as number) : -1;
          j++;
        } else if (writesRegister(o, DST[j] as number, SRC[j] as number, IMM[j] as number, 1)) {
          known = o === 0xb7 || o === 0xb4 ? -1 : -2;
        }
      }
      if (known >= 0) return inlineMaps.includes(known) ? [known] : [];
      if (known === -1) return [];
      return inlineMaps.slice(0, MAX_LOOKUP_GUESSES);
    }

    /**
     * When the block before the call at `i` sets r2 to r10 plus a constant (`r2 = r10; r2 +=
     * -4`, as compilers pass a key on the stack), that constant; else undefined.
     */
    function stackOffsetOfR2(i: number): number | undefined {
      let from = i;
      while (from > 0 && !leader[from]) from--;
      let off: number | undefined;
      for (let j = from; j < i; j++) {
        const o = OP[j] as number;
        if (o === InternalOp.loadImm64) {
          if (DST[j] === 2) off = undefined;
          j++;
        } else if (o === 0xbf && DST[j] === 2 && SRC[j] === 10) off = 0;
        else if (o === 0x07 && DST[j] === 2 && off !== undefined) off += IMM[j] as number;
        else if (writesRegister(o, DST[j] as number, SRC[j] as number, IMM[j] as number, 2)) off = undefined;
      }
      return off;
    }

    /**
     * `bpf_map_lookup_elem` of map `m` (r1 holds its handle): r0 = the value's address or 0, as
     * the helper sets it. The key pointer r2 is checked as the helper's `pointerArg` checks it
     * (keySize bytes inside one region); when it fails, `br helper`: the helper faults. A key at
     * a constant offset from r10 inside the frame (`keyOnStack`) needs no check, as with a stack
     * access through r10 (see `address`).
     */
    function inlineLookup(m: number, keyOnStack: number | undefined) {
      const l = lookups[m] as InlineLookup;
      const region = FIRST_MAP_REGION + m;
      if (keyOnStack !== undefined && keyOnStack >= -STACK_FRAME_SIZE && keyOnStack + l.keySize <= 0) {
        w.byte(Op.localGet).u32(R10_32);
        i32c(STACK_ADDR + keyOnStack);
        w.byte(Op.i32Add).byte(Op.localSet).u32(X);
      } else keyAddress(l.keySize);
      lookupValue(l, region);
    }

    /** X = the linear address of the key r2 points at (`keySize` bytes inside one region), or `br helper`. */
    function keyAddress(keySize: number) {
      // ID = the key's region id; 1 <= ID < the region count
      get(2);
      w.byte(Op.i64Const).s32(32).byte(Op.i64ShrU).byte(Op.i32WrapI64).byte(Op.localTee).u32(ID);
      i32c(1);
      w.byte(Op.i32Sub).byte(Op.localGet).u32(NR1).byte(Op.i32GeU);
      w.byte(Op.brIf).u32(depth('helper'));
      w.byte(Op.localGet).u32(ID);
      i32c(2);
      w.byte(Op.i32Shl).byte(Op.localSet).u32(ID);
      // lowest byte <= lo and lo + keySize <= length (lo unsigned, in 64 bits)
      get(2);
      i64c(-1, 0);
      w.byte(Op.i64And).byte(Op.localTee).u32(T64);
      w.byte(Op.localGet).u32(ID);
      mem(Op.i32Load, LOW_ADDR);
      w.byte(Op.i64ExtendI32U).byte(Op.i64LtU);
      w.byte(Op.localGet).u32(T64);
      i64c(keySize, 0);
      w.byte(Op.i64Add).byte(Op.localGet).u32(ID);
      mem(Op.i32Load, LEN_ADDR);
      w.byte(Op.i64ExtendI32U).byte(Op.i64GtU).byte(Op.i32Or);
      w.byte(Op.brIf).u32(depth('helper'));
      // X = the key's linear address
      w.byte(Op.localGet).u32(ID);
      mem(Op.i32Load, BASE_ADDR);
      get(2).byte(Op.i32WrapI64).byte(Op.i32Add).byte(Op.localSet).u32(X);
    }

    /** r0 = the address of the value of the key at X in map `l` (its region `region`), or 0. */
    function lookupValue(l: InlineLookup, region: number) {
      if (l.kind === 'array') {
        // Y = the u32 index; found when below max_entries
        w.byte(Op.localGet).u32(X);
        mem(Op.i32Load, 0);
        w.byte(Op.localTee).u32(Y);
        i32c(l.maxEntries);
        w.byte(Op.i32LtU);
      } else {
        // Y = the slot the probe finds, or -1
        w.byte(Op.localGet).u32(X);
        i32c(0);
        mem(Op.i32Load, BASE_ADDR + 4 * region);
        w.byte(Op.localTee).u32(Y);
        i32c(l.bucketsOffset);
        w.byte(Op.i32Add).byte(Op.localGet).u32(Y);
        i32c(l.keysOffset);
        w.byte(Op.i32Add);
        i32c(l.mask);
        w.byte(Op.call).u32(findFunc(l.keySize)).byte(Op.localTee).u32(Y);
        i32c(0);
        w.byte(Op.i32GeS);
      }
      w.byte(Op.if).byte(ValType.i64);
      labels.push('if');
      // (region, slot * slotBytes + (cpu % cpuCount) * cpuStride)
      w.byte(Op.localGet).u32(Y);
      i32c(l.slotBytes);
      w.byte(Op.i32Mul);
      if (l.cpuStride !== 0 && l.cpuCount > 1) {
        i32c(0);
        mem(Op.i32Load, MISC_ADDR + Misc.cpu);
        i32c(l.cpuCount);
        w.byte(Op.i32RemU);
        i32c(l.cpuStride);
        w.byte(Op.i32Mul).byte(Op.i32Add);
      }
      w.byte(Op.i64ExtendI32U);
      i64c(0, region);
      w.byte(Op.i64Or);
      w.byte(Op.else);
      i64c(0, 0);
      close(); // if (result i64)
      set(0);
    }

    function bswap32() {
      // x on the stack -> (rotl(x, 8) & 0x00ff00ff) | (rotr(x, 8) & 0xff00ff00)
      w.byte(Op.localTee).u32(X);
      i32c(8);
      w.byte(Op.i32Rotl);
      i32c(0x00ff00ff);
      w.byte(Op.i32And);
      w.byte(Op.localGet).u32(X);
      i32c(8);
      w.byte(Op.i32Rotr);
      i32c(0xff00ff00 | 0);
      w.byte(Op.i32And).byte(Op.i32Or);
    }

    function emitInsn(k: number, i: number, after: number) {
      const o = OP[i] as number;
      const d = DST[i] as number;
      const s = SRC[i] as number;
      const imm = IMM[i] as number;
      const immHi = IMMHI[i] as number;
      const isImm = (o & 0x08) === 0;
      const src64 = () => (isImm ? i64c(imm, immHi) : get(s));
      const src32 = () => (isImm ? i32c(imm) : get(s).byte(Op.i32WrapI64));
      const dst32 = () => get(d).byte(Op.i32WrapI64);
      const alu32 = (opcode: number) => {
        dst32();
        src32();
        w.byte(opcode).byte(Op.i64ExtendI32U);
        set(d);
      };
      const alu64 = (opcode: number) => {
        get(d);
        src64();
        w.byte(opcode);
        set(d);
      };
      /** d = (v == 0) ? zero : (v == -1 && signed) ? minusOne : d op v, on 32 or 64 bits. */
      const divmod = (is64: boolean, signed: boolean, isMod: boolean, fromImm: boolean) => {
        const opcode = is64
          ? signed
            ? isMod
              ? Op.i64RemS
              : Op.i64DivS
            : isMod
              ? Op.i64RemU
              : Op.i64DivU
          : signed
            ? isMod
              ? Op.i32RemS
              : Op.i32DivS
            : isMod
              ? Op.i32RemU
              : Op.i32DivU;
        const byZero = () => {
          if (isMod) {
            if (is64) get(d);
            else dst32().byte(Op.i64ExtendI32U);
          } else i64c(0, 0);
        };
        const byMinusOne = () => {
          // signed division by -1: negate (INT_MIN wraps); signed modulo by -1: 0
          if (isMod) i64c(0, 0);
          else if (is64) {
            i64c(0, 0);
            get(d);
            w.byte(Op.i64Sub);
          } else {
            i32c(0);
            dst32();
            w.byte(Op.i32Sub).byte(Op.i64ExtendI32U);
          }
        };
        const general = (pushV: () => void) => {
          if (is64) {
            get(d);
            pushV();
            w.byte(opcode);
          } else {
            dst32();
            pushV();
            w.byte(opcode).byte(Op.i64ExtendI32U);
          }
        };
        if (fromImm) {
          const v = imm;
          if (v === 0) byZero();
          else if (v === -1 && signed) byMinusOne();
          else general(() => (is64 ? i64c(imm, immHi) : i32c(imm)));
          set(d);
          return;
        }
        // register divisor in T64 (64) or X (32)
        if (is64) {
          get(s);
          set(T64);
          w.byte(Op.localGet).u32(T64).byte(Op.i64Eqz);
        } else {
          get(s);
          w.byte(Op.i32WrapI64).byte(Op.localTee).u32(X).byte(Op.i32Eqz);
        }
        w.byte(Op.if).byte(ValType.i64);
        byZero();
        w.byte(Op.else);
        const pushV = () => (is64 ? w.byte(Op.localGet).u32(T64) : w.byte(Op.localGet).u32(X));
        if (signed) {
          pushV();
          if (is64) {
            i64c(-1, -1);
            w.byte(Op.i64Eq);
          } else {
            i32c(-1);
            w.byte(Op.i32Eq);
          }
          w.byte(Op.if).byte(ValType.i64);
          byMinusOne();
          w.byte(Op.else);
          general(pushV);
          w.byte(Op.end);
        } else general(pushV);
        w.byte(Op.end);
        set(d);
      };

      switch (o) {
        // ---- ALU32
        case 0x04:
        case 0x0c:
          return alu32(Op.i32Add);
        case 0x14:
        case 0x1c:
          return alu32(Op.i32Sub);
        case 0x24:
        case 0x2c:
          return alu32(Op.i32Mul);
        case 0x34:
        case 0x3c:
          return divmod(false, false, false, isImm);
        case 0x44:
        case 0x4c:
          return alu32(Op.i32Or);
        case 0x54:
        case 0x5c:
          return alu32(Op.i32And);
        case 0x64:
        case 0x6c:
          return alu32(Op.i32Shl);
        case 0x74:
        case 0x7c:
          return alu32(Op.i32ShrU);
        case 0x84:
          i32c(0);
          dst32();
          w.byte(Op.i32Sub).byte(Op.i64ExtendI32U);
          set(d);
          return;
        case 0x94:
        case 0x9c:
          return divmod(false, false, true, isImm);
        case 0xa4:
        case 0xac:
          return alu32(Op.i32Xor);
        case 0xb4:
          i64c(imm, 0);
          set(d);
          return;
        case 0xbc:
          get(s);
          i64c(-1, 0);
          w.byte(Op.i64And);
          set(d);
          return;
        case 0xc4:
        case 0xcc:
          return alu32(Op.i32ShrS);
        case InternalOp.sdiv32Imm:
          return divmod(false, true, false, true);
        case InternalOp.sdiv32Reg:
          return divmod(false, true, false, false);
        case InternalOp.smod32Imm:
          return divmod(false, true, true, true);
        case InternalOp.smod32Reg:
          return divmod(false, true, true, false);
        case InternalOp.movsx8To32:
          get(s).byte(Op.i32WrapI64).byte(Op.i32Extend8S).byte(Op.i64ExtendI32U);
          set(d);
          return;
        case InternalOp.movsx16To32:
          get(s).byte(Op.i32WrapI64).byte(Op.i32Extend16S).byte(Op.i64ExtendI32U);
          set(d);
          return;
        case InternalOp.le16:
          get(d);
          i64c(0xffff, 0);
          w.byte(Op.i64And);
          set(d);
          return;
        case InternalOp.le32:
          get(d);
          i64c(-1, 0);
          w.byte(Op.i64And);
          set(d);
          return;
        case InternalOp.le64:
          return;
        case InternalOp.be16:
        case InternalOp.bswap16:
          dst32().byte(Op.localTee).u32(X);
          i32c(0xff);
          w.byte(Op.i32And);
          i32c(8);
          w.byte(Op.i32Shl).byte(Op.localGet).u32(X);
          i32c(8);
          w.byte(Op.i32ShrU);
          i32c(0xff);
          w.byte(Op.i32And).byte(Op.i32Or).byte(Op.i64ExtendI32U);
          set(d);
          return;
        case InternalOp.be32:
        case InternalOp.bswap32:
          dst32();
          bswap32();
          w.byte(Op.i64ExtendI32U);
          set(d);
          return;
        case InternalOp.be64:
        case InternalOp.bswap64:
          dst32();
          bswap32();
          w.byte(Op.i64ExtendI32U).byte(Op.i64Const).s32(32).byte(Op.i64Shl);
          get(d).byte(Op.i64Const).s32(32).byte(Op.i64ShrU).byte(Op.i32WrapI64);
          bswap32();
          w.byte(Op.i64ExtendI32U).byte(Op.i64Or);
          set(d);
          return;
        // ---- ALU64
        case 0x07:
        case 0x0f:
          return alu64(Op.i64Add);
        case 0x17:
        case 0x1f:
          return alu64(Op.i64Sub);
        case 0x27:
        case 0x2f:
          return alu64(Op.i64Mul);
        case 0x37:
        case 0x3f:
          return divmod(true, false, false, isImm);
        case 0x97:
        case 0x9f:
          return divmod(true, false, true, isImm);
        case InternalOp.sdiv64Imm:
          return divmod(true, true, false, true);
        case InternalOp.sdiv64Reg:
          return divmod(true, true, false, false);
        case InternalOp.smod64Imm:
          return divmod(true, true, true, true);
        case InternalOp.smod64Reg:
          return divmod(true, true, true, false);
        case 0x47:
        case 0x4f:
          return alu64(Op.i64Or);
        case 0x57:
        case 0x5f:
          return alu64(Op.i64And);
        case 0xa7:
        case 0xaf:
          return alu64(Op.i64Xor);
        case 0x67:
        case 0x6f:
          return alu64(Op.i64Shl);
        case 0x77:
        case 0x7f:
          return alu64(Op.i64ShrU);
        case 0xc7:
        case 0xcf:
          return alu64(Op.i64ShrS);
        case 0xb7:
        case 0xbf:
          src64();
          set(d);
          return;
        case 0x87:
          i64c(0, 0);
          get(d);
          w.byte(Op.i64Sub);
          set(d);
          return;
        case InternalOp.movsx8To64:
          get(s).byte(Op.i64Extend8S);
          set(d);
          return;
        case InternalOp.movsx16To64:
          get(s).byte(Op.i64Extend16S);
          set(d);
          return;
        case InternalOp.movsx32To64:
          get(s).byte(Op.i64Extend32S);
          set(d);
          return;
        case InternalOp.loadImm64:
          i64c(imm, immHi);
          set(d);
          return;
        // ---- loads
        case 0x61:
        case 0x69:
        case 0x71:
        case 0x79:
        case 0x81:
        case 0x89:
        case 0x91: {
          // size bits: 0x00 word, 0x08 half, 0x10 byte, 0x18 double word; mode 0x80 = sign-extending
          const sizeCode = o & 0x18;
          const size = sizeCode === 0x00 ? 4 : sizeCode === 0x08 ? 2 : sizeCode === 0x10 ? 1 : 8;
          const signed = (o & 0xe0) === 0x80;
          const load =
            size === 8
              ? Op.i64Load
              : size === 4
                ? signed
                  ? Op.i64Load32S
                  : Op.i64Load32U
                : size === 2
                  ? signed
                    ? Op.i64Load16S
                    : Op.i64Load16U
                  : signed
                    ? Op.i64Load8S
                    : Op.i64Load8U;
          const offset = address(i, s, size, after);
          mem(load, offset);
          set(d);
          return;
        }
        // ---- stores
        case 0x62:
        case 0x6a:
        case 0x72:
        case 0x7a:
        case 0x63:
        case 0x6b:
        case 0x73:
        case 0x7b: {
          const sizeCode = o & 0x18;
          const bytes = sizeCode === 0x00 ? 4 : sizeCode === 0x08 ? 2 : sizeCode === 0x10 ? 1 : 8;
          const offset = address(i, d, bytes, after);
          if ((o & 0x07) === 0x02) {
            if (bytes === 8) {
              i64c(imm, immHi);
              mem(Op.i64Store, offset);
            } else {
              i32c(imm);
              mem(bytes === 4 ? Op.i32Store : bytes === 2 ? Op.i32Store16 : Op.i32Store8, offset);
            }
          } else {
            get(s);
            mem(bytes === 8 ? Op.i64Store : bytes === 4 ? Op.i64Store32 : bytes === 2 ? Op.i64Store16 : Op.i64Store8, offset);
          }
          return;
        }
        // ---- atomics
        case 0xc3:
        case 0xdb: {
          const is64 = o === 0xdb;
          const offset = address(i, d, is64 ? 8 : 4, after);
          w.byte(Op.localSet).u32(Y);
          // old value -> U64 (zero-extended for 32-bit)
          w.byte(Op.localGet).u32(Y);
          mem(is64 ? Op.i64Load : Op.i64Load32U, offset);
          w.byte(Op.localSet).u32(U64);
          const code = imm & 0xf0;
          const store = () => mem(is64 ? Op.i64Store : Op.i64Store32, offset);
          if (code === 0xf0) {
            // cmpxchg: compare with r0 (w0 for 32-bit), r0 = old
            get(0);
            if (!is64) {
              i64c(-1, 0);
              w.byte(Op.i64And);
            }
            w.byte(Op.localGet).u32(U64).byte(Op.i64Eq);
            open(Op.if, 'if');
            w.byte(Op.localGet).u32(Y);
            get(s);
            store();
            close();
            w.byte(Op.localGet).u32(U64);
            set(0);
            return;
          }
          w.byte(Op.localGet).u32(Y);
          if (code === 0xe0) get(s);
          else {
            w.byte(Op.localGet).u32(U64);
            get(s);
            w.byte(code === 0x00 ? Op.i64Add : code === 0x40 ? Op.i64Or : code === 0x50 ? Op.i64And : Op.i64Xor);
          }
          store();
          if ((imm & 1) !== 0) {
            w.byte(Op.localGet).u32(U64);
            set(s);
          }
          return;
        }
        // ---- jumps
        case 0x05:
        case 0x06: {
          const t = TGT[i] as number;
          budgetCheck(t);
          jumpTo(k, t);
          return;
        }
        case 0x95:
          i32c(i);
          set(PC);
          br('ret');
          return;
        case 0x85:
        case InternalOp.callReg: {
          // bpf_loop inline when the program has callbacks; without any, a call of it can only
          // fault, which the helper import reports (HelperAction.loopWithoutCallback)
          const inlineLoop = callbacks.length > 0;
          if (inlineLoop && o === 0x85 && imm === HelperId.loop) {
            emitLoop(i);
            return;
          }
          if (inlineLoop && o === InternalOp.callReg) {
            // callx of a register that holds bpf_loop's id: the same loop as a direct call
            get(s).byte(Op.i32WrapI64);
            i32c(HelperId.loop);
            w.byte(Op.i32Eq);
            open(Op.if, 'if');
            emitLoop(i);
            w.byte(Op.else);
          }
          const guesses = o === 0x85 && imm === HelperId.mapLookupElem ? lookupGuesses(i) : [];
          if (guesses.length > 0) {
            const keyOnStack = stackOffsetOfR2(i);
            inlineSites.add(i);
            open(Op.block, 'lookup');
            open(Op.block, 'helper');
            for (const m of guesses) {
              get(1);
              i64c(m, MAP_HANDLE_REGION);
              w.byte(Op.i64Eq);
              open(Op.if, 'if');
              inlineLookup(m, keyOnStack);
              br('lookup');
              close();
            }
            close(); // helper: r1 is no map looked up here, or the key pointer is not plain
            helperCall(i, o, s, imm);
            close(); // lookup
          } else helperCall(i, o, s, imm);
          budgetCheck(i + 1);
          if (inlineLoop && o === InternalOp.callReg) close(); // if bpf_loop
          return;
        }
        case InternalOp.callLocal: {
          const t = TGT[i] as number;
          callDepthCheck(i);
          enterCallee();
          for (let r = 0; r < 10; r++) get(r);
          callCallee(t);
          leaveCallee();
          return;
        }
        default: {
          if (isConditional(o)) {
            const t = TGT[i] as number;
            condition(i);
            open(Op.if, 'if');
            budgetCheck(t);
            jumpTo(k, t);
            close();
            return;
          }
          throw new Error(`compile: opcode 0x${o.toString(16)} at ${i}`);
        }
      }
    }
  }
}
