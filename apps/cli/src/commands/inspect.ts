import { parseArgs } from 'node:util';
import {
  buildManifest,
  CompatError,
  formatManifest,
  type KernelProfile,
  type ProfileMeta,
  type ProgramSpec,
  profileFormat,
  providerArgsLayout,
  providerProbeOf,
  providerSummary,
  readProgramSpec,
  specToJson,
  type ProviderDefinition,
} from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import type { EventFormat } from '@probeyard/formats';
import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { isScriptInput, readProviderFiles, scriptSpec } from '../script-input.js';
import { readInput } from './asm.js';

const help = `usage: probeyard inspect PROGRAM [--built-against DIR|FILE] [--provider FILE|DIR]... [--json]

Shows the spec of a tracing program (programs, attach points, maps, license, digest) and its
manifest: every event it attaches to and every field it reads, by name, with the offset, size
and signedness it was built for and where the name came from (CO-RE, assembly symbol, or the
verifier matched against --built-against). Reads nothing names are listed as layout-pinned.

  PROGRAM                  a BPF ELF object (clang -target bpf), Probeyard assembly, or a script
                           (.bt, compiled for --built-against's kernel); - reads stdin
  --built-against DIR|FILE the kernel the program was built for: an events/ tree, a tarball of one
                           or a trace.dat; assembly symbols resolve against it and hard-coded
                           offsets are named from it
  --provider FILE|DIR      a provider (JSON; a folder: each .json in it; repeatable): a script's
                           provider probes compile through it; a C object's provider programs
                           (SEC("provider/proc/fork")) are shown with their probe's arguments
                           record and the provider's implementations
  --json                   print { spec, manifest } as JSON (and providers, with --provider)

Exit codes: 0 shown, 2 unusable input.`;

/** Turns a CompatError into a usage CliError (the message names what is wrong). */
export function compatFailure(err: unknown): never {
  if (err instanceof CompatError) throw new CliError(err.message, err.code === 'not-found' ? ExitCode.usage : ExitCode.usage);
  throw err;
}

/** Reads a profile (events tree, tarball, trace.dat or `live`), as a CLI error when it cannot. */
export async function loadProfile(path: string, meta: ProfileMeta = {}): Promise<KernelProfile> {
  try {
    return await readProfile(path, meta);
  } catch (e) {
    compatFailure(e);
  }
}

/** The formats of every event a profile has (build-time formats of a program). */
export function profileFormats(profile: KernelProfile): EventFormat[] {
  return [...profile.events.keys()].map((k) => profileFormat(profile, k)).filter((f): f is EventFormat => f !== undefined);
}

/**
 * Reads PROGRAM as a spec, with the build-time formats of `builtAgainst` when given. A script
 * (`.bt`, or a script artifact) is compiled for `builtAgainst`'s kernel (`scriptProfile` first).
 */
export async function loadSpecFile(io: CliIo, path: string, builtAgainst: string | undefined, scriptProfile?: KernelProfile, providers?: readonly ProviderDefinition[]): Promise<ProgramSpec> {
  const bytes = await readInput(io, path);
  if (isScriptInput(path, bytes)) return scriptSpec(path, bytes, scriptProfile ?? (builtAgainst === undefined ? undefined : await loadProfile(builtAgainst)), providers);
  const buildFormats = builtAgainst === undefined ? [] : profileFormats(await loadProfile(builtAgainst));
  try {
    return await readProgramSpec(bytes, { buildFormats });
  } catch (e) {
    compatFailure(e);
  }
}

function formatSpec(spec: ProgramSpec): string {
  const kind = spec.sourceKind === 'elf' ? 'BPF ELF object' : spec.sourceKind === 'script' ? 'script (compiled; artifact' : 'Probeyard assembly';
  const lines = [`${kind}, ${spec.byteLength} bytes${spec.sourceKind === 'script' ? ')' : ''}, license ${spec.license ?? 'none'}`];
  lines.push('maps:');
  for (const m of spec.maps) {
    const global = m.globalSection ? ` (global data ${m.globalSection})` : '';
    lines.push(`  ${m.name}: ${m.typeName}, key ${m.keySize}, value ${m.valueSize}, entries ${m.maxEntries}${global}`);
  }
  if (spec.maps.length === 0) lines.push('  none');
  return `${lines.join('\n')}\n`;
}

export const inspectCommand: Command = {
  name: 'inspect',
  summary: 'show a program spec and its manifest (events, fields read by name, helpers, maps)',
  help,
  async run(args, io) {
    const parsed = (() => {
    try {
      return parseArgs({ args, allowPositionals: true, options: { 'built-against': { type: 'string' }, provider: { type: 'string', multiple: true }, json: { type: 'boolean', default: false } } });
    } catch (err) {
      throw new CliError(`${(err as Error).message}\n\n${help}`);
    }
    })();
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new CliError(`expected one PROGRAM, got ${positionals.length}\n\n${help}`);
    const providers = readProviderFiles(values.provider);
    const spec = await loadSpecFile(io, positionals[0]!, values['built-against'], undefined, providers);
    const manifest = buildManifest(spec);
    const probes = providers === undefined ? undefined : providerProbesOf(spec, providers);
    if (values.json) {
      io.stdout(`${JSON.stringify({ spec: specToJson(spec), manifest, ...(probes !== undefined ? { providers: probes } : {}) }, null, 2)}\n`);
      return ExitCode.ok;
    }
    io.stdout(formatSpec(spec) + formatManifest(manifest) + (probes === undefined ? '' : formatProviderProbes(probes)));
    return ExitCode.ok;
  },
};

/** A C object's provider program as inspect shows it: its probe, the arguments record and the implementations. */
interface ProviderProbeView {
  program: string;
  probe: string;
  /** `proc@1.0.0`, or undefined when no provider of that name was given. */
  provider: string | undefined;
  record: { name: string; type: string; byteOffset: number; size: number }[];
  implementations: { for: string; event: string; fields: string[] }[];
  error?: string;
}

function providerProbesOf(spec: ProgramSpec, providers: readonly ProviderDefinition[]): ProviderProbeView[] {
  return spec.programs.flatMap((p): ProviderProbeView[] => {
    const pp = providerProbeOf(p.attach);
    if (pp === undefined) return [];
    const probe = `${pp.provider}:::${pp.probe}`;
    const def = providers.find((d) => d.name === pp.provider);
    const summary = def === undefined ? undefined : providerSummary(def).find((x) => x.probe === pp.probe);
    if (def === undefined || summary === undefined) {
      const error = def === undefined ? `no provider '${pp.provider}' given` : `${def.name}@${def.version} has no probe '${pp.probe}'`;
      return [{ program: p.name, probe, provider: def && `${def.name}@${def.version}`, record: [], implementations: [], error }];
    }
    const record = providerArgsLayout(summary.args).fields.map((f) => ({ name: f.name, type: f.type === 'int' ? 'long long' : '__data_loc char[]', byteOffset: f.byteOffset, size: f.size }));
    return [{ program: p.name, probe, provider: `${def.name}@${def.version}`, record, implementations: summary.implementations }];
  });
}

function formatProviderProbes(probes: readonly ProviderProbeView[]): string {
  const lines: string[] = [];
  for (const v of probes) {
    if (v.error !== undefined) {
      lines.push(`provider probe ${v.probe} (${v.program}): ${v.error}`);
      continue;
    }
    lines.push(`provider probe ${v.probe} (${v.program}), ${v.provider}; arguments record after the 8-byte common header:`);
    for (const f of v.record) lines.push(`  ${f.type} ${f.name}: offset ${f.byteOffset}, size ${f.size}`);
    for (const i of v.implementations) lines.push(`  implementation for ${i.for}: ${i.event} (${i.fields.join(', ')})`);
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
