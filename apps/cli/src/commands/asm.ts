import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AssembledProgram, type AssemblerSyntax, assemble, encode, type FieldLayout, type FieldResolver, IsaError } from '@probeyard/isa';
import { isFormatError, parseEventFormat } from '@probeyard/formats';
import { type Command, parseCommandArgs } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';

const help = `usage: probeyard asm FILE|- [-o OUT] [--hex] [--syntax auto|conformance|llvm] [--program NAME] [--events DIR]

Assembles eBPF assembly (LLVM syntax, bpf_conformance syntax, or a Probeyard file with maps,
sections and symbolic field operands; see packages/isa/README.md) into raw instruction bytes.

  FILE|-            the assembly text; - reads standard input
  -o, --output OUT  write the raw bytes (8 a slot, little-endian) to OUT
  --hex             print hex, 8 bytes a line (the default without -o; with -o, OUT gets the hex text)
  --syntax S        auto (default: per file), conformance or llvm
  --program NAME    the program (by name or section) to output when the file has several (default: the first)
  --events DIR      resolve field operands (event.field) against the format files of a tracefs events
                    tree: DIR/<system>/<event>/format (e.g. /sys/kernel/tracing/events)

Without --events, field operands are left unresolved (offset 0 plus any addend) and reported on stderr.
Exit codes: 0 assembled, 1 no such program, 2 unusable input or options.`;

/** Bytes as hex, 8 bytes a line. */
export function formatHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8) {
    out += `${[...bytes.subarray(i, i + 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ')}\n`;
  }
  return out;
}

/** Reads FILE or standard input (for `-`). */
export async function readInput(io: CliIo, path: string): Promise<Uint8Array> {
  return path === '-' ? io.readStdin() : io.readFile(path);
}

/** Turns an IsaError into a usage CliError with its message (line/column or instruction included). */
export function isaFailure(err: unknown): never {
  if (err instanceof IsaError) throw new CliError(err.message, ExitCode.usage);
  throw err;
}

/** The field layouts of one tracefs format file, parsed by @probeyard/formats. */
export function readFormatFields(text: string): Map<string, FieldLayout> {
  const format = parseEventFormat(text);
  const fields = new Map<string, FieldLayout>();
  for (const f of [...format.commonFields, ...format.fields]) {
    fields.set(f.name, { byteOffset: f.byteOffset, size: f.size, signed: f.signed ?? false });
  }
  return fields;
}

/** Resolves `event.field` from DIR/<system>/<event>/format, reading each event's file once. */
export function eventsTreeResolver(dir: string): FieldResolver {
  if (!existsSync(dir)) throw new CliError(`no events folder ${dir}`);
  const systems = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory());
  const cache = new Map<string, Map<string, FieldLayout> | undefined>();
  return (event, field) => {
    if (!cache.has(event)) {
      const system = systems.find((s) => existsSync(join(dir, s.name, event, 'format')));
      const path = system ? join(dir, system.name, event, 'format') : undefined;
      try {
        cache.set(event, path ? readFormatFields(readFileSync(path, 'utf8')) : undefined);
      } catch (err) {
        if (isFormatError(err)) throw new CliError(`${path}: ${err.message}`, ExitCode.usage);
        throw err;
      }
    }
    return cache.get(event)?.get(field);
  };
}

function parse(args: string[]) {
  return parseCommandArgs(
    args,
    {
      output: { type: 'string', short: 'o' },
      hex: { type: 'boolean', default: false },
      syntax: { type: 'string', default: 'auto' },
      program: { type: 'string' },
      events: { type: 'string' },
    },
    help,
  );
}

export const asmCommand: Command = {
  name: 'asm',
  summary: 'assemble eBPF assembly into instruction bytes (or hex)',
  help,
  async run(args, io) {
    const { values, positionals } = parse(args);
    if (positionals.length !== 1) throw new CliError(`expected one FILE (or -), got ${positionals.length}\n\n${help}`);
    const syntax = values.syntax as AssemblerSyntax;
    if (!['auto', 'conformance', 'llvm'].includes(syntax)) throw new CliError(`unknown syntax '${values.syntax}' (auto, conformance or llvm)`);
    const text = new TextDecoder().decode(await readInput(io, positionals[0]!));
    let object: ReturnType<typeof assemble>;
    try {
      object = assemble(text, values.events === undefined ? { syntax } : { syntax, resolveField: eventsTreeResolver(values.events) });
    } catch (err) {
      isaFailure(err);
    }
    if (object.programs.length === 0) throw new CliError('no instructions in the input', ExitCode.usage);
    let program: AssembledProgram | undefined = object.programs[0];
    if (values.program !== undefined) {
      program = object.programs.find((p) => p.name === values.program) ?? object.programs.find((p) => p.section === values.program);
      if (!program) {
        throw new CliError(`no program '${values.program}' (the file has: ${object.programs.map((p) => p.name).join(', ')})`, ExitCode.refused);
      }
    }
    const bytes = encode(program!.instructions);
    for (const r of program!.fieldRelocations) {
      if (!r.resolved) io.stderr(`note: instruction ${r.insnIndex} reads ${r.event}.${r.field}: offset left at ${r.addend}, unresolved\n`);
    }
    for (const r of program!.mapRelocations) io.stderr(`note: instruction ${r.insnIndex} loads map '${r.map}': imm left at 0\n`);
    if (values.output !== undefined) {
      await io.writeFile(values.output, values.hex ? formatHex(bytes) : bytes);
      io.stderr(`${program!.name}: ${bytes.length / 8} slots, ${bytes.length} bytes written to ${values.output}\n`);
    } else {
      io.stdout(formatHex(bytes));
    }
    return ExitCode.ok;
  },
};
