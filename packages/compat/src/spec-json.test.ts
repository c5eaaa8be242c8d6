import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exampleSpec } from '../test/fixtures.js';
import { CompatError } from './errors.js';
import { readProgramSpec } from './program-spec.js';
import type { ProgramSpec, ValueType } from './program-spec.js';
import type { ScriptAction } from './script-spec.js';
import { specFromJson, specToJson } from './spec-json.js';

const roundTrip = (spec: ProgramSpec) => specFromJson(JSON.parse(JSON.stringify(specToJson(spec))));

describe('specToJson / specFromJson', () => {
  it.each(['syscount', 'execsnoop', 'runqlat', 'biolatency', 'switchcomm', 'forkcomm'])('round-trips examples/c/%s.o without loss', async (name) => {
    const spec = await exampleSpec(name);
    expect(roundTrip(spec)).toEqual(spec);
  });

  it('round-trips an assembly spec and its text form', async () => {
    const source = `.license "GPL"\n.map counts hash key=4 value=8 entries=16\n.section tracepoint/sched/sched_switch\n  r2 = *(u32 *)(r1 + sched_switch.next_pid)\n  r1 = counts ll\n  r0 = 0\n  exit\n`;
    const spec = await readProgramSpec(new TextEncoder().encode(source));
    expect(spec.sourceKind).toBe('asm');
    expect(spec.license).toBe('GPL');
    expect(specFromJson(JSON.stringify(specToJson(spec)))).toEqual(spec);
  });

  const valueType: fc.Arbitrary<ValueType> = fc.letrec<{ t: ValueType }>((tie) => ({
    t: fc.oneof(
      { depthSize: 'small' },
      fc.record({ kind: fc.constant('int' as const), size: fc.constantFrom(1 as const, 2 as const, 4 as const, 8 as const), signed: fc.boolean() }),
      fc.record({ kind: fc.constant('string' as const), size: fc.nat(64) }),
      fc.record({ kind: fc.constant('array' as const), element: tie('t'), length: fc.nat(8) }),
      fc.record({ kind: fc.constant('struct' as const), fields: fc.array(fc.record({ name: fc.string(), offset: fc.nat(64), type: tie('t') }), { maxLength: 3 }) }),
    ),
  })).t;

  const action: fc.Arbitrary<ScriptAction> = fc.oneof(
    fc.record({
      kind: fc.constant('printf' as const),
      format: fc.string(),
      args: fc.array(fc.record({ byteOffset: fc.nat(512), type: valueType }), { maxLength: 3 }),
    }),
    fc.record({ kind: fc.constant('print' as const), map: fc.constant(0), top: fc.nat(10), div: fc.nat(10) }),
    fc.record({ kind: fc.constantFrom('clear' as const, 'zero' as const), map: fc.constant(0) }),
    fc.record({ kind: fc.constant('time' as const), format: fc.string() }),
    fc.record({ kind: fc.constant('exit' as const) }),
  );

  const spec: fc.Arbitrary<ProgramSpec> = fc.record({
    sourceKind: fc.constantFrom('elf' as const, 'asm' as const, 'script' as const),
    digest: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
    byteLength: fc.nat(),
    license: fc.option(fc.string(), { nil: undefined }),
    programs: fc.array(
      fc.record({
        name: fc.string(),
        section: fc.string(),
        attach: fc.oneof(
          fc.record({ kind: fc.constant('tracepoint' as const), system: fc.string(), event: fc.string() }),
          fc.record({ kind: fc.constant('other' as const), section: fc.string() }),
        ),
        instructions: fc.array(fc.uint8Array({ minLength: 8, maxLength: 8 }), { maxLength: 6 }).map((a) => {
          const out = new Uint8Array(a.length * 8);
          for (const [i, x] of a.entries()) out.set(x, i * 8);
          return out;
        }),
        fieldRelocations: fc.array(
          fc.record({
            insnIndex: fc.nat(100),
            source: fc.constantFrom('core' as const, 'asm' as const, 'script' as const),
            kind: fc.constantFrom('byte-offset' as const, 'byte-size' as const, 'exists' as const, 'signed' as const),
            event: fc.string(),
            flavor: fc.string(),
            field: fc.string(),
            dataLoc: fc.boolean(),
            addend: fc.integer({ min: -16, max: 16 }),
            accessSize: fc.nat(16),
            built: fc.option(fc.record({ byteOffset: fc.nat(200), size: fc.nat(16), signed: fc.boolean(), array: fc.boolean(), arrayLength: fc.nat(16) }, { requiredKeys: ['byteOffset', 'size', 'signed', 'array'] }), { nil: undefined }),
          }),
          { maxLength: 4 },
        ),
      }),
      { maxLength: 3 },
    ),
    maps: fc.array(
      fc.record(
        {
          name: fc.string(),
          type: fc.nat(40),
          typeName: fc.string(),
          keySize: fc.nat(64),
          valueSize: fc.nat(64),
          maxEntries: fc.nat(),
          flags: fc.nat(),
          keyType: valueType,
          valueType: valueType,
          globalSection: fc.string(),
          readonly: fc.boolean(),
        },
        { requiredKeys: ['name', 'type', 'typeName', 'keySize', 'valueSize', 'maxEntries', 'flags'] },
      ),
      { maxLength: 3 },
    ),
    globals: fc.array(
      fc.record(
        {
          section: fc.string(),
          kind: fc.constantFrom('rodata' as const, 'data' as const, 'bss' as const),
          size: fc.nat(64),
          bytes: fc.uint8Array({ maxLength: 16 }),
          vars: fc.array(fc.record({ name: fc.string(), byteOffset: fc.nat(64), size: fc.nat(8) }), { maxLength: 2 }),
        },
        { requiredKeys: ['section', 'kind', 'size', 'vars'] },
      ),
      { maxLength: 2 },
    ),
    buildLayouts: fc.array(
      fc.record({
        system: fc.string(),
        event: fc.string(),
        fields: fc.array(
          fc.record(
            {
              name: fc.string(),
              type: fc.string(),
              byteOffset: fc.nat(100),
              size: fc.nat(16),
              signed: fc.boolean(),
              arrayLength: fc.nat(16),
              dynamic: fc.constantFrom('data_loc' as const, 'rel_loc' as const),
              isCommon: fc.boolean(),
            },
            { requiredKeys: ['name', 'type', 'byteOffset', 'size', 'signed', 'isCommon'] },
          ),
          { maxLength: 3 },
        ),
      }),
      { maxLength: 2 },
    ),
    pinnedLayouts: fc.dictionary(fc.string().filter((k) => k !== '__proto__'), fc.string()),
  }).chain((s) =>
    s.maps.length === 0
      ? fc.constant(s)
      : fc
          .option(fc.record({ source: fc.string(), outputMap: fc.constant(0), actions: fc.array(action, { maxLength: 4 }) }), { nil: undefined })
          .map((script) => (script === undefined ? s : { ...s, script })),
  );

  it('specFromJson(specToJson(s)) equals s for any spec (fast-check)', () => {
    fc.assert(
      fc.property(spec, (s) => {
        expect(roundTrip(s)).toEqual(s);
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    ['not json', '{', /program spec json/],
    ['wrong version', { version: 2 }, /spec\.version: want 1/],
    ['odd hex', { ...base(), programs: [{ name: 'p', section: 's', attach: { kind: 'other', section: 's' }, instructions: 'abc', fieldRelocations: [] }] }, /instructions: not a hex string/],
    ['a script action naming a map that is not there', { ...base(), script: { source: '', outputMap: -1, actions: [{ kind: 'clear', map: 3 }] } }, /actions\[0\]\.map: map 3 is not one of the 0 maps/],
    ['an unknown script action', { ...base(), script: { source: '', outputMap: -1, actions: [{ kind: 'system' }] } }, /actions\[0\]\.kind: unknown 'system'/],
    ['bad relocation kind', { ...base(), programs: [{ name: 'p', section: 's', attach: { kind: 'other', section: 's' }, instructions: '', fieldRelocations: [{ kind: 'nope' }] }] }, /fieldRelocations\[0\]\.kind: unknown 'nope'/],
  ])('refuses %s with a malformed CompatError', (_name, json, message) => {
    let err: unknown;
    try {
      specFromJson(json);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CompatError);
    expect((err as CompatError).code).toBe('malformed');
    expect((err as Error).message).toMatch(message);
  });
});

function base() {
  return { version: 1, sourceKind: 'asm', digest: '', byteLength: 0, license: null, programs: [], maps: [], globals: [], buildLayouts: [], pinnedLayouts: {} };
}
