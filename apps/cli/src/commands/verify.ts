import { type ProviderDefinition, providerArgsFormat, providerProbeOf } from '@probeyard/compat';
import { type EventFormat, FormatError, findField, parseEventFormat, readBpfObject } from '@probeyard/formats';
import { assemble, encode, IsaError } from '@probeyard/isa';
import {
  type MapDef,
  type VerifyOptions,
  type VerifyResult,
  VerifierError,
  linkObjectProgram,
  parseHexProgram,
  verify,
} from '@probeyard/verifier';
import { type Command, parseCommandArgs } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { readProviderFiles } from '../script-input.js';
import { readInput } from './asm.js';

const help = `usage: probeyard verify FILE|- [--hex] [--program NAME] [--event SYSTEM/NAME --formats PATH]
                        [--provider FILE|DIR]... [--json] [--log 1|2] [--unprivileged]

Checks that tracepoint programs are safe, as the kernel's verifier would (BPF_PROG_TYPE_TRACEPOINT,
root), and lists every read of the event record by field. Every program of the file is checked
(or the one named); a program of another kind (kprobe, fentry, uprobe, ...) is reported as not
supported (Probeyard runs tracepoint programs only) instead of being checked under the wrong rules.
A program of a provider probe (SEC("provider/proc/fork"), docs/PROVIDERS-C.md) is checked as a
tracepoint program on the probe's arguments record (with --provider; without, a generic record).

  FILE|-          a BPF ELF object (clang -target bpf), Probeyard assembly, or with --hex raw
                  instructions as hex text; - reads standard input
  --hex           the input is hex text (8 bytes an instruction, # and // comments)
  --program NAME  check only this program of an ELF object or assembly file
  --event S/N     the event the program reads (default: from its section, tracepoint/S/N)
  --formats PATH  a tracefs events directory (PATH/S/N/format) or one format file; with it,
                  every ctx read must fall inside one field of the event
  --provider FILE|DIR  provider definitions (JSON; a folder: each .json in it): a provider
                  probe's program is checked against its arguments record's format
  --json          print the result as JSON (one program: its result; several: { ok, programs })
  --log 1|2       print the verifier log (1: branches, 2: state after every instruction)
  --unprivileged  the kernel's rules for unprivileged users

Exit codes: 0 all accepted, 1 a program rejected or not supported (the reason is printed),
2 unusable input.`;

function parse(args: string[]) {
  return parseCommandArgs(
    args,
    {
      hex: { type: 'boolean', default: false },
      program: { type: 'string' },
      event: { type: 'string' },
      formats: { type: 'string' },
      provider: { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
      log: { type: 'string' },
      unprivileged: { type: 'boolean', default: false },
    },
    help,
  );
}

interface Input {
  name: string;
  bytes: Uint8Array;
  maps: MapDef[];
  event: string | undefined;
  /** A provider probe's program: the probe (`provider/proc/fork` → proc, fork). */
  probe?: { provider: string; probe: string };
  /** The ELF section of a program that is not a tracepoint program (`kprobe/do_sys_open`). */
  unsupported?: string;
}

const isElf = (b: Uint8Array) => b.length >= 4 && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46;

async function readEventFormat(io: CliIo, path: string, event: string): Promise<EventFormat> {
  const [system, name] = event.split('/') as [string, string];
  const candidates = [path, `${path}/${system}/${name}/format`, `${path}/events/${system}/${name}/format`];
  for (const candidate of candidates) {
    let text: string;
    try {
      text = new TextDecoder().decode(await io.readFile(candidate));
    } catch {
      continue;
    }
    const format = parseEventFormat(text, { system });
    if (format.name !== name) throw new CliError(`${candidate}: the format is of event ${format.name}, not ${name}`);
    return format;
  }
  throw new CliError(`no format file for ${event} under ${path} (tried ${candidates.join(', ')})`);
}

function loadInputs(bytes: Uint8Array, hex: boolean, program: string | undefined, formats: Map<string, EventFormat>): Input[] {
  if (hex) return [{ name: 'hex', bytes: parseHexProgram(new TextDecoder().decode(bytes)), maps: [], event: undefined }];
  if (isElf(bytes)) {
    const object = readBpfObject(bytes);
    const names = program === undefined ? object.programs.map((p) => p.name) : [program];
    if (names.length === 0) throw new CliError('no program in the object');
    return names.map((name) => {
      const p = object.program(name);
      const probe = p === undefined ? undefined : providerProbeOf({ kind: 'other', section: p.section });
      if (p !== undefined && p.attach.kind !== 'tracepoint' && probe === undefined) {
        return { name, bytes: new Uint8Array(), maps: [], event: undefined, unsupported: p.section };
      }
      const linked = linkObjectProgram(object, name);
      return { name: linked.name, bytes: linked.bytes, maps: linked.maps, event: linked.tracepoint, ...(probe !== undefined ? { probe } : {}) };
    });
  }
  const object = assemble(new TextDecoder().decode(bytes), {
    resolveField: (event, field) => {
      const format = [...formats.values()].find((f) => f.name === event);
      const f = format && findField(format, field);
      return f && { byteOffset: f.byteOffset, size: f.size, signed: f.signed ?? false };
    },
  });
  const programs = object.programs.filter((p) => p.instructions.length > 0);
  const chosen = program === undefined ? programs : programs.filter((p) => p.name === program);
  if (chosen.length === 0) throw new CliError(`no program ${program ?? ''} in the file (programs: ${programs.map((p) => p.name).join(', ') || 'none'})`);
  return chosen.map((c) => {
    const unresolved = c.fieldRelocations.find((r) => !r.resolved);
    if (unresolved) {
      throw new CliError(`line ${unresolved.line}: field ${unresolved.event}.${unresolved.field} needs --formats to resolve`);
    }
    const attach = c.attachPoint;
    return {
      name: c.name,
      bytes: encode(c.instructions),
      maps: object.maps.map((m) => ({ type: m.typeId, keySize: m.keySize, valueSize: m.valueSize, maxEntries: m.maxEntries, name: m.name })),
      event: attach?.kind === 'tracepoint' ? `${attach.system}/${attach.event}` : undefined,
    };
  });
}

/** Why a program of another kind is not checked, and what of the object would run. */
function unsupportedText(input: Input): string {
  return `${input.name}: not supported: section ${input.unsupported} is not a tracepoint; Probeyard runs tracepoint programs only (tracepoint/SYSTEM/EVENT, tp/SYSTEM/EVENT), so this program would not run`;
}

function formatText(input: Input, event: string | undefined, result: VerifyResult): string {
  const out: string[] = [];
  const s = result.stats;
  if (result.ok) {
    out.push(`${input.name}: accepted (${s.insnsProcessed} insns processed, ${s.states} states, peak ${s.peakStates}, ${s.timeMs} ms)`);
  } else {
    const d = result.diagnostics[0]!;
    out.push(`${input.name}: rejected`, `  ${d.insnIndex}: ${d.insnText}`, `  ${d.message}`);
  }
  // accepted as Linux accepts it, but not runnable as written here (the VM would fault)
  for (const w of result.warnings) out.push(`  warning: ${w.insnIndex}: ${w.insnText}`, `    ${w.message}`);
  if (result.contextAccesses.length > 0) {
    out.push(`context reads of ${event}:`);
    for (const a of result.contextAccesses) {
      const within = a.fieldOffset === 0 ? '' : ` +${a.fieldOffset}`;
      out.push(`  insn ${a.insnIndex}: ${a.field}${within} (offset ${a.offset}, size ${a.size})`);
    }
  }
  return `${[...out, ...result.log].join('\n')}\n`;
}

export const verifyCommand: Command = {
  name: 'verify',
  summary: 'check a tracepoint program for safety, as the kernel verifier would',
  help,
  async run(args, io) {
    const { values, positionals } = parse(args);
    if (positionals.length !== 1) throw new CliError(`expected one FILE (or -), got ${positionals.length}\n\n${help}`);
    const logLevel = values.log === undefined ? 0 : Number(values.log);
    if (logLevel !== 0 && logLevel !== 1 && logLevel !== 2) throw new CliError(`--log takes 1 or 2, not ${values.log}`);
    if (values.event !== undefined && !/^[\w-]+\/[\w-]+$/.test(values.event)) {
      throw new CliError(`--event takes SYSTEM/NAME, not ${values.event}`);
    }
    const raw = await readInput(io, positionals[0]!);
    const providers = readProviderFiles(values.provider);
    try {
      // an assembly file may name fields of the event given on the command line
      const formats = new Map<string, EventFormat>();
      if (values.formats !== undefined && values.event !== undefined) {
        formats.set(values.event, await readEventFormat(io, values.formats, values.event));
      }
      const inputs = loadInputs(raw, values.hex, values.program, formats);
      const texts: string[] = [];
      const jsons: unknown[] = [];
      let ok = true;
      for (const input of inputs) {
        if (input.unsupported !== undefined) {
          ok = false;
          texts.push(`${unsupportedText(input)}\n`);
          jsons.push({ program: input.name, section: input.unsupported, ok: false, supported: false, reason: unsupportedText(input) });
          continue;
        }
        if (input.probe !== undefined) {
          const { format, note } = providerContext(input.probe, providers);
          const event = `${input.probe.provider}:::${input.probe.probe}`;
          const result = verify(input.bytes, { maps: input.maps, context: { kind: 'tracepoint', ...(format ? { event: format } : {}) }, privileged: !values.unprivileged, logLevel });
          if (!result.ok) ok = false;
          const { coverage: _coverage, ...rest } = result;
          jsons.push({ program: input.name, event, insns: input.bytes.length / 8, ...(note ? { note } : {}), ...rest });
          texts.push(`${formatText(input, event, result)}${note ? `  ${note}\n` : ''}`);
          continue;
        }
        const event = values.event ?? input.event;
        let format: EventFormat | undefined;
        if (values.formats !== undefined) {
          if (event === undefined) throw new CliError('--formats needs --event (the program names no tracepoint)');
          format = formats.get(event) ?? (await readEventFormat(io, values.formats, event));
        }
        const options: VerifyOptions = {
          maps: input.maps,
          context: { kind: 'tracepoint', ...(format ? { event: format } : {}) },
          privileged: !values.unprivileged,
          logLevel,
        };
        const result = verify(input.bytes, options);
        if (!result.ok) ok = false;
        const { coverage: _coverage, ...rest } = result;
        jsons.push({ program: input.name, event: event ?? null, insns: input.bytes.length / 8, ...rest });
        texts.push(formatText(input, event, result));
      }
      if (values.json) io.stdout(`${JSON.stringify(jsons.length === 1 ? jsons[0] : { ok, programs: jsons }, null, 2)}\n`);
      else {
        io.stdout(texts.join(''));
        if (inputs.length > 1) {
          const bad = inputs.length - jsons.filter((j) => (j as { ok: boolean }).ok).length;
          io.stdout(bad === 0 ? `all ${inputs.length} programs accepted\n` : `${bad} of ${inputs.length} programs rejected or not supported\n`);
        }
      }
      return ok ? ExitCode.ok : ExitCode.refused;
    } catch (err) {
      if (err instanceof VerifierError || err instanceof FormatError || err instanceof IsaError) {
        throw new CliError(err.message, ExitCode.usage);
      }
      throw err;
    }
  },
};

/** The context a provider probe's program is checked on: its arguments record, when the provider is given. */
function providerContext(probe: { provider: string; probe: string }, providers: readonly ProviderDefinition[] | undefined): { format?: EventFormat; note?: string } {
  const def = providers?.find((d) => d.name === probe.provider);
  const args = def?.probes.find((p) => p.name === probe.probe)?.args;
  if (def === undefined || args === undefined) {
    const why = def === undefined ? `no provider '${probe.provider}' given (--provider)` : `${def.name}@${def.version} has no probe '${probe.probe}'`;
    return { note: `${probe.provider}:::${probe.probe}: ${why}: checked on a generic record, not the probe's arguments record` };
  }
  return { format: providerArgsFormat(def.name, probe.probe, args) };
}
