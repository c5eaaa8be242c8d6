// Precision: which scalar values can still decide anything (the kernel's `precise` marks, found
// by `mark_chain_precision` backtracking at run time). Here it is a static, backward data-flow
// analysis over registers and the 64 stack slots of the frame: a location is *precise* at an
// instruction when its value may flow (through moves, arithmetic, spills and fills, arguments
// into a subprogram and its r0 back) into a decision: the address of a memory access, a checked
// helper argument, a conditional jump found decided, pointer arithmetic. A scalar that is not
// precise at a prune point (a counter only stored, a flag written to a slot and never read back
// into a check) is compared as "any scalar", so it does not split the explored state space.
//
// Sound by construction: where the analysis cannot see where a value goes it keeps it precise
// (a store or load through a copied stack pointer makes every slot precise, a helper that reads
// a map key makes every slot precise, `+=`/`-=` between registers keeps both, since one may be a
// pointer, a subprogram that may read memory through a pointer makes its callers' slots
// precise). Subprograms are analysed once for all their callers (a value is precise in a
// subprogram if some caller needs it). Programs with callbacks get no analysis (`null`): every
// scalar is precise there, as before.

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
  /**
   * Per subprogram: 1 when it (or one it calls) may read memory through a pointer other than its
   * own r10: the slots of the frames that call it are all precise while it runs.
   */
  touches: Uint8Array;
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

/**
 * Helpers whose checks may depend on the values of stack memory they read: a map key (an array
 * lookup with a constant key in range is not null, as Linux 6.18 decides it, marking the key
 * precise; the call is then `decided`). Other memory a helper reads or writes (a value to store,
 * a buffer to fill or copy) is checked for being initialized, never for its value, as in the
 * kernel.
 */
function helperReadsMapKey(id: number): boolean {
  const proto = helperProto(id);
  if (!proto) return true;
  return proto.args.some((a) => a === Arg.mapKey || a === Arg.stackOrNull || a === Arg.func);
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
 * scalar operands): only their operands are decisions; and the helper calls that found a
 * constant array-map key (`get_constant_map_key` marks the key's slot precise). A branch explored both ways decides
 * nothing about its operands' values (each side was checked), so it marks nothing, as in the
 * kernel. Without `decided` every conditional jump is a decision.
 */
export function computePrecision(p: Program, cfg: Cfg, decided: Uint8Array | null = null): Precision | null {
  const n = p.length;
  if (cfg.callbackEntries.size > 0) return null;
  const subs = cfg.subprogStarts.length;
  // per subprogram: it (or a subprogram it calls) reads or writes memory through a pointer other
  // than its own r10, or calls a helper that may read the stack: it may read its callers' slots
  const touches = new Uint8Array(subs);
  for (let i = 0; i < n; i++) {
    if (cfg.ldImmTail[i]) continue;
    const op = p.opcode[i]!;
    if (op === 0x85 && p.src[i] !== CallKind.HELPER && p.src[i] !== CallKind.PSEUDO_CALL) return null;
    if (op === 0x18 && p.src[i] === Pseudo.FUNC) return null;
    const c = cls(op);
    const base = c === Cls.LDX ? p.src[i]! : c === Cls.ST || c === Cls.STX ? p.dst[i]! : 10;
    if (base !== 10 || (op === 0x85 && p.src[i] === CallKind.HELPER && helperReadsMapKey(p.imm[i]!))) touches[cfg.subprogOf[i]!] = 1;
  }
  for (let again = true; again; ) {
    again = false;
    for (let s = 0; s < subs; s++) {
      if (touches[s]) continue;
      if (cfg.calls[s]!.some((c) => touches[c.callee])) {
        touches[s] = 1;
        again = true;
      }
    }
  }
  /** Per subprogram: r0 is precise after some call to it (its exits make r0 precise). */
  const returnsPrecise = new Uint8Array(subs);
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
          // check_return_code has no range for them): r0 decides nothing at the main exit; a
          // subprogram's r0 is precise when some caller's r0 is after the call
          if (o === Jmp.EXIT) {
            if (returnsPrecise[cfg.subprogOf[i]!]) R |= 1;
          } else if (o === Jmp.CALL && p.src[i] === CallKind.PSEUDO_CALL) {
            // the callee's r0 becomes ours, r1-r5 are not readable after it, r6-r9 and our slots
            // are kept (unless the callee may read them through a pointer)
            const target = i + 1 + p.imm[i]!;
            const callee = cfg.subprogOf[target]!;
            if (R & 1 && !returnsPrecise[callee]) {
              returnsPrecise[callee] = 1;
              changed = true;
            }
            R &= ~CALLER_SAVED;
            R |= regs[target]! & ARG_REGS;
            if (touches[callee]) set(0, 63);
          } else if (o === Jmp.CALL) {
            R &= ~CALLER_SAVED;
            R |= checkedArgs(p.imm[i]!);
            // a constant map key found (the call is decided): its slot is precise; which slot
            // the key pointer names is not known here, so every slot is
            if (helperReadsMapKey(p.imm[i]!) && (decided === null || decided[i] !== 0)) set(0, 63);
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
  return { regs, slotsLo: lo, slotsHi: hi, touches };
}
