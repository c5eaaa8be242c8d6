// probeyard verify through run(argv, io) with a buffer io: assembly, hex and ELF inputs, event
// formats, JSON output and the exit codes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../src/main.js';
import { bufferIo as makeIo } from './support/buffer-io.js';

const bufferIo = (files: Record<string, string | Uint8Array>) => makeIo({ files });

const fixtures = join(import.meta.dirname, '../../../packages/verifier/test/fixtures');
const switchFormat = readFileSync(join(fixtures, 'formats/sched_switch.format'), 'utf8');


const counter = `
.map counts hash key=4 value=8 entries=1024
.section tracepoint/sched/sched_switch
  r2 = *(u32 *)(r1 + sched_switch.next_pid)
  *(u32 *)(r10 - 4) = r2
  r2 = r10
  r2 += -4
  r1 = counts ll
  call bpf_map_lookup_elem
  if r0 == 0 goto out
  lock *(u64 *)(r0 + 0) += r1
out:
  r0 = 0
  exit
`;

describe('probeyard verify', () => {
  it('rejects a use of r1 after a call clobbered it', async () => {
    const io = bufferIo({ 'p.s': counter, 'events/sched/sched_switch/format': switchFormat });
    const code = await run(['verify', 'p.s', '--formats', 'events', '--event', 'sched/sched_switch'], io);
    expect(io.err).toBe('');
    expect(code).toBe(1); // r1 is not initialized after the call: the atomic add reads it
    expect(io.out).toContain('R1 !read_ok');
  });

  it('accepts a correct program, exit 0, with the access report', async () => {
    const io = bufferIo({ 'p.s': counter.replace('lock *(u64 *)(r0 + 0) += r1', 'r1 = 1\n  lock *(u64 *)(r0 + 0) += r1'), 'fmt': switchFormat });
    const code = await run(['verify', 'p.s', '--formats', 'fmt', '--event', 'sched/sched_switch'], io);
    expect(io.err).toBe('');
    expect(code).toBe(0);
    expect(io.out).toMatch(/^sched_switch|accepted/m);
    expect(io.out).toContain('insn 0: next_pid (offset 56, size 4)');
  });

  it('says when an accepted program reads the context at a negative offset (Linux accepts it; the VM faults it)', async () => {
    const io = bufferIo({ 'p.s': 'r0 = *(u32 *)(r1 - 16)\nr0 = 0\nexit\n' });
    expect(await run(['verify', 'p.s'], io)).toBe(0);
    expect(io.out).toContain('accepted');
    expect(io.out).toMatch(/warning: 0: r0 = \*\(u32 \*\)\(r1 - 16\)\n +ctx read at negative offset off=-16 size=4/);
    const json = bufferIo({ 'p.s': 'r0 = *(u32 *)(r1 - 16)\nr0 = 0\nexit\n' });
    expect(await run(['verify', 'p.s', '--json'], json)).toBe(0);
    expect(JSON.parse(json.out).warnings).toHaveLength(1);
  });

  it('prints JSON', async () => {
    const io = bufferIo({ 'p.hex': 'b7 00 00 00 00 00 00 00\n95 00 00 00 00 00 00 00\n' });
    expect(await run(['verify', 'p.hex', '--hex', '--json'], io)).toBe(0);
    const json = JSON.parse(io.out);
    expect(json.ok).toBe(true);
    expect(json.insns).toBe(2);
    expect(json.stats.insnsProcessed).toBe(2);
  });

  it('rejects with the kernel-like reason, exit 1', async () => {
    const io = bufferIo({ 'p.hex': '61 10 00 00 00 00 00 00\n95 00 00 00 00 00 00 00' });
    expect(await run(['verify', 'p.hex', '--hex'], io)).toBe(1);
    expect(io.out).toBe('hex: rejected\n  0: r0 = *(u32 *)(r1 + 0)\n  invalid bpf_context access off=0 size=4\n');
  });

  it('verifies a program of a compiled ELF object', async () => {
    const object = new Uint8Array(readFileSync(join(fixtures, 'objects/tp_counter.o')));
    const io = bufferIo({ 'o.o': object });
    expect(await run(['verify', 'o.o', '--json'], io)).toBe(0);
    expect(JSON.parse(io.out).event).toBe('sched/sched_switch');
  });

  it.each([
    ['truncated instructions', ['verify', 'p.hex', '--hex'], { 'p.hex': 'b7 00 00' }, 'decode program: 3 bytes'],
    ['missing file', ['verify', 'nope.s'], {}, 'ENOENT'],
    ['bad --log', ['verify', 'p.hex', '--log', '3'], { 'p.hex': '' }, '--log takes 1 or 2'],
    ['--formats without event', ['verify', 'p.hex', '--hex', '--formats', 'x'], { 'p.hex': '9500000000000000' }, '--formats needs --event'],
  ])('%s: exit 2', async (_, argv, files, message) => {
    const io = bufferIo(files as Record<string, string>);
    expect(await run(argv as string[], io)).toBe(2);
    expect(io.err).toContain(message);
  });
});
