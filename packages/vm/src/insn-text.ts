import { formatInstruction } from '@probeyard/isa';

/**
 * Text of one instruction for diagnostics and faults: packages/isa's disassembly (LLVM syntax)
 * followed by the raw bytes, or only the bytes when the disassembler refuses them.
 */
export function formatInsn(bytes: Uint8Array, insnIndex: number): string {
  const start = insnIndex * 8;
  if (start < 0 || start + 8 > bytes.length) return '?';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const opcode = bytes[start] as number;
  const isLddw = opcode === 0x18 && start + 16 <= bytes.length;
  const parts: string[] = [];
  for (let i = start; i < start + 8; i++) parts.push((bytes[i] as number).toString(16).padStart(2, '0'));
  const hex = parts.join(' ');
  try {
    const regs = bytes[start + 1] as number;
    const text = formatInstruction({
      opcode,
      dst: regs & 0x0f,
      src: regs >> 4,
      offset: view.getInt16(start + 2, true),
      imm: view.getInt32(start + 4, true),
      ...(isLddw ? { immHi: view.getInt32(start + 12, true) } : {}),
    });
    return `${text}; ${hex}`;
  } catch {
    return hex;
  }
}
