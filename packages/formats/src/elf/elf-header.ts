import { FormatError } from '../errors.js';
import { ByteView } from './byte-view.js';

/** `e_machine` of eBPF objects (`EM_BPF`). */
export const EM_BPF = 247;

/** `e_type` values (`ET_*`). BPF objects from clang are `ET_REL`. */
export const ElfType = { None: 0, Rel: 1, Exec: 2, Dyn: 3, Core: 4 } as const;
export type ElfType = (typeof ElfType)[keyof typeof ElfType];

/** The ELF64 file header (`Elf64_Ehdr`), 64 bytes. */
export interface ElfHeader {
  /** `EI_DATA`: `ELFDATA2LSB` (1) → true, `ELFDATA2MSB` (2) → false. */
  littleEndian: boolean;
  /** `e_type` (`ET_REL` = 1 for clang output). */
  type: number;
  /** `e_machine`, always {@link EM_BPF} after decoding. */
  machine: number;
  /** `e_flags`. */
  flags: number;
  /** `e_shoff`: byte offset of the section header table. */
  sectionHeaderOffset: number;
  /** `e_shentsize`. */
  sectionHeaderSize: number;
  /** `e_shnum`. */
  sectionCount: number;
  /** `e_shstrndx`: index of the section holding section names. */
  sectionNamesIndex: number;
}

export const ELF64_HEADER_SIZE = 64;
export const ELF64_SECTION_HEADER_SIZE = 64;

/**
 * Decodes `Elf64_Ehdr`. Rejects anything that is not a 64-bit eBPF ELF: a wrong magic is
 * `malformed`, ELF32 or another machine is `unsupported`.
 */
export function decodeElfHeader(bytes: Uint8Array): ElfHeader {
  if (bytes.length < 16) {
    throw new FormatError('truncated', `elf header: ${bytes.length} bytes, need at least 64`, { byteOffset: 0 });
  }
  if (bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
    throw new FormatError('malformed', 'elf header: bad magic, want 7f 45 4c 46', { byteOffset: 0 });
  }
  const elfClass = bytes[4];
  if (elfClass === 1) {
    throw new FormatError('unsupported', 'elf header: class 1 (ELF32) is not supported, BPF objects are ELF64', { byteOffset: 4 });
  }
  if (elfClass !== 2) throw new FormatError('malformed', `elf header: unknown class ${elfClass}`, { byteOffset: 4 });
  const data = bytes[5];
  if (data !== 1 && data !== 2) throw new FormatError('malformed', `elf header: unknown data encoding ${data}`, { byteOffset: 5 });
  if (bytes[6] !== 1) throw new FormatError('unsupported', `elf header: version ${bytes[6]} is not 1`, { byteOffset: 6 });
  const v = new ByteView(bytes, data === 1, 'input');
  v.need(0, ELF64_HEADER_SIZE, 'elf header');
  const machine = v.u16(18);
  if (machine !== EM_BPF) {
    throw new FormatError('unsupported', `elf header: machine ${machine} is not EM_BPF (${EM_BPF})`, { byteOffset: 18 });
  }
  const header: ElfHeader = {
    littleEndian: data === 1,
    type: v.u16(16),
    machine,
    flags: v.u32(48),
    sectionHeaderOffset: v.u64(40, 'e_shoff'),
    sectionHeaderSize: v.u16(58),
    sectionCount: v.u16(60),
    sectionNamesIndex: v.u16(62),
  };
  if (header.type !== ElfType.Rel) {
    throw new FormatError('unsupported', `elf header: type ${header.type} is not ET_REL (1)`, { byteOffset: 16 });
  }
  if (header.sectionCount === 0 && header.sectionHeaderOffset !== 0) {
    throw new FormatError('unsupported', 'elf header: extended section numbering (e_shnum 0) is not supported', { byteOffset: 60 });
  }
  if (header.sectionCount !== 0 && header.sectionHeaderSize !== ELF64_SECTION_HEADER_SIZE) {
    throw new FormatError('malformed', `elf header: section header size ${header.sectionHeaderSize}, want ${ELF64_SECTION_HEADER_SIZE}`, { byteOffset: 58 });
  }
  if (header.sectionNamesIndex === 0xffff) {
    throw new FormatError('unsupported', 'elf header: extended section name index (SHN_XINDEX) is not supported', { byteOffset: 62 });
  }
  return header;
}
