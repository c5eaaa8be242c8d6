import { FormatError } from '../errors.js';
import { cString, type ByteView } from './byte-view.js';
import { ELF64_SECTION_HEADER_SIZE, type ElfHeader } from './elf-header.js';

/** `sh_type` values (`SHT_*`) that BPF objects use. */
export const SectionType = {
  Null: 0,
  Progbits: 1,
  Symtab: 2,
  Strtab: 3,
  Rela: 4,
  Nobits: 8,
  Rel: 9,
  LlvmAddrsig: 0x6fff4c03,
} as const;
export type SectionType = (typeof SectionType)[keyof typeof SectionType];

/** `sh_flags` bits (`SHF_*`). */
export const SectionFlags = { Write: 0x1, Alloc: 0x2, ExecInstr: 0x4, Merge: 0x10, Strings: 0x20 } as const;

/** One section header (`Elf64_Shdr`) with its name and contents. */
export interface ElfSection {
  index: number;
  /** From the section-name string table (`e_shstrndx`). */
  name: string;
  /** `sh_type`. */
  type: number;
  /** `sh_flags` (low 32 bits; the high bits carry nothing for BPF). */
  flags: number;
  /** `sh_offset`: where the contents start in the file. */
  byteOffset: number;
  /** `sh_size`: for `SHT_NOBITS` (.bss) this is the size in memory, with no bytes in the file. */
  size: number;
  /** `sh_link`. */
  link: number;
  /** `sh_info`: for REL/RELA the index of the section relocated. */
  info: number;
  /** `sh_addralign`. */
  addrAlign: number;
  /** `sh_entsize`. */
  entrySize: number;
  /** The contents, sharing memory with the input; empty for `SHT_NOBITS`. */
  data: Uint8Array;
}

/** True for a section that holds BPF instructions (`SHF_EXECINSTR` and `SHT_PROGBITS`). */
export function isExecutableSection(s: ElfSection): boolean {
  return s.type === SectionType.Progbits && (s.flags & SectionFlags.ExecInstr) !== 0;
}

/** Decodes the section header table and the section names. */
export function decodeSections(v: ByteView, header: ElfHeader): ElfSection[] {
  const { sectionCount, sectionHeaderOffset } = header;
  if (sectionCount === 0) return [];
  v.need(sectionHeaderOffset, sectionCount * ELF64_SECTION_HEADER_SIZE, `section headers (${sectionCount})`);
  const sections: ElfSection[] = [];
  const nameOffsets: number[] = [];
  for (let index = 0; index < sectionCount; index++) {
    const at = sectionHeaderOffset + index * ELF64_SECTION_HEADER_SIZE;
    const type = v.u32(at + 4);
    const [flagsLo] = v.u64Halves(at + 8);
    const byteOffset = v.u64(at + 24, `section ${index} sh_offset`);
    const size = v.u64(at + 32, `section ${index} sh_size`);
    let data: Uint8Array = new Uint8Array(0);
    if (type !== SectionType.Nobits && type !== SectionType.Null) {
      if (byteOffset + size > v.length) {
        throw new FormatError(
          'out-of-range',
          `section ${index}: contents at ${byteOffset} size ${size} end past the file (${v.length} bytes)`,
          { byteOffset: at + 24 },
        );
      }
      data = v.bytes.subarray(byteOffset, byteOffset + size);
    }
    nameOffsets.push(v.u32(at));
    sections.push({
      index,
      name: '',
      type,
      flags: flagsLo,
      byteOffset,
      size,
      link: v.u32(at + 40),
      info: v.u32(at + 44),
      addrAlign: v.u64(at + 48, `section ${index} sh_addralign`),
      entrySize: v.u64(at + 56, `section ${index} sh_entsize`),
      data,
    });
  }
  const names = sections[header.sectionNamesIndex];
  if (names === undefined || names.type !== SectionType.Strtab) {
    throw new FormatError('malformed', `section names: e_shstrndx ${header.sectionNamesIndex} is not a string table`, {
      byteOffset: 62,
    });
  }
  for (const s of sections) {
    s.name = stringAt(names, nameOffsets[s.index] ?? 0, `section ${s.index} name`);
  }
  return sections;
}

/** A NUL-terminated string of a `SHT_STRTAB` section; `out-of-range` / `malformed` otherwise. */
export function stringAt(table: ElfSection, offset: number, what: string): string {
  if (offset >= table.data.length) {
    if (offset === 0) return '';
    throw new FormatError('out-of-range', `${what}: string offset ${offset} past ${table.name || 'string table'} (${table.data.length} bytes)`, {
      byteOffset: table.byteOffset,
      section: table.name,
    });
  }
  const s = cString(table.data, offset);
  if (s === undefined) {
    throw new FormatError('malformed', `${what}: string at offset ${offset} is not NUL-terminated`, {
      byteOffset: table.byteOffset + offset,
      section: table.name,
    });
  }
  return s;
}
