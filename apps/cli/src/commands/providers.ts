// probeyard providers: the providers of the tenant (its own and the instance's), one provider's
// probes and implementations, publishing a version (a tenant's, or with the admin credential an
// instance-wide one) and yanking one.
import { isCompatError, type ProviderDefinition, parseProvider } from '@probeyard/compat';
import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, targetOptions } from '../registry.js';
import { readInput } from './asm.js';
import { parseVersionRef } from './yank.js';

const help = `usage: probeyard providers [list] [--json]
       probeyard providers show NAME[@VERSION] [--json]
       probeyard providers publish FILE [--instance] [--json]
       probeyard providers yank NAME@VERSION --reason TEXT [--instance]

Providers are versioned definitions of stable probes (proc:::exec, io:::done) with, per kernel
condition, the tracepoint and argument expressions that implement each (packages/compat's JSON
format; the library ships library/providers/*.json). Scripts use them as
'proc:::exec { @[args.filename] = count(); }'; a script version pins each provider's major, and a
new release of that major recomputes its verdicts without the script being republished.

  list       the providers the tenant sees: its own, and the instance-wide ones
  show       one version's probes (typed arguments) and implementations (default: the newest)
  publish    a version of FILE (JSON); --instance: an instance-wide provider (the admin credential
             as --token)
  yank       a version, with a reason (resolution skips it; verdicts are recomputed)

Exit codes: 0 done, 1 refused (conflict, not found, no permission), 2 unusable input.`;

/** The newest usable version of every provider the tenant sees, as definitions (what a script compiles through). */
export async function fetchProviders(url: string, token: string): Promise<ProviderDefinition[]> {
  const api = registryClient(url, token);
  const list = await callRegistry(url, () => api.provider.list.query());
  const out: ProviderDefinition[] = [];
  for (const p of list.providers) {
    if (!p.versions.some((v) => v.yankedAt === null)) continue;
    const got = await callRegistry(url, () => api.provider.get.query({ name: p.name }));
    out.push(parseProvider(got.text));
  }
  return out;
}

function readProviderText(io: CliIo, bytes: Uint8Array, file: string): string {
  const text = new TextDecoder().decode(bytes);
  try {
    parseProvider(text);
  } catch (e) {
    if (isCompatError(e)) throw new CliError(`${file}: ${e.message}`, ExitCode.usage);
    throw e;
  }
  io.stderr(`providers: ${file} is a well-formed provider\n`);
  return text;
}

export const providersCommand: Command = {
  name: 'providers',
  summary: 'list, show, publish and yank providers (stable probes such as proc:::exec)',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { ...targetOptions, json: { type: 'boolean' }, instance: { type: 'boolean' }, reason: { type: 'string' } });
    const [verb = 'list', ...rest] = positionals;
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const api = registryClient(url, token);
    if (verb === 'list') {
      const r = await callRegistry(url, () => api.provider.list.query());
      if (values.json) io.stdout(`${JSON.stringify(r.providers, null, 2)}\n`);
      else if (r.providers.length === 0) io.stdout('no providers\n');
      else for (const p of r.providers) io.stdout(`${p.name}\t${p.scope}\t${p.versions.map((v) => `${v.version}${v.yankedAt ? ' (yanked)' : ''}`).join(', ')}\t${p.description}\n`);
      return ExitCode.ok;
    }
    if (verb === 'show') {
      if (rest.length !== 1) throw new CliError(`expected NAME[@VERSION]\n\n${help}`);
      const { name, version } = parseVersionRef(rest[0]!);
      const r = await callRegistry(url, () => api.provider.get.query({ name, ...(version ? { version } : {}) }));
      if (values.json) {
        io.stdout(`${JSON.stringify(r, null, 2)}\n`);
        return ExitCode.ok;
      }
      io.stdout(`${r.provider.name}@${r.version.version} (${r.provider.scope})${r.version.yankedAt ? ` yanked: ${r.version.yankReason}` : ''}\n`);
      for (const probe of r.probes) {
        io.stdout(`  ${r.provider.name}:::${probe.name} (${probe.args.map((a) => `${a.type} ${a.name}`).join(', ')})\n`);
        for (const i of probe.implementations) {
          const when = i.when.map((c) => (c.event !== undefined ? `${c.absent ? 'no ' : ''}event ${c.event}` : `${c.absent ? 'no ' : ''}${c.field}${c.kind ? ` ${c.kind}` : ''}`));
          io.stdout(`    for ${i.for}: ${i.tracepoint}${when.length > 0 ? ` when ${when.join(', ')}` : ''}\n`);
          for (const [arg, expr] of Object.entries(i.args)) io.stdout(`      ${arg} = ${expr}\n`);
        }
      }
      return ExitCode.ok;
    }
    if (verb === 'publish') {
      if (rest.length !== 1) throw new CliError(`expected one FILE\n\n${help}`);
      const text = readProviderText(io, await readInput(io, rest[0]!), rest[0]!);
      const r = await callRegistry(url, () => (values.instance ? api.provider.publishInstance.mutate({ text }) : api.provider.publish.mutate({ text })));
      if (values.json) io.stdout(`${JSON.stringify(r, null, 2)}\n`);
      else io.stdout(`${r.created ? 'published' : 'already there:'} ${r.provider}@${r.version.version}${r.recomputedTenants > 0 ? `; verdicts of ${r.recomputedTenants} tenant${r.recomputedTenants === 1 ? '' : 's'} recomputed` : ''}\n`);
      return ExitCode.ok;
    }
    if (verb === 'yank') {
      if (rest.length !== 1) throw new CliError(`expected NAME@VERSION\n\n${help}`);
      const { name, version } = parseVersionRef(rest[0]!);
      if (!name || !version) throw new CliError(`expected NAME@VERSION, not ${rest[0]}`);
      if (!values.reason) throw new CliError('--reason TEXT is needed');
      const input = { name, version, reason: values.reason };
      await callRegistry(url, () => (values.instance ? api.provider.yankInstance.mutate(input) : api.provider.yank.mutate(input)));
      io.stdout(`yanked ${name}@${version}: ${values.reason}\n`);
      return ExitCode.ok;
    }
    throw new CliError(`unknown verb '${verb}'\n\n${help}`);
  },
};
