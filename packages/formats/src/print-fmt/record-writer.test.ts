import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fixtureFormat } from '../../test/support/fixtures.js';
import { type EventFormat, parseEventFormat } from '../event-format/event-format.js';
import { formatRecord } from './format-record.js';
import { compileRecordWriter } from './record-writer.js';
import type { RenderEnv } from './render-env.js';
import { TextWriter } from './text-writer.js';

/** A format with every integer size and sign, and a print fmt using them with flags and widths. */
const mixedText = `name: mixed
ID: 900
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:s8 a;\toffset:8;\tsize:1;\tsigned:1;
\tfield:u16 b;\toffset:10;\tsize:2;\tsigned:0;
\tfield:int c;\toffset:12;\tsize:4;\tsigned:1;
\tfield:unsigned int d;\toffset:16;\tsize:4;\tsigned:0;
\tfield:s64 e;\toffset:24;\tsize:8;\tsigned:1;
\tfield:u64 f;\toffset:32;\tsize:8;\tsigned:0;
\tfield:unsigned long g[2];\toffset:40;\tsize:16;\tsigned:0;

print fmt: "a=%d b=%u c=%03d d=%#x e=%lld f=%llu f=%llx F=%llX g=%lx,%08lx c=%u d=%d a=%x e=%-6lld| o=%o f=%ld X=%X", REC->a, REC->b, REC->c, REC->d, REC->e, REC->f, REC->f, REC->f, REC->g[0], REC->g[1], REC->c, REC->d, REC->a, REC->e, REC->d, REC->f, REC->c
`;
const mixed = parseEventFormat(mixedText, { system: 'test' });

const formats: [string, EventFormat][] = [
  ['mixed', mixed],
  ['sys_enter', fixtureFormat('linux-6.18', 'raw_syscalls/sys_enter')],
  ['sys_exit', fixtureFormat('linux-6.18', 'raw_syscalls/sys_exit')],
];

function viaWriter(format: EventFormat, record: Uint8Array, env: RenderEnv): string | undefined {
  const w = compileRecordWriter(format, env);
  if (!w) throw new Error(`no writer for ${format.name}`);
  const out = new TextWriter(8);
  out.text('>');
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  if (!w(view, 0, record.byteLength, out)) return undefined;
  return out.take().slice(1);
}

describe('compileRecordWriter', () => {
  it.each(formats)('%s: writes exactly what formatRecord returns, for random bytes, both byte orders and long sizes', (_name, format) => {
    let written = 0;
    let declined = 0;
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: format.fixedSize, maxLength: format.fixedSize + 8 }),
        fc.oneof({ arbitrary: fc.constant(undefined), weight: 7 }, { arbitrary: fc.nat({ max: format.fixedSize }), weight: 1 }),
        fc.boolean(),
        fc.constantFrom(4 as const, 8 as const),
        fc.boolean(),
        (bytes, cut, littleEndian, longSize, small) => {
          // Small values (high halves zero or all ones) reach the number fast paths more often.
          const record = bytes.slice(0, cut ?? bytes.length);
          if (small) for (let k = 8; k < record.length; k += 8) record.fill(record[k]! & 1 ? 0xff : 0, k + 4 - (littleEndian ? 0 : 4), k + 8 - (littleEndian ? 0 : 4));
          const env: RenderEnv = { littleEndian, longSize };
          const text = viaWriter(format, record, env);
          if (text === undefined) declined++;
          else {
            written++;
            expect(text).toBe(formatRecord(format, record, env));
          }
        },
      ),
      { numRuns: 400, seed: 2217 }, // fixed: the coverage counts below are the same on every run
    );
    expect(written).toBeGreaterThan(50);
    expect(declined).toBeGreaterThan(0); // short records at least
  });

  it('declines a record whose value needs BigInt or a narrow C type, and the report renders it instead', () => {
    const narrow = parseEventFormat(mixedText.replace(/print fmt: .*/, 'print fmt: "b=%hhx", REC->b'), { system: 'test' });
    const record = new Uint8Array(mixed.fixedSize);
    expect(viaWriter(narrow, record, {})).toBeUndefined();
    new DataView(record.buffer).setBigInt64(24, -(2n ** 60n), true); // e: beyond 2^53
    expect(viaWriter(mixed, record, {})).toBeUndefined();
    expect(formatRecord(mixed, record)).toContain(`e=${-(2n ** 60n)}`);
  });

  it('writes sys_enter as trace-cmd prints it', () => {
    const f = fixtureFormat('linux-6.18', 'raw_syscalls/sys_enter');
    const record = new Uint8Array(64);
    const v = new DataView(record.buffer);
    v.setBigInt64(8, 257n, true);
    for (const [k, a] of [0xffffff9cn, 0x7fb1a7b7dbe1n, 0x80000n, 0n, 8n, 0xffffffffffffffffn].entries()) v.setBigUint64(16 + 8 * k, a, true);
    expect(viaWriter(f, record, { longSize: 8 })).toBe('NR 257 (ffffff9c, 7fb1a7b7dbe1, 80000, 0, 8, ffffffffffffffff)');
  });

  it.each([
    ['sched/sched_switch', 'trace-cmd has its own handler'],
    ['sched/sched_process_fork', 'strings'],
    ['ftrace/bprint', 'trace_printk'],
    ['syscalls/sys_enter_openat', 'casts are not plain field reads'],
  ])('leaves %s to formatRecord (%s)', (event) => {
    expect(compileRecordWriter(fixtureFormat('linux-6.18', event))).toBeUndefined();
  });
});
