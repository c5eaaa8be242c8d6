import type { ProgramSpec, ScriptAction } from '@probeyard/compat';
import { describe, expect, it } from 'vitest';
import { asmSpec, fixtureProfile, memoryStream, recordOf } from '../test/fixtures.js';
import { Dispatcher } from './dispatcher.js';
import { loadForProfile } from './load-spec.js';
import { ScriptSession } from './script-session.js';

/** A program that emits the action `id` (an 8-byte record of the output ring buffer). */
const emit = (id: number) => `  *(u64 *)(r10 - 8) = ${id}
  r1 = out ll
  r2 = r10
  r2 += -8
  r3 = 8
  r4 = 0
  call bpf_ringbuf_output
`;

/**
 * A spec as packages/script lays one out, in assembly: BEGIN prints, every sched_switch counts
 * into @n and prints, an interval of 1000 ns prints, END prints; `spec.script` holds the actions.
 */
async function scriptSpec(switchActions: number[], actions: ScriptAction[]): Promise<ProgramSpec> {
  const spec = await asmSpec(`.map n hash key=8 value=8 entries=16
.map out ringbuf key=0 value=0 entries=4096
.section BEGIN
begin:
${emit(0)}  r0 = 0
  exit
.section tracepoint/sched/sched_switch
sw:
  *(u64 *)(r10 - 16) = 0
  *(u64 *)(r10 - 24) = 1
  r1 = n ll
  r2 = r10
  r2 += -16
  call bpf_map_lookup_elem
  if r0 == 0 goto insert
  r1 = 1
  lock *(u64 *)(r0 + 0) += r1
  goto out
insert:
  r1 = n ll
  r2 = r10
  r2 += -16
  r3 = r10
  r3 += -24
  r4 = 0
  call bpf_map_update_elem
out:
${switchActions.map(emit).join('')}  r0 = 0
  exit
.section interval/1000
tick:
${emit(2)}  r0 = 0
  exit
.section END
end:
${emit(3)}  r0 = 0
  exit
`);
  spec.maps[0]!.keyType = { kind: 'struct', fields: [] };
  spec.maps[0]!.valueType = { kind: 'int', size: 8, signed: false };
  spec.maps[0]!.display = { kind: 'value', source: 'script' };
  spec.script = { source: '(assembled)', outputMap: 1, actions };
  return spec;
}

const printf = (format: string): ScriptAction => ({ kind: 'printf', format, args: [] });

async function run(spec: ProgramSpec, times: number[], now?: () => Date): Promise<{ text: string; session: ScriptSession; count: number }> {
  const profile = await fixtureProfile('linux-6.18');
  const out = loadForProfile(spec, profile);
  if (!out.ok) throw new Error(JSON.stringify(out));
  const switchFormat = [...profile.formats.values()].find((f) => f.name === 'sched_switch')!;
  const dispatcher = new Dispatcher();
  dispatcher.attach('s', out.loaded);
  let text = '';
  const session = new ScriptSession(out.loaded, now ? { onText: (t) => (text += t), now } : { onText: (t) => (text += t) });
  await session.run(memoryStream(times.map((timeNs) => ({ data: recordOf(switchFormat, {}), timeNs })), 3), dispatcher);
  const n = out.loaded.maps[0]!;
  const v = n.lookup(new Uint8Array(8));
  return { text, session, count: v === undefined ? 0 : Number(new DataView(v.buffer, v.byteOffset).getBigUint64(0, true)) };
}

describe('ScriptSession', () => {
  it('runs BEGIN before the first record, intervals by the records\' time, actions in order, END last', async () => {
    const spec = await scriptSpec([1], [printf('begin\n'), printf('switch\n'), printf('tick\n'), printf('end\n')]);
    const { text, count } = await run(spec, [100, 500, 1100, 1200, 3500]);
    // BEGIN at 100; ticks due at 1100 (before the record at 1100), 2100 and 3100 (before 3500)
    expect(text).toBe('begin\nswitch\nswitch\ntick\nswitch\nswitch\ntick\ntick\nswitch\nend\n');
    expect(count).toBe(5);
  });

  it('print draws the map then, clear empties it, and exit stops the records (END still runs)', async () => {
    const actions: ScriptAction[] = [printf('begin\n'), { kind: 'print', map: 0, top: 0, div: 0 }, printf('tick\n'), printf('end\n'), { kind: 'clear', map: 0 }, { kind: 'exit' }];
    const spec = await scriptSpec([1, 4], actions);
    expect((await run(spec, [10, 20, 30])).text).toBe('begin\n@n: 1\n@n: 1\n@n: 1\nend\n');
    const exiting = await scriptSpec([1, 5], actions);
    const r = await run(exiting, [10, 20, 30]);
    expect(r.text).toBe('begin\n@n: 1\nend\n');
    expect(r.count).toBe(1);
    expect(r.session.exited).toBe(true);
  });

  it('time prints the clock when the action is handled, in order with printf', async () => {
    const spec = await scriptSpec([1], [printf('begin\n'), { kind: 'time', format: '%H:%M:%S|' }, printf('tick\n'), printf('end\n')]);
    let n = 0;
    const { text } = await run(spec, [10, 20], () => new Date(2026, 0, 5, 9, 8, 7 + n++));
    expect(text).toBe('begin\n09:08:07|09:08:08|end\n');
  });

  it('zero keeps the keys with zero values', async () => {
    const spec = await scriptSpec([1], [printf(''), { kind: 'zero', map: 0 }, printf(''), printf('')]);
    expect((await run(spec, [1, 2, 3])).count).toBe(0);
  });
});
