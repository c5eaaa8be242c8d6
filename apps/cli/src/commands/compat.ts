import { existsSync } from 'node:fs';
import { CompatError, checkCompat, type KernelProfile, layoutHash, layoutOf, type ProgramSpec, type ProviderDefinition, parseRodataAssignment, profileFormat, type RodataValue, readProgramSpec, setRodata, type Verdict, verdictHeadline, verdictSummary } from '@probeyard/compat';
import { checkScriptCompat, type CompiledScript } from '@probeyard/script';
import { type Command, parseCommandArgs } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { compileForCli, isScriptInput, readProviderFiles } from '../script-input.js';
import { readInput } from './asm.js';
import { runCompatMatrix } from './compat-matrix.js';
import { compatFailure, loadProfile, loadSpecFile, profileFormats } from './inspect.js';

const help = `usage: probeyard compat PROGRAM --kernel DIR|FILE|live [--name N] [--kernel … [--name N]]
                       [--partial] [--strict-char-sign] [--built-against DIR|FILE]
                       [--pin-to DIR|FILE] [--provider FILE|DIR]... [--set NAME=VALUE]...
                       [--json]
       probeyard compat NAME[@VERSION] [--json] [--registry URL --token T]

Computes on which kernels a program runs: relocates every field it reads for each kernel's own
format files, verifies it again there, and prints one verdict a kernel with its reasons:
compatible (same layout), relocated (runs after relocation), incompatible (why), unknown (a
partial profile lacks an event the program attaches to: the kernel may have it).

A profile is complete (the live tracefs, an events/ tree or a tarball of one: a missing event is
a fact, incompatible: event-missing) or partial (a trace.dat holds only the events it recorded; a
folder given with --partial): each verdict line says which.

  PROGRAM                  a BPF ELF object, Probeyard assembly, or a script (.bt, compiled for
                           --built-against's kernel)
  --kernel DIR|FILE|live   a kernel profile: an events/ tree (DIR), a tarball of one, a trace.dat
                           (FILE), or live (this machine's tracefs, wherever it is mounted);
                           repeat for more kernels
  --name N                 the kernel's release as verdicts show it; the first --name names the
                           first --kernel, and so on (default: kernel_version.txt of the dump,
                           the uname of a trace.dat or of this machine)
  --partial                the events/ trees and tarballs given hold some of their kernel's
                           events only: a missing event is unknown there, not incompatible
  --strict-char-sign       also refuse a read of a plain char field whose signedness changed
                           (signedness-changed; a signedness change of any other field is refused
                           always)
  --built-against DIR|FILE formats the program was built for (names hard-coded offsets; a
                           script is compiled for them)
  --pin-to DIR|FILE        a program with unnamed hard-coded offsets runs only where each event's
                           layout equals this kernel's
  --provider FILE|DIR      a provider (JSON, packages/compat's format; a folder: each .json in
                           it; repeatable) the program's provider probes resolve through on each
                           kernel: a script's (proc:::exec) or a C object's
                           (SEC("provider/proc/exec"), library/include/probeyard/provider.h).
                           Each verdict names the provider version and implementation chosen
                           (via proc@1.0.0, implementation for …); a probe no implementation
                           serves is provider-unresolved
  --set NAME=VALUE         a .rodata option (\`const volatile\` variable) of the object, as a
                           deployment (or \`run --set\`) sets it before load (repeatable). The
                           verifier reads frozen .rodata as constants, so a read guarded by an
                           option that is off is dead code: the verdict can change with options
  --json                   print the verdicts as JSON

With NAME[@VERSION] instead of a program file (no file of that name exists), prints the
registry's matrix of that program's versions × the tenant's kernel profiles, with the reasons
and field diffs of every cell that is not compatible.

Exit codes: 0 runs on every kernel given, 1 refused or unknown on some (or not found), 2 unusable input.`;

/** `KERNEL (RELEASE, complete)`: where the verdict is from, its name and whether it is complete. */
function kernelLabel(kernel: string, v: Verdict): string {
  const what = v.profile.complete ? 'complete' : 'partial';
  return `${kernel} (${v.profile.release ? `${v.profile.release}, ` : ''}${what})`;
}

function row(name: string, v: Verdict): string[] {
  const lines = [`${name}  ${verdictHeadline(v)}`];
  for (const p of v.programs) {
    for (const r of p.reasons) lines.push(`    ${r.kind}: ${r.text}`);
    for (const c of p.changes) lines.push(`    relocated ${p.program}: ${c}`);
    for (const f of p.absentFields) lines.push(`    ${p.program}: field ${f} absent (guarded by field exists)`);
    if (p.via !== undefined) lines.push(`    ${p.program}: ${p.via}`);
  }
  return lines;
}

export const compatCommand: Command = {
  name: 'compat',
  summary: 'verdict of a program on kernel profiles: compatible, relocated, incompatible, unknown',
  help,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
          kernel: { type: 'string', multiple: true },
          name: { type: 'string', multiple: true },
          partial: { type: 'boolean', default: false },
          'strict-char-sign': { type: 'boolean', default: false },
          'built-against': { type: 'string' },
          'pin-to': { type: 'string' },
          provider: { type: 'string', multiple: true },
          set: { type: 'string', multiple: true },
          json: { type: 'boolean', default: false },
          registry: { type: 'string' },
          token: { type: 'string' },
        }, help);
    const { values, positionals } = parsed;
    // A name (not a file, nor something that looks like a path) asks the registry.
    const arg = positionals[0] ?? '';
    const looksLikePath = arg === '-' || arg.includes('/') || /\.(o|s|asm|elf|bpf)$/.test(arg);
    if (positionals.length === 1 && !looksLikePath && !existsSync(arg) && (values.kernel ?? []).length === 0) {
      return runCompatMatrix(positionals[0]!, values, io);
    }
    if (positionals.length !== 1) throw new CliError(`expected one PROGRAM, got ${positionals.length}\n\n${help}`);
    const kernels = values.kernel ?? [];
    if (kernels.length === 0) throw new CliError(`at least one --kernel DIR|FILE is needed\n\n${help}`);
    const names = values.name ?? [];
    if (names.length > kernels.length) throw new CliError(`${names.length} --name for ${kernels.length} --kernel: each --name names the --kernel of the same rank`);
    for (const n of names) if (n.trim() === '' || n.length > 128) throw new CliError(`--name '${n}': give the kernel's release (1 to 128 characters)`);
    const providers = readProviderFiles(values.provider);
    const path = positionals[0]!;
    // a script through providers: compiled for each kernel through the implementations it needs
    // (packages/script checkScriptCompat), against the build for --built-against (else the first kernel)
    let script: { text: string; build: CompiledScript } | undefined;
    let spec: ProgramSpec;
    const bytes = providers === undefined ? undefined : await readInput(io, path);
    if (bytes !== undefined && isScriptInput(path, bytes)) {
      const buildProfile = await loadProfile(values['built-against'] ?? kernels[0]!);
      const build = await compileForCli(path, bytes, buildProfile, providers);
      script = { text: build.spec.script?.source ?? new TextDecoder().decode(bytes), build };
      spec = build.spec;
    } else spec = bytes !== undefined && path === '-' ? await specOfBytes(bytes, values['built-against']) : await loadSpecFile(io, path, values['built-against']);
    // --set NAME=VALUE: .rodata options, as a deployment sets them before load
    let options: [string, RodataValue][] = [];
    try {
      options = (values.set ?? []).map(parseRodataAssignment);
      if (options.length > 0) spec = setRodata(spec, Object.fromEntries(options));
    } catch (e) {
      if (e instanceof CompatError) throw new CliError(e.message);
      throw e;
    }
    if (values['pin-to'] !== undefined) {
      const pin = await loadProfile(values['pin-to']);
      for (const p of spec.programs) {
        if (p.attach.kind !== 'tracepoint') continue;
        const key = `${p.attach.system}/${p.attach.event}`;
        const format = profileFormat(pin, key);
        if (format) spec.pinnedLayouts[key] = layoutHash(layoutOf(format));
      }
    }
    const results: { kernel: string; release: string; complete: boolean; verdict: Verdict }[] = [];
    const strictCharSign = values['strict-char-sign'] === true;
    for (const [i, k] of kernels.entries()) {
      const name = names[i];
      const profile = await loadProfile(k, { ...(name !== undefined ? { release: name } : {}), ...(values.partial ? { complete: false } : {}) });
      results.push({ kernel: k, release: profile.release, complete: profile.complete, verdict: await verdictOf(spec, script, profile, strictCharSign, providers) });
    }
    if (values.json) {
      const out = results.map((r) => ({ kernel: r.kernel, release: r.release, complete: r.complete, ...verdictSummary(r.verdict) }));
      const set = options.length > 0 ? { options: Object.fromEntries(options.map(([k, v]) => [k, String(v)])) } : {};
      io.stdout(`${JSON.stringify({ digest: spec.digest, strictCharSign, ...set, verdicts: out }, null, 2)}\n`);
    } else {
      const withOptions = options.length > 0 ? ` with ${options.map(([k, v]) => `${k}=${String(v)}`).join(' ')}` : '';
      const lines = [`program ${positionals[0]} (sha256 ${spec.digest.slice(0, 16)}…)${withOptions}, module-like, no ABI`];
      for (const r of results) lines.push(...row(kernelLabel(r.kernel, r.verdict), r.verdict));
      io.stdout(`${lines.join('\n')}\n`);
    }
    return results.every((r) => r.verdict.status === 'compatible' || r.verdict.status === 'relocated') ? ExitCode.ok : ExitCode.refused;
  },
};

/** The spec of an object or assembly read already (stdin with --provider). */
async function specOfBytes(bytes: Uint8Array, builtAgainst: string | undefined): Promise<ProgramSpec> {
  const buildFormats = builtAgainst === undefined ? [] : profileFormats(await loadProfile(builtAgainst));
  try {
    return await readProgramSpec(bytes, { buildFormats });
  } catch (e) {
    compatFailure(e);
  }
}

async function verdictOf(spec: ProgramSpec, script: { text: string; build: CompiledScript } | undefined, profile: KernelProfile, strictCharSign: boolean, providers: readonly ProviderDefinition[] | undefined): Promise<Verdict> {
  if (script !== undefined) return checkScriptCompat(script.text, script.build, profile, { strictCharSign, providers: providers ?? [] });
  return checkCompat(spec, profile, { strictCharSign, ...(providers !== undefined ? { providers } : {}) });
}
