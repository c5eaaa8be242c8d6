// Runs the usage example of README.md.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEventFormat } from '@probeyard/formats';
import { assemble, encode } from '@probeyard/isa';
import { expect, it } from 'vitest';
import { verify } from './src/index.js';

it('README example', () => {
  const switchFormatText = readFileSync(join(import.meta.dirname, 'test/fixtures/formats/sched_switch.format'), 'utf8');
  const event = parseEventFormat(switchFormatText, { system: 'sched' });
  const { programs } = assemble('r2 = *(u32 *)(r1 + 56)\nr0 = 0\nexit');
  const result = verify(encode(programs[0]!.instructions), { context: { kind: 'tracepoint', event } });
  expect([result.ok, result.contextAccesses.map((a) => `${a.event} ${a.field} ${a.offset}+${a.size}`)]).toEqual([
    true,
    ['sched/sched_switch next_pid 56+4'],
  ]);
  const bad = verify(encode(assemble('r0 = *(u32 *)(r1 + 0)\nexit').programs[0]!.instructions));
  expect(bad.diagnostics[0]).toEqual({
    insnIndex: 0,
    insnText: 'r0 = *(u32 *)(r1 + 0)',
    message: 'invalid bpf_context access off=0 size=4',
  });
});
