import { parseArgs } from 'node:util';
import { decode, disassemble, type Instruction, type Syntax } from '@probeyard/isa';
import type { Command } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { isaFailure, readInput } from './asm.js';

const help = `usage: probeyard disasm FILE|- [--hex] [--syntax llvm|conformance] [--labels]

Disassembles raw eBPF instruction bytes (8 a slot, little-endian) into text that assembles back to
the same bytes.

  FILE|-        the bytes; - reads standard input
  --hex         the input is hex text (bytes as two hex digits, any spacing, # and // comments);
                input made only of hex digits and blanks is read as hex anyway
  --syntax S    llvm (default, as llvm-objdump prints it) or conformance (bpf_conformance)
  --labels      name jump targets (L<slot>:) instead of printing +N offsets

ELF objects are not supported yet: extract a section with
  llvm-objcopy -O binary --only-section=SECTION OBJECT OUT
Exit codes: 0 disassembled, 2 unusable input or options.`;

/** Parses hex text: pairs of hex digits with any blanks, `#`/`//` comments and optional 0x prefixes. */
export function parseHexText(text: string): Uint8Array {
  const digits = text
    .split('\n')
    .map((line) => line.replace(/(#|\/\/).*$/, ''))
    .join(' ')
    .replace(/0x/gi, '')
    .replace(/\s+/g, '');
  if (!/^[0-9a-f]*$/i.test(digits)) {
    const bad = /[^0-9a-f]/i.exec(digits)!;
    throw new CliError(`invalid hex input: unexpected '${bad[0]}'`);
  }
  if (digits.length % 2 !== 0) throw new CliError(`invalid hex input: ${digits.length} hex digits is an odd number`);
  const out = new Uint8Array(digits.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(digits.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function looksLikeHexText(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return false;
  for (const b of bytes) {
    const hexDigit = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
    if (!hexDigit && b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return false;
  }
  return true;
}

function parse(args: string[]) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        hex: { type: 'boolean', default: false },
        syntax: { type: 'string', default: 'llvm' },
        labels: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n\n${help}`);
  }
}

export const disasmCommand: Command = {
  name: 'disasm',
  summary: 'disassemble eBPF instruction bytes (raw or hex) into text',
  help,
  async run(args, io) {
    const { values, positionals } = parse(args);
    if (positionals.length !== 1) throw new CliError(`expected one FILE (or -), got ${positionals.length}\n\n${help}`);
    const syntax = values.syntax as Syntax;
    if (syntax !== 'llvm' && syntax !== 'conformance') throw new CliError(`unknown syntax '${values.syntax}' (llvm or conformance)`);
    const input = await readInput(io, positionals[0]!);
    if (input.length >= 4 && input[0] === 0x7f && input[1] === 0x45 && input[2] === 0x4c && input[3] === 0x46) {
      throw new CliError(
        'ELF objects are not supported yet: extract a section with llvm-objcopy -O binary --only-section=SECTION OBJECT OUT, then disassemble OUT',
        ExitCode.usage,
      );
    }
    const bytes = values.hex || looksLikeHexText(input) ? parseHexText(new TextDecoder().decode(input)) : input;
    let insns: Instruction[];
    try {
      insns = decode(bytes);
    } catch (err) {
      isaFailure(err);
    }
    io.stdout(disassemble(insns, { syntax, labels: values.labels }));
    return ExitCode.ok;
  },
};
