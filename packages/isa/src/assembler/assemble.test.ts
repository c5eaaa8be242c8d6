import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encode } from '../encode.js';
import { IsaError, type IsaErrorCode } from '../errors.js';
import { type FieldResolver, assemble, assembleInstructions, parseAttachPoint } from './assemble.js';

const examples = join(import.meta.dirname, '..', '..', '..', '..', 'examples');

function bytesOf(text: string, syntax?: 'llvm' | 'conformance'): string {
  return [...encode(assembleInstructions(text, syntax ? { syntax } : {}))].map((b) => b.toString(16).padStart(2, '0')).join(' ');
}

function errorOf(run: () => unknown): IsaError {
  try {
    run();
  } catch (err) {
    if (err instanceof IsaError) return err;
    throw err;
  }
  throw new Error('no error');
}

// A sched_switch layout as a kernel's format file gives it.
const sched: Record<string, { byteOffset: number; size: number; signed: boolean }> = {
  'sched_switch.prev_comm': { byteOffset: 8, size: 16, signed: false },
  'sched_switch.prev_pid': { byteOffset: 24, size: 4, signed: true },
  'sched_switch.next_pid': { byteOffset: 56, size: 4, signed: true },
};
const resolveField: FieldResolver = (event, field) => sched[`${event}.${field}`];

describe('conformance syntax', () => {
  it.each([
    ['add32 %r0, 1', '04 00 00 00 01 00 00 00'],
    ['ldxw %r0, [%r1+4]', '61 10 04 00 00 00 00 00'],
    ['ldxw r0, [r1 + 4]', '61 10 04 00 00 00 00 00'],
    ['lock fetch add [%r10-8], %r1', 'db 1a f8 ff 01 00 00 00'],
    ['be16 %r0', 'dc 00 00 00 10 00 00 00'],
    ['swap64 %r0', 'd7 00 00 00 40 00 00 00'],
    ['jeq %r1, 0x1, +2', '15 01 02 00 01 00 00 00'],
    ['mov32 %r0, 0xffffffff', 'b4 00 00 00 ff ff ff ff'],
    ['lddw %r0, 0x1122334455667788', '18 00 00 00 88 77 66 55 00 00 00 00 44 33 22 11'],
    ['call 5', '85 00 00 00 05 00 00 00'],
    ['call helper ktime_get_ns', '85 00 00 00 05 00 00 00'],
    ['ldabsh 12', '28 00 00 00 0c 00 00 00'],
  ])('%s', (text, bytes) => {
    expect(bytesOf(text, 'conformance')).toBe(bytes);
  });

  it('resolves labels, local calls and the implicit exit label', () => {
    const text = 'mov %r0, 0\njeq %r1, 0, skip\ncall local f\nskip:\nja exit\nexit\nf:\nmov %r0, 1\nexit';
    expect(bytesOf(text)).toBe(
      [
        'b7 00 00 00 00 00 00 00',
        '15 01 01 00 00 00 00 00', // jeq %r1, 0, +1
        '85 10 00 00 02 00 00 00', // call local +2
        '05 00 00 00 00 00 00 00', // ja +0 (the first exit)
        '95 00 00 00 00 00 00 00',
        'b7 00 00 00 01 00 00 00',
        '95 00 00 00 00 00 00 00',
      ].join(' '),
    );
  });
});

describe('LLVM syntax', () => {
  it.each([
    ['r0 = *(u32 *)(r1 + 4)', '61 10 04 00 00 00 00 00'],
    ['if r1 > 3 goto +2', '25 01 02 00 03 00 00 00'],
    ['r1 = 0x1234 ll', '18 01 00 00 34 12 00 00 00 00 00 00 00 00 00 00'],
    ['call 14', '85 00 00 00 0e 00 00 00'],
    ['w0 += 1', '04 00 00 00 01 00 00 00'],
    ['lock *(u64 *)(r10 - 8) += r1', 'db 1a f8 ff 00 00 00 00'],
    ['r0 = atomic_fetch_add((u64 *)(r10 - 8), r0)', 'db 0a f8 ff 01 00 00 00'],
    ['r1 = bswap16 r1', 'd7 01 00 00 10 00 00 00'],
    ['r0 = (s8)r1', 'bf 10 08 00 00 00 00 00'],
    ['r0 s/= 3', '37 00 01 00 03 00 00 00'],
    ['goto +1 <LBB0_3>', '05 00 01 00 00 00 00 00'],
  ])('%s', (text, bytes) => {
    expect(bytesOf(text, 'llvm')).toBe(bytes);
    expect(bytesOf(text)).toBe(bytes);
  });

  it('resolves labels and calls helpers by name', () => {
    const text = 'r1 = 0\nloop:\nr1 += 1\nif r1 < 10 goto loop\ncall bpf_ktime_get_ns\nexit';
    expect(bytesOf(text)).toBe(
      'b7 01 00 00 00 00 00 00 07 01 00 00 01 00 00 00 a5 01 fe ff 0a 00 00 00 85 00 00 00 05 00 00 00 95 00 00 00 00 00 00 00',
    );
  });
});

describe('Probeyard files', () => {
  const text = readFileSync(join(examples, 'sched-switch-count.s'), 'utf8');

  it('assembles the example with its map, license, attach point and relocations', () => {
    const object = assemble(text);
    expect(object.license).toBe('GPL');
    expect(object.maps).toEqual([{ name: 'counts', type: 'hash', typeId: 1, keySize: 4, valueSize: 8, maxEntries: 10240, flags: 0, line: 11 }]);
    expect(object.programs).toHaveLength(1);
    const [program] = object.programs;
    expect(program!.name).toBe('count_switch');
    expect(program!.attachPoint).toEqual({ kind: 'tracepoint', system: 'sched', event: 'sched_switch' });
    expect(program!.fieldRelocations).toEqual([
      { insnIndex: 0, event: 'sched_switch', field: 'next_pid', addend: 0, accessSize: 4, resolved: false, line: 15, column: 24 },
    ]);
    expect(program!.instructions[0]!.offset).toBe(0);
    expect(program!.mapRelocations.map((r) => [r.insnIndex, r.map])).toEqual([
      [6, 'counts'],
      [16, 'counts'],
    ]);
    expect(program!.instructions[6]).toMatchObject({ opcode: 0x18, src: 1, imm: 0 });
  });

  it('resolves field operands through the resolver', () => {
    const program = assemble(text, { resolveField }).programs[0]!;
    expect(program.instructions[0]!.offset).toBe(56);
    expect(program.fieldRelocations[0]).toMatchObject({ resolved: true, layout: { byteOffset: 56, size: 4, signed: true } });
  });

  it('adds a constant to a field operand', () => {
    const program = assemble('ldxb r2, [r1 + sched_switch.prev_comm + 3]\nr3 = *(u8 *)(r1 + sched_switch.prev_comm + 4)\nexit', {
      resolveField,
    }).programs[0]!;
    expect(program.instructions.map((i) => i.offset).slice(0, 2)).toEqual([11, 12]);
    expect(program.fieldRelocations.map((r) => r.addend)).toEqual([3, 4]);
  });

  it('assembles several programs with subprograms', () => {
    const object = assemble(readFileSync(join(examples, 'exec-events.s'), 'utf8'));
    expect(object.programs.map((p) => [p.name, p.section])).toEqual([
      ['on_exec', 'tracepoint/sched/sched_process_exec'],
      ['on_exit', 'tracepoint/sched/sched_process_exit'],
    ]);
    expect(object.maps.map((m) => [m.name, m.type, m.maxEntries])).toEqual([
      ['events', 'ringbuf', 262144],
      ['exec_count', 'array', 1],
    ]);
    const onExec = object.programs[0]!;
    const call = onExec.instructions.find((i) => i.opcode === 0x85 && i.src === 1)!;
    expect(call.insnIndex + 1 + call.imm).toBe(onExec.labels.bump);
  });

  it.each([
    ['.section kprobe/do_sys_open', { kind: 'kprobe', function: 'do_sys_open' }],
    ['.section "tp/syscalls/sys_enter_openat"', { kind: 'tracepoint', system: 'syscalls', event: 'sys_enter_openat' }],
    ['.section raw_tracepoint/sched_switch', { kind: 'raw_tracepoint', event: 'sched_switch' }],
    ['.section xdp', { kind: 'other', section: 'xdp' }],
  ])('parses the attach point of %s', (directive, attachPoint) => {
    expect(assemble(`${directive}\nr0 = 0\nexit`).programs[0]!.attachPoint).toEqual(attachPoint);
  });

  it('reads every comment style', () => {
    expect(bytesOf('r0 = 0 # hash\nr0 += 1 ; semicolon\n// slashes\nexit')).toBe(
      'b7 00 00 00 00 00 00 00 07 00 00 00 01 00 00 00 95 00 00 00 00 00 00 00',
    );
    expect(parseAttachPoint('.text')).toBeUndefined();
  });
});

describe('errors name line, column and code', () => {
  const cases: [string, string, IsaErrorCode, string][] = [
    ['unknown mnemonic', 'r0 = 0\nexit\n      adx %r0, 1', 'unknown-mnemonic', "line 3, column 7: unknown mnemonic 'adx'"],
    ['immediate range', 'mov32 %r0, 2147483648', 'out-of-range', 'line 1, column 12: immediate out of range: 2147483648 does not fit in 32 bits'],
    ['offset range', 'ldxb %r0, [%r1+0x10000]', 'out-of-range', 'line 1, column 15: offset out of range: +0x10000 does not fit in 16 bits (-32768 to 32767)'],
    ['register', 'or %r0, %r50', 'invalid-register', "line 1, column 9: invalid register: '%r50' (registers are r0-r10)"],
    ['label', 'ja NOT_A_LABEL\nexit', 'unknown-label', "line 1, column 4: unknown label 'NOT_A_LABEL'"],
    ['lock operands', 'lock or [%r10-8]', 'operand-count', "line 1, column 9: invalid number of operands for lock: expected 'lock [fetch] OP [DST+OFFSET], SRC'"],
    ['operand count', 'lddw %r0', 'operand-count', 'line 1, column 1: invalid number of operands for lddw: expected 2 (lddw DST, IMM64), got 1'],
    ['memory operand', 'ldxb %r0, %r1', 'invalid-operand', "line 1, column 11: invalid operand for ldxb: expected a memory operand [REG+OFFSET], got '%r1'"],
    ['mixed widths', 'w0 += r1', 'invalid-operand', "line 1, column 7: invalid operand: 'r1' mixes r and w registers"],
    ['llvm syntax', 'r0 = = 1', 'syntax', "line 1, column 1: syntax error: cannot parse 'r0 = = 1' as an LLVM-syntax instruction"],
    ['duplicate label', 'a:\nr0 = 0\na:\nexit', 'duplicate-label', "line 3, column 1: duplicate label 'a': first defined on line 1"],
    ['unknown map', 'r1 = nomap ll\nexit', 'unknown-map', "line 1, column 6: unknown map 'nomap' (declare it with .map)"],
    ['duplicate map', '.map m hash key=4 value=4 entries=1\n.map m array key=4 value=4 entries=1', 'duplicate-map', "line 2, column 5: duplicate map 'm': first declared on line 1"],
    ['map type', '.map m btree key=4 value=4 entries=1', 'unsupported', "line 1, column 8: unsupported map type 'btree'"],
    ['map fields', '.map m hash key=4 entries=1', 'syntax', "line 1, column 5: syntax error: map 'm' needs value=N"],
    ['directive', '.frobnicate 1', 'unknown-directive', "line 1, column 1: unknown directive '.frobnicate'"],
    ['empty section', '.section tracepoint/a/b\n.section tracepoint/c/d\nexit', 'empty-program', "line 1, column 1: empty program: section 'tracepoint/a/b' has no instructions"],
    ['jump range', `ja far\n${'r0 = 0\n'.repeat(40000)}far:\nexit`, 'out-of-range', "line 1, column 4: jump out of range: 'far' is 40000 instructions away"],
    ['program names', '.section tp/a/b\nexit\n.section tp/c/b\nexit', 'duplicate-label', "line 3, column 1: duplicate program name 'b': first used on line 1"],
    ['invalid encoding', 'le24 %r0', 'unknown-mnemonic', "line 1, column 1: unknown mnemonic 'le24'"],
    ['fetch xchg', 'lock fetch xchg [%r10-8], %r1', 'invalid-operand', 'line 1, column 6: invalid operand for lock: xchg always fetches'],
  ];

  it.each(cases)('%s', (_name, text, code, message) => {
    const err = errorOf(() => assemble(text));
    expect(err.code).toBe(code);
    expect(err.message.startsWith(message)).toBe(true);
    expect(err.line).toBe(Number(/^line (\d+)/.exec(message)![1]));
  });

  it('rejects an unknown field when a resolver is given', () => {
    const err = errorOf(() => assemble('ldxw r2, [r1 + sched_switch.next_tgid]\nexit', { resolveField }));
    expect(err.code).toBe('unknown-field');
    expect(err.message).toBe("line 1, column 16: unknown field 'sched_switch.next_tgid'");
  });

  it('refuses text without instructions, and several programs for assembleInstructions', () => {
    expect(errorOf(() => assembleInstructions('# nothing\n')).code).toBe('empty-program');
    expect(errorOf(() => assembleInstructions('.section a\nexit\n.section b\nexit')).code).toBe('unsupported');
  });
});
