import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturesDir } from '../test/fixtures.js';
import { type DisplayHint, parseDisplayHint, parseDisplayTag } from './display-hint.js';
import { CompatError } from './errors.js';
import { type ProgramSpec, readProgramSpec } from './program-spec.js';
import { specFromJson, specToJson } from './spec-json.js';

describe('parseDisplayHint', () => {
  it.each<[unknown, DisplayHint]>([
    [{ kind: 'counts' }, { kind: 'counts' }],
    [{ kind: 'log2-histogram', bucket: 'bpftrace', unit: 'ns' }, { kind: 'log2-histogram', bucket: 'bpftrace', unit: 'ns' }],
    [{ kind: 'linear-histogram', min: 0, max: 100, step: 10, source: 'script' }, { kind: 'linear-histogram', min: 0, max: 100, step: 10, source: 'script' }],
    [{ kind: 'events' }, { kind: 'events' }],
    [{ kind: 'hidden', source: 'convention' }, { kind: 'hidden', source: 'convention' }],
  ])('reads %j', (input, want) => {
    expect(parseDisplayHint(input)).toEqual(want);
  });

  it.each<[unknown, string]>([
    [null, 'display hint display: want an object'],
    [{ kind: 'pie' }, "display hint display: unknown kind 'pie'"],
    [{ kind: 'log2-histogram' }, "display hint display: bucket: unknown 'undefined'"],
    [{ kind: 'linear-histogram', min: 10, max: 10, step: 1 }, 'display hint display: want min < max and step > 0, got min 10, max 10, step 1'],
    [{ kind: 'linear-histogram', min: 0, max: 10, step: 0.5 }, 'display hint display: step: want an integer'],
    [{ kind: 'counts', unit: 'x'.repeat(33) }, 'display hint display: unit: want a string of at most 32 characters'],
  ])('refuses %j', (input, message) => {
    expect(() => parseDisplayHint(input)).toThrow(new CompatError('malformed', message));
  });

  it('travels inside a spec through its JSON form', () => {
    const spec: ProgramSpec = {
      sourceKind: 'asm',
      digest: '00'.repeat(32),
      byteLength: 0,
      license: 'GPL',
      programs: [],
      maps: [{ name: 'lat', type: 2, typeName: 'array', keySize: 4, valueSize: 8, maxEntries: 64, flags: 0, display: { kind: 'log2-histogram', bucket: 'libbpf-tools', unit: 'us' } }],
      globals: [],
      buildLayouts: [],
      pinnedLayouts: {},
    };
    expect(specFromJson(JSON.stringify(specToJson(spec)))).toEqual(spec);
    const json = specToJson(spec) as unknown as { maps: { display: unknown }[] };
    json.maps[0]!.display = { kind: 'bars' };
    expect(() => specFromJson(json)).toThrow("display hint spec.maps[0].display: unknown kind 'bars'");
  });
});

describe('parseDisplayTag', () => {
  it.each<[string, DisplayHint]>([
    ['probeyard.display:hidden', { kind: 'hidden', source: 'metadata' }],
    ['probeyard.display:log2-histogram,bucket=libbpf-tools,unit=us', { kind: 'log2-histogram', bucket: 'libbpf-tools', unit: 'us', source: 'metadata' }],
    ['probeyard.display:linear-histogram, min=-10, max=100, step=10', { kind: 'linear-histogram', min: -10, max: 100, step: 10, source: 'metadata' }],
  ])('reads %s', (text, want) => {
    expect(parseDisplayTag(text)).toEqual(want);
  });

  it.each<[string, string]>([
    ['display:hidden', "display hint display tag: want 'probeyard.display:KIND[,key=value...]', got 'display:hidden'"],
    ['probeyard.display:counts,unit', "display hint display tag: 'unit' is not key=value"],
    ['probeyard.display:counts,source=script', "display hint display tag: 'source' cannot be set by a pair"],
    ['probeyard.display:bars', "display hint display tag: unknown kind 'bars'"],
  ])('refuses %s', (text, message) => {
    expect(() => parseDisplayTag(text)).toThrow(message);
  });

  it('comes from the BTF declaration tags of a C object (test/fixtures/objects/display_tags.c)', async () => {
    const spec = await readProgramSpec(new Uint8Array(readFileSync(join(fixturesDir, 'objects', 'display_tags.o'))));
    const byName = Object.fromEntries(spec.maps.map((m) => [m.name, m.display]));
    expect(byName).toEqual({
      started_ns: { kind: 'hidden', source: 'metadata' },
      switch_gap: { kind: 'log2-histogram', bucket: 'libbpf-tools', unit: 'us', source: 'metadata' },
      switches: undefined,
    });
  });
});
