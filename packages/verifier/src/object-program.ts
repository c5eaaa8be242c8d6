// Turns one program of a BPF ELF object (formats' `readBpfObject`) into what `verify` takes: the
// program with its subprograms appended and calls fixed up, maps and global data sections as map
// definitions indexed by the `lddw` immediates. The same steps libbpf takes before BPF_PROG_LOAD,
// minus the kernel: map fds are indices into `maps`.

import { type ObjectSpec, type ProgramSpec, transitiveCallees } from '@probeyard/formats';
import { VerifierError } from './errors.js';
import { MapType, type MapDef } from './types.js';

export interface LinkedProgram {
  name: string;
  section: string;
  /** Instruction bytes, little-endian, subprograms appended. */
  bytes: Uint8Array;
  /** By `lddw` immediate: the object's maps first, then one array map per global data section. */
  maps: MapDef[];
  /** `system/event` when the section names a tracepoint. */
  tracepoint: string | undefined;
}

/** libbpf's `POISON_CALL_KFUNC_BASE`: a call of an absent weak kfunc calls helper id base + extern index. */
export const POISON_CALL_KFUNC_BASE = 2002000000;

/** Links program `name` (default: the first program) of an object for verification. */
export function linkObjectProgram(spec: ObjectSpec, name?: string): LinkedProgram {
  if (!spec.littleEndian) throw new VerifierError('unsupported', 'link program: big-endian objects are not supported');
  const main = name === undefined ? spec.programs[0] : spec.program(name);
  if (!main) {
    const names = spec.programs.map((p) => p.name).join(', ') || 'none';
    throw new VerifierError('malformed', `link program: no program ${name ?? ''} in the object (programs: ${names})`);
  }
  const functions: ProgramSpec[] = [main];
  for (const callee of transitiveCallees(spec, main.name)) {
    const f = spec.program(callee);
    if (!f) throw new VerifierError('malformed', `link program ${main.name}: callee ${callee} not found`);
    functions.push(f);
  }
  const start = new Map<string, number>();
  let total = 0;
  for (const f of functions) {
    start.set(f.name, total);
    total += f.insnCount;
  }
  const bytes = new Uint8Array(total * 8);
  for (const f of functions) bytes.set(f.instructions, start.get(f.name)! * 8);
  const view = new DataView(bytes.buffer);

  const maps: MapDef[] = spec.maps.map((m) => ({
    type: m.type,
    keySize: m.keySize,
    valueSize: m.valueSize,
    maxEntries: m.maxEntries,
    name: m.name,
  }));
  const mapIndex = new Map(spec.maps.map((m, i) => [m.name, i]));
  const globalIndex = new Map<string, number>();
  for (const g of spec.globals) {
    globalIndex.set(g.section, maps.length);
    const def: MapDef = { type: MapType.array, keySize: 4, valueSize: Math.max(g.size, 1), maxEntries: 1, name: g.section, readonly: g.readonly };
    // libbpf freezes .rodata before load: the verifier reads its initial bytes as constants
    if (g.readonly && g.bytes !== undefined) def.frozen = new Uint8Array(g.bytes);
    maps.push(def);
  }

  const setSrc = (insn: number, src: number) => {
    const p = insn * 8 + 1;
    view.setUint8(p, (view.getUint8(p) & 0x0f) | (src << 4));
  };
  const externs = new Map<string, number>();
  const externIndex = (symbol: string): number => {
    let i = externs.get(symbol);
    if (i === undefined) externs.set(symbol, (i = externs.size));
    return i;
  };
  for (const f of functions) {
    const base = start.get(f.name)!;
    for (const r of f.relocations) {
      const at = base + r.insnIndex;
      const where = `link program ${main.name}: ${f.name} insn ${r.insnIndex}`;
      switch (r.kind) {
        case 'map': {
          const index = mapIndex.get(r.map);
          if (index === undefined) throw new VerifierError('malformed', `${where}: unknown map ${r.map}`);
          setSrc(at, 1);
          view.setInt32(at * 8 + 4, index, true);
          break;
        }
        case 'global-data': {
          const index = globalIndex.get(r.section);
          if (index === undefined) throw new VerifierError('malformed', `${where}: unknown data section ${r.section}`);
          setSrc(at, 2);
          view.setInt32(at * 8 + 4, index, true);
          view.setInt32(at * 8 + 12, r.dataByteOffset, true);
          break;
        }
        case 'call': {
          const target = spec.program(r.target);
          const targetStart = start.get(r.target);
          if (!target || targetStart === undefined) throw new VerifierError('malformed', `${where}: call to unknown ${r.target}`);
          const insn = targetStart + (r.targetByteOffset - target.byteOffset) / 8;
          view.setInt32(at * 8 + 4, insn - at - 1, true);
          break;
        }
        case 'func-address': {
          // lddw rX, func (BPF_PSEUDO_FUNC): imm is the callee's offset from the next instruction
          const target = spec.program(r.target);
          const targetStart = start.get(r.target);
          if (!target || targetStart === undefined) throw new VerifierError('malformed', `${where}: address of unknown ${r.target}`);
          setSrc(at, 4);
          const insn = targetStart + (r.targetByteOffset - target.byteOffset) / 8;
          view.setInt32(at * 8 + 4, insn - at - 1, true);
          break;
        }
        case 'extern': {
          // A userspace runtime has no kernel symbols: every __ksym is absent here. A weak one
          // resolves as libbpf resolves a weak extern the kernel lacks: its address (`ld_imm64`,
          // what bpf_ksym_exists tests) is 0, and a call of it becomes a call of libbpf's poison
          // helper id, which the verifier rejects only where it is reachable (the guarded branch
          // is dead once the address is the constant 0).
          if (!r.weak) {
            throw new VerifierError(
              'unsupported',
              `${where}: extern symbol ${r.symbol} (__ksym/__kconfig) is not supported: a userspace runtime has no kernel symbols (a __weak one guarded by bpf_ksym_exists resolves to 0)`,
              { insnIndex: at },
            );
          }
          if (r.call) {
            setSrc(at, 0);
            view.setInt16(at * 8 + 2, 0, true);
            view.setInt32(at * 8 + 4, POISON_CALL_KFUNC_BASE + externIndex(r.symbol), true);
          } else {
            setSrc(at, 0);
            view.setInt32(at * 8 + 4, 0, true);
            view.setInt32(at * 8 + 12, 0, true);
          }
          break;
        }
      }
    }
  }
  const attach = main.attach;
  const tracepoint = attach.kind === 'tracepoint' ? `${attach.system}/${attach.event}` : undefined;
  return { name: main.name, section: main.section, bytes, maps, tracepoint };
}
