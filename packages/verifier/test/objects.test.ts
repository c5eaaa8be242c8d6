// Compiled C programs (test/fixtures/objects): verdicts, the field-access report against the
// event's format file, and the same verdicts from the running kernel when it can be used.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readBpfObject } from '@probeyard/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { linkObjectProgram, verify } from '../src/index.js';
import { KernelLoader } from '../src/node/index.js';
import { loadFormat } from './support.js';

const dir = join(import.meta.dirname, 'fixtures/objects');

function load(file: string) {
  const linked = linkObjectProgram(readBpfObject(new Uint8Array(readFileSync(join(dir, file)))));
  const event = loadFormat(linked.tracepoint!.split('/')[1]!);
  return { linked, result: verify(linked.bytes, { maps: linked.maps, context: { kind: 'tracepoint', event } }) };
}

const opened = await KernelLoader.open();
const loader = 'unavailable' in opened ? null : opened;
if ('unavailable' in opened) console.log(`compiled objects vs kernel: skipped: ${opened.unavailable}`);
afterAll(() => loader?.close());

const CASES: [file: string, message: string | null, fields: string[]][] = [
  ['tp_counter.o', null, ['next_pid']],
  ['tp_ringbuf.o', null, ['next_pid', 'prev_pid', 'next_pid', 'prev_state', 'next_comm', 'next_comm']],
  ['tp_loop.o', null, Array(16).fill('next_comm')], // memcpy of 16 bytes becomes 16 byte loads
  ['tp_exec.o', null, ['filename', 'pid']],
  ['tp_unsafe.o', "R6 invalid mem access 'map_value_or_null'", ['prev_pid']],
];

describe('compiled tracepoint programs', () => {
  it.each(CASES)('%s', (file, message, fields) => {
    const { result } = load(file);
    expect(result.diagnostics[0]?.message ?? null).toBe(message);
    expect(result.ok).toBe(message === null);
    expect(result.contextAccesses.map((a) => a.field)).toEqual(fields);
  });

  it('reports each read with event, field, offset and size', () => {
    const { result } = load('tp_ringbuf.o');
    const comm = result.contextAccesses.filter((a) => a.field === 'next_comm');
    expect(comm.map((a) => [a.event, a.offset, a.size, a.fieldOffset])).toEqual([
      ['sched/sched_switch', 48, 8, 8],
      ['sched/sched_switch', 40, 8, 0],
    ]);
  });

  it.skipIf(!loader).each(CASES)('kernel agrees on %s', async (file, message) => {
    const { linked } = load(file);
    const k = await loader!.load(linked.bytes, linked.maps);
    expect(k.ok).toBe(message === null);
    if (message) expect(k.log.split('\n')).toContain(message);
  });
});
