import type { BtfSpec } from '../btf/btf-spec.js';
import type { ElfFile } from '../elf/elf-file.js';
import { type ElfSection, SectionFlags, SectionType } from '../elf/elf-section.js';
import { SymbolType } from '../elf/elf-symbol.js';
import { datasecVars, findDatasec } from './datasec.js';
import type { GlobalDataSpec, GlobalVarSpec } from './object-spec.js';

/** `.rodata`, `.rodata.*`, `.data`, `.data.*`, `.bss`, `.bss.*` → the kind of global data, else undefined. */
export function globalDataKind(sectionName: string): GlobalDataSpec['kind'] | undefined {
  for (const kind of ['rodata', 'data', 'bss'] as const) {
    if (sectionName === `.${kind}` || sectionName.startsWith(`.${kind}.`)) return kind;
  }
  return undefined;
}

function isGlobalDataSection(s: ElfSection): boolean {
  if (globalDataKind(s.name) === undefined) return false;
  if ((s.flags & SectionFlags.ExecInstr) !== 0) return false;
  return s.type === SectionType.Progbits || s.type === SectionType.Nobits;
}

/** Global data sections with their bytes and variables (from BTF DATASEC, else from symbols). */
export function loadGlobals(elf: ElfFile, btf: BtfSpec | undefined): GlobalDataSpec[] {
  const out: GlobalDataSpec[] = [];
  for (const s of elf.sections) {
    if (!isGlobalDataSection(s)) continue;
    const kind = globalDataKind(s.name) as GlobalDataSpec['kind'];
    const g: GlobalDataSpec = {
      section: s.name,
      sectionIndex: s.index,
      kind,
      readonly: kind === 'rodata' || (s.flags & SectionFlags.Write) === 0,
      size: s.size,
      bytes: s.type === SectionType.Nobits ? undefined : s.data,
      vars: [],
      btfDatasecId: undefined,
    };
    const datasec = btf === undefined ? undefined : findDatasec(btf, s.name);
    if (btf !== undefined && datasec !== undefined) {
      g.btfDatasecId = datasec.id;
      for (const v of datasecVars(elf, btf, datasec, s)) {
        g.vars.push({ name: v.name, byteOffset: v.byteOffset, size: v.size, btfVarId: v.btfVarId, typeId: v.typeId, linkage: v.linkage });
      }
    } else {
      for (const sym of elf.symbolsIn(s.index)) {
        if (sym.type !== SymbolType.Object) continue;
        const v: GlobalVarSpec = { name: sym.name, byteOffset: sym.value, size: sym.size, btfVarId: undefined, typeId: undefined, linkage: undefined };
        g.vars.push(v);
      }
    }
    g.vars.sort((a, b) => a.byteOffset - b.byteOffset);
    out.push(g);
  }
  return out;
}
