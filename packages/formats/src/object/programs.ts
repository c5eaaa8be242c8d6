import { FormatError } from '../errors.js';
import type { ElfFile } from '../elf/elf-file.js';
import { BpfRelocationType } from '../elf/elf-relocation.js';
import { type ElfSection, isExecutableSection } from '../elf/elf-section.js';
import { SymbolBinding, SymbolType } from '../elf/elf-symbol.js';
import type { MapSpec, ProgramSpec } from './object-spec.js';
import { parseProgramSection } from './program-section.js';

const INSN_SIZE = 8;
/** `BPF_LD | BPF_IMM | BPF_DW`: the first half of a 16-byte `ld_imm64`. */
const OP_LD_IMM64 = 0x18;
/** `BPF_JMP | BPF_CALL`. */
const OP_CALL = 0x85;
/** `src_reg` of a call to a BPF function (`BPF_PSEUDO_CALL`) and of `ld_imm64` of one (`BPF_PSEUDO_FUNC`). */
const BPF_PSEUDO_CALL = 1;
const BPF_PSEUDO_FUNC = 4;

/** The `src_reg` nibble of an instruction: high nibble on little endian, low nibble on big endian. */
function srcReg(bytes: Uint8Array, at: number, littleEndian: boolean): number {
  const regs = bytes[at + 1] ?? 0;
  return littleEndian ? regs >>> 4 : regs & 0xf;
}

/** The signed 32-bit `imm` of the instruction at `at` (bounds already checked by the caller). */
function imm(bytes: Uint8Array, at: number, littleEndian: boolean): number {
  const b0 = bytes[at + 4] ?? 0;
  const b1 = bytes[at + 5] ?? 0;
  const b2 = bytes[at + 6] ?? 0;
  const b3 = bytes[at + 7] ?? 0;
  return littleEndian ? b0 | (b1 << 8) | (b2 << 16) | (b3 << 24) : (b0 << 24) | (b1 << 16) | (b2 << 8) | b3;
}

const GLOBAL_DATA_SECTION = /^\.(rodata|data|bss)(\.|$)/;

/**
 * Splits every executable section into functions by its `STT_FUNC` symbols. Functions of `.text`
 * are subprograms; those of any other section are programs typed by the section name.
 */
export function loadPrograms(elf: ElfFile): ProgramSpec[] {
  const out: ProgramSpec[] = [];
  for (const s of elf.sections) {
    if (!isExecutableSection(s) || s.size === 0) continue;
    const err = (code: 'malformed' | 'out-of-range', msg: string, byteOffset = s.byteOffset) =>
      new FormatError(code, `section ${s.name}: ${msg}`, { byteOffset, section: s.name });
    if (s.size % INSN_SIZE !== 0) throw err('malformed', `size ${s.size} is not a multiple of ${INSN_SIZE}`);
    const isText = s.name === '.text';
    const parsed = isText ? undefined : parseProgramSection(s.name);
    const funcs = elf
      .symbolsIn(s.index)
      .filter((sym) => sym.type === SymbolType.Func)
      .sort((a, b) => a.value - b.value);
    if (funcs.length === 0) throw err('malformed', 'no function symbols');
    let end = 0;
    funcs.forEach((sym, i) => {
      const next = funcs[i + 1];
      const size = sym.size > 0 ? sym.size : (next?.value ?? s.size) - sym.value;
      if (sym.value % INSN_SIZE !== 0 || size % INSN_SIZE !== 0 || size === 0) {
        throw err('malformed', `function ${sym.name} at ${sym.value} size ${size} is not whole instructions`, sym.entryByteOffset);
      }
      if (sym.value + size > s.size) throw err('out-of-range', `function ${sym.name} at ${sym.value} size ${size} ends past ${s.size}`, sym.entryByteOffset);
      if (sym.value < end) throw err('malformed', `function ${sym.name} at ${sym.value} overlaps the one before (ends at ${end})`, sym.entryByteOffset);
      end = sym.value + size;
      out.push({
        name: sym.name,
        section: s.name,
        sectionIndex: s.index,
        type: parsed?.type ?? 'unspec',
        expectedAttachType: parsed?.expectedAttachType,
        attach: parsed?.attach ?? { kind: 'none' },
        sleepable: parsed?.sleepable ?? false,
        isSubprogram: isText,
        isGlobal: sym.binding === SymbolBinding.Global || sym.binding === SymbolBinding.Weak,
        byteOffset: sym.value,
        byteLength: size,
        insnCount: size / INSN_SIZE,
        instructions: s.data.subarray(sym.value, sym.value + size),
        relocations: [],
        callees: [],
        funcTypeId: undefined,
        lineInfo: [],
        coreRelocations: [],
      });
    });
  }
  return out;
}

/**
 * Functions by section, sorted by offset, for O(log n) lookups of the function holding an
 * instruction (hostile objects may have tens of thousands of functions and relocations).
 */
export class ProgramIndex {
  readonly #bySection = new Map<number, ProgramSpec[]>();

  constructor(programs: readonly ProgramSpec[]) {
    for (const p of programs) {
      let list = this.#bySection.get(p.sectionIndex);
      if (list === undefined) this.#bySection.set(p.sectionIndex, (list = []));
      list.push(p);
    }
    for (const list of this.#bySection.values()) list.sort((a, b) => a.byteOffset - b.byteOffset);
  }

  /** The function of section `sectionIndex` holding byte `byteOffset`. */
  at(sectionIndex: number, byteOffset: number): ProgramSpec | undefined {
    const list = this.#bySection.get(sectionIndex);
    if (list === undefined) return undefined;
    let lo = 0;
    let hi = list.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const p = list[mid] as ProgramSpec;
      if (byteOffset < p.byteOffset) hi = mid - 1;
      else if (byteOffset >= p.byteOffset + p.byteLength) lo = mid + 1;
      else return p;
    }
    return undefined;
  }

  /** The function starting exactly at `byteOffset` of section `sectionIndex`. */
  startingAt(sectionIndex: number, byteOffset: number): ProgramSpec | undefined {
    const p = this.at(sectionIndex, byteOffset);
    return p?.byteOffset === byteOffset ? p : undefined;
  }
}

function relocationError(s: ElfSection, byteOffset: number, code: 'malformed' | 'out-of-range' | 'unsupported' | 'not-found', msg: string): FormatError {
  return new FormatError(code, `relocation at ${s.name}+${byteOffset}: ${msg}`, { byteOffset: s.byteOffset + byteOffset, section: s.name });
}

/**
 * Places every relocation of a program section on its instruction, normalized by target (map,
 * global data, call, function address, extern), and adds the pc-relative calls clang resolved
 * itself inside one section. Then computes each program's callees.
 */
export function loadProgramRelocations(elf: ElfFile, programs: ProgramSpec[], index: ProgramIndex, maps: readonly MapSpec[]): void {
  const mapAt = new Map<string, MapSpec>();
  for (const m of maps) mapAt.set(`${m.sectionIndex}:${m.byteOffset}`, m);
  const funcName = (sectionIndex: number, byteOffset: number) => index.startingAt(sectionIndex, byteOffset)?.name;

  for (const s of elf.sections) {
    if (!isExecutableSection(s) || s.size === 0) continue;
    const relocated = new Set<number>();
    for (const r of elf.relocationsFor(s.index)) {
      if (r.byteOffset % INSN_SIZE !== 0) throw relocationError(s, r.byteOffset, 'malformed', 'not on an instruction boundary');
      const prog = index.at(s.index, r.byteOffset);
      if (prog === undefined) throw relocationError(s, r.byteOffset, 'malformed', 'outside any function');
      relocated.add(r.byteOffset);
      const sym = r.symbol;
      const opcode = s.data[r.byteOffset] ?? 0;
      const insnIndex = (r.byteOffset - prog.byteOffset) / INSN_SIZE;
      const target = sym.sectionIndex > 0 && sym.sectionIndex < elf.sections.length ? elf.sections[sym.sectionIndex] : undefined;
      if (r.type === BpfRelocationType.Call32) {
        if (opcode !== OP_CALL) throw relocationError(s, r.byteOffset, 'malformed', `R_BPF_64_32 on opcode 0x${opcode.toString(16)}, want call (0x85)`);
        if (target === undefined) {
          prog.relocations.push({ insnIndex, byteOffset: r.byteOffset, symbol: sym.name, elfType: r.type, kind: 'extern', weak: sym.binding === SymbolBinding.Weak, call: true });
          continue;
        }
        if (!isExecutableSection(target)) throw relocationError(s, r.byteOffset, 'malformed', `call to symbol ${sym.name} in non-code section ${target.name}`);
        const targetByteOffset = sym.value + (imm(s.data, r.byteOffset, elf.littleEndian) + 1) * INSN_SIZE;
        const name = funcName(target.index, targetByteOffset);
        if (name === undefined) throw relocationError(s, r.byteOffset, 'out-of-range', `call target ${target.name}+${targetByteOffset} is not a function start`);
        prog.relocations.push({ insnIndex, byteOffset: r.byteOffset, symbol: sym.name, elfType: r.type, kind: 'call', targetSection: target.name, targetByteOffset, target: name });
        continue;
      }
      if (r.type !== BpfRelocationType.Imm64) throw relocationError(s, r.byteOffset, 'unsupported', `type ${r.typeName} in a program section`);
      if (opcode !== OP_LD_IMM64) throw relocationError(s, r.byteOffset, 'malformed', `R_BPF_64_64 on opcode 0x${opcode.toString(16)}, want ld_imm64 (0x18)`);
      if (target === undefined) {
        prog.relocations.push({ insnIndex, byteOffset: r.byteOffset, symbol: sym.name, elfType: r.type, kind: 'extern', weak: sym.binding === SymbolBinding.Weak, call: false });
        continue;
      }
      const addend = imm(s.data, r.byteOffset, elf.littleEndian);
      if (isExecutableSection(target)) {
        if (srcReg(s.data, r.byteOffset, elf.littleEndian) !== BPF_PSEUDO_FUNC && addend % INSN_SIZE !== 0) {
          throw relocationError(s, r.byteOffset, 'malformed', `ld_imm64 of code ${target.name} with addend ${addend}`);
        }
        const targetByteOffset = sym.value + addend;
        const name = funcName(target.index, targetByteOffset);
        if (name === undefined) throw relocationError(s, r.byteOffset, 'out-of-range', `function address ${target.name}+${targetByteOffset} is not a function start`);
        prog.relocations.push({ insnIndex, byteOffset: r.byteOffset, symbol: sym.name, elfType: r.type, kind: 'func-address', targetSection: target.name, targetByteOffset, target: name });
        continue;
      }
      if (target.name === '.maps' || target.name === 'maps') {
        const m = mapAt.get(`${target.index}:${sym.value}`);
        if (m === undefined) throw relocationError(s, r.byteOffset, 'not-found', `no map at ${target.name}+${sym.value} (symbol ${sym.name})`);
        prog.relocations.push({ insnIndex, byteOffset: r.byteOffset, symbol: sym.name, elfType: r.type, kind: 'map', map: m.name, legacy: m.legacy });
        continue;
      }
      if (GLOBAL_DATA_SECTION.test(target.name)) {
        if (sym.type !== SymbolType.Section && sym.type !== SymbolType.Object && sym.type !== SymbolType.NoType) {
          throw relocationError(s, r.byteOffset, 'malformed', `global data symbol ${sym.name} has type ${sym.type}`);
        }
        prog.relocations.push({ insnIndex, byteOffset: r.byteOffset, symbol: sym.name, elfType: r.type, kind: 'global-data', section: target.name, dataByteOffset: sym.value + addend, addend });
        continue;
      }
      throw relocationError(s, r.byteOffset, 'unsupported', `reference to section ${target.name} (symbol ${sym.name})`);
    }

    // Calls clang resolved itself: `call` with src_reg BPF_PSEUDO_CALL and no ELF relocation.
    for (let at = 0; at < s.size; at += INSN_SIZE) {
      const op = s.data[at];
      if (op === OP_LD_IMM64) {
        at += INSN_SIZE;
        continue;
      }
      if (op !== OP_CALL || relocated.has(at) || srcReg(s.data, at, elf.littleEndian) !== BPF_PSEUDO_CALL) continue;
      const prog = index.at(s.index, at);
      if (prog === undefined) continue;
      const targetByteOffset = at + (imm(s.data, at, elf.littleEndian) + 1) * INSN_SIZE;
      const name = funcName(s.index, targetByteOffset);
      if (name === undefined) {
        throw new FormatError('out-of-range', `call at ${s.name}+${at}: target ${targetByteOffset} is not a function start`, {
          byteOffset: s.byteOffset + at,
          section: s.name,
        });
      }
      prog.relocations.push({
        insnIndex: (at - prog.byteOffset) / INSN_SIZE,
        byteOffset: at,
        symbol: '',
        elfType: undefined,
        kind: 'call',
        targetSection: s.name,
        targetByteOffset,
        target: name,
      });
    }
  }
  for (const p of programs) {
    p.relocations.sort((a, b) => a.insnIndex - b.insnIndex);
    const direct = new Set<string>();
    for (const r of p.relocations) if (r.kind === 'call' || r.kind === 'func-address') direct.add(r.target);
    p.callees = [...direct];
  }
}

/**
 * Every function reachable from `program` through calls and function addresses, in
 * breadth-first order (what a loader must append to the program). Each function once.
 */
export function transitiveCallees(spec: { program(name: string): ProgramSpec | undefined }, program: string): string[] {
  const start = spec.program(program);
  if (start === undefined) return [];
  const seen = new Set<string>([program]);
  const order: string[] = [];
  const queue: ProgramSpec[] = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const name of (queue[i] as ProgramSpec).callees) {
      if (seen.has(name)) continue;
      seen.add(name);
      order.push(name);
      const callee = spec.program(name);
      if (callee !== undefined) queue.push(callee);
    }
  }
  return order;
}
