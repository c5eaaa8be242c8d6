import type { BtfSpec } from '../btf/btf-spec.js';
import type { BtfDatasec } from '../btf/btf-type.js';
import { FormatError } from '../errors.js';
import type { ElfFile } from '../elf/elf-file.js';
import type { ElfSection } from '../elf/elf-section.js';
import { SymbolType } from '../elf/elf-symbol.js';

/** A variable of a BTF DATASEC, placed in its ELF section. */
export interface DatasecVar {
  name: string;
  btfVarId: number;
  typeId: number;
  linkage: string;
  byteOffset: number;
  size: number;
}

/** The DATASEC of `section` in `btf`, if any. */
export function findDatasec(btf: BtfSpec, section: string): BtfDatasec | undefined {
  for (const id of btf.typeIdsByName(section)) {
    const t = btf.type(id);
    if (t.kind === 'datasec') return t;
  }
  return undefined;
}

/**
 * The variables of a DATASEC with their offsets. Clang leaves DATASEC offsets (and sizes) at 0
 * in objects; as libbpf does, each variable's offset is taken from the ELF symbol of the same
 * name in that section, and must lie inside the section.
 */
export function datasecVars(elf: ElfFile, btf: BtfSpec, datasec: BtfDatasec, section: ElfSection): DatasecVar[] {
  const symbols = new Map<string, { value: number; entryByteOffset: number }>();
  for (const sym of elf.symbolsIn(section.index)) {
    if ((sym.type === SymbolType.Object || sym.type === SymbolType.NoType) && sym.name !== '') {
      symbols.set(sym.name, sym);
    }
  }
  const at = btf.recordAt(datasec.id);
  return datasec.vars.map((vi) => {
    const v = btf.type(vi.type);
    if (v.kind !== 'var') throw new FormatError('malformed', `datasec ${section.name}: entry type ${vi.type} is ${v.kind}, want var`, { ...at, section: section.name });
    const sym = symbols.get(v.name);
    const byteOffset = sym?.value ?? (vi.byteOffset !== 0 ? vi.byteOffset : undefined);
    if (byteOffset === undefined) {
      throw new FormatError('not-found', `datasec ${section.name}: no symbol for variable ${v.name}`, { ...at, section: section.name });
    }
    if (byteOffset + vi.size > section.size) {
      throw new FormatError('out-of-range', `variable ${v.name}: at ${byteOffset} size ${vi.size} past ${section.name} (${section.size} bytes)`, {
        byteOffset: sym?.entryByteOffset ?? at.byteOffset,
        section: section.name,
      });
    }
    return { name: v.name, btfVarId: v.id, typeId: v.type, linkage: v.linkage, byteOffset, size: vi.size };
  });
}
