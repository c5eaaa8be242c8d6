import { AluOp, AtomicOp, encode, InsnClass, type InstructionFields, JmpOp, Mode, Opcode, PseudoSource, Size, Source, splitImm64 } from '@probeyard/isa';
import { fail, type SourceSpan } from './errors.js';

/** A register number, r0–r10. */
export type Reg = number;

/** A jump target, placed once. */
export interface Label {
  readonly id: number;
  slot: number | undefined;
}

export type AluName = keyof typeof AluOp;
export type JmpName = 'jeq' | 'jne' | 'jgt' | 'jge' | 'jlt' | 'jle' | 'jsgt' | 'jsge' | 'jslt' | 'jsle' | 'jset';

const sizeBits = { 1: Size.b, 2: Size.h, 4: Size.w, 8: Size.dw } as const;
export type ByteSize = 1 | 2 | 4 | 8;

const fitsImm32 = (v: bigint) => v >= -(1n << 31n) && v < 1n << 31n;

/**
 * Builds one program's instructions: ALU, loads and stores, jumps to labels (resolved when
 * encoding), helper calls, map loads by index (`lddw` with src 1, as compat's specs do). Each
 * instruction's slot index is known as it is emitted, so field relocations can name it.
 */
export class Emitter {
  private readonly insns: InstructionFields[] = [];
  private readonly jumps: { at: number; label: Label }[] = [];
  private nextSlot = 0;
  private labels = 0;

  /** The slot index the next instruction gets. */
  get slot(): number {
    return this.nextSlot;
  }

  label(): Label {
    return { id: this.labels++, slot: undefined };
  }

  place(label: Label): void {
    label.slot = this.nextSlot;
  }

  private push(insn: InstructionFields): number {
    const at = this.nextSlot;
    this.insns.push(insn);
    this.nextSlot += insn.opcode === Opcode.lddw ? 2 : 1;
    return at;
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
    const at = this.push({ opcode: InsnClass.jmp | JmpOp[op] | Source.reg, dst, src, offset: 0, imm: 0 });
    this.jumps.push({ at: this.insns.length - 1, label });
    return at;
  }

  /** `if dst op imm goto label` (imm sign-extended to 64 bits). */
  jmpImm(op: JmpName, dst: Reg, imm: number, label: Label): number {
    const at = this.push({ opcode: InsnClass.jmp | JmpOp[op] | Source.imm, dst, src: 0, offset: 0, imm });
    this.jumps.push({ at: this.insns.length - 1, label });
    return at;
  }

  /** `goto label` */
  ja(label: Label): number {
    const at = this.push({ opcode: Opcode.ja, dst: 0, src: 0, offset: 0, imm: 0 });
    this.jumps.push({ at: this.insns.length - 1, label });
    return at;
  }

  call(helperId: number): number {
    return this.push({ opcode: Opcode.call, dst: 0, src: 0, offset: 0, imm: helperId });
  }

  exit(): number {
    return this.push({ opcode: Opcode.exit, dst: 0, src: 0, offset: 0, imm: 0 });
  }

  /** Resolves jumps and encodes; `span` is blamed when a jump does not fit 16 bits. */
  encode(span: SourceSpan): Uint8Array {
    const slotOf: number[] = [];
    let slot = 0;
    for (const insn of this.insns) {
      slotOf.push(slot);
      slot += insn.opcode === Opcode.lddw ? 2 : 1;
    }
    for (const j of this.jumps) {
      const target = j.label.slot;
      if (target === undefined) throw new Error(`emitter: label ${j.label.id} was never placed`);
      const offset = target - (slotOf[j.at]! + 1);
      if (offset < -32768 || offset > 32767) fail('limit', span, `probe: a jump of ${offset} instructions does not fit (±32767); the probe is too large`);
      this.insns[j.at]!.offset = offset;
    }
    if (slot > 1_000_000) fail('limit', span, `probe: ${slot} instructions, at most 1,000,000`);
    return encode(this.insns);
  }
}
