import { FormatError } from '../errors.js';
import { ByteView } from './byte-view.js';
import { type ElfSection, SectionType, stringAt } from './elf-section.js';

/** `ELF64_ST_TYPE(st_info)` values (`STT_*`). */
export const SymbolType = { NoType: 0, Object: 1, Func: 2, Section: 3, File: 4 } as const;
export type SymbolType = (typeof SymbolType)[keyof typeof SymbolType];

/** `ELF64_ST_BIND(st_info)` values (`STB_*`). */
export const SymbolBinding = { Local: 0, Global: 1, Weak: 2 } as const;
export type SymbolBinding = (typeof SymbolBinding)[keyof typeof SymbolBinding];

/** Special `st_shndx` values (`SHN_*`). */
export const SpecialSection = { Undef: 0, Abs: 0xfff1, Common: 0xfff2, Xindex: 0xffff } as const;

/** One `Elf64_Sym`. */
export interface ElfSymbol {
  /** Index in `.symtab` (relocations refer to it). */
  index: number;
  name: string;
  /** `st_value`: for a defined symbol of a relocatable object, the byte offset in its section. */
  value: number;
  /** `st_size` in bytes. */
  size: number;
  /** `STT_*`. */
  type: number;
  /** `STB_*`. */
  binding: number;
  /** `ELF64_ST_VISIBILITY(st_other)`: 0 default, 1 internal, 2 hidden, 3 protected. */
  visibility: number;
  /** `st_shndx`: the section index, or a `SHN_*` value. */
  sectionIndex: number;
  /** Name of the section when `sectionIndex` is a real section. */
  section: string | undefined;
  /** Where this `Elf64_Sym` entry is in the file (for errors about the symbol). */
  entryByteOffset: number;
}

const SYMBOL_SIZE = 24;

/** Decodes `.symtab` (the one `SHT_SYMTAB`); an object without one has no symbols. */
export function decodeSymbols(sections: readonly ElfSection[], littleEndian: boolean): ElfSymbol[] {
  const tables = sections.filter((s) => s.type === SectionType.Symtab);
  if (tables.length === 0) return [];
  if (tables.length > 1) {
    throw new FormatError('unsupported', `symbols: ${tables.length} symbol tables, want one`, { byteOffset: tables[1]?.byteOffset });
  }
  const symtab = tables[0] as ElfSection;
  if (symtab.entrySize !== SYMBOL_SIZE || symtab.size % SYMBOL_SIZE !== 0) {
    throw new FormatError('malformed', `symbols: entry size ${symtab.entrySize}, section size ${symtab.size}, want multiples of ${SYMBOL_SIZE}`, {
      byteOffset: symtab.byteOffset,
      section: symtab.name,
    });
  }
  const strtab = sections[symtab.link];
  if (strtab === undefined || strtab.type !== SectionType.Strtab) {
    throw new FormatError('malformed', `symbols: sh_link ${symtab.link} is not a string table`, {
      byteOffset: symtab.byteOffset,
      section: symtab.name,
    });
  }
  const v = new ByteView(symtab.data, littleEndian, symtab.name, symtab.byteOffset);
  const count = symtab.size / SYMBOL_SIZE;
  const symbols: ElfSymbol[] = [];
  for (let index = 0; index < count; index++) {
    const at = index * SYMBOL_SIZE;
    const info = v.u8(at + 4);
    const sectionIndex = v.u16(at + 6);
    const isReal = sectionIndex !== SpecialSection.Undef && sectionIndex < 0xff00;
    if (isReal && sectionIndex >= sections.length) {
      throw new FormatError('out-of-range', `symbol ${index}: section index ${sectionIndex} past ${sections.length} sections`, {
        byteOffset: symtab.byteOffset + at + 6,
        section: symtab.name,
      });
    }
    if (sectionIndex === SpecialSection.Xindex) {
      throw new FormatError('unsupported', `symbol ${index}: extended section index (SHN_XINDEX) is not supported`, {
        byteOffset: symtab.byteOffset + at + 6,
        section: symtab.name,
      });
    }
    let name = stringAt(strtab, v.u32(at), `symbol ${index} name`);
    // A section symbol has no name of its own; tools print its section's name.
    if (name === '' && (info & 0xf) === SymbolType.Section && isReal) name = sections[sectionIndex]?.name ?? '';
    symbols.push({
      index,
      name,
      value: v.u64(at + 8, `symbol ${index} st_value`),
      size: v.u64(at + 16, `symbol ${index} st_size`),
      type: info & 0xf,
      binding: info >> 4,
      visibility: v.u8(at + 5) & 0x3,
      sectionIndex,
      section: isReal ? sections[sectionIndex]?.name : undefined,
      entryByteOffset: symtab.byteOffset + at,
    });
  }
  return symbols;
}
