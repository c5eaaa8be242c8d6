import { type AssembledObject, assemble, encode } from '@probeyard/isa';
import { VmError } from './errors.js';
import { createMap } from './maps/create-map.js';
import type { BpfMap, MapType } from './maps/map.js';
import { type LoadedProgram, loadProgramOrThrow } from './program.js';
import { Vm, type VmOptions } from './vm.js';

/** A VM with the maps an assembly file declares, and its programs loaded on it. */
export interface AssembledVm {
  vm: Vm;
  maps: Map<string, BpfMap>;
  programs: Map<string, LoadedProgram>;
}

/**
 * Assembles Probeyard assembly (packages/isa syntax, with `.map` declarations), creates its
 * maps, resolves each `lddw rX, map ll` to the map's index, and loads every program. Throws a
 * {@link VmError} naming the program for a refusal.
 */
export function loadAssembly(
  source: string | AssembledObject,
  options: Omit<VmOptions, 'maps'> & { cpuCount?: number } = {},
): AssembledVm {
  const object = typeof source === 'string' ? assemble(source) : source;
  const maps = new Map<string, BpfMap>();
  const list: BpfMap[] = [];
  for (const d of object.maps) {
    const m = createMap(
      {
        name: d.name,
        type: d.typeId as MapType,
        keySize: d.keySize,
        valueSize: d.valueSize,
        maxEntries: d.maxEntries,
        flags: d.flags,
      },
      { cpuCount: options.cpuCount ?? 1 },
    );
    maps.set(d.name, m);
    list.push(m);
  }
  const vm = new Vm({ ...options, maps: list });
  const programs = new Map<string, LoadedProgram>();
  for (const p of object.programs) {
    const bytes = encode(p.instructions);
    const view = new DataView(bytes.buffer);
    for (const r of p.mapRelocations) {
      const index = list.findIndex((m) => m.name === r.map);
      if (index < 0) {
        throw new VmError('invalid-map', `load ${p.name}: instruction ${r.insnIndex} names undeclared map ${r.map}`, {
          insnIndex: r.insnIndex,
        });
      }
      view.setInt32(r.insnIndex * 8 + 4, index, true);
    }
    try {
      programs.set(p.name, loadProgramOrThrow(bytes, vm.loadOptions(p.name)));
    } catch (e) {
      if (e instanceof VmError) {
        throw new VmError(e.code, `load ${p.name}: ${e.message}`, { insnIndex: e.insnIndex, insnText: e.insnText, cause: e });
      }
      throw e;
    }
  }
  return { vm, maps, programs };
}
