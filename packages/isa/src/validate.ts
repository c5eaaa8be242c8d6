import { IsaError, type IsaErrorCode } from './errors.js';
import type { InstructionFields } from './instruction.js';
import { AluOp, AtomicOp, atomicFetch, CallSource, classMask, InsnClass, JmpOp, Mode, Opcode, registerCount, Size, Source } from './opcode.js';

/** Where a problem sits, for the error message. */
export interface ValidateContext {
  insnIndex?: number;
  byteOffset?: number;
  line?: number;
  column?: number;
}

const atomicImms: ReadonlySet<number> = new Set([
  AtomicOp.add,
  AtomicOp.add | atomicFetch,
  AtomicOp.or,
  AtomicOp.or | atomicFetch,
  AtomicOp.and,
  AtomicOp.and | atomicFetch,
  AtomicOp.xor,
  AtomicOp.xor | atomicFetch,
  AtomicOp.xchg,
  AtomicOp.cmpxchg,
]);

function hex(n: number, width = 2): string {
  return `0x${(n >>> 0).toString(16).padStart(width, '0')}`;
}

// Problem builders live at module level: checkInstruction runs once per decoded instruction, so it
// must not allocate closures or messages unless something is wrong.
type Problem = { code: IsaErrorCode; message: string };

function reserved(opcode: number, field: string, value: number): Problem {
  return { code: 'reserved-field', message: `reserved field: opcode ${hex(opcode)} needs ${field} 0, got ${value}` };
}

function unknown(opcode: number): Problem {
  return { code: 'unknown-opcode', message: `unknown opcode: ${hex(opcode)}` };
}

function invalid(opcode: number, message: string): Problem {
  return { code: 'invalid-field', message: `invalid field: opcode ${hex(opcode)} ${message}` };
}

function regCheck(opcode: number, name: string, r: number): Problem | undefined {
  if (Number.isInteger(r) && r >= 0 && r < registerCount) return undefined;
  return { code: 'invalid-register', message: `invalid register: opcode ${hex(opcode)} ${name} r${r} (registers are r0-r10)` };
}

/**
 * Checks that the fields form a valid RFC 9669 instruction (plus `callx`): a known opcode, registers in
 * range, every reserved field zero, and the field values each opcode allows. Throws {@link IsaError}
 * (`unknown-opcode`, `reserved-field`, `invalid-field`, `invalid-register`) otherwise.
 */
export function validateInstruction(insn: InstructionFields, ctx: ValidateContext = {}): void {
  const problem = checkInstruction(insn);
  if (problem) throw new IsaError(problem.code, problem.message, ctx);
}

/** As {@link validateInstruction}, returning the problem instead of throwing (undefined when valid). */
export function checkInstruction(insn: InstructionFields): Problem | undefined {
  const { opcode, dst, src, offset, imm } = insn;
  if (!Number.isInteger(opcode) || opcode < 0 || opcode > 0xff) return unknown(opcode);
  if (!Number.isInteger(offset) || offset < -0x8000 || offset > 0x7fff) return invalid(opcode, `offset ${offset} is not a signed 16-bit number`);
  if (!Number.isInteger(imm) || imm < -0x80000000 || imm > 0x7fffffff) return invalid(opcode, `imm ${imm} is not a signed 32-bit number`);
  const cls = opcode & classMask;
  switch (cls) {
    case InsnClass.alu:
    case InsnClass.alu64: {
      const aluOp = opcode & 0xf0;
      const x = (opcode & Source.reg) !== 0;
      if (aluOp > AluOp.end) return unknown(opcode);
      const d = regCheck(opcode, 'dst', dst);
      if (d) return d;
      if (aluOp === AluOp.end) {
        if (cls === InsnClass.alu64 && x) return unknown(opcode);
        if (src !== 0) return reserved(opcode, 'src', src);
        if (offset !== 0) return reserved(opcode, 'offset', offset);
        if (imm !== 16 && imm !== 32 && imm !== 64) return invalid(opcode, `byte swap width ${imm} (must be 16, 32 or 64)`);
        return undefined;
      }
      if (aluOp === AluOp.neg) {
        if (x) return unknown(opcode);
        if (src !== 0) return reserved(opcode, 'src', src);
        if (offset !== 0) return reserved(opcode, 'offset', offset);
        if (imm !== 0) return reserved(opcode, 'imm', imm);
        return undefined;
      }
      if (x) {
        const s = regCheck(opcode, 'src', src);
        if (s) return s;
        if (imm !== 0) return reserved(opcode, 'imm', imm);
      } else if (src !== 0) return reserved(opcode, 'src', src);
      if (aluOp === AluOp.div || aluOp === AluOp.mod) {
        if (offset !== 0 && offset !== 1) return invalid(opcode, `offset ${offset} (0 unsigned, 1 signed)`);
      } else if (aluOp === AluOp.mov && x) {
        const ok = offset === 0 || offset === 8 || offset === 16 || (offset === 32 && cls === InsnClass.alu64);
        if (!ok) return invalid(opcode, `offset ${offset} (movsx takes 8, 16${cls === InsnClass.alu64 ? ' or 32' : ''})`);
      } else if (offset !== 0) return reserved(opcode, 'offset', offset);
      return undefined;
    }
    case InsnClass.jmp:
    case InsnClass.jmp32: {
      const jmpOp = opcode & 0xf0;
      const x = (opcode & Source.reg) !== 0;
      if (jmpOp > JmpOp.jsle) return unknown(opcode);
      if (jmpOp === JmpOp.ja) {
        if (x) return unknown(opcode);
        if (dst !== 0) return reserved(opcode, 'dst', dst);
        if (src !== 0) return reserved(opcode, 'src', src);
        if (cls === InsnClass.jmp && imm !== 0) return reserved(opcode, 'imm', imm);
        if (cls === InsnClass.jmp32 && offset !== 0) return reserved(opcode, 'offset', offset);
        return undefined;
      }
      if (jmpOp === JmpOp.call) {
        if (cls === InsnClass.jmp32) return unknown(opcode);
        if (offset !== 0) return reserved(opcode, 'offset', offset);
        if (x) {
          const d = regCheck(opcode, 'dst', dst);
          if (d) return d;
          if (src !== 0) return reserved(opcode, 'src', src);
          if (imm !== 0) return reserved(opcode, 'imm', imm);
          return undefined;
        }
        if (dst !== 0) return reserved(opcode, 'dst', dst);
        if (src !== CallSource.helper && src !== CallSource.local && src !== CallSource.btfId)
          return invalid(opcode, `call source ${src} (0 helper, 1 local function, 2 btf id)`);
        return undefined;
      }
      if (jmpOp === JmpOp.exit) {
        if (cls === InsnClass.jmp32 || x) return unknown(opcode);
        if (dst !== 0) return reserved(opcode, 'dst', dst);
        if (src !== 0) return reserved(opcode, 'src', src);
        if (offset !== 0) return reserved(opcode, 'offset', offset);
        if (imm !== 0) return reserved(opcode, 'imm', imm);
        return undefined;
      }
      const d = regCheck(opcode, 'dst', dst);
      if (d) return d;
      if (x) {
        const s = regCheck(opcode, 'src', src);
        if (s) return s;
        if (imm !== 0) return reserved(opcode, 'imm', imm);
      } else if (src !== 0) return reserved(opcode, 'src', src);
      return undefined;
    }
    case InsnClass.ld: {
      const mode = opcode & 0xe0;
      const size = opcode & 0x18;
      if (opcode === Opcode.lddw) {
        const d = regCheck(opcode, 'dst', dst);
        if (d) return d;
        if (src > 6 || src < 0) return invalid(opcode, `pseudo source ${src} (0-6)`);
        if (offset !== 0) return reserved(opcode, 'offset', offset);
        const hi = insn.immHi ?? 0;
        if (!Number.isInteger(hi) || hi < -0x80000000 || hi > 0x7fffffff) return invalid(opcode, `immHi ${hi} is not a signed 32-bit number`);
        return undefined;
      }
      if ((mode === Mode.abs || mode === Mode.ind) && size !== Size.dw) {
        if (dst !== 0) return reserved(opcode, 'dst', dst);
        if (offset !== 0) return reserved(opcode, 'offset', offset);
        if (mode === Mode.abs) {
          if (src !== 0) return reserved(opcode, 'src', src);
        } else {
          const s = regCheck(opcode, 'src', src);
          if (s) return s;
        }
        return undefined;
      }
      return unknown(opcode);
    }
    case InsnClass.ldx: {
      const mode = opcode & 0xe0;
      const size = opcode & 0x18;
      if (mode !== Mode.mem && !(mode === Mode.memsx && size !== Size.dw)) return unknown(opcode);
      const d = regCheck(opcode, 'dst', dst) ?? regCheck(opcode, 'src', src);
      if (d) return d;
      if (imm !== 0) return reserved(opcode, 'imm', imm);
      return undefined;
    }
    case InsnClass.st: {
      const mode = opcode & 0xe0;
      if (mode !== Mode.mem) return unknown(opcode);
      const d = regCheck(opcode, 'dst', dst);
      if (d) return d;
      if (src !== 0) return reserved(opcode, 'src', src);
      return undefined;
    }
    default: {
      // InsnClass.stx
      const mode = opcode & 0xe0;
      const size = opcode & 0x18;
      const d = regCheck(opcode, 'dst', dst) ?? regCheck(opcode, 'src', src);
      if (mode === Mode.mem) {
        if (d) return d;
        if (imm !== 0) return reserved(opcode, 'imm', imm);
        return undefined;
      }
      if (mode === Mode.atomic && (size === Size.w || size === Size.dw)) {
        if (d) return d;
        if (!atomicImms.has(imm)) return invalid(opcode, `atomic operation ${hex(imm)}`);
        return undefined;
      }
      return unknown(opcode);
    }
  }
}
