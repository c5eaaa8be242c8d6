import { helperName } from './helpers.js';
import type { InstructionFields } from './instruction.js';
import { imm64 } from './instruction.js';
import { AluOp, AtomicOp, atomicFetch, CallSource, classMask, InsnClass, JmpOp, Mode, Opcode, PseudoSource, Size, Source } from './opcode.js';

/**
 * Text syntax of instructions: `llvm` is what `llvm-objdump -d` prints (`r0 = *(u32 *)(r1 + 4)`),
 * `conformance` the bpf_conformance / uBPF assembler syntax (`ldxw %r0, [%r1+4]`).
 */
export type Syntax = 'llvm' | 'conformance';

/** Options of {@link formatInstruction} and {@link disassemble}. */
export interface FormatOptions {
  /** Default `llvm`. */
  syntax?: Syntax;
  /** LLVM syntax: append ` # bpf_<helper>` comments to helper calls. Default false (objdump prints none). */
  helperComments?: boolean;
  /**
   * {@link disassemble} only: name jump and call targets `L<slot>:` and jump to the names instead of
   * printing `+N`. The text still assembles to the same bytes. Default false.
   */
  labels?: boolean;
}

const aluLlvm: Record<number, string> = {
  [AluOp.add]: '+=',
  [AluOp.sub]: '-=',
  [AluOp.mul]: '*=',
  [AluOp.div]: '/=',
  [AluOp.or]: '|=',
  [AluOp.and]: '&=',
  [AluOp.lsh]: '<<=',
  [AluOp.rsh]: '>>=',
  [AluOp.mod]: '%=',
  [AluOp.xor]: '^=',
  [AluOp.arsh]: 's>>=',
};

const aluNames: Record<number, string> = {
  [AluOp.add]: 'add',
  [AluOp.sub]: 'sub',
  [AluOp.mul]: 'mul',
  [AluOp.div]: 'div',
  [AluOp.or]: 'or',
  [AluOp.and]: 'and',
  [AluOp.lsh]: 'lsh',
  [AluOp.rsh]: 'rsh',
  [AluOp.neg]: 'neg',
  [AluOp.mod]: 'mod',
  [AluOp.xor]: 'xor',
  [AluOp.mov]: 'mov',
  [AluOp.arsh]: 'arsh',
};

const jmpLlvm: Record<number, string> = {
  [JmpOp.jeq]: '==',
  [JmpOp.jgt]: '>',
  [JmpOp.jge]: '>=',
  [JmpOp.jset]: '&',
  [JmpOp.jne]: '!=',
  [JmpOp.jsgt]: 's>',
  [JmpOp.jsge]: 's>=',
  [JmpOp.jlt]: '<',
  [JmpOp.jle]: '<=',
  [JmpOp.jslt]: 's<',
  [JmpOp.jsle]: 's<=',
};

const jmpNames: Record<number, string> = {
  [JmpOp.jeq]: 'jeq',
  [JmpOp.jgt]: 'jgt',
  [JmpOp.jge]: 'jge',
  [JmpOp.jset]: 'jset',
  [JmpOp.jne]: 'jne',
  [JmpOp.jsgt]: 'jsgt',
  [JmpOp.jsge]: 'jsge',
  [JmpOp.jlt]: 'jlt',
  [JmpOp.jle]: 'jle',
  [JmpOp.jslt]: 'jslt',
  [JmpOp.jsle]: 'jsle',
};

const atomicNames: Record<number, string> = {
  [AtomicOp.add]: 'add',
  [AtomicOp.or]: 'or',
  [AtomicOp.and]: 'and',
  [AtomicOp.xor]: 'xor',
};

/** Names of the `lddw` pseudo sources in the conformance syntax (`lddw %r1, map_fd 3`). */
export const pseudoSourceNames: Record<number, string> = {
  [PseudoSource.mapFd]: 'map_fd',
  [PseudoSource.mapValue]: 'map_value',
  [PseudoSource.btfId]: 'btf_id',
  [PseudoSource.func]: 'func',
  [PseudoSource.mapIdx]: 'map_idx',
  [PseudoSource.mapIdxValue]: 'map_idx_value',
};

const sizeLetters: Record<number, string> = { [Size.b]: 'b', [Size.h]: 'h', [Size.w]: 'w', [Size.dw]: 'dw' };
const sizeBits: Record<number, number> = { [Size.b]: 8, [Size.h]: 16, [Size.w]: 32, [Size.dw]: 64 };

function signed(n: number): string {
  return n < 0 ? `- ${-n}` : `+ ${n}`;
}

function jumpOffset(n: number): string {
  return n < 0 ? `${n}` : `+${n}`;
}

function memLlvm(reg: number, offset: number): string {
  return `(r${reg} ${signed(offset)})`;
}

function memConformance(reg: number, offset: number): string {
  if (offset === 0) return `[%r${reg}]`;
  return offset < 0 ? `[%r${reg}${offset}]` : `[%r${reg}+${offset}]`;
}

/** Formats one instruction in the LLVM syntax, exactly as llvm-objdump prints it (without address and bytes). */
export function formatLlvm(insn: InstructionFields, options: FormatOptions = {}): string {
  const { opcode, dst, src, offset, imm } = insn;
  const cls = opcode & classMask;
  switch (cls) {
    case InsnClass.alu:
    case InsnClass.alu64: {
      const r = cls === InsnClass.alu64 ? 'r' : 'w';
      const op = opcode & 0xf0;
      const x = (opcode & Source.reg) !== 0;
      const rhs = x ? `${r}${src}` : `${imm}`;
      if (op === AluOp.end) {
        if (cls === InsnClass.alu64) return `r${dst} = bswap${imm} r${dst}`;
        return `r${dst} = ${x ? 'be' : 'le'}${imm} r${dst}`;
      }
      if (op === AluOp.neg) return `${r}${dst} = -${r}${dst}`;
      if (op === AluOp.mov) {
        if (x && offset !== 0) return `${r}${dst} = (s${offset})${r}${src}`;
        return `${r}${dst} = ${rhs}`;
      }
      if ((op === AluOp.div || op === AluOp.mod) && offset === 1) return `${r}${dst} s${aluLlvm[op]} ${rhs}`;
      return `${r}${dst} ${aluLlvm[op]} ${rhs}`;
    }
    case InsnClass.jmp:
    case InsnClass.jmp32: {
      const op = opcode & 0xf0;
      if (opcode === Opcode.gotol) return `gotol ${jumpOffset(imm)}`;
      if (op === JmpOp.ja) return `goto ${jumpOffset(offset)}`;
      if (opcode === Opcode.exit) return 'exit';
      if (opcode === Opcode.callx) return `callx r${dst}`;
      if (opcode === Opcode.call) {
        if (src === CallSource.local) return imm < 0 ? `call ${imm}` : `call pc+${imm}`;
        if (src === CallSource.btfId) return `call kfunc ${imm}`;
        // A negative helper id only exists in hand-made bytecode; `call -1` would read as a local call.
        if (imm < 0) return `call helper ${imm}`;
        const name = options.helperComments ? helperName(imm) : undefined;
        return name ? `call ${imm} # bpf_${name}` : `call ${imm}`;
      }
      const r = cls === InsnClass.jmp ? 'r' : 'w';
      const x = (opcode & Source.reg) !== 0;
      return `if ${r}${dst} ${jmpLlvm[op]} ${x ? `${r}${src}` : imm} goto ${jumpOffset(offset)}`;
    }
    case InsnClass.ld: {
      if (opcode === Opcode.lddw) {
        if (src === PseudoSource.imm64) return `r${dst} = ${imm64(insn)} ll`;
        return insn.immHi ? `ld_pseudo\tr${dst}, ${src}, ${imm}, ${insn.immHi}` : `ld_pseudo\tr${dst}, ${src}, ${imm}`;
      }
      const bits = sizeBits[opcode & 0x18];
      if ((opcode & 0xe0) === Mode.abs) return `r0 = *(u${bits} *)skb[${imm}]`;
      return imm === 0 ? `r0 = *(u${bits} *)skb[r${src}]` : `r0 = *(u${bits} *)skb[r${src} ${signed(imm)}]`;
    }
    case InsnClass.ldx: {
      const bits = sizeBits[opcode & 0x18];
      const sx = (opcode & 0xe0) === Mode.memsx;
      return `r${dst} = *(${sx ? 's' : 'u'}${bits} *)${memLlvm(src, offset)}`;
    }
    case InsnClass.st:
      return `*(u${sizeBits[opcode & 0x18]} *)${memLlvm(dst, offset)} = ${imm}`;
    default: {
      const size = opcode & 0x18;
      const bits = sizeBits[size];
      if ((opcode & 0xe0) === Mode.mem) return `*(u${bits} *)${memLlvm(dst, offset)} = r${src}`;
      const wide = size === Size.dw;
      const r = wide ? 'r' : 'w';
      const addr = `r${dst} ${signed(offset)}`;
      if (imm === AtomicOp.xchg) return `${r}${src} = ${wide ? 'xchg_64' : 'xchg32_32'}(${addr}, ${r}${src})`;
      if (imm === AtomicOp.cmpxchg) return `${r}0 = ${wide ? 'cmpxchg_64' : 'cmpxchg32_32'}(${addr}, ${r}0, ${r}${src})`;
      const base = imm & ~atomicFetch;
      if (imm & atomicFetch) return `${r}${src} = atomic_fetch_${atomicNames[base]}((u${bits} *)${memLlvm(dst, offset)}, ${r}${src})`;
      // LLVM prints the 32-bit add (its old XADDW) with an r register, the newer ones with w.
      const reg = wide || base === AtomicOp.add ? 'r' : 'w';
      return `lock *(u${bits} *)${memLlvm(dst, offset)} ${aluLlvm[base]} ${reg}${src}`;
    }
  }
}

/** Formats one instruction in the bpf_conformance syntax; the text assembles back to the same bytes. */
export function formatConformance(insn: InstructionFields): string {
  const { opcode, dst, src, offset, imm } = insn;
  const cls = opcode & classMask;
  switch (cls) {
    case InsnClass.alu:
    case InsnClass.alu64: {
      const suffix = cls === InsnClass.alu ? '32' : '';
      const op = opcode & 0xf0;
      const x = (opcode & Source.reg) !== 0;
      if (op === AluOp.end) {
        if (cls === InsnClass.alu64) return `bswap${imm} %r${dst}`;
        return `${x ? 'be' : 'le'}${imm} %r${dst}`;
      }
      if (op === AluOp.neg) return `neg${suffix} %r${dst}`;
      const rhs = x ? `%r${src}` : `${imm}`;
      if (op === AluOp.mov && x && offset !== 0) return `movsx${offset}${cls === InsnClass.alu ? '32' : '64'} %r${dst}, %r${src}`;
      const name = (op === AluOp.div || op === AluOp.mod) && offset === 1 ? `s${aluNames[op]}` : aluNames[op];
      return `${name}${suffix} %r${dst}, ${rhs}`;
    }
    case InsnClass.jmp:
    case InsnClass.jmp32: {
      const op = opcode & 0xf0;
      if (opcode === Opcode.gotol) return `ja32 ${jumpOffset(imm)}`;
      if (op === JmpOp.ja) return `ja ${jumpOffset(offset)}`;
      if (opcode === Opcode.exit) return 'exit';
      if (opcode === Opcode.callx) return `call %r${dst}`;
      if (opcode === Opcode.call) {
        if (src === CallSource.local) return `call local ${jumpOffset(imm)}`;
        if (src === CallSource.btfId) return `call runtime ${imm}`;
        return `call ${imm}`;
      }
      const x = (opcode & Source.reg) !== 0;
      return `${jmpNames[op]}${cls === InsnClass.jmp32 ? '32' : ''} %r${dst}, ${x ? `%r${src}` : imm}, ${jumpOffset(offset)}`;
    }
    case InsnClass.ld: {
      if (opcode === Opcode.lddw) {
        if (src === PseudoSource.imm64) return `lddw %r${dst}, 0x${BigInt.asUintN(64, imm64(insn)).toString(16)}`;
        const hi = insn.immHi ?? 0;
        return `lddw %r${dst}, ${pseudoSourceNames[src]} ${imm}${hi !== 0 ? `, ${hi}` : ''}`;
      }
      const letter = sizeLetters[opcode & 0x18];
      if ((opcode & 0xe0) === Mode.abs) return `ldabs${letter} ${imm}`;
      return `ldind${letter} %r${src}, ${imm}`;
    }
    case InsnClass.ldx: {
      const sx = (opcode & 0xe0) === Mode.memsx ? 's' : '';
      return `ldx${sx}${sizeLetters[opcode & 0x18]} %r${dst}, ${memConformance(src, offset)}`;
    }
    case InsnClass.st:
      return `st${sizeLetters[opcode & 0x18]} ${memConformance(dst, offset)}, ${imm}`;
    default: {
      const size = opcode & 0x18;
      if ((opcode & 0xe0) === Mode.mem) return `stx${sizeLetters[size]} ${memConformance(dst, offset)}, %r${src}`;
      const suffix = size === Size.w ? '32' : '';
      const mem = memConformance(dst, offset);
      if (imm === AtomicOp.xchg) return `lock xchg${suffix} ${mem}, %r${src}`;
      if (imm === AtomicOp.cmpxchg) return `lock cmpxchg${suffix} ${mem}, %r${src}`;
      const fetch = imm & atomicFetch ? 'fetch ' : '';
      return `lock ${fetch}${atomicNames[imm & ~atomicFetch]}${suffix} ${mem}, %r${src}`;
    }
  }
}

/** Formats one instruction in the chosen syntax (default `llvm`). */
export function formatInstruction(insn: InstructionFields, options: FormatOptions = {}): string {
  return options.syntax === 'conformance' ? formatConformance(insn) : formatLlvm(insn, options);
}

/** The slot a jump or local call goes to, or undefined for any other instruction. */
export function jumpTarget(insn: InstructionFields, slot: number): number | undefined {
  const { opcode } = insn;
  const cls = opcode & classMask;
  if (cls !== InsnClass.jmp && cls !== InsnClass.jmp32) return undefined;
  if (opcode === Opcode.gotol) return slot + 1 + insn.imm;
  if (opcode === Opcode.call) return insn.src === CallSource.local ? slot + 1 + insn.imm : undefined;
  if (opcode === Opcode.exit || opcode === Opcode.callx) return undefined;
  return slot + 1 + insn.offset;
}

/** Disassembles a program: one line per instruction (an `lddw` is one line), each ending in a newline. */
export function disassemble(insns: readonly InstructionFields[], options: FormatOptions = {}): string {
  if (!options.labels) {
    let out = '';
    for (const insn of insns) out += `${formatInstruction(insn, options)}\n`;
    return out;
  }
  const slots: number[] = [];
  let total = 0;
  for (const insn of insns) {
    slots.push(total);
    total += insn.opcode === Opcode.lddw ? 2 : 1;
  }
  const starts = new Set(slots);
  starts.add(total);
  const targets = new Set<number>();
  insns.forEach((insn, k) => {
    const t = jumpTarget(insn, slots[k]!);
    if (t !== undefined && starts.has(t)) targets.add(t);
  });
  const conformance = options.syntax === 'conformance';
  let out = '';
  insns.forEach((insn, k) => {
    const slot = slots[k]!;
    if (targets.has(slot)) out += `L${slot}:\n`;
    let text = formatInstruction(insn, options);
    const t = jumpTarget(insn, slot);
    if (t !== undefined && targets.has(t)) {
      if (insn.opcode === Opcode.call) text = conformance ? `call local L${t}` : `call L${t}`;
      else text = text.replace(/[+-]\d+$/, `L${t}`);
    }
    out += `${text}\n`;
  });
  if (targets.has(total)) out += `L${total}:\n`;
  return out;
}
