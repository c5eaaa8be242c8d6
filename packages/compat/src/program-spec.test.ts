import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { examplesDir, fixturesDir } from '../test/fixtures.js';
import { CompatError } from './errors.js';
import { readProgramSpec } from './program-spec.js';
import { specFromJson, specToJson } from './spec-json.js';

const runqlat = new Uint8Array(readFileSync(join(examplesDir, 'runqlat.o')));

async function outcome(bytes: Uint8Array): Promise<'ok' | 'compat-error'> {
  try {
    await readProgramSpec(bytes);
    return 'ok';
  } catch (e) {
    if (e instanceof CompatError) return 'compat-error';
    throw e;
  }
}

describe('readProgramSpec', () => {
  it('finds the record layout of a ring buffer from the BTF struct named like its events', async () => {
    const spec = await readProgramSpec(new Uint8Array(readFileSync(join(fixturesDir, 'objects', 'ringbuf_event.o'))));
    const events = spec.maps.find((m) => m.name === 'events')!;
    expect(events).toMatchObject({ typeName: 'ringbuf', keySize: 0, valueSize: 0, maxEntries: 4096 });
    expect(events.valueType).toBeUndefined();
    expect(events.eventType).toEqual({
      kind: 'struct',
      fields: [
        { name: 'pid', offset: 0, type: { kind: 'int', size: 4, signed: false } },
        { name: 'id', offset: 4, type: { kind: 'int', size: 4, signed: false } },
        { name: 'comm', offset: 8, type: { kind: 'string', size: 16 } },
      ],
    });
    expect(specFromJson(JSON.parse(JSON.stringify(specToJson(spec)))).maps).toEqual(spec.maps);
    // runqlat has no ring buffer: no event types
    expect((await readProgramSpec(runqlat)).maps.every((m) => m.eventType === undefined)).toBe(true);
  });

  it('links each program of an object with its relocations placed on the linked instructions', async () => {
    const spec = await readProgramSpec(runqlat);
    expect(spec.programs.map((p) => [p.name, p.section, p.attach, p.instructions.length / 8])).toEqual([
      ['on_wakeup', 'tracepoint/sched/sched_wakeup', { kind: 'tracepoint', system: 'sched', event: 'sched_wakeup' }, 18],
      ['on_switch', 'tracepoint/sched/sched_switch', { kind: 'tracepoint', system: 'sched', event: 'sched_switch' }, 69],
    ]);
    // lddw of map `start` (index 0) at insn 12 of on_wakeup: src 1, imm 0
    const w = spec.programs[0]!.instructions;
    expect(Buffer.from(w.subarray(12 * 8, 12 * 8 + 8)).toString('hex')).toBe('1811000000000000');
    expect(spec.maps.map((m) => [m.name, m.typeName, m.keySize, m.valueSize, m.maxEntries])).toEqual([
      ['start', 'hash', 4, 8, 10240],
      ['runq_usecs', 'array', 4, 8, 64],
    ]);
  });

  it('corrupted objects give a CompatError, never another exception (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: runqlat.length - 1 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: runqlat.length }), async (at, byte, cut) => {
        const bytes = runqlat.slice(0, cut);
        if (at < bytes.length) bytes[at] = byte;
        expect(['ok', 'compat-error']).toContain(await outcome(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('bytes that are neither ELF nor UTF-8 are malformed', async () => {
    await expect(readProgramSpec(Uint8Array.of(0xff, 0xfe, 0x00))).rejects.toMatchObject({ code: 'malformed' });
  });
});
