// The loads of a program built for one layout, relocated for another, read the same bytes as the
// loads of the same source built for that other layout. packages/compat may not depend on
// packages/vm, so the loads are evaluated here directly (ldx/ldxs of the instruction's size at
// its offset); apps/cli/test/relocated-reads.test.ts runs whole programs in the VM.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { profileFormat } from '../src/kernel-profile.js';
import { readProgramSpec } from '../src/program-spec.js';
import { checkCompat } from '../src/verdict.js';
import { fixtureFormat, fixtureProfile, fixturesDir, recordOf } from './fixtures.js';

const objectSpec = (name: string) => readProgramSpec(new Uint8Array(readFileSync(join(fixturesDir, 'objects', name))));

/** Every `ldx`/`ldxs` from r6 or r1 (the context) evaluated on `record`, by instruction index. */
function contextLoads(instructions: Uint8Array, record: Uint8Array): Map<number, bigint> {
  const insns = new DataView(instructions.buffer, instructions.byteOffset, instructions.byteLength);
  const rec = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const out = new Map<number, bigint>();
  for (let at = 0; at + 8 <= instructions.length; at += 8) {
    const op = instructions[at]!;
    const src = instructions[at + 1]! >> 4;
    if ((op & 0x07) !== 0x01 || (src !== 6 && src !== 1)) continue;
    const off = insns.getInt16(at + 2, true);
    const size = { 0: 4, 8: 2, 16: 1, 24: 8 }[op & 0x18]!;
    const signed = (op & 0xe0) === 0x80;
    let v: bigint;
    if (size === 8) v = rec.getBigUint64(off, true);
    else if (size === 4) v = BigInt(signed ? rec.getInt32(off, true) : rec.getUint32(off, true));
    else if (size === 2) v = BigInt(signed ? rec.getInt16(off, true) : rec.getUint16(off, true));
    else v = BigInt(signed ? rec.getInt8(off) : rec.getUint8(off));
    out.set(at / 8, BigInt.asUintN(64, v));
  }
  return out;
}

describe('relocated loads', () => {
  it('switch_fields built for 6.18 and relocated to 3.10.49 loads what its 3.10.49 build loads', async () => {
    const target = await fixtureProfile('android-3.10.49');
    const format = profileFormat(target, 'sched/sched_switch')!;
    const record = recordOf(format, { prev_pid: 1234, prev_state: -2, next_pid: 4321, next_comm: 'kworker/0:1' });
    const relocated = checkCompat(await objectSpec('switch_fields_618.o'), target).relocated!;
    const native = checkCompat(await objectSpec('switch_fields_31049.o'), target).relocated!;
    const a = contextLoads(relocated.programs[0]!.instructions, record);
    const b = contextLoads(native.programs[0]!.instructions, record);
    // prev_pid, prev_state, next_pid; prev_state: the 3.10.49 build loads 4 bytes (ldxw) and
    // sign-extends with shifts, the relocated one loads with ldxsw: the same 64-bit value after that
    expect([...a.values()]).toEqual([1234n, BigInt.asUintN(64, -2n), 4321n]);
    expect([...b.values()]).toEqual([1234n, BigInt.asUintN(32, -2n), 4321n]);
    // what the 3.10.49 build then does to prev_state: r1 <<= 32; r1 s>>= 32
    expect(BigInt.asUintN(64, BigInt.asIntN(32, [...b.values()][1]!))).toBe([...a.values()][1]);
  });
});

describe('relocated loads (fast-check)', () => {
  const fields = [
    ['prev_pid', 'u32'],
    ['prev_prio', 'u32'],
    ['prev_state', 'u64'],
    ['next_pid', 'u32'],
    ['next_prio', 'u32'],
  ] as const;

  it('any loads of sched_switch fields built for 6.18 read the 3.10.49 record\'s values after relocation', async () => {
    const build = fixtureFormat('linux-6.18', 'sched/sched_switch');
    const target = await fixtureProfile('android-3.10.49');
    const format = profileFormat(target, 'sched/sched_switch')!;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...fields), { minLength: 1, maxLength: 5 }),
        fc.record({ prev_pid: fc.integer(), prev_prio: fc.integer(), prev_state: fc.integer(), next_pid: fc.integer(), next_prio: fc.integer() }),
        async (picked, values) => {
          const body = picked.map(([f, size], i) => `  r${2 + (i % 5)} = *(${size} *)(r1 + sched_switch.${f})`).join('\n');
          const spec = await readProgramSpec(new TextEncoder().encode(`.section tracepoint/sched/sched_switch\n${body}\n  r0 = 0\n  exit\n`), { buildFormats: [build] });
          const verdict = checkCompat(spec, target);
          expect(verdict.relocated).toBeDefined();
          const record = recordOf(format, values);
          const loads = [...contextLoads(verdict.relocated!.programs[0]!.instructions, record).values()];
          const expected = picked.map(([f]) => {
            const field = format.fields.find((x) => x.name === f)!;
            const v = BigInt(values[f]);
            // a 4-byte signed field read by an 8-byte load is sign-extended (ldxsw); 4-byte loads zero-extend
            const builtSize = build.fields.find((x) => x.name === f)!.size;
            return field.size < builtSize ? BigInt.asUintN(64, BigInt.asIntN(field.size * 8, v)) : BigInt.asUintN(field.size * 8, v);
          });
          expect(loads).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });
});
