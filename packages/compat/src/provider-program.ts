// Provider probes in compiled programs (C with library/include/probeyard/provider.h): a program in
// section `provider/<provider>/<probe>` reads the probe's *arguments record*, whose format is
// synthesized from the probe's declared arguments (the same on every kernel), through CO-RE
// relocations by field name. On a kernel, the probe resolves through the provider's
// implementations (`resolveProviderProbe`); the program is relocated and verified against the
// arguments record's format, and the runtime builds that record per event from the raw record by
// the chosen implementation's argument expressions (provider-record.ts).
import { type EventFormat, parseEventFormat } from '@probeyard/formats';
import type { KernelProfile } from './kernel-profile.js';
import type { ProgramSpec, SpecAttach } from './program-spec.js';
import { type ProbeResolution, type ProviderArgType, type ProviderDefinition, type ProviderProbeArg, providerKernelOf, resolveProviderProbe } from './provider.js';

/** The section prefix of a provider probe's program: `provider/proc/fork`. */
export const PROVIDER_SECTION_PREFIX = 'provider/';

const sectionRe = /^provider\/([a-z_][a-z0-9_]*)\/([a-z_][a-z0-9_]*)$/;

/** The provider probe a program's attach point names (`provider/proc/fork` → proc, fork), or undefined. */
export function providerProbeOf(attach: SpecAttach): { provider: string; probe: string } | undefined {
  if (attach.kind !== 'other') return undefined;
  const m = sectionRe.exec(attach.section);
  return m ? { provider: m[1]!, probe: m[2]! } : undefined;
}

/** The system an arguments record's format is filed under (`provider.proc`): no tracefs system has a dot. */
export function providerArgsSystem(provider: string): string {
  return `provider.${provider}`;
}

/** One field of an arguments record: an `int` is a signed 64-bit integer, a `string` a `__data_loc` string. */
export interface ProviderArgsField {
  name: string;
  type: ProviderArgType;
  byteOffset: number;
  size: 8 | 4;
}

/** Size of the common header every record starts with (common_type, common_flags, common_preempt_count, common_pid). */
export const PROVIDER_COMMON_SIZE = 8;

/**
 * The layout of a probe's arguments record: the 8-byte common header, then each argument in its
 * declared order, as C lays out the struct of provider.h — an `int` as `long long` (8 bytes,
 * 8-aligned, signed), a `string` as `__data_loc char[]` (a u32 locator, 4-aligned). The strings'
 * text follows the fixed part.
 */
export function providerArgsLayout(args: readonly ProviderProbeArg[]): { fields: ProviderArgsField[]; fixedSize: number } {
  let at = PROVIDER_COMMON_SIZE;
  const fields: ProviderArgsField[] = [];
  for (const a of args) {
    const size = a.type === 'int' ? 8 : 4;
    at = Math.ceil(at / size) * size;
    fields.push({ name: a.name, type: a.type, byteOffset: at, size });
    at += size;
  }
  return { fields, fixedSize: at };
}

/**
 * The format file of a probe's arguments record (parsed as any tracefs format: relocation and the
 * verifier read it as they read a kernel's). `id` is the event id records carry in `common_type`
 * (the raw event's on a kernel; 0 when none).
 */
export function providerArgsFormat(provider: string, probe: string, args: readonly ProviderProbeArg[], id = 0): EventFormat {
  const { fields } = providerArgsLayout(args);
  const line = (decl: string, offset: number, size: number, signed: number) => `\tfield:${decl};\toffset:${offset};\tsize:${size};\tsigned:${signed};`;
  const text = [
    `name: ${probe}`,
    `ID: ${id}`,
    'format:',
    line('unsigned short common_type', 0, 2, 0),
    line('unsigned char common_flags', 2, 1, 0),
    line('unsigned char common_preempt_count', 3, 1, 0),
    line('int common_pid', 4, 4, 1),
    '',
    ...fields.map((f) => (f.type === 'int' ? line(`long long ${f.name}`, f.byteOffset, 8, 1) : line(`__data_loc char[] ${f.name}`, f.byteOffset, 4, 0))),
    '',
    `print fmt: "${fields.map((f) => `${f.name}=${f.type === 'int' ? '%lld' : '%s'}`).join(' ')}"${fields.map((f) => (f.type === 'int' ? `, REC->${f.name}` : `, __get_str(${f.name})`)).join('')}`,
    '',
  ].join('\n');
  return parseEventFormat(text, { system: providerArgsSystem(provider) });
}

/**
 * A program of a provider probe bound to a kernel: the implementation chosen there, the raw event
 * it fires on, the argument expressions the runtime evaluates over that event's records, and the
 * arguments record's format the program was relocated and verified against. Plain data.
 */
export interface ProviderBinding {
  program: string;
  /** `proc:::fork`. */
  probe: string;
  provider: string;
  version: string;
  /** The implementation chosen (its `for`). */
  implementation: string;
  /** `proc@1.2.0, implementation for __data_loc parent_comm`. */
  via: string;
  /** The raw event the probe fires on here. */
  system: string;
  event: string;
  /** Each argument, in the record's order, with its expression over the raw event. */
  args: { name: string; type: ProviderArgType; expression: string }[];
  /** The arguments record's format (its `system` is {@link providerArgsSystem}). */
  format: EventFormat;
}

/** A provider program that does not resolve on a kernel. */
export interface ProviderBindingFailure {
  program: string;
  probe: string;
  status: 'incompatible' | 'unknown';
  reason: string;
}

/** What {@link bindProviderPrograms} gives: the spec and profile the relocation runs on, and each program's binding or failure. */
export interface BoundProviders {
  /** The spec with each bound provider program attached to its arguments record's event (`provider.proc/fork`). */
  spec: ProgramSpec;
  /** The profile with every bound arguments record's format added. */
  profile: KernelProfile;
  bindings: ProviderBinding[];
  failures: ProviderBindingFailure[];
}

/** The bindings of a spec's provider programs on a kernel (see {@link ProviderBinding}). */
export function bindProviderPrograms(spec: ProgramSpec, profile: KernelProfile, providers: readonly ProviderDefinition[]): BoundProviders {
  const kernel = providerKernelOf(profile);
  const events = new Map(profile.events);
  const formats = new Map(profile.formats);
  const bindings: ProviderBinding[] = [];
  const failures: ProviderBindingFailure[] = [];
  const programs = spec.programs.map((p) => {
    const pp = providerProbeOf(p.attach);
    if (pp === undefined) return p;
    const probe = `${pp.provider}:::${pp.probe}`;
    const def = providers.find((d) => d.name === pp.provider);
    if (def === undefined) {
      const known = providers.map((d) => `${d.name}@${d.version}`);
      failures.push({
        program: p.name,
        probe,
        status: 'incompatible',
        reason: `no provider '${pp.provider}' is given (${known.length > 0 ? `given: ${known.join(', ')}` : 'none given'}; the CLI takes --provider FILE|DIR)`,
      });
      return p;
    }
    const r = resolveProviderProbe(def, pp.probe, kernel);
    if (!r.ok) {
      failures.push({ program: p.name, probe, status: r.status, reason: r.reason });
      return p;
    }
    const probeDef = def.probes.find((x) => x.name === pp.probe)!;
    const binding = bindingOf(p.name, probe, r, probeDef.args, profile);
    bindings.push(binding);
    const key = `${binding.format.system}/${pp.probe}`;
    const hash = `provider:${def.name}@${def.version}:${pp.probe}:${binding.format.id}`;
    events.set(key, hash);
    formats.set(hash, binding.format);
    return { ...p, attach: { kind: 'tracepoint' as const, system: binding.format.system, event: pp.probe } };
  });
  return { spec: { ...spec, programs }, profile: { ...profile, events, formats }, bindings, failures };
}

function bindingOf(program: string, probe: string, r: ProbeResolution, args: readonly ProviderProbeArg[], profile: KernelProfile): ProviderBinding {
  const raw = profile.formats.get(profile.events.get(`${r.system}/${r.event}`) ?? '');
  return {
    program,
    probe,
    provider: r.provider,
    version: r.version,
    implementation: r.implementation,
    via: r.via,
    system: r.system,
    event: r.event,
    args: args.map((a) => ({ name: a.name, type: a.type, expression: r.args[a.name]! })),
    format: providerArgsFormat(r.provider, r.probe, args, raw?.id ?? 0),
  };
}

/** Whether a spec has programs of provider probes. */
export function hasProviderPrograms(spec: Pick<ProgramSpec, 'programs'>): boolean {
  return spec.programs.some((p) => providerProbeOf(p.attach) !== undefined);
}
