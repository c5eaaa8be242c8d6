import type { BtfCoreRelocation, BtfExt, BtfLineInfo } from '../btf/btf-ext.js';
import type { BtfSpec } from '../btf/btf-spec.js';
import type { CoreAccess } from '../btf/core-access.js';
import type { FormatError } from '../errors.js';
import type { ElfFile } from '../elf/elf-file.js';
import type { ElfRelocation } from '../elf/elf-relocation.js';
import type { AttachPoint, ProgramType } from './program-section.js';

/** A relocation of one instruction of a program, normalized by what it refers to. */
export type ProgramRelocation =
  /** `ld_imm64` of a map (`R_BPF_64_64` against a `.maps` or legacy `maps` symbol). */
  | (RelocationSite & { kind: 'map'; map: string; legacy: boolean })
  /** `ld_imm64` of global data: `section` + `dataByteOffset` (symbol value + the insn's imm addend). */
  | (RelocationSite & { kind: 'global-data'; section: string; dataByteOffset: number; addend: number })
  /** A BPF-to-BPF `call` (`R_BPF_64_32`, or pc-relative inside one section with `elfType` undefined). */
  | (RelocationSite & { kind: 'call'; targetSection: string; targetByteOffset: number; target: string })
  /** `ld_imm64` of a subprogram's address (`BPF_PSEUDO_FUNC`, callbacks such as `bpf_loop`). */
  | (RelocationSite & { kind: 'func-address'; targetSection: string; targetByteOffset: number; target: string })
  /**
   * Reference to an undefined (extern) symbol: `__ksym`, `__kconfig`. `weak` for a `__weak` one
   * (libbpf resolves it to 0 when the kernel lacks it); `call` for a kfunc call, else an `ld_imm64`.
   */
  | (RelocationSite & { kind: 'extern'; weak: boolean; call: boolean });

export interface RelocationSite {
  /** Instruction index from the start of the program. */
  insnIndex: number;
  /** Byte offset of the instruction in its section. */
  byteOffset: number;
  /** The ELF symbol's name ('' for none) — a section symbol has the section's name. */
  symbol: string;
  /** `R_BPF_*` type of the ELF relocation, undefined for a pc-relative call without one. */
  elfType: number | undefined;
}

/** A CO-RE relocation of `.BTF.ext`, placed on its program; `error` poisons only that instruction. */
export interface ObjectCoreRelocation {
  section: string;
  /** The program or subprogram holding the instruction. */
  program: string;
  insnIndex: number;
  byteOffset: number;
  record: BtfCoreRelocation;
  /** The access resolved against the object's BTF, unless it could not be. */
  access: CoreAccess | undefined;
  error: FormatError | undefined;
}

/** Line info of one instruction, program-relative. */
export interface ProgramLineInfo extends Omit<BtfLineInfo, 'byteOffset'> {
  insnIndex: number;
}

/** One program (an entry point) or subprogram (a function in `.text`). */
export interface ProgramSpec {
  /** The function symbol's name. */
  name: string;
  section: string;
  sectionIndex: number;
  /** From the section name, as libbpf reads it; `unspec` for subprograms. */
  type: ProgramType;
  expectedAttachType: string | undefined;
  attach: AttachPoint;
  sleepable: boolean;
  /** True for functions of `.text` (called by programs, never loaded alone). */
  isSubprogram: boolean;
  /** `STB_GLOBAL` function (global functions are verified on their own by the kernel). */
  isGlobal: boolean;
  /** Where the function starts in its section and its length, in bytes (multiples of 8). */
  byteOffset: number;
  byteLength: number;
  insnCount: number;
  /** The raw instructions of this function (shares memory with the input; file byte order). */
  instructions: Uint8Array;
  /** Relocated instructions, by instruction index. */
  relocations: ProgramRelocation[];
  /** Functions this one calls or takes the address of, directly, in instruction order (see `transitiveCallees`). */
  callees: string[];
  /** BTF.ext: the `BTF_KIND_FUNC` id of this function, when present. */
  funcTypeId: number | undefined;
  lineInfo: ProgramLineInfo[];
  coreRelocations: ObjectCoreRelocation[];
}

/** A map definition, from BTF (`.maps`) or the legacy `maps` section (`struct bpf_map_def`). */
export interface MapSpec {
  name: string;
  section: string;
  sectionIndex: number;
  /** Offset of the definition in its section (the symbol's value). */
  byteOffset: number;
  legacy: boolean;
  /** `BPF_MAP_TYPE_*` number and name. */
  type: number;
  typeName: string;
  keySize: number;
  valueSize: number;
  maxEntries: number;
  flags: number;
  /** `LIBBPF_PIN_*`: 0 none, 1 by name. */
  pinning: number;
  numaNode: number;
  mapExtra: number;
  /** BTF types of key and value (`__type(key, …)`), when declared. */
  keyTypeId: number | undefined;
  valueTypeId: number | undefined;
  /** The `BTF_KIND_VAR` of a BTF-defined map. */
  btfVarId: number | undefined;
  /** Inner map definition of a map-in-map (`__array(values, struct {…})`). */
  innerMap: MapSpec | undefined;
  /**
   * Initial contents of a map-in-map or program array (`.values = { [0] = &inner }`): the slot
   * index and the map or program named by the `R_BPF_64_ABS64` relocation of that slot.
   */
  initialSlots: { index: number; name: string }[];
}

/** A variable of a global data section. */
export interface GlobalVarSpec {
  name: string;
  byteOffset: number;
  size: number;
  /** The `BTF_KIND_VAR` id, when the section has a BTF DATASEC. */
  btfVarId: number | undefined;
  /** The variable's type id, when known. */
  typeId: number | undefined;
  linkage: string | undefined;
}

/** A global data section (`.rodata*`, `.data*`, `.bss*`), which libbpf turns into an array map. */
export interface GlobalDataSpec {
  section: string;
  sectionIndex: number;
  kind: 'rodata' | 'data' | 'bss';
  readonly: boolean;
  size: number;
  /** Initial contents; undefined for `.bss` (all zero, no bytes in the file). */
  bytes: Uint8Array | undefined;
  vars: GlobalVarSpec[];
  btfDatasecId: number | undefined;
}

/** Everything parsed from a BPF object, the same on every machine (no kernel involved). */
export interface ObjectSpec {
  elf: ElfFile;
  littleEndian: boolean;
  /** `license` section, up to its NUL. */
  license: string | undefined;
  /** `version` section (legacy `LINUX_VERSION_CODE`). */
  kernelVersion: number | undefined;
  programs: ProgramSpec[];
  subprograms: ProgramSpec[];
  maps: MapSpec[];
  globals: GlobalDataSpec[];
  btf: BtfSpec | undefined;
  btfExt: BtfExt | undefined;
  /** Every ELF relocation of the file, tagged by type and target section. */
  relocations: ElfRelocation[];
  /** Every CO-RE relocation, placed on its program. */
  coreRelocations: ObjectCoreRelocation[];
  /** Program or subprogram by function name. */
  program(name: string): ProgramSpec | undefined;
  map(name: string): MapSpec | undefined;
}
