import { describe, expect, it } from 'vitest';
import { fixtureFormat, fixtureText } from '../../test/support/fixtures.js';
import { buildRecord } from '../../test/support/build-record.js';
import { FormatError } from '../errors.js';
import { findField, parseEventFormat } from './event-format.js';
import { readDynamicLocation, readFieldBigInt, readFieldNumber, readFieldString } from './field-read.js';

const common = `\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
`;

function formatText(fields: string, printFmt = '"x"'): string {
  return `name: test_event\nID: 77\nformat:\n${common}\n${fields}\nprint fmt: ${printFmt}\n`;
}

describe('parseEventFormat', () => {
  it('parses sched_switch of 6.18 field by field', () => {
    const f = fixtureFormat('linux-6.18', 'sched/sched_switch');
    expect(f.name).toBe('sched_switch');
    expect(f.system).toBe('sched');
    expect(f.id).toBe(372);
    expect(f.commonFields.map((c) => c.name)).toEqual(['common_type', 'common_flags', 'common_preempt_count', 'common_pid']);
    expect(f.commonFields.every((c) => c.isCommon)).toBe(true);
    expect(f.fields.map((x) => [x.name, x.type, x.byteOffset, x.size, x.signed])).toEqual([
      ['prev_comm', 'char', 8, 16, false],
      ['prev_pid', 'pid_t', 24, 4, true],
      ['prev_prio', 'int', 28, 4, true],
      ['prev_state', 'long', 32, 8, true],
      ['next_comm', 'char', 40, 16, false],
      ['next_pid', 'pid_t', 56, 4, true],
      ['next_prio', 'int', 60, 4, true],
    ]);
    expect(f.fields[0]).toMatchObject({ declaration: 'char prev_comm[16]', array: { length: 16, lengthText: '16' }, dynamic: undefined, isCommon: false });
    expect(f.fixedSize).toBe(64);
    expect(f.longSize).toBe(8);
    expect(f.printFmt?.args).toHaveLength(8);
    expect(f.printFmtText.startsWith('"prev_comm=%s')).toBe(true);
  });

  it('reads 4-byte long and common_padding of a 32-bit kernel (3.4.0 ARM)', () => {
    const f = fixtureFormat('android-3.4.0', 'sched/sched_switch');
    expect(f.longSize).toBe(4);
    expect(f.commonFields.map((c) => c.name)).toContain('common_padding');
    expect(findField(f, 'prev_state')).toMatchObject({ type: 'long', size: 4, byteOffset: 36 });
  });

  it('syscall fields print C types but are 8 bytes: offset/size/signed are trusted', () => {
    const f = fixtureFormat('linux-6.18', 'syscalls/sys_enter_openat');
    expect(findField(f, 'dfd')).toMatchObject({ type: 'int', size: 8, byteOffset: 16, signed: false });
    expect(findField(f, 'filename')).toMatchObject({ type: 'const char *', size: 8 });
    expect(f.longSize).toBeUndefined();
    const rec = buildRecord(f, { __syscall_nr: 257, dfd: 0xffffff9cn, flags: 0x80000 });
    const view = new DataView(rec.buffer);
    expect(readFieldNumber(view, 0, findField(f, 'dfd')!)).toBe(0xffffff9c);
  });

  it.each([
    ['__u8 saddr[sizeof(struct sockaddr_in6)]', 'saddr', '__u8', undefined, 'sizeof(struct sockaddr_in6)'],
    ['char comm[TASK_COMM_LEN]', 'comm', 'char', undefined, 'TASK_COMM_LEN'],
    ['char ssid[32 + 1]', 'ssid', 'char', 33, '32 + 1'],
    ['u64 v[(4 * sizeof(u64)) / sizeof(u64)]', 'v', 'u64', 4, '(4 * sizeof(u64)) / sizeof(u64)'],
    ['u32 buf[]', 'buf', 'u32', undefined, ''],
    ['int m[2][3]', 'm', 'int', 6, '2][3'],
  ])('textual array length: %s', (decl, name, type, length, lengthText) => {
    const f = parseEventFormat(formatText(`\tfield:${decl};\toffset:8;\tsize:28;\tsigned:0;\n`));
    expect(f.fields[0]).toMatchObject({ name, type, array: { length, lengthText }, declaration: decl });
  });

  it('tcp_probe of 5.10 keeps sizeof(struct sockaddr_in6) as text', () => {
    const f = fixtureFormat('android-5.10.43', 'tcp/tcp_probe');
    expect(findField(f, 'saddr')).toMatchObject({ size: 28, array: { length: undefined, lengthText: 'sizeof(struct sockaddr_in6)' } });
  });

  it('parses files without signed: (signedness undefined, guessed from the type when reading)', () => {
    const text = `name: old\nID: 5\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\n\tfield:int common_pid;\toffset:4;\tsize:4;\n\n\tfield:int delta;\toffset:8;\tsize:4;\n\tfield:unsigned int count;\toffset:12;\tsize:4;\n\nprint fmt: "delta=%d count=%u", REC->delta, REC->count\n`;
    const f = parseEventFormat(text);
    expect(f.fields.map((x) => x.signed)).toEqual([undefined, undefined]);
    const rec = buildRecord(f, { delta: -5, count: 0xffffffff });
    const view = new DataView(rec.buffer);
    expect(readFieldNumber(view, 0, f.fields[0]!)).toBe(-5);
    expect(readFieldNumber(view, 0, f.fields[1]!)).toBe(0xffffffff);
  });

  it('data_loc: u32 with offset in the low 16 bits and length in the high 16, from the record start', () => {
    const f = fixtureFormat('linux-6.18', 'irq/irq_handler_entry');
    const name = findField(f, 'name')!;
    expect(name).toMatchObject({ dynamic: 'data_loc', type: 'char', declaration: '__data_loc char[] name', array: undefined });
    const rec = new Uint8Array(40);
    const view = new DataView(rec.buffer);
    view.setUint32(name.byteOffset, (5 << 16) | 20, true);
    rec.set([0x65, 0x74, 0x68, 0x30, 0], 20);
    expect(readDynamicLocation(view, 0, rec.length, name)).toEqual({ byteOffset: 20, length: 5 });
    expect(readFieldString(view, 0, rec.length, name)).toBe('eth0');
  });

  it('rel_loc: the offset counts from the end of the field itself', () => {
    const f = parseEventFormat(formatText('\tfield:__rel_loc char[] msg;\toffset:8;\tsize:4;\tsigned:0;\n', '"%s", __get_rel_str(msg)'));
    const msg = f.fields[0]!;
    expect(msg.dynamic).toBe('rel_loc');
    const rec = new Uint8Array(24);
    const view = new DataView(rec.buffer);
    view.setUint32(8, (3 << 16) | 4, true); // payload at 8 + 4 + 4 = 16
    rec.set([0x68, 0x69, 0], 16);
    expect(readDynamicLocation(view, 0, rec.length, msg)).toEqual({ byteOffset: 16, length: 3 });
    expect(readFieldString(view, 0, rec.length, msg)).toBe('hi');
  });

  it('reads numbers of every size, signed and unsigned, exact 64-bit through BigInt', () => {
    const f = parseEventFormat(formatText(
      '\tfield:s8 a;\toffset:8;\tsize:1;\tsigned:1;\n\tfield:u16 b;\toffset:10;\tsize:2;\tsigned:0;\n\tfield:s64 c;\toffset:16;\tsize:8;\tsigned:1;\n\tfield:u64 d;\toffset:24;\tsize:8;\tsigned:0;\n',
    ));
    const rec = buildRecord(f, { a: -2, b: 0xfffe, c: -3n, d: 0xffffffffffffff00n });
    const view = new DataView(rec.buffer);
    const [a, b, c, d] = f.fields as [typeof f.fields[0] & object, typeof f.fields[0] & object, typeof f.fields[0] & object, typeof f.fields[0] & object];
    expect(readFieldNumber(view, 0, a)).toBe(-2);
    expect(readFieldNumber(view, 0, b)).toBe(0xfffe);
    expect(readFieldNumber(view, 0, c)).toBe(-3);
    expect(readFieldBigInt(view, 0, c)).toBe(-3n);
    expect(readFieldBigInt(view, 0, d)).toBe(0xffffffffffffff00n);
    expect(() => readFieldNumber(new DataView(rec.buffer, 0, 20), 0, d)).toThrow(FormatError);
  });

  it('a data_loc pointing past the record is an out-of-range FormatError', () => {
    const f = fixtureFormat('linux-6.18', 'irq/irq_handler_entry');
    const name = findField(f, 'name')!;
    const rec = new Uint8Array(24);
    new DataView(rec.buffer).setUint32(name.byteOffset, (10 << 16) | 20, true);
    expect(() => readDynamicLocation(new DataView(rec.buffer), 0, rec.length, name)).toThrow(expect.objectContaining({ code: 'out-of-range' }));
  });

  it('keeps a format whose print fmt does not parse, with the error', () => {
    const f = parseEventFormat(formatText('\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n', '"x=%d", REC->x +'));
    expect(f.printFmt).toBeUndefined();
    expect(f.printFmtText).toBe('"x=%d", REC->x +');
    expect(f.printFmtError).toMatch(/^format line 11: print fmt: expected an expression at end/);
  });

  it('accepts a real format without fields or print fmt (3.10 sched_switch_end)', () => {
    const f = fixtureFormat('android-3.10.40', 'sched/sched_switch_end');
    expect(f.fields).toEqual([]);
    expect(f.printFmt).toBeUndefined();
    expect(f.printFmtError).toBe("no 'print fmt:' line");
  });

  it('recovers a print fmt string with unescaped inner quotes', () => {
    const f = fixtureFormat('android-5.10.43', 'dw3000/dw3000_nfcc_coex_warn');
    expect(f.printFmt?.format).toBe('%s, warn="%s"');
    expect(f.printFmt?.args).toHaveLength(2);
  });

  it.each([
    ['a field line without offset', formatText('\tfield:int x;\tsize:4;\tsigned:1;\n'), 'malformed', 9],
    ['an absurd size', formatText('\tfield:int x;\toffset:8;\tsize:99999999999;\tsigned:1;\n'), 'out-of-range', 9],
    ['offset + size past 1 MiB', formatText('\tfield:int x;\toffset:1048000;\tsize:1000;\tsigned:1;\n'), 'out-of-range', 9],
    ['a non-numeric ID', 'name: x\nID: abc\nformat:\n', 'malformed', 2],
    ['a huge ID', 'name: x\nID: 99999999999999999999\nformat:\n', 'out-of-range', 2],
    ['text that is no format', 'hello world\n', 'malformed', 1],
    ['a cut after the name', 'name: x\n', 'truncated', 2],
    ['a data_loc of size 8', formatText('\tfield:__data_loc char[] s;\toffset:8;\tsize:8;\tsigned:0;\n'), 'malformed', 9],
    ['signed: 7', formatText('\tfield:int x;\toffset:8;\tsize:4;\tsigned:7;\n'), 'malformed', 9],
  ])('rejects %s with a FormatError and its line', (_what, text, code, line) => {
    let error: unknown;
    try {
      parseEventFormat(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FormatError);
    expect(error).toMatchObject({ code, line });
  });

  it('a format text copied from tracefs round-trips its declarations', () => {
    const text = fixtureText('linux-6.18', 'block/block_rq_issue');
    const f = parseEventFormat(text);
    for (const field of [...f.commonFields, ...f.fields]) expect(text).toContain(`field:${field.declaration};`);
  });
});
