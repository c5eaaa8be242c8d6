import {
  loadProgram,
  RunStatus,
  unwindTestHelper,
  Vm,
  type VmTier,
} from '@probeyard/vm';
import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';

const help = `usage: probeyard conformance-plugin [--program <hex>] [<memory hex>] [--tier compiled|interpreter] [--debug]

A plugin for the bpf_conformance runner (Alan-Jowett/bpf_conformance): reads the program as hex
bytes on standard input (or from --program), the memory as hex bytes in the first argument,
runs it in the Probeyard VM with r1 = the memory and r2 = its length, and prints r0 in
lowercase hex without a prefix. A program the VM refuses, or a run that faults, prints the
reason and exits 1. Helper 5 is uBPF's conformance "unwind" helper (returns r1; ends the run
when it is 0), as the suite expects.

--tier picks the VM's execution tier: compiled (WebAssembly, the default) or interpreter. With
an explicit --tier compiled, a program the compiler does not take is an error (exit 1) rather
than a silent run on the interpreter.

  bpf_conformance_runner --test_file_path tests --plugin_path probeyard \\
    --plugin_options conformance-plugin
`;

/** Parses hex bytes written with or without separators ("b7 00 00", "b70000"). */
export function parseHexBytes(text: string, what: string): Uint8Array {
  const clean = text.replace(/0x/gi, '').replace(/[\s,]+/g, ' ').trim();
  if (clean === '') return new Uint8Array(0);
  const tokens = clean.split(' ');
  const out: number[] = [];
  for (const t of tokens) {
    if (!/^[0-9a-fA-F]+$/.test(t) || t.length % 2 !== 0) {
      throw new CliError(`${what}: '${t}' is not hex bytes`);
    }
    for (let i = 0; i < t.length; i += 2) out.push(Number.parseInt(t.slice(i, i + 2), 16));
  }
  return Uint8Array.from(out);
}

async function run(args: string[], io: CliIo): Promise<number> {
  let programText: string | undefined;
  let memoryText = '';
  let debug = false;
  let tier: VmTier | undefined;
  const rest = [...args];
  while (rest.length > 0) {
    const a = rest.shift() as string;
    if (a === '--program') {
      programText = rest.shift();
      if (programText === undefined) throw new CliError('--program needs a value');
    } else if (a === '--tier') {
      const t = rest.shift();
      if (t !== 'compiled' && t !== 'interpreter') throw new CliError(`--tier: '${t ?? ''}' is not compiled or interpreter`);
      tier = t;
    } else if (a === '--debug') debug = true;
    else if (a === '--elf') throw new CliError('--elf: ELF input is not supported by this plugin', ExitCode.refused);
    else if (a.startsWith('--')) throw new CliError(`unknown option '${a}'`);
    else memoryText = a;
  }
  if (programText === undefined) programText = new TextDecoder().decode(await io.readStdin());
  const program = parseHexBytes(programText, 'program');
  const memory = parseHexBytes(memoryText, 'memory');

  const vm = new Vm({ standardHelpers: false, helpers: new Map([[5, unwindTestHelper]]), tier });
  const loaded = loadProgram(program, vm.loadOptions('conformance'));
  if (!loaded.ok) {
    const first = loaded.diagnostics[0];
    io.stderr(`load program: ${first ? `${first.insnIndex}: ${first.message}` : 'refused'}\n`);
    if (debug) for (const d of loaded.diagnostics) io.stderr(`  ${d.insnIndex}: (${d.insnText}) ${d.message}\n`);
    return ExitCode.refused;
  }
  const ranOn = vm.tierOf(loaded.program);
  if (tier === 'compiled' && ranOn !== 'compiled') {
    io.stderr(`compiled tier: ${vm.tierCounters.lastFallbackReason ?? 'not available'}\n`);
    return ExitCode.refused;
  }
  if (debug) io.stderr(`tier: ${ranOn}\n`);
  const status = vm.run(loaded.program, memory);
  if (status !== RunStatus.ok) {
    io.stderr(`${vm.fault?.message ?? 'run failed'}\n`);
    return ExitCode.refused;
  }
  if (debug) io.stderr(`executed ${vm.insnCount} instructions\n`);
  io.stdout(`${vm.r0.toString(16)}\n`);
  return ExitCode.ok;
}

export const conformancePluginCommand: Command = {
  name: 'conformance-plugin',
  summary: 'run one bpf_conformance test program in the VM (plugin protocol)',
  help,
  run,
};
