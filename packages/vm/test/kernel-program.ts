// An assembly program (with `.map` declarations) as the kernel runner takes it: the instruction
// bytes with each map reference's lddw naming the map by its index, and the map list.
import { assemble, encode } from '@probeyard/isa';
import type { KernelMapSpec } from '../src/node/index.js';

export function assembleForKernel(source: string): { insns: Uint8Array; maps: KernelMapSpec[] } {
  const object = assemble(source);
  const program = object.programs[0];
  if (!program) throw new Error('assembleForKernel: the source has no program');
  const insns = encode(program.instructions);
  const view = new DataView(insns.buffer, insns.byteOffset, insns.byteLength);
  for (const r of program.mapRelocations) {
    const index = object.maps.findIndex((m) => m.name === r.map);
    if (index < 0) throw new Error(`assembleForKernel: instruction ${r.insnIndex} names undeclared map ${r.map}`);
    view.setInt32(r.insnIndex * 8 + 4, index, true);
  }
  const maps = object.maps.map((m) => ({ type: m.typeId, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries }));
  return { insns, maps };
}
