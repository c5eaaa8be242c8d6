import { FormatError } from '../errors.js';
import { ByteView } from './byte-view.js';
import { type ElfSection, SectionType } from './elf-section.js';
import type { ElfSymbol } from './elf-symbol.js';

/** eBPF relocation types (`R_BPF_*`, from LLVM's `ELFRelocs/BPF.def`). */
export const BpfRelocationType = {
  /** `R_BPF_NONE` */
  None: 0,
  /** `R_BPF_64_64`: 64-bit immediate of `ld_imm64` (map, global data, subprogram address). */
  Imm64: 1,
  /** `R_BPF_64_ABS64`: absolute 64-bit data (.BTF, .BTF.ext, .maps initial values, debug info). */
  Abs64: 2,
  /** `R_BPF_64_ABS32`: absolute 32-bit data (DWARF). */
  Abs32: 3,
  /** `R_BPF_64_NODYLD32`: 32-bit data not resolved at load (.BTF / .BTF.ext offsets). */
  NoDyld32: 4,
  /** `R_BPF_64_32`: 32-bit immediate of a `call` to a BPF function (pc-relative in insns). */
  Call32: 10,
} as const;
export type BpfRelocationType = (typeof BpfRelocationType)[keyof typeof BpfRelocationType];

const relocationNames: Record<number, string> = {
  0: 'R_BPF_NONE',
  1: 'R_BPF_64_64',
  2: 'R_BPF_64_ABS64',
  3: 'R_BPF_64_ABS32',
  4: 'R_BPF_64_NODYLD32',
  10: 'R_BPF_64_32',
};

/** The LLVM name of a relocation type (`R_BPF_64_64`), or `R_BPF_<n>` for an unknown one. */
export function relocationTypeName(type: number): string {
  return relocationNames[type] ?? `R_BPF_${type}`;
}

/** One `Elf64_Rel` / `Elf64_Rela` entry, normalized; every entry of every REL/RELA section. */
export interface ElfRelocation {
  /** Index and name of the section whose bytes are patched (`sh_info` of the REL section). */
  targetSectionIndex: number;
  targetSection: string;
  /** `r_offset`: byte offset inside the target section. */
  byteOffset: number;
  /** `ELF64_R_TYPE(r_info)`, a {@link BpfRelocationType}. */
  type: number;
  /** `R_BPF_64_64` etc. */
  typeName: string;
  /** `ELF64_R_SYM(r_info)`. */
  symbol: ElfSymbol;
  /** `r_addend` for RELA; 0 for REL (BPF uses REL: the addend is in the patched bytes). */
  addend: number;
}

/** Decodes every `SHT_REL` / `SHT_RELA` section into one list, in section order. */
export function decodeRelocations(
  sections: readonly ElfSection[],
  symbols: readonly ElfSymbol[],
  littleEndian: boolean,
): ElfRelocation[] {
  const out: ElfRelocation[] = [];
  for (const s of sections) {
    if (s.type !== SectionType.Rel && s.type !== SectionType.Rela) continue;
    const rela = s.type === SectionType.Rela;
    const entrySize = rela ? 24 : 16;
    if (s.size % entrySize !== 0) {
      throw new FormatError('malformed', `relocations ${s.name}: size ${s.size} is not a multiple of ${entrySize}`, {
        byteOffset: s.byteOffset,
        section: s.name,
      });
    }
    const target = sections[s.info];
    if (target === undefined || s.info === 0) {
      throw new FormatError('out-of-range', `relocations ${s.name}: target section ${s.info} does not exist`, {
        byteOffset: s.byteOffset,
        section: s.name,
      });
    }
    const v = new ByteView(s.data, littleEndian, s.name, s.byteOffset);
    for (let at = 0; at < s.size; at += entrySize) {
      const byteOffset = v.u64(at, `relocation at ${at} r_offset`);
      const [type, symIndex] = v.u64Halves(at + 8, `relocation at ${at} r_info`);
      const symbol = symbols[symIndex];
      if (symbol === undefined) {
        throw new FormatError('out-of-range', `relocations ${s.name}: symbol ${symIndex} past ${symbols.length} symbols`, {
          byteOffset: s.byteOffset + at + 8,
          section: s.name,
        });
      }
      const patchSize = type === BpfRelocationType.Imm64 ? 16 : type === BpfRelocationType.Abs64 || type === BpfRelocationType.Call32 ? 8 : 4;
      if (target.type !== SectionType.Nobits && byteOffset + patchSize > target.size) {
        throw new FormatError('out-of-range', `relocations ${s.name}: offset ${byteOffset} past ${target.name} (${target.size} bytes)`, {
          byteOffset: s.byteOffset + at,
          section: s.name,
        });
      }
      let addend = 0;
      if (rela) {
        const [lo, hi] = v.u64Halves(at + 16);
        addend = hi * 0x1_0000_0000 + lo;
        if (hi >= 0x80000000) addend = (hi - 0x1_0000_0000) * 0x1_0000_0000 + lo;
      }
      out.push({
        targetSectionIndex: target.index,
        targetSection: target.name,
        byteOffset,
        type,
        typeName: relocationTypeName(type),
        symbol,
        addend,
      });
    }
  }
  return out;
}
