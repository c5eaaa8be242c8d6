import { type BtfExt, readBtfExt } from '../btf/btf-ext.js';
import { type BtfSpec, readBtf } from '../btf/btf-spec.js';
import { resolveCoreAccess } from '../btf/core-access.js';
import { FormatError } from '../errors.js';
import { readElf } from '../elf/elf-file.js';
import { cString } from '../elf/byte-view.js';
import type { ElfFile } from '../elf/elf-file.js';
import { loadGlobals } from './globals.js';
import { loadBtfMaps, loadLegacyMaps } from './maps.js';
import type { MapSpec, ObjectCoreRelocation, ObjectSpec, ProgramSpec } from './object-spec.js';
import { loadProgramRelocations, loadPrograms, ProgramIndex } from './programs.js';

const INSN_SIZE = 8;

/** Runs one named phase; a `FormatError` from it gets the phase as prefix ("load maps: …"). */
function phase<T>(name: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof FormatError) throw e.withPrefix(name);
    throw e;
  }
}

function loadLicense(elf: ElfFile): string | undefined {
  const s = elf.section('license');
  if (s === undefined) return undefined;
  const text = cString(s.data, 0);
  if (text === undefined) throw new FormatError('malformed', `license section: ${s.size} bytes without a NUL`, { byteOffset: s.byteOffset, section: 'license' });
  return text;
}

function loadVersion(elf: ElfFile): number | undefined {
  const s = elf.section('version');
  if (s === undefined) return undefined;
  if (s.size !== 4) throw new FormatError('malformed', `version section: ${s.size} bytes, want 4`, { byteOffset: s.byteOffset, section: 'version' });
  // a section typed NULL or NOBITS has an sh_size and no bytes in the file
  if (s.data.length !== 4) throw new FormatError('malformed', `version section: no contents (section type ${s.type}), want 4 bytes`, { byteOffset: s.byteOffset, section: 'version' });
  return new DataView(s.data.buffer, s.data.byteOffset, 4).getUint32(0, elf.littleEndian);
}

/** Attaches func info, line info and CO-RE relocations of `.BTF.ext` to their programs. */
function placeBtfExt(elf: ElfFile, btf: BtfSpec, ext: BtfExt, index: ProgramIndex, extByteOffset: number): ObjectCoreRelocation[] {
  const locate = (name: string, byteOffset: number, what: string) => {
    const s = elf.section(name);
    if (s === undefined) throw new FormatError('not-found', `${what}: section ${name} is not in the object`, { byteOffset: extByteOffset, section: '.BTF.ext' });
    const at = { byteOffset: s.byteOffset + Math.min(byteOffset, s.size), section: name };
    if (byteOffset % INSN_SIZE !== 0) throw new FormatError('malformed', `${what} at ${name}+${byteOffset}: not on an instruction boundary`, at);
    const p = index.at(s.index, byteOffset);
    if (p === undefined) throw new FormatError('out-of-range', `${what} at ${name}+${byteOffset}: outside any function`, at);
    return { program: p, insnIndex: (byteOffset - p.byteOffset) / INSN_SIZE };
  };
  for (const sec of ext.funcInfo) {
    for (const r of sec.records) {
      const { program, insnIndex } = locate(sec.section, r.byteOffset, 'func info');
      if (insnIndex === 0) program.funcTypeId = r.typeId;
    }
  }
  for (const sec of ext.lineInfo) {
    for (const r of sec.records) {
      const { program, insnIndex } = locate(sec.section, r.byteOffset, 'line info');
      program.lineInfo.push({ insnIndex, fileName: r.fileName, line: r.line, lineNumber: r.lineNumber, column: r.column });
    }
  }
  const out: ObjectCoreRelocation[] = [];
  for (const sec of ext.coreRelocations) {
    for (const record of sec.records) {
      const { program, insnIndex } = locate(sec.section, record.byteOffset, 'core relocation');
      let access: ReturnType<typeof resolveCoreAccess> | undefined;
      let error: FormatError | undefined;
      try {
        access = resolveCoreAccess(btf, record);
      } catch (e) {
        // A relocation that cannot be resolved poisons its instruction, not the object.
        if (!(e instanceof FormatError)) throw e;
        error = e.withPrefix(`core relocation at ${sec.section}+${record.byteOffset}`);
      }
      const c: ObjectCoreRelocation = { section: sec.section, program: program.name, insnIndex, byteOffset: record.byteOffset, record, access, error };
      program.coreRelocations.push(c);
      out.push(c);
    }
  }
  return out;
}

/**
 * Parses a BPF ELF object into an {@link ObjectSpec}: programs and subprograms with their
 * instructions and relocations, maps (BTF-defined and legacy), global data, license, version,
 * BTF and .BTF.ext with CO-RE relocations placed on instructions. Parse only: nothing depends
 * on the running kernel. Errors are `FormatError`s prefixed with the phase: "read elf",
 * "read btf", "read btf.ext", "load license", "load version", "load programs", "load maps", "load globals",
 * "load relocations", "load btf.ext".
 */
export function readBpfObject(bytes: Uint8Array): ObjectSpec {
  const elf = readElf(bytes);
  const btfSection = elf.section('.BTF');
  const btf = btfSection === undefined ? undefined : readBtf(btfSection.data, btfSection.byteOffset);
  const extSection = elf.section('.BTF.ext');
  let btfExt: BtfExt | undefined;
  if (extSection !== undefined && btf !== undefined) btfExt = readBtfExt(extSection.data, btf, extSection.byteOffset);
  const license = phase('load license', () => loadLicense(elf));
  const kernelVersion = phase('load version', () => loadVersion(elf));
  const all = phase('load programs', () => loadPrograms(elf));
  const maps = phase('load maps', () =>
    [...loadBtfMaps(elf, btf), ...loadLegacyMaps(elf)].sort((a, b) => a.sectionIndex - b.sectionIndex || a.byteOffset - b.byteOffset),
  );
  const globals = phase('load globals', () => loadGlobals(elf, btf));
  const index = new ProgramIndex(all);
  phase('load relocations', () => loadProgramRelocations(elf, all, index, maps));
  const coreRelocations = btf !== undefined && btfExt !== undefined ? phase('load btf.ext', () => placeBtfExt(elf, btf, btfExt, index, extSection?.byteOffset ?? 0)) : [];
  const byName = new Map<string, ProgramSpec>();
  for (const p of all) if (!byName.has(p.name)) byName.set(p.name, p);
  const mapByName = new Map<string, MapSpec>();
  for (const m of maps) if (!mapByName.has(m.name)) mapByName.set(m.name, m);
  const programs = all.filter((p) => !p.isSubprogram);
  const subprograms = all.filter((p) => p.isSubprogram);
  return {
    elf,
    littleEndian: elf.littleEndian,
    license,
    kernelVersion,
    programs,
    subprograms,
    maps,
    globals,
    btf,
    btfExt,
    relocations: elf.relocations,
    coreRelocations,
    program: (name) => byName.get(name),
    map: (name) => mapByName.get(name),
  };
}
