import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assembleInstructions, encode } from '@probeyard/isa';
import { describe, expect, it } from 'vitest';
import { conformancePluginCommand, parseHexBytes } from '../src/commands/conformance-plugin.js';
import { bufferIo as makeIo } from './support/buffer-io.js';

const bufferIo = (stdin: string) => makeIo({ stdin });


/** The runner's encoding: "%02x " per byte, two spaces apart. */
function runnerHex(bytes: Uint8Array): string {
  return [...bytes].map((b) => `${b.toString(16).padStart(2, '0')}  `).join('');
}

async function plugin(program: Uint8Array, memory: Uint8Array, tier?: 'compiled' | 'interpreter') {
  const io = bufferIo(`${runnerHex(program)}\n`);
  const args = memory.length > 0 ? [runnerHex(memory)] : [];
  // the tier option comes after the memory argument, as the runner's --plugin_options append it
  if (tier) args.push('--tier', tier);
  const code = await conformancePluginCommand.run(args, io);
  return { code, out: io.out, err: io.err };
}

describe('probeyard conformance-plugin', () => {
  it.each([
    ['b7 00 00 00 2a 00 00 00 95 00 00 00 00 00 00 00', '', '2a\n'],
    // r0 = *(u64 *)(r1 + 2) over the memory
    ['79 10 02 00 00 00 00 00 95 00 00 00 00 00 00 00', 'aa bb 11 22 33 44 55 66 77 88 cc dd', '8877665544332211\n'],
    // r0 = r2 (the memory length)
    ['bf 20 00 00 00 00 00 00 95 00 00 00 00 00 00 00', '00 00 00 01 00 00 00 02', '8\n'],
  ])('prints r0 in lowercase hex: %s', async (program, memory, expected) => {
    for (const tier of [undefined, 'compiled', 'interpreter'] as const) {
      const r = await plugin(parseHexBytes(program, 'p'), parseHexBytes(memory, 'm'), tier);
      expect(r).toEqual({ code: 0, out: expected, err: '' });
    }
  });

  it('says which tier ran with --debug, and refuses an unknown tier', async () => {
    const io = bufferIo('');
    const code = await conformancePluginCommand.run(['--program', 'b700000007000000 9500000000000000', '--tier', 'interpreter', '--debug'], io);
    expect([code, io.out]).toEqual([0, '7\n']);
    expect(io.err).toMatch(/^tier: interpreter\n/);
    const io2 = bufferIo('');
    const code2 = await conformancePluginCommand.run(['--program', 'b700000007000000 9500000000000000', '--tier', 'compiled', '--debug'], io2);
    expect([code2, io2.out]).toEqual([0, '7\n']);
    expect(io2.err).toMatch(/^tier: compiled\n/);
    await expect(conformancePluginCommand.run(['--program', '9500000000000000', '--tier', 'jit'], bufferIo(''))).rejects.toThrow(
      /--tier: 'jit' is not compiled or interpreter/,
    );
  });

  it('refuses a reserved-field encoding with a message and exit 1', async () => {
    const r = await plugin(parseHexBytes('07 00 01 00 01 00 00 00 95 00 00 00 00 00 00 00', 'p'), new Uint8Array(0));
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^load program: 0: reserved field offset must be 0, is 1/);
  });

  it.each(['compiled', 'interpreter'] as const)('reports an out-of-bounds load as a fault with exit 1 (%s)', async (tier) => {
    const r = await plugin(parseHexBytes('79 10 08 00 00 00 00 00 95 00 00 00 00 00 00 00', 'p'), new Uint8Array(4), tier);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^memory fault: 8-byte access at 0x1_00000008 outside region context of 4 bytes at pc 0/);
  });

  it('takes the program from --program too', async () => {
    const io = bufferIo('');
    const code = await conformancePluginCommand.run(['--program', 'b700000007000000 9500000000000000'], io);
    expect([code, io.out]).toEqual([0, '7\n']);
  });

  const folder = ['../../../shared/corpus/bpf-conformance/tests', '/work/shared/corpus/bpf-conformance/tests']
    .map((p) => (p.startsWith('/') ? p : join(import.meta.dirname, p)))
    .find((p) => existsSync(p));
  if (!folder) console.log('conformance-plugin corpus test: skipped: the shared corpus is absent');

  it.skipIf(!folder).each(['compiled', 'interpreter'] as const)('passes the bpf_conformance tests the way the runner checks them (--tier %s)', async (tier) => {
    let pass = 0;
    const failures: string[] = [];
    const files = readdirSync(folder as string).filter((f) => f.endsWith('.data'));
    for (const f of files) {
      const text = readFileSync(join(folder as string, f), 'utf8');
      const section = (name: string) => {
        const m = new RegExp(`-- ${name}\\n([\\s\\S]*?)(?=\\n-- |$)`).exec(text);
        return m ? (m[1] as string) : undefined;
      };
      const asm = section('asm');
      const raw = section('raw');
      let program: Uint8Array;
      if (raw !== undefined) {
        const words = raw.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('0x'));
        program = new Uint8Array(words.length * 8);
        const view = new DataView(program.buffer);
        words.forEach((w, i) => {
          view.setBigUint64(i * 8, BigInt(w), true);
        });
      } else program = encode(assembleInstructions(asm ?? '', { syntax: 'conformance' }));
      const memory = parseHexBytes((section('mem') ?? '').replace(/#.*/g, ''), 'mem');
      const expected = BigInt((section('result') ?? '0').trim().split('\n')[0] as string);
      const r = await plugin(program, memory, tier);
      if (r.code === 0 && BigInt(`0x${r.out.trim()}`) === expected) pass++;
      else failures.push(`${f}: ${r.out}${r.err}`);
    }
    console.log(`conformance-plugin --tier ${tier}: ${pass}/${files.length} tests pass`);
    expect(failures).toEqual([]);
  });
});

describe('probeyard conformance-plugin through the CLI entry point', () => {
  it('is registered and runs via run()', async () => {
    const { run } = await import('../src/main.js');
    const io = bufferIo('b7 00 00 00 05 00 00 00 07 00 00 00 ff ff ff ff 95 00 00 00 00 00 00 00\n');
    expect(await run(['conformance-plugin', '01 02'], io)).toBe(0);
    expect(io.out).toBe('4\n');
  });
});
