// The arguments record built per event from real format files' layouts: inline char[16] and
// __data_loc strings, sign- and zero-extension, array elements, script's operators and precedence,
// the common header copied by name (3.4.0's header has a common_padding and a lock_depth).
import { parseEventFormat } from '@probeyard/formats';
import { describe, expect, it } from 'vitest';
import { fixtureFormat, recordOf } from '../test/fixtures.js';
import type { ProviderProbeArg } from './provider.js';
import { providerArgsFormat } from './provider-program.js';
import { providerRecordBuilder } from './provider-record.js';

/** Decodes an arguments record: each int as s64, each string through its locator. */
function decode(bytes: Uint8Array, args: readonly ProviderProbeArg[]): Record<string, bigint | string> {
  const format = providerArgsFormat('t', 'p', args);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, bigint | string> = { common_type: BigInt(view.getUint16(0, true)), common_pid: BigInt(view.getInt32(4, true)) };
  for (const f of format.fields) {
    if (f.dynamic === undefined) {
      out[f.name] = view.getBigInt64(f.byteOffset, true);
      continue;
    }
    const loc = view.getUint32(f.byteOffset, true);
    const text = bytes.subarray(loc & 0xffff, (loc & 0xffff) + (loc >>> 16));
    expect(text[text.length - 1]).toBe(0);
    out[f.name] = new TextDecoder().decode(text.subarray(0, -1));
  }
  return out;
}

const forkArgs: ProviderProbeArg[] = [
  { name: 'parent_pid', type: 'int' },
  { name: 'parent_comm', type: 'string' },
  { name: 'child_pid', type: 'int' },
  { name: 'child_comm', type: 'string' },
];

function build(args: ProviderProbeArg[], exprs: Record<string, string>, raw: ReturnType<typeof parseEventFormat>, record: Uint8Array): Record<string, bigint | string> {
  const binding = { args: args.map((a) => ({ ...a, expression: exprs[a.name]! })), format: providerArgsFormat('t', 'p', args, raw.id) };
  const b = providerRecordBuilder(binding, raw);
  // at an offset inside a bigger buffer, as a feed's page holds it
  const page = new Uint8Array(record.length + 24);
  page.set(record, 16);
  return decode(b(page, 16, record.length), args);
}

describe('providerRecordBuilder', () => {
  it('inline char[16] comms (3.4.0, whose common header is longer) and __data_loc comms (6.18) give the same record', () => {
    const inline = fixtureFormat('android-3.4.0', 'sched/sched_process_fork');
    expect(inline.commonFields.map((f) => f.name)).toContain('common_padding');
    const inlineExprs = { parent_pid: 'args.parent_pid', parent_comm: 'args.parent_comm', child_pid: 'args.child_pid', child_comm: 'args.child_comm' };
    const a = build(forkArgs, inlineExprs, inline, recordOf(inline, { common_pid: 77, parent_pid: 100, parent_comm: 'bash', child_pid: 101, child_comm: 'bash-child' }));
    const dl = fixtureFormat('linux-6.18', 'sched/sched_process_fork');
    const f = (n: string) => dl.fields.find((x) => x.name === n)!;
    // two strings after the fixed part, their locators `len << 16 | offset`
    const tail = new TextEncoder().encode('bash\0bash-child\0');
    const rec = recordOf(dl, { common_pid: 77, parent_pid: 100, child_pid: 101, parent_comm: (5 << 16) | dl.fixedSize, child_comm: (11 << 16) | (dl.fixedSize + 5) }, tail);
    expect(f('parent_comm').dynamic).toBe('data_loc');
    const b = build(forkArgs, { ...inlineExprs, parent_comm: 'str(args.parent_comm)', child_comm: 'str(args.child_comm)' }, dl, rec);
    const want = { parent_pid: 100n, parent_comm: 'bash', child_pid: 101n, child_comm: 'bash-child', common_pid: 77n };
    expect(a).toMatchObject(want);
    expect(b).toMatchObject(want);
    expect(a.common_type).toBe(BigInt(inline.id));
    expect(b.common_type).toBe(BigInt(dl.id));
  });

  it('one builder over many records: a shorter string after a longer one ends at its own NUL', () => {
    const inline = fixtureFormat('android-3.10.49', 'sched/sched_process_fork');
    const exprs = { parent_pid: 'args.parent_pid', parent_comm: 'args.parent_comm', child_pid: 'args.child_pid', child_comm: 'str(args.child_comm)' };
    const b = providerRecordBuilder({ args: forkArgs.map((a) => ({ ...a, expression: exprs[a.name as keyof typeof exprs] })), format: providerArgsFormat('t', 'p', forkArgs, inline.id) }, inline);
    const names: [string, string][] = [
      ['a-long-parent', 'a-long-child-xx'],
      ['sh', 'c'],
      ['', ''],
      ['systemd', 'sd-worker'],
    ];
    for (const [pc, cc] of names) {
      const rec = recordOf(inline, { parent_comm: pc, child_comm: cc, parent_pid: pc.length });
      expect(decode(b(rec, 0, rec.length), forkArgs)).toMatchObject({ parent_comm: pc, child_comm: cc, parent_pid: BigInt(pc.length), child_pid: 0n });
    }
  });

  it('a 16-byte inline comm without a NUL is all 16 characters', () => {
    const inline = fixtureFormat('android-3.10.49', 'sched/sched_process_fork');
    const rec = recordOf(inline, { parent_pid: 1 });
    rec.set(new TextEncoder().encode('abcdefghijklmnop'), inline.fields.find((f) => f.name === 'parent_comm')!.byteOffset);
    const r = build(forkArgs, { parent_pid: 'args.parent_pid', parent_comm: 'args.parent_comm', child_pid: 'args.child_pid', child_comm: 'args.child_comm' }, inline, rec);
    expect(r.parent_comm).toBe('abcdefghijklmnop');
    expect(r.child_comm).toBe('');
  });

  const text = `name: t\nID: 9\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n
\tfield:int neg;\toffset:8;\tsize:4;\tsigned:1;
\tfield:unsigned int big;\toffset:12;\tsize:4;\tsigned:0;
\tfield:unsigned long args[3];\toffset:16;\tsize:24;\tsigned:0;
\tfield:long long s;\toffset:40;\tsize:8;\tsigned:1;
\tfield:char name[8];\toffset:48;\tsize:8;\tsigned:0;

print fmt: "%d", REC->neg
`;
  const raw = parseEventFormat(text, { system: 's' });
  const rec = recordOf(raw, { neg: -5, big: 0xfffffff0, s: -1n, name: 'abcdef' });
  new DataView(rec.buffer).setBigUint64(16 + 8, 42n, true);

  it.each([
    ['args.neg', -5n],
    ['args.big', 0xfffffff0n],
    ['args.args[1]', 42n],
    ['args.args[0]', 0n],
    ['1 + 2 * 3', 7n],
    ['(1 + 2) * 3', 9n],
    ['1 << 2 + 1', 8n],
    ['6 & 3 | 8', 10n],
    ['args.neg * 512', -2560n],
    ['-args.neg', 5n],
    ['~0', -1n],
    // BPF's div and rsh, as script compiles them: unsigned
    ['args.s / 2', 0x7fffffffffffffffn],
    ['args.s >> 60', 15n],
    ['args.s % 16', 15n],
    ['7 / 0', 0n],
    ['0x10 - 1', 15n],
  ])('%s = %s', (expr, want) => {
    const r = build([{ name: 'x', type: 'int' }], { x: expr }, raw, rec);
    expect(r.x).toBe(want);
  });

  it.each([
    ['args.name', 'abcdef'],
    ['str(args.name)', 'abcdef'],
    ['str(args.name, 4)', 'abc'],
  ])('%s = %s', (expr, want) => {
    expect(build([{ name: 'x', type: 'string' }], { x: expr }, raw, rec).x).toBe(want);
  });

  it('a record shorter than its fields reads zeros and empty strings, never outside the record', () => {
    const r = build(
      [
        { name: 'x', type: 'int' },
        { name: 'y', type: 'string' },
      ],
      { x: 'args.s', y: 'args.name' },
      raw,
      rec.subarray(0, 20),
    );
    expect(r).toMatchObject({ x: 0n, y: '' });
  });

  it('refuses an expression over a field the raw format lacks (malformed)', () => {
    const binding = { args: [{ name: 'x', type: 'int' as const, expression: 'args.nope' }], format: providerArgsFormat('t', 'p', [{ name: 'x', type: 'int' }]) };
    expect(() => providerRecordBuilder(binding, raw)).toThrow('s/t has no field nope');
  });
});
