// asm, disasm and demo through run(argv, io) with a buffer io.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { run } from '../src/main.js';
import { bufferIo as makeIo } from './support/buffer-io.js';

const bufferIo = (files: Record<string, string | Uint8Array> = {}, stdin: string | Uint8Array = '') => makeIo({ files, stdin });


const program = 'mov %r0, 0\nadd32 %r0, 1\nexit\n';
const programHex = 'b7 00 00 00 00 00 00 00\n04 00 00 00 01 00 00 00\n95 00 00 00 00 00 00 00\n';

describe('probeyard asm', () => {
  it('prints hex, 8 bytes a line', async () => {
    const io = bufferIo({ 'p.s': program });
    expect(await run(['asm', 'p.s'], io)).toBe(0);
    expect(io.out).toBe(programHex);
  });

  it('reads standard input and writes raw bytes with -o', async () => {
    const io = bufferIo({}, 'r0 = 0\nw0 += 1\nexit');
    expect(await run(['asm', '-', '-o', 'p.bin', '--syntax', 'llvm'], io)).toBe(0);
    expect(io.files.get('p.bin')).toEqual(
      new Uint8Array([0xb7, 0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 1, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0]),
    );
    expect(io.err).toBe('main: 3 slots, 24 bytes written to p.bin\n');
  });

  it('chooses a program with --program and notes relocations', async () => {
    const text = '.map m array key=4 value=4 entries=1\n.section tp/a/b\nfirst:\nexit\n.section tp/c/d\nsecond:\nr1 = m ll\nr2 = *(u32 *)(r1 + d.x)\nexit';
    const io = bufferIo({ 'p.s': text });
    expect(await run(['asm', 'p.s', '--program', 'second'], io)).toBe(0);
    expect(io.out.split('\n')[0]).toBe('18 11 00 00 00 00 00 00');
    expect(io.err).toBe("note: instruction 2 reads d.x: offset left at 0, unresolved\nnote: instruction 0 loads map 'm': imm left at 0\n");
    const bySection = bufferIo({ 'p.s': text });
    expect(await run(['asm', 'p.s', '--program', 'tp/a/b'], bySection)).toBe(0);
    expect(bySection.out).toBe('95 00 00 00 00 00 00 00\n');
    const missing = bufferIo({ 'p.s': text });
    expect(await run(['asm', 'p.s', '--program', 'third'], missing)).toBe(1);
    expect(missing.err).toBe("probeyard asm: no program 'third' (the file has: first, second)\n");
  });

  it('resolves field operands against an events tree with --events', async () => {
    const events = new URL('../../../examples/formats', import.meta.url).pathname;
    const io = bufferIo({ 'p.s': 'r2 = *(u32 *)(r1 + sched_switch.next_pid)\nexit' });
    expect(await run(['asm', 'p.s', '--events', events], io)).toBe(0);
    expect(io.out).toBe('61 12 38 00 00 00 00 00\n95 00 00 00 00 00 00 00\n');
    expect(io.err).toBe('');
    const unknown = bufferIo({ 'p.s': 'r2 = *(u32 *)(r1 + sched_switch.next_tgid)\nexit' });
    expect(await run(['asm', 'p.s', '--events', events], unknown)).toBe(2);
    expect(unknown.err).toBe("probeyard asm: line 1, column 20: unknown field 'sched_switch.next_tgid'\n");
  });

  it('names line and column of an error', async () => {
    const io = bufferIo({ 'bad.s': 'mov %r0, 0\nexit\n      adx %r0, 1\n' });
    expect(await run(['asm', 'bad.s'], io)).toBe(2);
    expect(io.err).toBe("probeyard asm: line 3, column 7: unknown mnemonic 'adx'\n");
  });

  it('refuses bad options and missing files', async () => {
    const a = bufferIo();
    expect(await run(['asm'], a)).toBe(2);
    expect(a.err).toContain('expected one FILE (or -), got 0');
    const b = bufferIo();
    expect(await run(['asm', 'x.s', '--syntax', 'att'], b)).toBe(2);
    expect(b.err).toBe("probeyard asm: unknown syntax 'att' (auto, conformance or llvm)\n");
    const c = bufferIo();
    expect(await run(['asm', 'nope.s'], c)).toBe(2);
    expect(c.err).toContain('ENOENT');
    const d = bufferIo({ 'empty.s': '# nothing\n' });
    expect(await run(['asm', 'empty.s'], d)).toBe(2);
    expect(d.err).toBe('probeyard asm: no instructions in the input\n');
  });

  it('has --help', async () => {
    const io = bufferIo();
    expect(await run(['asm', '--help'], io)).toBe(0);
    expect(io.out).toContain('usage: probeyard asm FILE|-');
  });
});

describe('probeyard disasm', () => {
  it('disassembles hex in both syntaxes', async () => {
    const io = bufferIo({ 'p.hex': programHex });
    expect(await run(['disasm', 'p.hex', '--hex'], io)).toBe(0);
    expect(io.out).toBe('r0 = 0\nw0 += 1\nexit\n');
    const conf = bufferIo({ 'p.hex': programHex });
    expect(await run(['disasm', 'p.hex', '--syntax', 'conformance'], conf)).toBe(0);
    expect(conf.out).toBe(program);
  });

  it('names jump targets with --labels', async () => {
    const io = bufferIo({ 'p.hex': '15 01 01 00 00 00 00 00\nb7 00 00 00 01 00 00 00\n95 00 00 00 00 00 00 00' });
    expect(await run(['disasm', 'p.hex', '--labels'], io)).toBe(0);
    expect(io.out).toBe('if r1 == 0 goto L2\nr0 = 1\nL2:\nexit\n');
  });

  it('disassembles raw bytes from standard input', async () => {
    const io = bufferIo({}, new Uint8Array([0x95, 0, 0, 0, 0, 0, 0, 0]));
    expect(await run(['disasm', '-'], io)).toBe(0);
    expect(io.out).toBe('exit\n');
  });

  it('round-trips with asm', async () => {
    const io = bufferIo({ 'p.s': 'r1 = 0x1122334455667788 ll\nlock *(u64 *)(r10 - 8) += r1\nr0 = (s16)r1\nexit' });
    await run(['asm', 'p.s', '-o', 'p.bin'], io);
    io.out = '';
    expect(await run(['disasm', 'p.bin'], io)).toBe(0);
    expect(io.out).toBe('r1 = 1234605616436508552 ll\nlock *(u64 *)(r10 - 8) += r1\nr0 = (s16)r1\nexit\n');
  });

  it('rejects bad bytecode with the instruction named', async () => {
    const io = bufferIo({ 'p.hex': '95 01 00 00 00 00 00 00' });
    expect(await run(['disasm', 'p.hex', '--hex'], io)).toBe(2);
    expect(io.err).toBe('probeyard disasm: instruction 0 (byte 0): reserved field: opcode 0x95 needs dst 0, got 1\n');
    const odd = bufferIo({ 'p.bin': new Uint8Array([0x95, 0, 0]) });
    expect(await run(['disasm', 'p.bin'], odd)).toBe(2);
    expect(odd.err).toBe('probeyard disasm: truncated: 3 bytes is not a multiple of 8 (3 left over)\n');
  });

  it('refuses a truncated ELF header, naming the reader phase', async () => {
    const io = bufferIo({ 'x.o': new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]) });
    expect(await run(['disasm', 'x.o'], io)).toBe(2);
    expect(io.err).toMatch(/^probeyard disasm: read elf: /);
  });

  it('refuses bad hex', async () => {
    const io = bufferIo({ 'p.hex': '95 0' });
    expect(await run(['disasm', 'p.hex', '--hex'], io)).toBe(2);
    expect(io.err).toBe('probeyard disasm: invalid hex input: 3 hex digits is an odd number\n');
  });
});

describe('probeyard demo', () => {
  it('assembles the bundled example and shows everything', async () => {
    const io = makeIo({ disk: true });
    expect(await run(['demo'], io)).toBe(0);
    expect(io.err).toBe("relocated for this feed's kernel (count_switch: next_pid: offset 0 → 56); 869 records\n");
    const out = io.out;
    expect(out).toContain('field operands resolved against');
    expect(out).toContain('counts  hash (type 1)  key 4 B  value 8 B  max entries 10240');
    expect(out).toContain('program count_switch');
    expect(out).toContain('attach       tracepoint sched:sched_switch');
    expect(out).toContain('insn   0  sched_switch.next_pid  4-byte access  -> offset 56, size 4, signed');
    expect(out).toMatch(/ {7}0 {2}61 12 38 00 00 00 00 00 {2}r2 = \*\(u32 \*\)\(r1 \+ 56\) +ldxw %r2, \[%r1\+56\] +sched_switch\.next_pid/);
    expect(out).toContain('call 1 # bpf_map_lookup_elem');
  });

  it('fails clearly without the examples folder', async () => {
    const io = bufferIo();
    expect(await run(['demo', '--examples', '/nonexistent'], io)).toBe(1);
    expect(io.err).toBe('probeyard demo: cannot find examples/sched-switch-count.s in /nonexistent\n');
  });
});

describe('probeyard disasm of an ELF object', () => {
  const object = join(dirname(fileURLToPath(import.meta.url)), '../../../packages/formats/test/fixtures/objects/sched_trace.o');
  const bytes = new Uint8Array(readFileSync(object));

  it('prints each program with its section and marks relocated instructions', async () => {
    const io = bufferIo({ 'sched_trace.o': bytes });
    expect(await run(['disasm', 'sched_trace.o'], io)).toBe(0);
    expect(io.out).toMatch(/^program \S+ {2}section tracepoint\/sched\/sched_switch/m);
    expect(io.out).toMatch(/^ +\d+: {2}r\d = 0 ll +# reloc: map \w+$/m);
  });

  it('refuses a cut object with exit code 2 and the phase in the message', async () => {
    const io = bufferIo({ 'cut.o': bytes.slice(0, 100) });
    expect(await run(['disasm', 'cut.o'], io)).toBe(2);
    expect(io.err).toMatch(/^probeyard disasm: read elf: /);
  });
});
