import type { BtfSpec } from '../btf/btf-spec.js';
import { FormatError } from '../errors.js';
import { ByteView } from '../elf/byte-view.js';
import type { ElfFile } from '../elf/elf-file.js';
import type { ElfSection } from '../elf/elf-section.js';
import { BpfRelocationType } from '../elf/elf-relocation.js';
import { SymbolType } from '../elf/elf-symbol.js';
import { datasecVars, findDatasec } from './datasec.js';
import { mapTypeName } from './map-type.js';
import type { MapSpec } from './object-spec.js';

const LEGACY_MAP_DEF_SIZE = 20;

function emptyMap(name: string, section: Pick<ElfSection, 'name' | 'index'>, byteOffset: number, legacy: boolean): MapSpec {
  return {
    name,
    section: section.name,
    sectionIndex: section.index,
    byteOffset,
    legacy,
    type: 0,
    typeName: mapTypeName(0),
    keySize: 0,
    valueSize: 0,
    maxEntries: 0,
    flags: 0,
    pinning: 0,
    numaNode: 0,
    mapExtra: 0,
    keyTypeId: undefined,
    valueTypeId: undefined,
    btfVarId: undefined,
    innerMap: undefined,
    initialSlots: [],
  };
}

/**
 * Legacy maps: each symbol of the `maps` section is a `struct bpf_map_def` { type, key_size,
 * value_size, max_entries, map_flags }. As libbpf does, the definition size is the section size
 * divided by the number of symbols; bytes past the known fields must be zero.
 */
export function loadLegacyMaps(elf: ElfFile): MapSpec[] {
  const section = elf.section('maps');
  if (section === undefined) return [];
  const symbols = elf.symbolsIn(section.index).filter((s) => s.type !== SymbolType.Section && s.name !== '');
  if (symbols.length === 0) return [];
  const err = (code: 'malformed' | 'out-of-range' | 'unsupported', msg: string, at = 0) =>
    new FormatError(code, msg, { byteOffset: section.byteOffset + at, section: 'maps' });
  if (section.size % symbols.length !== 0) {
    throw err('malformed', `maps section: size ${section.size} is not a multiple of ${symbols.length} map symbols`);
  }
  const defSize = section.size / symbols.length;
  if (defSize % 4 !== 0 || defSize < 4) throw err('malformed', `maps section: definition size ${defSize} is not a multiple of 4`);
  const v = new ByteView(section.data, elf.littleEndian, 'maps', section.byteOffset);
  const fields = Math.min(defSize, LEGACY_MAP_DEF_SIZE) / 4;
  return symbols.map((sym) => {
    if (sym.value % 4 !== 0 || sym.value + defSize > section.size) {
      throw new FormatError('out-of-range', `map ${sym.name}: definition at ${sym.value} size ${defSize} outside the section (${section.size} bytes)`, {
        byteOffset: sym.entryByteOffset,
        section: 'maps',
      });
    }
    for (let i = LEGACY_MAP_DEF_SIZE; i < defSize; i++) {
      if (section.data[sym.value + i] !== 0) throw err('unsupported', `map ${sym.name}: unknown non-zero definition byte ${i}`, sym.value + i);
    }
    const w = (i: number) => (i < fields ? v.u32(sym.value + i * 4) : 0);
    const m = emptyMap(sym.name, section, sym.value, true);
    m.type = w(0);
    m.typeName = mapTypeName(m.type);
    m.keySize = w(1);
    m.valueSize = w(2);
    m.maxEntries = w(3);
    m.flags = w(4);
    return m;
  });
}

/**
 * BTF-defined maps: every VAR of the `.maps` DATASEC is a struct whose members say, through
 * their types, what the map is. `__uint(name, val)` is `int (*name)[val]` (the array length is the
 * value), `__type(name, T)` is `T *name`.
 */
export function loadBtfMaps(elf: ElfFile, btf: BtfSpec | undefined): MapSpec[] {
  const section = elf.section('.maps');
  if (section === undefined) return [];
  if (btf === undefined) {
    throw new FormatError('malformed', '.maps section: BTF-defined maps need a .BTF section', { byteOffset: section.byteOffset, section: '.maps' });
  }
  const datasec = findDatasec(btf, '.maps');
  if (datasec === undefined) {
    if (section.size === 0) return [];
    throw new FormatError('malformed', '.maps section: no DATASEC .maps in BTF', { byteOffset: section.byteOffset, section: '.maps' });
  }
  const maps: MapSpec[] = [];
  const relocations = elf.relocationsFor(section.index);
  for (const v of datasecVars(elf, btf, datasec, section)) {
    const m = emptyMap(v.name, section, v.byteOffset, false);
    m.btfVarId = v.btfVarId;
    let values: ReturnType<typeof parseMapDefinition>;
    try {
      values = parseMapDefinition(btf, v.typeId, m, 0);
    } catch (e) {
      // Errors about the definition point at the map in .maps when they carry no offset of their own.
      if (e instanceof FormatError && e.byteOffset === undefined) {
        throw new FormatError(e.code, e.message, { byteOffset: section.byteOffset + v.byteOffset, section: '.maps', cause: e.cause });
      }
      throw e;
    }
    if (values !== undefined) {
      // Slot i of `values` is the pointer at byte (values offset + 8 i) of the definition.
      const start = v.byteOffset + values.byteOffset;
      for (const r of relocations) {
        if (r.byteOffset < start || r.byteOffset >= start + values.count * 8) continue;
        if ((r.byteOffset - start) % 8 !== 0 || r.type !== BpfRelocationType.Abs64) {
          throw new FormatError('malformed', `map ${m.name}: relocation ${r.typeName} at .maps+${r.byteOffset} is not a slot of values`, {
            byteOffset: section.byteOffset + r.byteOffset,
            section: '.maps',
          });
        }
        m.initialSlots.push({ index: (r.byteOffset - start) / 8, name: r.symbol.name });
      }
      m.initialSlots.sort((a, b) => a.index - b.index);
    }
    maps.push(m);
  }
  return maps;
}

/** Fills `m` from its BTF definition; returns where the `values` array lies, if the map has one. */
function parseMapDefinition(btf: BtfSpec, defTypeId: number, m: MapSpec, depth: number): { byteOffset: number; count: number } | undefined {
  let values: { byteOffset: number; count: number } | undefined;
  const def = btf.type(btf.resolve(defTypeId));
  const what = `map ${m.name || '(inner)'}`;
  if (def.kind !== 'struct') throw new FormatError('malformed', `${what}: definition is ${def.kind}, want struct`);
  let keySize: number | undefined;
  let valueSize: number | undefined;
  for (const member of def.members) {
    const ptr = btf.type(btf.resolve(member.type));
    const uintValue = (): number => {
      if (ptr.kind !== 'ptr') throw new FormatError('malformed', `${what}: field ${member.name} is ${ptr.kind}, want pointer to array (__uint)`);
      const arr = btf.type(btf.resolve(ptr.type));
      if (arr.kind !== 'array') throw new FormatError('malformed', `${what}: field ${member.name} points to ${arr.kind}, want array (__uint)`);
      return arr.nelems;
    };
    const pointee = (): number => {
      if (ptr.kind !== 'ptr') throw new FormatError('malformed', `${what}: field ${member.name} is ${ptr.kind}, want pointer (__type)`);
      return ptr.type;
    };
    switch (member.name) {
      case 'type':
        m.type = uintValue();
        m.typeName = mapTypeName(m.type);
        break;
      case 'max_entries':
        m.maxEntries = uintValue();
        break;
      case 'map_flags':
        m.flags = uintValue();
        break;
      case 'numa_node':
        m.numaNode = uintValue();
        break;
      case 'pinning':
        m.pinning = uintValue();
        break;
      case 'map_extra':
        m.mapExtra = uintValue();
        break;
      case 'key_size':
        keySize = uintValue();
        break;
      case 'value_size':
        valueSize = uintValue();
        break;
      case 'key':
        m.keyTypeId = pointee();
        m.keySize = btf.sizeOf(m.keyTypeId);
        break;
      case 'value':
        m.valueTypeId = pointee();
        m.valueSize = btf.sizeOf(m.valueTypeId);
        break;
      case 'values': {
        // __array(values, struct {...}): an array of pointers to the inner map's definition.
        const arr = btf.type(btf.resolve(member.type));
        if (arr.kind !== 'array') throw new FormatError('malformed', `${what}: field values is ${arr.kind}, want array (__array)`);
        const elem = btf.type(btf.resolve(arr.type));
        if (elem.kind !== 'ptr') throw new FormatError('malformed', `${what}: field values holds ${elem.kind}, want pointers`);
        const inner = btf.type(btf.resolve(elem.type));
        if (inner.kind === 'struct') {
          if (depth > 0) throw new FormatError('unsupported', `${what}: map-in-map nested more than one level`);
          const im = emptyMap(`${m.name}.inner`, { name: m.section, index: m.sectionIndex }, m.byteOffset, false);
          parseMapDefinition(btf, inner.id, im, depth + 1);
          m.innerMap = im;
        }
        m.valueSize = 4;
        values = { byteOffset: Math.floor(member.bitOffset / 8), count: arr.nelems === 0 ? m.maxEntries : arr.nelems };
        break;
      }
      default:
        throw new FormatError('unsupported', `${what}: unknown field ${member.name || '(anonymous)'}`);
    }
  }
  if (keySize !== undefined) {
    if (m.keyTypeId !== undefined && keySize !== m.keySize) {
      throw new FormatError('malformed', `${what}: key_size ${keySize} differs from sizeof(key) ${m.keySize}`);
    }
    m.keySize = keySize;
  }
  if (valueSize !== undefined) {
    if (m.valueTypeId !== undefined && valueSize !== m.valueSize) {
      throw new FormatError('malformed', `${what}: value_size ${valueSize} differs from sizeof(value) ${m.valueSize}`);
    }
    m.valueSize = valueSize;
  }
  return values;
}
