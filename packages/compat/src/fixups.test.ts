import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleSpec, fixtureFormat, fixtureProfile, fixturesDir } from '../test/fixtures.js';
import { CompatError } from './errors.js';
import { applyFixups, computeFixups, type FixupPlan, POISON_HELPER_ID } from './fixups.js';
import { readProgramSpec } from './program-spec.js';

const hex = (b: Uint8Array, insnIndex: number) => Buffer.from(b.subarray(insnIndex * 8, insnIndex * 8 + 8)).toString('hex');

describe('computeFixups', () => {
  it('syscount on 3.10.49: long id shrank to 4 signed bytes → ldxsw at the same offset', async () => {
    const plan = computeFixups(await exampleSpec('syscount'), await fixtureProfile('android-3.10.49'));
    const [f] = plan.programs[0]!.fixups;
    expect(f).toMatchObject({
      insnIndex: 0,
      action: 'patch',
      // 79 12 08 00 ... r2 = *(u64 *)(r1 + 8)  →  81 12 08 00 ... r2 = *(s32 *)(r1 + 8)
      before: { opcode: 0x79, off: 8, imm: 0 },
      after: { opcode: 0x81, off: 8, imm: 0 },
      changed: true,
      text: 'id: load size 8 → 4, sign-extended (ldxsw)',
    });
  });

  it('runqlat on 6.18: `success` is gone, its exists check becomes 0 and its load is poisoned', async () => {
    const plan = computeFixups(await exampleSpec('runqlat'), await fixtureProfile('linux-6.18'));
    const wakeup = plan.programs.find((p) => p.program === 'on_wakeup')!;
    expect(wakeup.fixups.map((f) => [f.insnIndex, f.access.kind, f.action, f.action === 'patch' ? f.after.imm : f.reason])).toEqual([
      [0, 'exists', 'patch', 0],
      [2, 'byte-offset', 'poison', 'field-missing'],
      [4, 'byte-offset', 'patch', 0],
    ]);
    expect(wakeup.fixups[2]).toMatchObject({ action: 'patch', changed: false, after: { off: 24 } });
  });

  it.each([
    ['android-3.10.49', 'on_switch', 'next_pid: offset 56 → 52'],
    ['android-3.4.0', 'on_wakeup', 'pid: offset 24 → 28'],
  ] as const)('runqlat on %s moves %s: %s', async (kernel, program, text) => {
    const plan = computeFixups(await exampleSpec('runqlat'), await fixtureProfile(kernel));
    const texts = plan.programs.find((p) => p.program === program)!.fixups.filter((f) => f.action === 'patch' && f.changed).map((f) => f.text);
    expect(texts).toContain(text);
  });

  it('forkcomm on 6.18: inline parent_comm became __data_loc → poisoned became-dynamic', async () => {
    const plan = computeFixups(await exampleSpec('forkcomm'), await fixtureProfile('linux-6.18'));
    const [f] = plan.programs[0]!.fixups;
    expect(f).toMatchObject({ action: 'poison', reason: 'became-dynamic', text: 'parent_comm: was char[16], is __data_loc on this kernel' });
  });

  it('an event the profile lacks poisons every offset of it (event-missing)', async () => {
    const plan = computeFixups(await exampleSpec('syscount'), await fixtureProfile('android-3.4.0'));
    expect(plan.programs[0]).toMatchObject({ event: 'raw_syscalls/sys_enter', format: undefined });
    expect(plan.programs[0]!.fixups[0]).toMatchObject({ action: 'poison', reason: 'event-missing' });
  });

  it('does not change its inputs', async () => {
    const spec = await exampleSpec('runqlat');
    const before = structuredClone(spec);
    computeFixups(spec, await fixtureProfile('android-3.10.49'));
    expect(spec).toEqual(before);
  });
});

describe('applyFixups', () => {
  it('patches exactly the planned instruction and leaves the input spec alone', async () => {
    const spec = await exampleSpec('syscount');
    const original = new Uint8Array(spec.programs[0]!.instructions);
    const plan = computeFixups(spec, await fixtureProfile('android-3.10.49'));
    const out = applyFixups(spec, plan);
    expect(hex(original, 0)).toBe('7911080000000000');
    expect(hex(out.programs[0]!.instructions, 0)).toBe('8111080000000000');
    expect(out.programs[0]!.instructions.subarray(8)).toEqual(original.subarray(8));
    expect(spec.programs[0]!.instructions).toEqual(original);
    expect(out.programs[0]!.fieldRelocations[0]).toMatchObject({ accessSize: 4, built: { byteOffset: 8, size: 4, signed: true } });
  });

  it('writes a poison as `call 0xbad2310`', async () => {
    const spec = await exampleSpec('runqlat');
    const out = applyFixups(spec, computeFixups(spec, await fixtureProfile('linux-6.18')));
    const wakeup = out.programs.find((p) => p.name === 'on_wakeup')!;
    expect(POISON_HELPER_ID).toBe(195896080);
    expect(hex(wakeup.instructions, 2)).toBe('850000001023ad0b'); // call 0xbad2310
    expect(hex(wakeup.instructions, 0)).toBe('b702000000000000'); // r2 = 0 (exists)
  });

  it('applies a hand-written plan (the step is separate from computing)', async () => {
    const spec = await exampleSpec('syscount');
    const plan: FixupPlan = {
      profileHash: 'x',
      specDigest: spec.digest,
      programs: [
        {
          program: 'count_syscalls',
          event: 'raw_syscalls/sys_enter',
          format: undefined,
          pinned: [],
          fixups: [
            {
              insnIndex: 0,
              access: { ...spec.programs[0]!.fieldRelocations[0]!, nameSource: 'core' },
              target: undefined,
              text: 'test',
              action: 'patch',
              before: { opcode: 0x79, off: 8, imm: 0 },
              after: { opcode: 0x61, off: 12, imm: 0 },
              changed: true,
            },
          ],
        },
      ],
    };
    expect(hex(applyFixups(spec, plan).programs[0]!.instructions, 0)).toBe('61110c0000000000');
  });

  it('refuses a plan computed for other instructions (invalid-fixup)', async () => {
    const spec = await exampleSpec('syscount');
    const plan = computeFixups(spec, await fixtureProfile('android-3.10.49'));
    const other = await exampleSpec('runqlat');
    const mismatched = { ...plan, programs: plan.programs.map((p) => ({ ...p, program: 'on_switch' })) };
    expect(() => applyFixups(other, mismatched)).toThrow(CompatError);
    try {
      applyFixups(other, mismatched);
    } catch (e) {
      expect((e as CompatError).code).toBe('invalid-fixup');
    }
  });
});

describe('computeFixups: CO-RE field info takes the profile truth', () => {
  it.each([
    ['linux-6.18', [8, 1, 16, 1]],
    ['android-3.10.49', [4, 1, 16, 1]],
  ] as const)('test/fixtures/objects/field_info.o on %s', async (kernel, values) => {
    const spec = await readProgramSpec(new Uint8Array(readFileSync(join(fixturesDir, 'objects', 'field_info.o'))));
    const plan = computeFixups(spec, await fixtureProfile(kernel));
    const fixups = plan.programs[0]!.fixups;
    expect(fixups.map((f) => f.access.kind)).toEqual(['byte-size', 'signed', 'byte-size', 'exists']);
    expect(fixups.map((f) => (f.action === 'patch' ? f.after.imm : undefined))).toEqual(values);
  });
});

describe('computeFixups: habits of real programs', () => {
  const classStruct = () => readProgramSpec(new Uint8Array(readFileSync(join(fixturesDir, 'objects', 'class_struct.o'))));

  it('a record struct named after the event class resolves against the attach event', async () => {
    const plan = computeFixups(await classStruct(), await fixtureProfile('android-3.4.0'));
    const p = plan.programs.find((x) => x.program === 'class_pid')!;
    expect(p.fixups.map((f) => [f.access.event, f.access.field, f.text])).toEqual([['sched_wakeup_template', 'pid', 'pid: offset 24 → 28']]);
  });

  it('an address whose copy length is a CO-RE size follows a narrower field', async () => {
    const plan = computeFixups(await classStruct(), await fixtureProfile('android-3.10.49'));
    const p = plan.programs.find((x) => x.program === 'sized_state')!;
    expect(p.fixups.map((f) => [f.access.kind, f.action, f.action === 'patch' ? f.after.imm : f.reason])).toEqual([
      ['byte-offset', 'patch', 32],
      ['byte-size', 'patch', 4],
    ]);
  });
});

describe('computeFixups: arrays whose element size changed', () => {
  const source = `.section tracepoint/raw_syscalls/sys_enter
  r0 = *(u64 *)(r1 + sys_enter.args + 8)
  r2 = *(u32 *)(r1 + sys_enter.args + 4)
  exit
`;
  it('reads the same element at the new element size (args[1] on 32-bit 3.10.49)', async () => {
    const spec = await readProgramSpec(new TextEncoder().encode(source), { buildFormats: [fixtureFormat('linux-6.18', 'raw_syscalls/sys_enter')] });
    const plan = computeFixups(spec, await fixtureProfile('android-3.10.49'));
    const [elem, half] = plan.programs[0]!.fixups;
    // 79 10 18 00: r0 = *(u64 *)(r1 + 24)  →  61 10 10 00: r0 = *(u32 *)(r1 + 16)
    expect(elem).toMatchObject({ action: 'patch', before: { opcode: 0x79, off: 24 }, after: { opcode: 0x61, off: 16 }, text: 'args[1]: offset 24 → 16, load size 8 → 4' });
    // half an element cannot be mapped onto a 4-byte element
    expect(half).toMatchObject({ action: 'poison', reason: 'size-unbridgeable' });
  });
});
