import type { InstructionFields } from './instruction.js';
import { slotTotal } from './instruction.js';
import { Opcode } from './opcode.js';
import { validateInstruction } from './validate.js';

/**
 * Encodes instructions to little-endian bytecode (8 bytes a slot, 16 for `lddw`). Every instruction is
 * validated first (see {@link validateInstruction}); an invalid one throws {@link IsaError} naming its
 * `insnIndex`.
 */
export function encode(instructions: readonly InstructionFields[]): Uint8Array {
  const bytes = new Uint8Array(slotTotal(instructions) * 8);
  const view = new DataView(bytes.buffer);
  let at = 0;
  for (const insn of instructions) {
    validateInstruction(insn, { insnIndex: at / 8, byteOffset: at });
    view.setUint8(at, insn.opcode);
    view.setUint8(at + 1, (insn.src << 4) | insn.dst);
    view.setInt16(at + 2, insn.offset, true);
    view.setInt32(at + 4, insn.imm, true);
    at += 8;
    if (insn.opcode === Opcode.lddw) {
      view.setInt32(at + 4, insn.immHi ?? 0, true);
      at += 8;
    }
  }
  return bytes;
}
