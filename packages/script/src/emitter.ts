import { AluOp, AtomicOp, encode, InsnClass, type InstructionFields, JmpOp, Mode, Opcode, PseudoSource, Size, Source, splitImm64 } from '@probeyard/isa';
import { fail, type SourceSpan } from './errors.js';

/** A register number, r0–r10. */
export type Reg = number;

/** A jump target, placed once. */
export interface Label {
  readonly id: number;
  /** The handle of the instruction it is placed before. */
  at: number | undefined;
}

export type AluName = keyof typeof AluOp;
export type JmpName = 'jeq' | 'jne' | 'jgt' | 'jge' | 'jlt' | 'jle' | 'jsgt' | 'jsge' | 'jslt' | 'jsle' | 'jset';

const sizeBits = { 1: Size.b, 2: Size.h, 4: Size.w, 8: Size.dw } as const;
export type ByteSize = 1 | 2 | 4 | 8;

const fitsImm32 = (v: bigint) => v >= -(1n << 31n) && v < 1n << 31n;

/**
 * Builds one program's instructions: ALU, loads and stores, jumps to labels (resolved when
 * encoding), helper calls, map loads by index (`lddw` with src 1, as compat's specs do). Each
 * emitting method returns a handle of its instruction; {@link encode} drops instructions no path
 * reaches (the kernel's verifier refuses unreachable code: a constant condition, code after
 * `exit()`) and maps handles to the slot indexes field relocations name.
 */
export class Emitter {
  private readonly insns: InstructionFields[] = [];
  /** Per instruction: its jump target, when it is a jump. */
  private readonly targets: (Label | undefined)[] = [];
  private labels = 0;

  label(): Label {
    return { id: this.labels++, at: undefined };
  }

  /** Places a label before the next instruction. */
  place(label: Label): void {
    label.at = this.insns.length;
  }

  /** The handle the next emitted instruction will have. */
  here(): number {
    return this.insns.length;
  }

  private push(insn: InstructionFields, target?: Label): number {
    this.insns.push(insn);
    this.targets.push(target);
    return this.insns.length - 1;
  }

  /** `dst op= src` (64-bit). */
  alu(op: AluName, dst: Reg, src: Reg): number {
    return this.push({ opcode: InsnClass.alu64 | AluOp[op] | Source.reg, dst, src, offset: 0, imm: 0 });
  }

  /** `dst op= imm` (64-bit; imm a signed 32-bit value). */
  aluImm(op: AluName, dst: Reg, imm: number): number {
    return this.push({ opcode: InsnClass.alu64 | AluOp[op] | Source.imm, dst, src: 0, offset: 0, imm });
  }

  /** `wdst op= imm` (32-bit, zero-extends). */
  alu32Imm(op: AluName, dst: Reg, imm: number): number {
    return this.push({ opcode: InsnClass.alu | AluOp[op] | Source.imm, dst, src: 0, offset: 0, imm });
  }

  /** `wdst = wsrc`: the low 32 bits, zero-extended. */
  alu32Mov(dst: Reg, src: Reg): number {
    return this.push({ opcode: InsnClass.alu | AluOp.mov | Source.reg, dst, src, offset: 0, imm: 0 });
  }

  /** Signed division/modulo (offset 1). */
  aluSigned(op: 'div' | 'mod', dst: Reg, src: Reg): number {
    return this.push({ opcode: InsnClass.alu64 | AluOp[op] | Source.reg, dst, src, offset: 1, imm: 0 });
  }

  /** `dst = -dst` */
  neg(dst: Reg): number {
    return this.push({ opcode: InsnClass.alu64 | AluOp.neg, dst, src: 0, offset: 0, imm: 0 });
  }

  mov(dst: Reg, src: Reg): number {
    return this.alu('mov', dst, src);
  }

  /** `dst = (sN)src`: sign-extending move of the low `bits` (8, 16, 32). */
  movSx(dst: Reg, src: Reg, bits: 8 | 16 | 32): number {
    return this.push({ opcode: InsnClass.alu64 | AluOp.mov | Source.reg, dst, src, offset: bits, imm: 0 });
  }

  /** Loads a 64-bit constant: `mov` when it fits a signed 32-bit immediate, else `lddw`. */
  movConst(dst: Reg, value: bigint): number {
    const v = BigInt.asIntN(64, value);
    if (fitsImm32(v)) return this.aluImm('mov', dst, Number(v));
    const { imm, immHi } = splitImm64(v);
    return this.push({ opcode: Opcode.lddw, dst, src: PseudoSource.imm64, offset: 0, imm, immHi });
  }

  /** `dst = map[index]` (a map reference by its index in the spec). */
  loadMap(dst: Reg, mapIndex: number): number {
    return this.push({ opcode: Opcode.lddw, dst, src: PseudoSource.mapFd, offset: 0, imm: mapIndex, immHi: 0 });
  }

  /** `dst = *(uN *)(src + off)`; `signed`: a sign-extending load (`BPF_MEMSX`). */
  ldx(size: ByteSize, dst: Reg, src: Reg, off: number, signed = false): number {
    const mode = signed && size !== 8 ? Mode.memsx : Mode.mem;
    return this.push({ opcode: InsnClass.ldx | mode | sizeBits[size], dst, src, offset: off, imm: 0 });
  }

  /** `*(uN *)(dst + off) = src` */
  stx(size: ByteSize, dst: Reg, off: number, src: Reg): number {
    return this.push({ opcode: InsnClass.stx | Mode.mem | sizeBits[size], dst, src, offset: off, imm: 0 });
  }

  /** `*(uN *)(dst + off) = imm` */
  st(size: ByteSize, dst: Reg, off: number, imm: number): number {
    return this.push({ opcode: InsnClass.st | Mode.mem | sizeBits[size], dst, src: 0, offset: off, imm });
  }

  /** `lock *(u64 *)(dst + off) += src` */
  atomicAdd(dst: Reg, off: number, src: Reg): number {
    return this.push({ opcode: InsnClass.stx | Mode.atomic | Size.dw, dst, src, offset: off, imm: AtomicOp.add });
  }

  /** `if dst op src goto label` */
  jmp(op: JmpName, dst: Reg, src: Reg, label: Label): number {
    return this.push({ opcode: InsnClass.jmp | JmpOp[op] | Source.reg, dst, src, offset: 0, imm: 0 }, label);
  }

  /** `if dst op imm goto label` (imm sign-extended to 64 bits). */
  jmpImm(op: JmpName, dst: Reg, imm: number, label: Label): number {
    return this.push({ opcode: InsnClass.jmp | JmpOp[op] | Source.imm, dst, src: 0, offset: 0, imm }, label);
  }

  /** `goto label` */
  ja(label: Label): number {
    return this.push({ opcode: Opcode.ja, dst: 0, src: 0, offset: 0, imm: 0 }, label);
  }

  call(helperId: number): number {
    return this.push({ opcode: Opcode.call, dst: 0, src: 0, offset: 0, imm: helperId });
  }

  exit(): number {
    return this.push({ opcode: Opcode.exit, dst: 0, src: 0, offset: 0, imm: 0 });
  }

  /**
   * Drops unreachable instructions, resolves jumps and encodes. `slotOf(handle)` gives the slot
   * index of an emitted instruction (undefined when it was dropped); `span` is blamed when a jump
   * does not fit 16 bits.
   */
  encode(span: SourceSpan): { bytes: Uint8Array; slotOf: (handle: number) => number | undefined } {
    const n = this.insns.length;
    const targetOf = (i: number) => {
      const l = this.targets[i];
      if (l === undefined) return undefined;
      if (l.at === undefined) throw new Error(`emitter: label ${l.id} was never placed`);
      return l.at;
    };
    // reachability from the first instruction over fall-through and jump edges
    const reached = new Uint8Array(n + 1);
    const work = [0];
    while (work.length > 0) {
      const i = work.pop()!;
      if (i >= n || reached[i]) continue;
      reached[i] = 1;
      const insn = this.insns[i]!;
      const t = targetOf(i);
      if (t !== undefined) work.push(t);
      if (insn.opcode !== Opcode.ja && insn.opcode !== Opcode.exit) work.push(i + 1);
    }
    const slots = new Int32Array(n + 1).fill(-1);
    let slot = 0;
    for (let i = 0; i < n; i++) {
      if (!reached[i]) continue;
      slots[i] = slot;
      slot += this.insns[i]!.opcode === Opcode.lddw ? 2 : 1;
    }
    slots[n] = slot;
    const kept: InstructionFields[] = [];
    for (let i = 0; i < n; i++) {
      if (!reached[i]) continue;
      const insn = { ...this.insns[i]! };
      const t = targetOf(i);
      if (t !== undefined) {
        // a jump's target is reached (through this jump), so it kept its slot
        const offset = slots[t]! - (slots[i]! + 1);
        if (offset < -32768 || offset > 32767) fail('limit', span, `probe: a jump of ${offset} instructions does not fit (±32767); the probe is too large`);
        insn.offset = offset;
      }
      kept.push(insn);
    }
    if (slot > 1_000_000) fail('limit', span, `probe: ${slot} instructions, at most 1,000,000`);
    return { bytes: encode(kept), slotOf: (h) => (reached[h] ? slots[h] : undefined) };
  }
}
