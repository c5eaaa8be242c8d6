// ALU and bounds (`check_alu_op`, `adjust_ptr_min_max_vals`, `check_ld_imm`): scalar arithmetic
// over tnums and ranges, pointer arithmetic and its offset limits, 64-bit immediates.

import { ALU_TEXT } from '../insn-text.js';
import { MAX_VAR_OFF } from '../limits.js';
import { Alu, Cls, Pseudo, aluOp, cls, isSrcReg } from '../opcodes.js';
import { aluView, constValue, fromView, isConst, scalarConst, signExtend, toSigned, truncate, viewOf } from '../scalar.js';
import { type Reg, RegType, type State, UNKNOWN_SCALAR, UNKNOWN_SCALAR_SIZED, UNKNOWN_U32, constReg, isPacketPointer, isPointer, pointerReg, regTypeName, scalarReg } from '../state.js';
import { U32, U64 } from '../tnum.js';
import type { Verifier } from '../verifier.js';

export function alu(this: Verifier, s: State, i: number): void {
  const p = this.p;
  const op = p.opcode[i]!;
  const o = aluOp(op);
  const is64 = cls(op) === Cls.ALU64;
  const w: 32 | 64 = is64 ? 64 : 32;
  const dst = p.dst[i]!;
  const srcNo = p.src[i]!;
  const imm = p.imm[i]!;
  const fromReg = isSrcReg(op);
  const regs = this.regs(s);

  if (o === Alu.MOV) {
    if (!fromReg) {
      this.writeReg(s, i, dst, this.immReg(i, !is64));
      return;
    }
    const src = this.readReg(s, i, srcNo);
    const off = p.off[i]!;
    if (dst === 10) this.reject(i, 'frame pointer is read only');
    if (isPointer(src)) {
      if (is64 && off === 0) {
        regs[dst] = src;
        return;
      }
      if (!this.privileged) this.reject(i, `R${srcNo} partial copy of pointer`);
      regs[dst] = is64 ? UNKNOWN_SCALAR : UNKNOWN_U32;
      return;
    }
    let v = src.v;
    if (off !== 0) {
      v = signExtend(v, off as 8 | 16 | 32);
      if (!is64) v = truncate(v, 4);
      regs[dst] = scalarReg(v);
      return;
    }
    if (!is64) {
      regs[dst] = scalarReg(truncate(v, 4));
      return;
    }
    // a copy shares the source's id so that a bounds check on one narrows both
    if (isConst(v)) {
      regs[dst] = src;
      return;
    }
    let linked = src;
    if (src.id === 0) {
      linked = { ...src, id: this.newId() };
      regs[srcNo] = linked;
    }
    regs[dst] = linked;
    return;
  }

  const d = this.readReg(s, i, dst);
  if (dst === 10) this.reject(i, 'frame pointer is read only');

  if (o === Alu.NEG || o === Alu.END) {
    if (isPointer(d)) {
      if (!this.privileged) this.reject(i, `R${dst} pointer arithmetic prohibited`);
      regs[dst] = UNKNOWN_SCALAR;
      return;
    }
    if (o === Alu.NEG) {
      regs[dst] = scalarReg(fromView(aluView(Alu.SUB, viewOf(scalarConst(0n), w), viewOf(d.v, w))));
      return;
    }
    const bits = imm;
    const swap = is64 || fromReg; // bswap, or to_be on a little-endian machine
    if (!swap) {
      regs[dst] = scalarReg(truncate(d.v, bits / 8));
    } else if (isConst(d.v)) {
      let x = constValue(d.v);
      let y = 0n;
      for (let b = 0; b < bits / 8; b++) {
        y = (y << 8n) | (x & 0xffn);
        x >>= 8n;
      }
      regs[dst] = constReg(y);
    } else {
      regs[dst] = bits === 64 ? UNKNOWN_SCALAR : UNKNOWN_SCALAR_SIZED(bits / 8, 'read');
    }
    return;
  }

  let src: Reg;
  if (fromReg) src = this.readReg(s, i, srcNo);
  else {
    if ((o === Alu.DIV || o === Alu.MOD) && imm === 0) this.reject(i, 'div by zero');
    src = this.immReg(i, !is64);
  }
  if ((o === Alu.LSH || o === Alu.RSH || o === Alu.ARSH) && !fromReg && (imm < 0 || imm >= w)) {
    this.reject(i, `invalid shift ${imm}`);
  }

  if (isPointer(d) || isPointer(src)) {
    regs[dst] = this.pointerAlu(i, o, is64, d, src);
    return;
  }
  if ((o === Alu.DIV || o === Alu.MOD) && fromReg && this.options.rejectDivisionByZero) {
    const sv = viewOf(src.v, w);
    if (sv.umin === 0n) this.reject(i, `possible division by zero (R${srcNo} may be 0)`);
  }
  if (isConst(d.v) && isConst(src.v)) {
    const c = constAlu(o, constValue(d.v), constValue(src.v), w, p.off[i]! === 1);
    if (c !== null) {
      regs[dst] = constReg(c);
      return;
    }
  }
  const result = fromView(aluView(o, viewOf(d.v, w), viewOf(src.v, w)));
  regs[dst] = scalarReg(result);
}

export function pointerAlu(this: Verifier, i: number, o: number, is64: boolean, d: Reg, src: Reg): Reg {
  const dst = this.p.dst[i]!;
  if (isPointer(d) && isPointer(src)) {
    if (o === Alu.SUB && this.privileged) return UNKNOWN_SCALAR;
    this.reject(i, `R${dst} pointer ${ALU_TEXT[o]} pointer prohibited`);
  }
  if (!is64) {
    if (o === Alu.SUB && this.privileged) return UNKNOWN_U32;
    this.reject(i, `R${dst} 32-bit pointer arithmetic prohibited`);
  }
  const ptr = isPointer(d) ? d : src;
  const scalar = isPointer(d) ? src : d;
  if (ptr.maybeNull) {
    this.reject(i, `R${dst} pointer arithmetic on ${regTypeName(ptr)} prohibited, null-check it first`);
  }
  if (ptr.type === RegType.packetEnd) this.reject(i, `R${dst} pointer arithmetic on pkt_end prohibited`);
  if (ptr.type === RegType.mapPtr || ptr.type === RegType.func) {
    if (o === Alu.ADD && isConst(scalar.v) && constValue(scalar.v) === 0n) return ptr;
    this.reject(i, `R${dst} pointer arithmetic on ${regTypeName(ptr)} prohibited`);
  }
  if (o === Alu.AND || o === Alu.OR || o === Alu.XOR) {
    this.reject(i, `R${dst} bitwise operator ${ALU_TEXT[o]} on pointer prohibited`);
  }
  if (o !== Alu.ADD && o !== Alu.SUB) {
    this.reject(i, `R${dst} pointer arithmetic with ${ALU_TEXT[o]} operator prohibited`);
  }
  if (o === Alu.SUB && !isPointer(d)) this.reject(i, `R${dst} tried to subtract pointer from scalar`);
  const sv = scalar.v;
  const typeName = regTypeName(ptr);
  // check_reg_sane_offset: the scalar, then the resulting pointer
  if (isConst(sv)) {
    const c = toSigned(constValue(sv), 64);
    if (c >= MAX_VAR_OFF || c <= -MAX_VAR_OFF) this.reject(i, `math between ${typeName} pointer and ${c} is not allowed`);
    const off = BigInt(ptr.off) + (o === Alu.ADD ? c : -c);
    if (off >= MAX_VAR_OFF || off <= -MAX_VAR_OFF) this.reject(i, `${typeName} pointer offset ${off} is not allowed`);
    return { ...ptr, off: Number(off) };
  }
  if (sv.smin <= -(1n << 63n)) {
    this.reject(i, `math between ${typeName} pointer and register with unbounded min value is not allowed`);
  }
  if (sv.smin >= MAX_VAR_OFF || sv.smin <= -MAX_VAR_OFF) {
    this.reject(i, `value ${sv.smin} makes ${typeName} pointer be out of bounds`);
  }
  const v = fromView(aluView(o, viewOf(ptr.v, 64), viewOf(sv, 64)));
  if (v.smin <= -(1n << 63n)) {
    this.reject(i, `math between ${typeName} pointer and register with unbounded min value is not allowed`);
  }
  if (v.smin >= MAX_VAR_OFF || v.smin <= -MAX_VAR_OFF) {
    this.reject(i, `value ${v.smin} makes ${typeName} pointer be out of bounds`);
  }
  // a new variable part: a new identity, and no range proven for it yet
  if (isPacketPointer(ptr)) return { ...ptr, v, id: this.newId(), aux: 0 };
  return { ...ptr, v };
}

export function ldImm64(this: Verifier, s: State, i: number): void {
  const p = this.p;
  const dst = p.dst[i]!;
  const src = p.src[i]!;
  const lo = p.imm[i]!;
  const hi = p.imm[i + 1]!;
  switch (src) {
    case Pseudo.NONE:
      this.writeReg(s, i, dst, constReg((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)));
      return;
    case Pseudo.MAP_FD:
    case Pseudo.MAP_IDX:
      this.mapDef(lo, i);
      this.writeReg(s, i, dst, pointerReg(RegType.mapPtr, { aux: lo }));
      return;
    case Pseudo.MAP_VALUE:
    case Pseudo.MAP_IDX_VALUE: {
      const def = this.mapDef(lo, i);
      if (def.type !== 2) this.reject(i, `map type ${def.type} does not support direct value access`);
      if (hi < 0 || hi >= def.valueSize) {
        this.reject(i, `invalid access to map value pointer, value_size=${def.valueSize} off=${hi}`);
      }
      this.writeReg(s, i, dst, pointerReg(RegType.mapValue, { aux: lo, off: hi }));
      return;
    }
    case Pseudo.FUNC:
      this.writeReg(s, i, dst, pointerReg(RegType.func, { aux: i + lo + 1 }));
      return;
    default:
      this.reject(i, `unsupported bpf_ld_imm64 source ${src}`);
  }
}

/** `a op b` on known values (BPF semantics, `w`-bit), or null for ops left to the bounds logic. */
function constAlu(o: number, a: bigint, b: bigint, w: 32 | 64, signedDivMod: boolean): bigint | null {
  const m = w === 64 ? U64 : U32;
  // masking allocates a BigInt: only when the value is outside [0, m]
  if (a < 0n || a > m) a &= m;
  if (b < 0n || b > m) b &= m;
  switch (o) {
    case Alu.ADD: {
      const r = a + b;
      return r > m ? r & m : r;
    }
    case Alu.SUB: {
      const r = a - b;
      return r < 0n ? r & m : r;
    }
    case Alu.MUL:
      return (a * b) & m;
    case Alu.AND:
      return a & b;
    case Alu.OR:
      return a | b;
    case Alu.XOR:
      return a ^ b;
    case Alu.LSH:
      return b < BigInt(w) ? (a << b) & m : null;
    case Alu.RSH:
      return b < BigInt(w) ? a >> b : null;
    case Alu.ARSH:
      return b < BigInt(w) ? (toSigned(a, w) >> b) & m : null;
    case Alu.DIV:
    case Alu.MOD:
      // the kernel keeps no bounds for division: neither do we (same verdicts)
      void signedDivMod;
      return null;
  }
  return null;
}

/** The alu family's methods, installed on `Verifier`'s prototype (verifier.ts). */
export const aluChecks = { alu, pointerAlu, ldImm64 };
