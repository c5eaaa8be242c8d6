// Test helpers: Probeyard assembly → instruction bytes and map definitions, and the event formats
// of test/fixtures/formats.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type EventFormat, findField, parseEventFormat } from '@probeyard/formats';
import { assemble, encode } from '@probeyard/isa';
import type { MapDef } from '../src/index.js';

export function loadFormat(name: string, system = 'sched'): EventFormat {
  return parseEventFormat(readFileSync(join(import.meta.dirname, 'fixtures/formats', `${name}.format`), 'utf8'), {
    system,
  });
}

const formats = new Map<string, EventFormat>();

/** Assembles one program (the first of the file); `.map` declarations become map index 0, 1, … */
export function asm(text: string): { bytes: Uint8Array; maps: MapDef[] } {
  const object = assemble(text, {
    resolveField: (event, field) => {
      if (!formats.has(event)) formats.set(event, loadFormat(event));
      const f = findField(formats.get(event)!, field);
      return f && { byteOffset: f.byteOffset, size: f.size, signed: f.signed ?? false };
    },
  });
  const program = object.programs.find((p) => p.instructions.length > 0)!;
  return {
    bytes: encode(program.instructions),
    maps: object.maps.map((m) => ({ type: m.typeId, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries, name: m.name })),
  };
}
