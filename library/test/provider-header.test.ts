// library/include/probeyard/provider.h declares the arguments record of every probe of the
// library's providers: the same arguments, in the same order, with the same types as
// library/providers/*.json, laid out as packages/compat synthesizes the record (a C program built
// with the header is then `compatible`, no field moved, wherever the probe resolves).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { providerArgsLayout } from '@probeyard/compat';
import { describe, expect, it } from 'vitest';
import { libraryProviders } from '../src/providers.js';

const headerPath = join(import.meta.dirname, '..', 'include', 'probeyard', 'provider.h');

/** Each `PY_ARGS(provider, probe) { PY_COMMON; PY_INT(a); PY_STRING(b); … } PY_RECORD;` of the header. */
function headerRecords(): Map<string, { name: string; type: 'int' | 'string' }[]> {
  const text = readFileSync(headerPath, 'utf8');
  const out = new Map<string, { name: string; type: 'int' | 'string' }[]>();
  for (const m of text.matchAll(/^PY_ARGS\((\w+), (\w+)\) \{ PY_COMMON; ([^}]*)\} PY_RECORD;$/gm)) {
    const members = [...m[3]!.matchAll(/PY_(INT|STRING)\((\w+)\);/g)].map((a) => ({ name: a[2]!, type: a[1] === 'INT' ? ('int' as const) : ('string' as const) }));
    out.set(`${m[1]}:::${m[2]}`, members);
  }
  return out;
}

/** The C layout of a record of the header's macros (long long: 8-aligned, unsigned int: 4-aligned, after the 8-byte header). */
function cLayout(members: { name: string; type: 'int' | 'string' }[]): [string, number][] {
  let at = 8;
  return members.map((m) => {
    const size = m.type === 'int' ? 8 : 4;
    at = Math.ceil(at / size) * size;
    const out: [string, number] = [m.name, at];
    at += size;
    return out;
  });
}

describe('provider.h', () => {
  const records = headerRecords();
  const probes = libraryProviders().flatMap((p) => p.probes.map((probe) => ({ key: `${p.name}:::${probe.name}`, args: probe.args })));

  it('declares exactly the probes of the library providers', () => {
    expect([...records.keys()].sort()).toEqual(probes.map((p) => p.key).sort());
  });

  it.each(probes.map((p) => [p.key, p.args] as const))('%s: the arguments, their order, types and offsets', (key, args) => {
    const members = records.get(key)!;
    expect(members).toEqual(args.map((a) => ({ name: a.name, type: a.type })));
    expect(cLayout(members)).toEqual(providerArgsLayout(args).fields.map((f) => [f.name, f.byteOffset]));
  });
});
