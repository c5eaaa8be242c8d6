import { FormatError } from '../errors.js';
import { ByteView } from './byte-view.js';
import { decodeElfHeader, type ElfHeader } from './elf-header.js';
import { decodeRelocations, type ElfRelocation } from './elf-relocation.js';
import { decodeSections, type ElfSection } from './elf-section.js';
import { decodeSymbols, type ElfSymbol } from './elf-symbol.js';

/** A decoded eBPF ELF64 relocatable object: header, sections, symbols and relocations. */
export interface ElfFile {
  header: ElfHeader;
  littleEndian: boolean;
  sections: ElfSection[];
  symbols: ElfSymbol[];
  /** Every REL/RELA entry of the file, one normalized list tagged by type and target section. */
  relocations: ElfRelocation[];
  /** The first section with this name. */
  section(name: string): ElfSection | undefined;
  /** Relocations patching the section with this index, in file order. */
  relocationsFor(sectionIndex: number): ElfRelocation[];
  /** Symbols defined in the section with this index, in symbol-table order. */
  symbolsIn(sectionIndex: number): ElfSymbol[];
}

/**
 * Decodes an eBPF ELF64 object (little or big endian). Errors are {@link FormatError}s whose
 * messages start with the part being read ("section headers: …", "symbols: …").
 */
export function decodeElf(bytes: Uint8Array): ElfFile {
  const header = decodeElfHeader(bytes);
  const v = new ByteView(bytes, header.littleEndian, 'input');
  const sections = decodeSections(v, header);
  const symbols = decodeSymbols(sections, header.littleEndian);
  const relocations = decodeRelocations(sections, symbols, header.littleEndian);
  const byName = new Map<string, ElfSection>();
  for (const s of sections) if (!byName.has(s.name)) byName.set(s.name, s);
  const byTarget = new Map<number, ElfRelocation[]>();
  for (const r of relocations) {
    let list = byTarget.get(r.targetSectionIndex);
    if (list === undefined) byTarget.set(r.targetSectionIndex, (list = []));
    list.push(r);
  }
  const bySection = new Map<number, ElfSymbol[]>();
  for (const sym of symbols) {
    let list = bySection.get(sym.sectionIndex);
    if (list === undefined) bySection.set(sym.sectionIndex, (list = []));
    list.push(sym);
  }
  return {
    header,
    littleEndian: header.littleEndian,
    sections,
    symbols,
    relocations,
    section: (name) => byName.get(name),
    relocationsFor: (index) => byTarget.get(index) ?? [],
    symbolsIn: (index) => bySection.get(index) ?? [],
  };
}

/** `decodeElf` with every error prefixed "read elf: ". */
export function readElf(bytes: Uint8Array): ElfFile {
  try {
    return decodeElf(bytes);
  } catch (e) {
    if (e instanceof FormatError) throw e.withPrefix('read elf');
    throw e;
  }
}
