import { IsaError } from './errors.js';
import type { Instruction } from './instruction.js';
import { Opcode } from './opcode.js';
import { checkInstruction } from './validate.js';

/**
 * Decodes little-endian eBPF bytecode into instructions, strictly: the length must be a multiple of 8,
 * every `lddw` needs its second slot (with opcode, registers and offset zero), and every instruction must
 * pass {@link checkInstruction}. Throws {@link IsaError} with `insnIndex` and `byteOffset`.
 */
export function decode(bytes: Uint8Array): Instruction[] {
  if (bytes.length % 8 !== 0) {
    throw new IsaError('truncated', `truncated: ${bytes.length} bytes is not a multiple of 8 (${bytes.length % 8} left over)`, {
      byteOffset: bytes.length - (bytes.length % 8),
    });
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const slots = bytes.length / 8;
  const out: Instruction[] = [];
  for (let i = 0; i < slots; i++) {
    const at = i * 8;
    const opcode = view.getUint8(at);
    const regs = view.getUint8(at + 1);
    const insn: Instruction = {
      opcode,
      dst: regs & 0x0f,
      src: regs >> 4,
      offset: view.getInt16(at + 2, true),
      imm: view.getInt32(at + 4, true),
      insnIndex: i,
      byteOffset: at,
    };
    if (opcode === Opcode.lddw) {
      if (i + 1 >= slots) {
        throw new IsaError('incomplete-lddw', `incomplete lddw: the second slot is missing at byte ${at + 8} of ${bytes.length}`, {
          insnIndex: i,
          byteOffset: at,
        });
      }
      const next = at + 8;
      const op2 = view.getUint8(next);
      const regs2 = view.getUint8(next + 1);
      const off2 = view.getInt16(next + 2, true);
      if (op2 !== 0 || regs2 !== 0 || off2 !== 0) {
        throw new IsaError(
          'reserved-field',
          `reserved field: the second slot of lddw needs opcode, registers and offset 0, got opcode 0x${op2.toString(16).padStart(2, '0')}, registers 0x${regs2.toString(16).padStart(2, '0')}, offset ${off2}`,
          { insnIndex: i + 1, byteOffset: next },
        );
      }
      insn.immHi = view.getInt32(next + 4, true);
    }
    const problem = checkInstruction(insn);
    if (problem) throw new IsaError(problem.code, problem.message, { insnIndex: i, byteOffset: at });
    out.push(insn);
    if (opcode === Opcode.lddw) i++;
  }
  return out;
}
