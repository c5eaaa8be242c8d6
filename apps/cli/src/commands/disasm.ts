import { isFormatError, readBpfObject } from '@probeyard/formats';
import { decode, disassemble, type Instruction, type Syntax } from '@probeyard/isa';
import { type Command, parseCommandArgs } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { isaFailure, readInput } from './asm.js';

const help = `usage: probeyard disasm FILE|- [--hex] [--syntax llvm|conformance] [--labels]

Disassembles raw eBPF instruction bytes (8 a slot, little-endian) into text that assembles back to
the same bytes. A BPF ELF object (clang -target bpf) is read whole: each program and subprogram is
printed with its section, and each instruction that an ELF relocation patches is marked.

  FILE|-        the bytes; - reads standard input
  --hex         the input is hex text (bytes as two hex digits, any spacing, # and // comments);
                input made only of hex digits and blanks is read as hex anyway
  --syntax S    llvm (default, as llvm-objdump prints it) or conformance (bpf_conformance)
  --labels      name jump targets (L<slot>:) instead of printing +N offsets

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
  return parseCommandArgs(
    args,
    {
      hex: { type: 'boolean', default: false },
      syntax: { type: 'string', default: 'llvm' },
      labels: { type: 'boolean', default: false },
    },
    help,
  );
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
      io.stdout(disassembleObject(input, syntax, values.labels));
      return ExitCode.ok;
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

/** Disassembles every program and subprogram of a BPF ELF object, relocations marked. */
export function disassembleObject(bytes: Uint8Array, syntax: Syntax, labels: boolean): string {
  let object: ReturnType<typeof readBpfObject>;
  try {
    object = readBpfObject(bytes);
  } catch (err) {
    if (isFormatError(err)) throw new CliError(err.message, ExitCode.usage);
    throw err;
  }
  if (!object.littleEndian) {
    throw new CliError('big-endian objects (clang -target bpfeb) cannot be disassembled yet: only little-endian instructions are decoded', ExitCode.usage);
  }
  const out: string[] = [];
  for (const program of [...object.programs, ...object.subprograms]) {
    const kind = program.isSubprogram ? 'subprogram' : 'program';
    out.push(`${kind} ${program.name}  section ${program.section}  ${program.insnCount} slots`);
    let insns: Instruction[];
    try {
      insns = decode(program.instructions);
    } catch (err) {
      isaFailure(err);
    }
    const notes = new Map<number, string>();
    for (const r of program.relocations) {
      const what =
        r.kind === 'map' ? `map ${r.map}` : r.kind === 'global-data' ? `${r.section}+${r.dataByteOffset}` : r.kind === 'extern' ? `extern ${r.symbol}` : `${r.kind} ${r.target}`;
      notes.set(r.insnIndex, what);
    }
    const lines = disassemble(insns, { syntax, labels }).trimEnd().split('\n');
    // One line per instruction (labels add lines of their own, ending in ':').
    let slot = 0;
    for (const line of lines) {
      if (line.endsWith(':')) {
        out.push(line);
        continue;
      }
      const insn = insns[slot];
      const note = insn ? notes.get(insn.insnIndex) : undefined;
      const text = `${String(insn?.insnIndex ?? slot).padStart(6)}:  ${line}`;
      out.push(note ? `${text.padEnd(48)}  # reloc: ${note}` : text);
      slot++;
    }
    out.push('');
  }
  return `${out.join('\n')}`;
}
