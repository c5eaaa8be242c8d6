import { parseEventFormat, type EventFormat } from '@probeyard/formats';
import { describe, expect, it } from 'vitest';
import { fixtureFormat, fixtureProfile } from '../test/fixtures.js';
import { CompatError } from './errors.js';
import { formatProvider, type ProviderKernel, parseProvider, parseProviderArgExpression, providerKernelOf, providerSummary, resolveProviderProbe } from './provider.js';

/** A kernel of a few formats; `complete` says whether an absent event is a fact. */
function kernelOf(formats: EventFormat[], complete = true): ProviderKernel {
  const by = new Map(formats.map((f) => [`${f.system}/${f.name}`, f]));
  return { hasEvent: (s, e) => (by.has(`${s}/${e}`) ? true : complete ? false : undefined), format: (s, e) => by.get(`${s}/${e}`) };
}

const header = `\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
`;
const completeFormat = (errorField: 'errors' | 'error') =>
  parseEventFormat(
    `name: block_rq_complete\nID: 392\nformat:\n${header}
\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:int ${errorField};\toffset:28;\tsize:4;\tsigned:1;
\tfield:char rwbs[8];\toffset:32;\tsize:8;\tsigned:0;

print fmt: "%d", REC->${errorField}
`,
    { system: 'block' },
  );

const proc = JSON.stringify({
  provider: 'proc',
  version: '1.2.0',
  description: 'processes',
  probes: {
    fork: {
      args: { parent_pid: 'int', parent_comm: 'string', child_pid: 'int' },
      implementations: [
        { for: 'inline parent_comm', tracepoint: 'sched/sched_process_fork', when: [{ field: 'parent_comm', kind: 'char[]' }], args: { parent_pid: 'args.parent_pid', parent_comm: 'args.parent_comm', child_pid: 'args.child_pid' } },
        { for: '__data_loc parent_comm', tracepoint: 'sched/sched_process_fork', when: [{ field: 'parent_comm', kind: '__data_loc' }], args: { parent_pid: 'args.parent_pid', parent_comm: 'str(args.parent_comm)', child_pid: 'args.child_pid' } },
      ],
    },
  },
});

const io = JSON.stringify({
  provider: 'io',
  version: '1.0.0',
  probes: {
    done: {
      args: { dev: 'int', sector: 'int', bytes: 'int', error: 'int' },
      implementations: [
        { for: 'error', tracepoint: 'block/block_rq_complete', args: { dev: 'args.dev', sector: 'args.sector', bytes: 'args.nr_sector << 9', error: 'args.error' } },
        { for: 'errors (before 4.20)', tracepoint: 'block/block_rq_complete', when: [{ field: 'error', absent: true }], args: { dev: 'args.dev', sector: 'args.sector', bytes: 'args.nr_sector * 512', error: 'args.errors' } },
      ],
    },
  },
});

describe('parseProvider', () => {
  it('reads the JSON text, and formatProvider writes it back to an equal definition', () => {
    const p = parseProvider(proc);
    expect(p.name).toBe('proc');
    expect(p.probes[0]!.args).toEqual([
      { name: 'parent_pid', type: 'int' },
      { name: 'parent_comm', type: 'string' },
      { name: 'child_pid', type: 'int' },
    ]);
    expect(p.probes[0]!.implementations[1]).toEqual({
      for: '__data_loc parent_comm',
      system: 'sched',
      event: 'sched_process_fork',
      when: [{ field: 'parent_comm', kind: '__data_loc' }],
      args: { parent_pid: 'args.parent_pid', parent_comm: 'str(args.parent_comm)', child_pid: 'args.child_pid' },
    });
    expect(parseProvider(formatProvider(p))).toEqual(p);
  });

  const withImpl = (impl: Record<string, unknown>) => JSON.stringify({ provider: 'p', version: '1.0.0', probes: { x: { args: { a: 'int' }, implementations: [{ for: 'it', tracepoint: 's/e', ...impl }] } } });
  it.each([
    ['not JSON', '{', 'provider: not JSON'],
    ['a bad name', JSON.stringify({ provider: 'Proc!', version: '1.0.0', probes: {} }), 'provider.provider: want a lowercase name'],
    ['a bad version', JSON.stringify({ provider: 'proc', version: '1.0', probes: { x: {} } }), 'provider proc: version: want semver'],
    ['no probes', JSON.stringify({ provider: 'proc', version: '1.0.0', probes: {} }), 'probes: want an object of probes by name'],
    ['an argument type', JSON.stringify({ provider: 'p', version: '1.0.0', probes: { x: { args: { a: 'float' }, implementations: [] } } }), "args.a: want 'int' or 'string'"],
    ['a missing argument expression', withImpl({ args: {} }), 'implementations[0].args.a: missing'],
    ['an argument the probe lacks', withImpl({ args: { a: 'args.a', b: 'args.b' } }), "implementations[0].args.b: the probe has no argument 'b'"],
    ['an expression that does not parse', withImpl({ args: { a: 'args.a +' } }), "implementations[0].args.a: 'args.a +': unexpected end"],
    ['a function that is not allowed', withImpl({ args: { a: 'nsecs' } }), "'nsecs' is not allowed"],
    ['a condition kind', withImpl({ args: { a: 'args.a' }, when: [{ field: 'a', kind: 'float' }] }), 'when[0].kind: want one of __data_loc, char[], int, int[]'],
    ['an unknown key', withImpl({ args: { a: 'args.a' }, tracepont: 'x' }), "unknown key 'tracepont'"],
  ])('refuses %s', (_name, text, message) => {
    let error: unknown;
    try {
      parseProvider(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CompatError);
    expect((error as CompatError).code).toBe('malformed');
    expect((error as CompatError).message).toContain(message);
  });

  it('argument expressions: fields, indexes, str() and arithmetic', () => {
    expect(parseProviderArgExpression('args.args[2]')).toEqual({ kind: 'field', name: 'args', index: true });
    expect(parseProviderArgExpression('str(args->filename, 64)')).toEqual({ kind: 'str', inner: { kind: 'field', name: 'filename', index: false } });
    expect(parseProviderArgExpression('(args.nr_sector << 9) & 0xffff')).toEqual({ kind: 'op', operands: [{ kind: 'op', operands: [{ kind: 'field', name: 'nr_sector', index: false }, { kind: 'int' }] }, { kind: 'int' }] });
  });
});

describe('resolveProviderProbe', () => {
  it('fork on 6.18 (parent_comm is __data_loc) takes the __data_loc implementation, saying why not the first', async () => {
    const r = resolveProviderProbe(parseProvider(proc), 'fork', providerKernelOf(await fixtureProfile('linux-6.18')));
    expect(r).toMatchObject({
      ok: true,
      implementation: '__data_loc parent_comm',
      system: 'sched',
      event: 'sched_process_fork',
      fields: ['child_pid', 'parent_comm', 'parent_pid'],
      via: 'proc@1.2.0, implementation for __data_loc parent_comm',
      skipped: [{ for: 'inline parent_comm', event: 'sched/sched_process_fork', reason: 'sched/sched_process_fork.parent_comm is __data_loc, not char[]', unknown: false }],
    });
  });

  it('fork on 3.4.0 (inline char[16]) takes the first implementation', async () => {
    const r = resolveProviderProbe(parseProvider(proc), 'fork', providerKernelOf(await fixtureProfile('android-3.4.0')));
    expect(r.ok && r.via).toBe('proc@1.2.0, implementation for inline parent_comm');
  });

  it.each([
    ['error', 'error', "args.error", []],
    ['errors', 'errors (before 4.20)', 'args.errors', ['implementation for error: args.error = args.error: block/block_rq_complete has no field error']],
  ] as const)('io:::done where the field is %s', (field, implementation, errorExpr, skipped) => {
    const r = resolveProviderProbe(parseProvider(io), 'done', kernelOf([completeFormat(field)]));
    if (!r.ok) throw new Error(r.reason);
    expect(r.implementation).toBe(implementation);
    expect(r.args.error).toBe(errorExpr);
    expect(r.skipped.map((s) => `implementation for ${s.for}: ${s.reason}`)).toEqual(skipped);
  });

  it('an event that a complete kernel lacks is incompatible, one a partial kernel does not list is unknown', () => {
    const none = resolveProviderProbe(parseProvider(io), 'done', kernelOf([]));
    expect(none).toMatchObject({ ok: false, status: 'incompatible' });
    expect(none.ok ? '' : none.reason).toBe('io@1.0.0 cannot implement io:::done here: implementation for error: no event block/block_rq_complete; implementation for errors (before 4.20): no event block/block_rq_complete');
    expect(resolveProviderProbe(parseProvider(io), 'done', kernelOf([], false))).toMatchObject({ ok: false, status: 'unknown' });
  });

  it('a declared type must match the field the expression reads', () => {
    const p = parseProvider(JSON.stringify({ provider: 'p', version: '1.0.0', probes: { x: { args: { comm: 'int' }, implementations: [{ for: 'it', tracepoint: 'sched/sched_process_fork', args: { comm: 'args.parent_comm' } }] } } }));
    const r = resolveProviderProbe(p, 'x', kernelOf([fixtureFormat('linux-6.18', 'sched/sched_process_fork')]));
    expect(r.ok ? '' : r.reason).toBe('p@1.0.0 cannot implement p:::x here: implementation for it: args.comm = args.parent_comm: a string on sched/sched_process_fork, the probe declares int');
  });

  it('an unknown probe names the probes there are', () => {
    const r = resolveProviderProbe(parseProvider(io), 'start', kernelOf([]));
    expect(r.ok ? '' : r.reason).toBe("io@1.0.0 has no probe 'start' (its probes: done)");
  });

  it('providerSummary lists each implementation with its event and fields', () => {
    expect(providerSummary(parseProvider(io))[0]!.implementations).toEqual([
      { for: 'error', event: 'block/block_rq_complete', fields: ['dev', 'error', 'nr_sector', 'sector'] },
      { for: 'errors (before 4.20)', event: 'block/block_rq_complete', fields: ['dev', 'errors', 'nr_sector', 'sector'] },
    ]);
  });
});
