// Static checks before abstract interpretation (`check_subprogs`, `check_cfg`, `resolve_pseudo_ldimm64`):
// opcode validity, jump targets, subprogram boundaries, reachability, back-edges, and the static
// facts the interpreter needs (prune points, register liveness, the call graph).

import { Alu, Atomic, CallKind, Cls, Jmp, Mode, aluOp, cls, isSrcReg, mode } from './opcodes.js';
import type { Program } from './program.js';

export interface CfgProblem {
  insnIndex: number;
  message: string;
}

export interface Cfg {
  /** Start instruction of each subprogram, ascending; [0] is the main program. */
  subprogStarts: number[];
  /** Subprogram number of each instruction. */
  subprogOf: Int32Array;
  /** Instructions where states are stored and compared. */
  prunePoint: Uint8Array;
  /** 1 at the second slot of an `lddw`. */
  ldImmTail: Uint8Array;
  /** Registers (bit i = ri) that may be read before written from each instruction on. */
  liveIn: Uint16Array;
  /** For each subprogram: the call instructions in it and the subprogram each calls. */
  calls: { insnIndex: number; callee: number }[][];
  /**
   * Encoding problems the kernel reports only when it reaches the instruction (reserved fields,
   * register numbers): instruction index → message.
   */
  lateProblems: Map<number, string>;
  /** First instructions of subprograms used as callbacks (`bpf_loop`). */
  callbackEntries: Set<number>;
}

/**
 * Problems the kernel finds before exploring vs. on the way: unknown opcodes, malformed lddw and
 * a load's reserved fields (resolve_pseudo_ldimm64 checks every BPF_LDX up front, so even one on
 * a path it would never take is refused).
 */
const isStaticProblem = (message: string): boolean =>
  message.startsWith('unknown opcode') ||
  message.includes('ld_imm64') ||
  message.endsWith('not allowed for this program type') ||
  message === 'BPF_LDX uses reserved fields';

const JMP_OPS = new Set<number>([
  Jmp.JA,
  Jmp.JEQ,
  Jmp.JGT,
  Jmp.JGE,
  Jmp.JSET,
  Jmp.JNE,
  Jmp.JSGT,
  Jmp.JSGE,
  Jmp.CALL,
  Jmp.EXIT,
  Jmp.JLT,
  Jmp.JLE,
  Jmp.JSLT,
  Jmp.JSLE,
]);

/** The kernel-like message for an instruction whose encoding is invalid, or null when valid. */
export function checkEncoding(p: Program, i: number, legacyPacketLoads = false): string | null {
  const op = p.opcode[i]!;
  const dst = p.dst[i]!;
  const src = p.src[i]!;
  const off = p.off[i]!;
  const imm = p.imm[i]!;
  const c = cls(op);
  const hex = op.toString(16).padStart(2, '0');
  switch (c) {
    case Cls.ALU:
    case Cls.ALU64: {
      const o = aluOp(op);
      if (o > Alu.END) return `unknown opcode ${hex}`;
      if (o === Alu.END) {
        if (src !== 0 || off !== 0 || (imm !== 16 && imm !== 32 && imm !== 64) || (c === Cls.ALU64 && isSrcReg(op))) {
          return 'BPF_END uses reserved fields';
        }
        return null;
      }
      if (o === Alu.NEG) {
        if (isSrcReg(op) || src !== 0 || off !== 0 || imm !== 0) return 'BPF_NEG uses reserved fields';
        return null;
      }
      if (o === Alu.MOV) {
        if (isSrcReg(op)) {
          const okOff = off === 0 || off === 8 || off === 16 || (off === 32 && c === Cls.ALU64);
          if (!okOff || imm !== 0) return 'BPF_MOV uses reserved fields';
        } else if (src !== 0 || off !== 0) return 'BPF_MOV uses reserved fields';
        if (dst > 10 || src > 10) return `R${Math.max(dst, src)} is invalid`;
        return null;
      }
      const okOff = off === 0 || (off === 1 && (o === Alu.DIV || o === Alu.MOD));
      if (!okOff || (isSrcReg(op) ? imm !== 0 : src !== 0)) return 'BPF_ALU uses reserved fields';
      if (dst > 10 || src > 10) return `R${Math.max(dst, src)} is invalid`;
      return null;
    }
    case Cls.JMP:
    case Cls.JMP32: {
      const o = aluOp(op);
      if (!JMP_OPS.has(o)) return `unknown opcode ${hex}`;
      if (o === Jmp.CALL) {
        if (c === Cls.JMP32 && !isSrcReg(op)) return 'BPF_CALL uses reserved fields';
        if (isSrcReg(op)) return `unknown opcode ${hex}`;
        if ((src !== 2 && off !== 0) || src > 2 || dst !== 0) return 'BPF_CALL uses reserved fields';
        return null;
      }
      if (o === Jmp.EXIT) {
        if (isSrcReg(op) && c === Cls.JMP) return `unknown opcode ${hex}`;
        if (isSrcReg(op) || imm !== 0 || src !== 0 || dst !== 0 || c === Cls.JMP32) return 'BPF_EXIT uses reserved fields';
        // Linux ignores exit's offset (RFC 9669 reserves it and packages/vm refuses it at load:
        // sanitizeVerified clears it in the program that runs)
        return null;
      }
      if (o === Jmp.JA) {
        if (isSrcReg(op)) return `unknown opcode ${hex}`;
        if (src !== 0 || dst !== 0 || (c === Cls.JMP ? imm !== 0 : off !== 0)) return 'BPF_JA uses reserved fields';
        return null;
      }
      if (isSrcReg(op) ? imm !== 0 : src !== 0) return 'BPF_JMP/JMP32 uses reserved fields';
      if (dst > 10 || src > 10) return `R${Math.max(dst, src)} is invalid`;
      return null;
    }
    case Cls.LDX: {
      const m = mode(op);
      if (m !== Mode.MEM && m !== Mode.MEMSX) return `unknown opcode ${hex}`;
      if (m === Mode.MEMSX && (op & 0x18) === 0x18) return `unknown opcode ${hex}`;
      if (imm !== 0) return 'BPF_LDX uses reserved fields';
      if (dst > 10 || src > 10) return `R${Math.max(dst, src)} is invalid`;
      return null;
    }
    case Cls.ST: {
      if (mode(op) !== Mode.MEM) return `unknown opcode ${hex}`;
      if (src !== 0) return 'BPF_ST uses reserved fields';
      if (dst > 10) return `R${dst} is invalid`;
      return null;
    }
    case Cls.STX: {
      const m = mode(op);
      if (m === Mode.ATOMIC) {
        const sz = op & 0x18;
        if (sz !== 0x00 && sz !== 0x18) return `unknown opcode ${hex}`;
        const base = imm & ~Atomic.FETCH;
        const okImm =
          imm === Atomic.XCHG ||
          imm === Atomic.CMPXCHG ||
          base === Atomic.ADD ||
          base === Atomic.OR ||
          base === Atomic.AND ||
          base === Atomic.XOR;
        if (!okImm) return `BPF_ATOMIC uses invalid atomic opcode ${hex}`;
        if (dst > 10 || src > 10) return `R${Math.max(dst, src)} is invalid`;
        return null;
      }
      if (m !== Mode.MEM) return `unknown opcode ${hex}`;
      if (imm !== 0) return 'BPF_STX uses reserved fields';
      if (dst > 10 || src > 10) return `R${Math.max(dst, src)} is invalid`;
      return null;
    }
    case Cls.LD: {
      if (op === 0x18) {
        if (i + 1 >= p.length) return 'invalid bpf_ld_imm64 insn';
        if (p.opcode[i + 1] !== 0 || p.dst[i + 1] !== 0 || p.src[i + 1] !== 0 || p.off[i + 1] !== 0) {
          return 'invalid bpf_ld_imm64 insn';
        }
        if (off !== 0) return 'invalid bpf_ld_imm64 insn';
        if (src > 6) return `unrecognized bpf_ld_imm64 insn`;
        if (dst > 10) return `R${dst} is invalid`;
        return null;
      }
      const m = mode(op);
      if (m === Mode.ABS || m === Mode.IND) {
        if (!legacyPacketLoads) return 'BPF_LD_[ABS|IND] instructions not allowed for this program type';
        // check_ld_abs: r0 only, no offset, no 8-byte form, no source register for ABS
        if (dst !== 0 || off !== 0 || (op & 0x18) === 0x18 || (m === Mode.ABS && src !== 0)) {
          return 'BPF_LD_[ABS|IND] uses reserved fields';
        }
        if (src > 10) return `R${src} is invalid`;
        return null;
      }
      return `unknown opcode ${hex}`;
    }
  }
  return `unknown opcode ${hex}`;
}

/** Static successors of instruction i inside its function (a call continues at i+1). */
function successors(p: Program, i: number): number[] {
  const op = p.opcode[i]!;
  const c = cls(op);
  if (c === Cls.LD && op === 0x18) return [i + 2];
  if (c !== Cls.JMP && c !== Cls.JMP32) return [i + 1];
  const o = aluOp(op);
  if (o === Jmp.EXIT) return [];
  if (o === Jmp.CALL) return [i + 1];
  if (o === Jmp.JA) return [i + 1 + (c === Cls.JMP ? p.off[i]! : p.imm[i]!)];
  return [i + 1, i + 1 + p.off[i]!];
}

const isPseudoCall = (p: Program, i: number): boolean =>
  (p.opcode[i] === 0x85 && p.src[i] === CallKind.PSEUDO_CALL) || isFuncAddress(p, i);

/** `lddw rX, func` (`BPF_PSEUDO_FUNC`): the address of a subprogram used as a callback. */
const isFuncAddress = (p: Program, i: number): boolean => p.opcode[i] === 0x18 && p.src[i] === 4;

/** Runs the static checks; problems come in instruction order, the first one is the verdict. */
export function buildCfg(
  p: Program,
  privileged: boolean,
  legacyPacketLoads = false,
): { cfg: Cfg | null; problem: CfgProblem | null } {
  const n = p.length;
  const ldImmTail = new Uint8Array(n);
  const lateProblems = new Map<number, string>();
  for (let i = 0; i < n; i++) {
    const msg = checkEncoding(p, i, legacyPacketLoads);
    if (msg && isStaticProblem(msg)) return { cfg: null, problem: { insnIndex: i, message: msg } };
    if (msg) lateProblems.set(i, msg);
    if (p.opcode[i] === 0x18) {
      ldImmTail[i + 1] = 1;
      i++;
    }
  }
  // subprograms
  const starts = new Set<number>([0]);
  for (let i = 0; i < n; i++) {
    if (ldImmTail[i]) continue;
    if (isPseudoCall(p, i)) {
      const t = i + p.imm[i]! + 1;
      if (t < 0 || t >= n || ldImmTail[t]) {
        return { cfg: null, problem: { insnIndex: i, message: `call to invalid destination` } };
      }
      starts.add(t);
    }
  }
  const subprogStarts = [...starts].sort((a, b) => a - b);
  const subprogOf = new Int32Array(n);
  for (let s = 0; s < subprogStarts.length; s++) {
    const end = subprogStarts[s + 1] ?? n;
    for (let i = subprogStarts[s]!; i < end; i++) subprogOf[i] = s;
  }
  // jumps stay inside their subprogram, never into an lddw, never fall off the end
  for (let s = 0; s < subprogStarts.length; s++) {
    const start = subprogStarts[s]!;
    const end = subprogStarts[s + 1] ?? n;
    for (let i = start; i < end; i++) {
      if (ldImmTail[i]) continue;
      const op = p.opcode[i]!;
      const c = cls(op);
      if (c === Cls.JMP || c === Cls.JMP32) {
        const o = aluOp(op);
        if (o !== Jmp.CALL && o !== Jmp.EXIT) {
          const t = i + 1 + (o === Jmp.JA && c === Cls.JMP32 ? p.imm[i]! : p.off[i]!);
          if (t < start || t >= end) {
            return { cfg: null, problem: { insnIndex: i, message: `jump out of range from insn ${i} to ${t}` } };
          }
          if (ldImmTail[t]) {
            return { cfg: null, problem: { insnIndex: i, message: `jump into the middle of ldimm64 insn ${t - 1}` } };
          }
        }
      }
    }
    const last = ldImmTail[end - 1] ? end - 2 : end - 1;
    const lop = p.opcode[last]!;
    const lastIsJumpOrExit = lop === 0x95 || lop === 0x05 || lop === 0x06;
    if (!lastIsJumpOrExit) {
      return { cfg: null, problem: { insnIndex: last, message: 'last insn is not an exit or jmp' } };
    }
  }
  // reachability and back-edges (depth-first, as check_cfg does); calls are edges too
  const color = new Uint8Array(n); // 0 white, 1 on stack, 2 done
  const prunePoint = new Uint8Array(n);
  const calls: { insnIndex: number; callee: number }[][] = subprogStarts.map(() => []);
  const stack: { i: number; succ: number[]; k: number }[] = [];
  const edgesOf = (i: number): number[] => {
    const succ = successors(p, i);
    if (isPseudoCall(p, i)) succ.push(i + p.imm[i]! + 1);
    return succ;
  };
  color[0] = 1;
  stack.push({ i: 0, succ: edgesOf(0), k: 0 });
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.k >= top.succ.length) {
      color[top.i] = 2;
      stack.pop();
      continue;
    }
    const w = top.succ[top.k++]!;
    const isCallEdge = isPseudoCall(p, top.i) && w !== top.i + 1 && w !== top.i + 2;
    if (color[w] === 1) {
      // recursion is not a back-edge here: the frame limit stops it during exploration
      if (!privileged && !isCallEdge) {
        return { cfg: null, problem: { insnIndex: top.i, message: `back-edge from insn ${top.i} to ${w}` } };
      }
      continue;
    }
    if (color[w] === 2) continue;
    color[w] = 1;
    stack.push({ i: w, succ: edgesOf(w), k: 0 });
  }
  for (let i = 0; i < n; i++) {
    if (!ldImmTail[i] && color[i] === 0) {
      return { cfg: null, problem: { insnIndex: i, message: `unreachable insn ${i}` } };
    }
  }
  // prune points: jump targets, fall-throughs of conditional jumps, returns from calls
  const callbackEntries = new Set<number>();
  for (let i = 0; i < n; i++) {
    if (ldImmTail[i]) continue;
    if (isFuncAddress(p, i)) {
      const t = i + p.imm[i]! + 1;
      prunePoint[t] = 1;
      callbackEntries.add(t);
      calls[subprogOf[i]!]!.push({ insnIndex: i, callee: subprogOf[t]! });
      continue;
    }
    const op = p.opcode[i]!;
    const c = cls(op);
    if (c !== Cls.JMP && c !== Cls.JMP32) continue;
    const o = aluOp(op);
    if (o === Jmp.EXIT) continue;
    if (o === Jmp.CALL) {
      prunePoint[i + 1] = 1;
      if (isPseudoCall(p, i)) {
        const t = i + p.imm[i]! + 1;
        calls[subprogOf[i]!]!.push({ insnIndex: i, callee: subprogOf[t]! });
      }
      continue;
    }
    for (const t of successors(p, i)) if (t < n) prunePoint[t] = 1;
  }
  return {
    cfg: {
      subprogStarts,
      subprogOf,
      prunePoint,
      ldImmTail,
      liveIn: liveness(p, ldImmTail),
      calls,
      lateProblems,
      callbackEntries,
    },
    problem: null,
  };
}

/** Backward register liveness inside each function (bit i = ri may be read before written). */
function liveness(p: Program, ldImmTail: Uint8Array): Uint16Array {
  const n = p.length;
  const use = new Uint16Array(n);
  const def = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    if (ldImmTail[i]) continue;
    const op = p.opcode[i]!;
    const d = 1 << p.dst[i]!;
    const s = 1 << p.src[i]!;
    switch (cls(op)) {
      case Cls.ALU:
      case Cls.ALU64: {
        const o = aluOp(op);
        if (o === Alu.MOV) use[i] = isSrcReg(op) ? s : 0;
        else use[i] = d | (isSrcReg(op) ? s : 0);
        def[i] = d;
        break;
      }
      case Cls.LDX:
        use[i] = s;
        def[i] = d;
        break;
      case Cls.ST:
        use[i] = d;
        break;
      case Cls.STX:
        use[i] = d | s;
        if (mode(op) === Mode.ATOMIC) {
          if (p.imm[i] === Atomic.CMPXCHG) {
            use[i] = use[i]! | 1;
            def[i] = 1;
          } else if (p.imm[i]! & Atomic.FETCH) def[i] = s;
        }
        break;
      case Cls.LD:
        if (op === 0x18) def[i] = d;
        else {
          // BPF_LD_[ABS|IND]: reads r6 (the skb) and the index register, clobbers r0-r5 like a call
          use[i] = (1 << 6) | (mode(op) === Mode.IND ? s : 0);
          def[i] = 0b111111;
        }
        break;
      default: {
        const o = aluOp(op);
        if (o === Jmp.CALL) {
          use[i] = 0b111110;
          def[i] = 0b111111;
        } else if (o === Jmp.EXIT) use[i] = 1;
        else if (o !== Jmp.JA) use[i] = d | (isSrcReg(op) ? s : 0);
      }
    }
  }
  const live = new Uint16Array(n);
  let changed = true;
  while (changed) {
    changed = false;
    for (let i = n - 1; i >= 0; i--) {
      if (ldImmTail[i]) continue;
      let out = 0;
      for (const t of successors(p, i)) if (t < n) out |= live[t]!;
      const inn = (use[i]! | (out & ~def[i]!) | (1 << 10)) & 0x7ff;
      if (inn !== live[i]) {
        live[i] = inn;
        changed = true;
      }
    }
  }
  return live;
}
