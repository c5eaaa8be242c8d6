import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  type AssembledProgram,
  assemble,
  conformanceGroupsOfProgram,
  encode,
  formatInstruction,
  isaVersionOfProgram,
} from '@probeyard/isa';
import type { Command } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { eventsTreeResolver, isaFailure } from './asm.js';
import { runCommand } from './run.js';

const exampleName = 'sched-switch-count.s';

const help = `usage: probeyard demo [--examples DIR]

Assembles the bundled example program examples/${exampleName} (a tracepoint program that counts
sched_switch events per next_pid in a hash map, reading next_pid through a symbolic field operand),
resolves its field operands against the bundled sched_switch format file, and prints its programs,
maps, relocations, the encoded bytes and both disassemblies.

  --examples DIR   the examples folder (default: found by walking up from the CLI to the repository root)`;

/** Finds the repository's examples folder by walking up from this module. */
export function findExamples(start = dirname(fileURLToPath(import.meta.url))): string | undefined {
  let dir = start;
  for (;;) {
    const candidate = join(dir, 'examples');
    if (existsSync(join(candidate, exampleName))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function hexRow(bytes: Uint8Array, at: number): string {
  return [...bytes.subarray(at, at + 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
}

function describeProgram(p: AssembledProgram, out: string[]): void {
  const attach = p.attachPoint
    ? p.attachPoint.kind === 'tracepoint'
      ? `tracepoint ${p.attachPoint.system}:${p.attachPoint.event}`
      : JSON.stringify(p.attachPoint)
    : 'none';
  const bytes = encode(p.instructions);
  out.push(`program ${p.name}`);
  out.push(`  section      ${p.section}`);
  out.push(`  attach       ${attach}`);
  out.push(`  size         ${p.instructions.length} instructions, ${bytes.length / 8} slots, ${bytes.length} bytes`);
  out.push(`  needs        ISA ${isaVersionOfProgram(p.instructions)}; groups ${conformanceGroupsOfProgram(p.instructions).join(', ')}`);
  out.push('  field relocations');
  if (p.fieldRelocations.length === 0) out.push('    (none)');
  for (const r of p.fieldRelocations) {
    const layout = r.layout ? `offset ${r.layout.byteOffset}, size ${r.layout.size}, ${r.layout.signed ? 'signed' : 'unsigned'}` : 'unresolved';
    out.push(`    insn ${String(r.insnIndex).padStart(3)}  ${r.event}.${r.field}  ${r.accessSize}-byte access  -> ${layout}`);
  }
  out.push('  map relocations');
  if (p.mapRelocations.length === 0) out.push('    (none)');
  for (const r of p.mapRelocations) out.push(`    insn ${String(r.insnIndex).padStart(3)}  lddw of map '${r.map}'`);

  const notes = new Map<number, string>();
  for (const r of p.fieldRelocations) notes.set(r.insnIndex, `${r.event}.${r.field}`);
  for (const r of p.mapRelocations) notes.set(r.insnIndex, `map ${r.map}`);
  const labels = new Map<number, string>();
  for (const [name, slot] of Object.entries(p.labels)) labels.set(slot, name);

  const rows = p.instructions.map((insn) => ({
    insn,
    llvm: formatInstruction(insn, { helperComments: true }).replace('\t', ' '),
    conformance: formatInstruction(insn, { syntax: 'conformance' }),
  }));
  const llvmWidth = Math.max(...rows.map((r) => r.llvm.length));
  const confWidth = Math.max(...rows.map((r) => r.conformance.length));
  out.push('  code');
  out.push(`    ${'slot'.padStart(4)}  ${'bytes'.padEnd(23)}  ${'LLVM syntax'.padEnd(llvmWidth)}  ${'conformance syntax'.padEnd(confWidth)}  note`);
  for (const { insn, llvm, conformance } of rows) {
    const label = labels.get(insn.insnIndex);
    if (label && label !== p.name) out.push(`    ${label}:`);
    const note = notes.get(insn.insnIndex) ?? '';
    out.push(`    ${String(insn.insnIndex).padStart(4)}  ${hexRow(bytes, insn.byteOffset)}  ${llvm.padEnd(llvmWidth)}  ${conformance.padEnd(confWidth)}  ${note}`.trimEnd());
    if (insn.opcode === 0x18) out.push(`    ${String(insn.insnIndex + 1).padStart(4)}  ${hexRow(bytes, insn.byteOffset + 8)}`);
  }
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'assemble and show the bundled example tracepoint program',
  help,
  async run(args, io) {
    let values: { examples?: string | undefined };
    try {
      ({ values } = parseArgs({ args, options: { examples: { type: 'string' } } }));
    } catch (err) {
      throw new CliError(`${(err as Error).message}\n\n${help}`);
    }
    const dir = values.examples ?? findExamples();
    if (!dir || !existsSync(join(dir, exampleName))) {
      throw new CliError(
        `cannot find examples/${exampleName}${values.examples ? ` in ${values.examples}` : ' above the CLI (run it from a Probeyard checkout, or pass --examples DIR)'}`,
        ExitCode.refused,
      );
    }
    const sourcePath = join(dir, exampleName);
    const source = readFileSync(sourcePath, 'utf8');
    const eventsDir = join(dir, 'formats');
    const formatPath = join(eventsDir, 'sched', 'sched_switch', 'format');
    const layouts = existsSync(formatPath);

    let object: ReturnType<typeof assemble>;
    try {
      object = assemble(source, {
        resolveField: layouts ? eventsTreeResolver(eventsDir) : undefined,
      });
    } catch (err) {
      isaFailure(err);
    }

    const out: string[] = [];
    out.push(`Probeyard demo: ${sourcePath}`);
    out.push(
      layouts
        ? `field operands resolved against ${formatPath}`
        : `field operands left unresolved (no format file at ${formatPath})`,
    );
    out.push('');
    out.push(`license      ${object.license ?? '(none)'}`);
    out.push('maps');
    for (const m of object.maps) {
      out.push(`  ${m.name}  ${m.type} (type ${m.typeId})  key ${m.keySize} B  value ${m.valueSize} B  max entries ${m.maxEntries}`);
    }
    out.push('');
    for (const p of object.programs) {
      describeProgram(p, out);
      out.push('');
    }
    out.push('Assemble it yourself: probeyard asm examples/sched-switch-count.s --events examples/formats');
    io.stdout(`${out.join('\n')}\n`);

    // The main job in small: the same program relocated for a recorded feed's own formats,
    // verified, and run once per event in the VM.
    const recording = join(dir, 'recordings', 'sched-small.dat');
    if (!existsSync(recording)) return ExitCode.ok;
    io.stdout(
      `\nRun over a recorded feed: probeyard run ${join('examples', exampleName)} --feed ${join('examples', 'recordings', 'sched-small.dat')}\n` +
        '(relocated for the recording\'s own format files, verified, run per event; map keys are next_pid)\n\n',
    );
    return runCommand.run([sourcePath, '--feed', recording], io);
  },
};
