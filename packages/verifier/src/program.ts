import { VerifierError } from './errors.js';

/** The kernel's limit on instructions in one program (`BPF_COMPLEXITY_LIMIT_INSNS`). */
export const MAX_PROGRAM_INSNS = 1_000_000;

/**
 * A program predecoded into struct-of-arrays form, one slot per 8-byte instruction (an `lddw`
 * takes two slots, as instruction indices do in the kernel's log).
 */
export interface Program {
  readonly length: number;
  readonly opcode: Uint8Array;
  readonly dst: Uint8Array;
  readonly src: Uint8Array;
  readonly off: Int16Array;
  readonly imm: Int32Array;
}

/** Decodes raw little-endian eBPF instructions (`struct bpf_insn[]`). */
export function decodeProgram(bytes: Uint8Array): Program {
  if (bytes.length === 0) throw new VerifierError('malformed', 'decode program: no instructions');
  if (bytes.length % 8 !== 0) {
    throw new VerifierError(
      'truncated',
      `decode program: ${bytes.length} bytes is not a whole number of 8-byte instructions`,
      { byteOffset: bytes.length - (bytes.length % 8) },
    );
  }
  const length = bytes.length / 8;
  if (length > MAX_PROGRAM_INSNS) {
    throw new VerifierError(
      'out-of-range',
      `decode program: ${length} instructions is more than the limit of ${MAX_PROGRAM_INSNS}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const program: Program = {
    length,
    opcode: new Uint8Array(length),
    dst: new Uint8Array(length),
    src: new Uint8Array(length),
    off: new Int16Array(length),
    imm: new Int32Array(length),
  };
  for (let i = 0; i < length; i++) {
    const p = i * 8;
    program.opcode[i] = view.getUint8(p);
    const regs = view.getUint8(p + 1);
    program.dst[i] = regs & 0x0f;
    program.src[i] = regs >> 4;
    program.off[i] = view.getInt16(p + 2, true);
    program.imm[i] = view.getInt32(p + 4, true);
  }
  return program;
}

/** One instruction as plain fields (for building programs in code and tests). */
export interface RawInsn {
  opcode: number;
  dst?: number;
  src?: number;
  off?: number;
  imm?: number;
}

/** Encodes plain instruction fields to raw little-endian bytes. */
export function encodeInsns(insns: readonly RawInsn[]): Uint8Array {
  const bytes = new Uint8Array(insns.length * 8);
  const view = new DataView(bytes.buffer);
  insns.forEach((insn, i) => {
    const p = i * 8;
    view.setUint8(p, insn.opcode & 0xff);
    view.setUint8(p + 1, ((insn.src ?? 0) << 4) | ((insn.dst ?? 0) & 0x0f));
    view.setInt16(p + 2, insn.off ?? 0, true);
    view.setInt32(p + 4, insn.imm ?? 0, true);
  });
  return bytes;
}

/** Parses hex text (whitespace, `0x` and `#`/`//` comments ignored) into instruction bytes. */
export function parseHexProgram(text: string): Uint8Array {
  const digits = text
    .split('\n')
    .map((line) => line.replace(/(#|\/\/).*$/, ''))
    .join(' ')
    .replace(/0x/gi, '')
    .replace(/[\s,]+/g, '');
  if (!/^[0-9a-fA-F]*$/.test(digits)) {
    throw new VerifierError('malformed', 'parse hex program: characters other than hex digits');
  }
  if (digits.length % 2 !== 0) {
    throw new VerifierError('truncated', 'parse hex program: odd number of hex digits');
  }
  const bytes = new Uint8Array(digits.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(digits.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
