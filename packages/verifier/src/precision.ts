// Precision: which scalar values can still decide anything (the kernel's `precise` marks, found
// by `mark_chain_precision` backtracking at run time). Here it is a static, backward data-flow
// analysis over registers and the 64 stack slots of the frame: a location is *precise* at an
// instruction when its value may flow (through moves, arithmetic, spills and fills) into a
// decision: the address of a memory access, a helper argument, a branch condition, pointer
// arithmetic, the return value. A scalar that is not precise at a prune point (a counter only
// stored, a flag written to a slot and never read back into a check) is compared as "any
// scalar", so it does not split the explored state space.
//
// Sound by construction: where the analysis cannot see where a value goes it keeps it precise
// (a store or load through a copied stack pointer makes every slot precise, a helper that reads
// memory makes every slot precise, `+=`/`-=` between registers keeps both, since one may be a
// pointer). Programs with subprograms or callbacks get no analysis (`null`): every scalar is
// precise there, as before.

import type { Cfg } from './cfg.js';
import { Arg, helperProto } from './helper-protos.js';
import { Alu, Atomic, CallKind, Cls, Jmp, Mode, Pseudo, aluOp, cls, isSrcReg, mode, sizeBytes } from './opcodes.js';
import type { Program } from './program.js';

/** Per instruction: precise registers (bit i = ri) and stack slots (slot k = bytes [-8(k+1), -8k)). */
export interface Precision {
  regs: Uint16Array;
  /** Slots 0..31. */
  slotsLo: Uint32Array;
  /** Slots 32..63. */
  slotsHi: Uint32Array;
}

const ARG_REGS = 0b111110;
const CALLER_SAVED = 0b111111;

/** Helpers whose arguments never let them read or write the stack (only scalars, maps, ctx). */
/** Argument registers whose value the verifier checks (all but `ARG_ANYTHING`; every one for an unknown helper). */
function checkedArgs(id: number): number {
  const proto = helperProto(id);
  if (!proto) return ARG_REGS;
  let regs = 0;
  proto.args.forEach((a, k) => {
    if (a !== Arg.anything) regs |= 1 << (k + 1);
  });
  return regs;
}

function helperTouchesStack(id: number): boolean {
  const proto = helperProto(id);
  if (!proto) return true;
  return proto.args.some(
    (a) =>
      a !== Arg.anything &&
      a !== Arg.size &&
      a !== Arg.sizeOrZero &&
      a !== Arg.mapPtr &&
      a !== Arg.allocSize &&
      a !== Arg.ctx &&
      a !== Arg.releaseRingbuf,
  );
}

/** Slot numbers [first, last] touched by an access of `size` bytes at r10 + off, or null when outside. */
function slotsOf(off: number, size: number): [number, number] | null {
  if (off >= 0 || off < -512) return null;
  const first = Math.floor((-(off + size - 1) - 1) / 8);
  const last = Math.floor((-off - 1) / 8);
  return [Math.max(0, first), Math.min(63, last)];
}

/** Bits a..b (0 <= a <= b <= 31) of a 32-bit word. */
const bitRange = (a: number, b: number): number => (2 ** (b + 1) - 2 ** a) >>> 0;

/**
 * Precise locations at each instruction, or null when the program is not a single function.
 * `decided[i]` marks the conditional jumps whose outcome was known when explored (the kernel's
 * `is_branch_taken` answering 0 or 1, after which it calls `mark_chain_precision` on the
 * scalar operands): only their operands are decisions. A branch explored both ways decides
 * nothing about its operands' values (each side was checked), so it marks nothing, as in the
 * kernel. Without `decided` every conditional jump is a decision.
 */
export function computePrecision(p: Program, cfg: Cfg, decided: Uint8Array | null = null): Precision | null {
  const n = p.length;
  if (cfg.subprogStarts.length > 1 || cfg.callbackEntries.size > 0) return null;
  for (let i = 0; i < n; i++) {
    if (cfg.ldImmTail[i]) continue;
    const op = p.opcode[i]!;
    if (op === 0x85 && p.src[i] !== CallKind.HELPER) return null;
    if (op === 0x18 && p.src[i] === Pseudo.FUNC) return null;
  }
  const regs = new Uint16Array(n);
  const lo = new Uint32Array(n);
  const hi = new Uint32Array(n);
  // slot sets as [lo, hi] bit pairs, mutated in place while one instruction is processed
  let L = 0;
  let H = 0;
  // slots [a, b] as whole-word masks (no loop per slot: "every slot" is a common range)
  const has = (a: number, b: number): boolean =>
    (a < 32 && (L & bitRange(a, Math.min(b, 31))) !== 0) || (b >= 32 && (H & bitRange(Math.max(a, 32) - 32, b - 32)) !== 0);
  const set = (a: number, b: number): void => {
    if (a < 32) L = (L | bitRange(a, Math.min(b, 31))) >>> 0;
    if (b >= 32) H = (H | bitRange(Math.max(a, 32) - 32, b - 32)) >>> 0;
  };
  const clear = (k: number): void => {
    if (k < 32) L = (L & ~(1 << k)) >>> 0;
    else H = (H & ~(1 << (k - 32))) >>> 0;
  };
  let R = 0;
  const join = (t: number): void => {
    if (t < 0 || t >= n) return;
    R |= regs[t]!;
    L = (L | lo[t]!) >>> 0;
    H = (H | hi[t]!) >>> 0;
  };
  let changed = true;
  while (changed) {
    changed = false;
    for (let i = n - 1; i >= 0; i--) {
      if (cfg.ldImmTail[i]) continue;
      const op = p.opcode[i]!;
      const c = cls(op);
      // successors (as cfg's liveness sees them: a call continues at i + 1)
      R = 0;
      L = 0;
      H = 0;
      const o = aluOp(op);
      if (c === Cls.JMP || c === Cls.JMP32) {
        if (o === Jmp.EXIT) {
          // nothing follows
        } else if (o === Jmp.CALL) join(i + 1);
        else if (o === Jmp.JA) join(i + 1 + (c === Cls.JMP ? p.off[i]! : p.imm[i]!));
        else {
          join(i + 1);
          join(i + 1 + p.off[i]!);
        }
      } else join(op === 0x18 ? i + 2 : i + 1);
      const d = 1 << p.dst[i]!;
      const s = 1 << p.src[i]!;
      switch (c) {
        case Cls.ALU:
        case Cls.ALU64:
          if (o === Alu.MOV) {
            const needed = (R & d) !== 0;
            R &= ~d;
            if (needed && isSrcReg(op)) R |= s;
          } else if (isSrcReg(op) && o !== Alu.NEG && o !== Alu.END) {
            // += and -= may be pointer arithmetic (checked against the scalar's bounds); / and %
            // may be checked for a zero divisor
            if (o === Alu.ADD || o === Alu.SUB) R |= d | s;
            else if (o === Alu.DIV || o === Alu.MOD) R |= s;
            else if (R & d) R |= s;
          }
          break;
        case Cls.LDX: {
          const needed = (R & d) !== 0;
          R &= ~d;
          R |= s;
          if (needed) {
            const r = p.src[i] === 10 ? slotsOf(p.off[i]!, sizeBytes(op)) : [0, 63];
            if (r) set(r[0]!, r[1]!);
          }
          break;
        }
        case Cls.ST:
        case Cls.STX: {
          R |= d;
          const size = sizeBytes(op);
          const direct = p.dst[i] === 10;
          const r = direct ? slotsOf(p.off[i]!, size) : null;
          if (c === Cls.STX && mode(op) === Mode.ATOMIC) {
            R |= s;
            if (p.imm[i] === Atomic.CMPXCHG) R |= 1;
            if (p.imm[i]! & Atomic.FETCH) {
              if (direct) {
                if (r) set(r[0]!, r[1]!);
              } else set(0, 63);
            }
            break;
          }
          if (c === Cls.STX) {
            const into = direct ? (r !== null && has(r[0]!, r[1]!)) : L !== 0 || H !== 0;
            if (into) R |= s;
          }
          // a whole aligned slot written through r10 replaces what was there
          if (r && size === 8 && p.off[i]! % 8 === 0) clear(r[0]!);
          break;
        }
        case Cls.LD:
          if (op === 0x18) R &= ~d;
          else {
            R &= ~CALLER_SAVED;
            R |= (1 << 6) | (mode(op) === Mode.IND ? s : 0);
          }
          break;
        default:
          // the return value of a tracepoint or XDP program is not checked (the kernel's
          // check_return_code has no range for them): r0 decides nothing at the main exit
          if (o === Jmp.EXIT) {
            // nothing
          } else if (o === Jmp.CALL) {
            R &= ~CALLER_SAVED;
            R |= checkedArgs(p.imm[i]!);
            if (helperTouchesStack(p.imm[i]!)) set(0, 63);
          } else if (o !== Jmp.JA && (decided === null || decided[i] !== 0)) R |= d | (isSrcReg(op) ? s : 0);
      }
      R = (R | (1 << 10)) & 0x7ff;
      if (R !== regs[i] || L !== lo[i] || H !== hi[i]) {
        regs[i] = R;
        lo[i] = L;
        hi[i] = H;
        changed = true;
      }
    }
  }
  return { regs, slotsLo: lo, slotsHi: hi };
}
