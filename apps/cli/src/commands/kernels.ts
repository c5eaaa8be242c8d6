import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { traceDatMagic } from '@probeyard/formats';
import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, table, targetOptions } from '../registry.js';
import { progressFetch } from './publish.js';

const help = `usage: probeyard kernels upload PATH --name NAME [--release R] [--machine M] [--partial] [--json]
       probeyard kernels list [--json]
       probeyard kernels diff A B [--event SYSTEM/EVENT|EVENT] [--json]

Kernel profiles in the registry (a kernel's event format files). \`upload\` takes an events/ tree
(a directory, packed with the system's tar), a .tar/.tar.gz of one, or a trace.dat (its recorded
events' formats); the registry then computes every version's compatibility with it in the
background. A tree is complete (a missing event is incompatible there) unless --partial says it
holds some of its kernel's events only; a trace.dat is always partial. The release is --release,
else the tree's kernel_version.txt, else a trace.dat's uname. \`diff\` compares two profiles
event by event and field by field.

Exit codes: 0 success (diff: no layout differences), 1 refused or not found (diff: differences),
2 unusable input.`;

export async function readProfileUpload(io: CliIo, path: string): Promise<{ tarball: string } | { traceDat: string }> {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    // io.readFile reports a missing file.
  }
  if (isDir) {
    try {
      return { tarball: execFileSync('tar', ['-C', path, '-czf', '-', '.'], { maxBuffer: 64 * 1024 * 1024 }).toString('base64') };
    } catch (err) {
      throw new CliError(`${path}: cannot pack the events tree: ${(err as Error).message}`);
    }
  }
  const bytes = await io.readFile(path);
  const isDat = bytes.length >= traceDatMagic.length && traceDatMagic.every((b, i) => bytes[i] === b);
  const b64 = Buffer.from(bytes).toString('base64');
  return isDat ? { traceDat: b64 } : { tarball: b64 };
}

export const kernelsCommand: Command = {
  name: 'kernels',
  summary: 'upload, list and diff kernel profiles in the registry',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      ...targetOptions,
      name: { type: 'string' },
      release: { type: 'string' },
      machine: { type: 'string' },
      partial: { type: 'boolean' },
      event: { type: 'string' },
      json: { type: 'boolean' },
    });
    const [verb, ...rest] = positionals;
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    if (verb === 'upload') {
      if (rest.length !== 1) throw new CliError(`upload: expected one PATH\n\n${help}`);
      if (!values.name) throw new CliError('upload: --name NAME is needed');
      const data = await readProfileUpload(io, rest[0] ?? '');
      const api = registryClient(url, token, { fetch: progressFetch(io, 'kernels upload') });
      const r = await callRegistry(url, () =>
        api.kernel.upload.mutate({
          name: values.name ?? '',
          ...data,
          ...(values.release !== undefined ? { release: values.release } : {}),
          ...(values.machine !== undefined ? { machine: values.machine } : {}),
          ...(values.partial ? { partial: true } : {}),
        }),
      );
      if (values.json) io.stdout(`${JSON.stringify(r, null, 2)}\n`);
      else {
        const p = r.profile;
        io.stdout(`kernel profile ${p.name}: ${p.formats} formats (${r.newFormats} new), ${p.release || 'release unknown'}, ${p.complete ? 'complete' : 'partial'}, sha256 ${p.contentHash}\n`);
        for (const e of r.errors) io.stderr(`kernels upload: skipped ${e.path}: ${e.message}\n`);
        io.stderr(`kernels upload: compatibility of every version is computed in the background (job ${r.compatJobId})\n`);
      }
      return ExitCode.ok;
    }
    if (verb === 'list') {
      if (rest.length > 0) throw new CliError(`list: unexpected argument '${rest[0]}'`);
      const r = await callRegistry(url, () => registryClient(url, token).kernel.list.query());
      if (values.json) {
        io.stdout(`${JSON.stringify(r.profiles, null, 2)}\n`);
        return ExitCode.ok;
      }
      const rows = [['NAME', 'RELEASE', 'MACHINE', 'SOURCE', 'EVENTS', 'FORMATS', 'AGENTS', 'SHA256', 'CREATED']];
      for (const p of r.profiles) rows.push([p.name, p.release || '-', p.machine || '-', p.source, p.complete ? 'complete' : 'partial', String(p.formats), String(p.agents), p.contentHash.slice(0, 12), p.createdAt.slice(0, 19)]);
      io.stdout(`${table(rows)}\n`);
      return ExitCode.ok;
    }
    if (verb === 'diff') {
      if (rest.length !== 2) throw new CliError(`diff: expected two profiles A and B\n\n${help}`);
      const [a, b] = rest as [string, string];
      const d = await callRegistry(url, () => registryClient(url, token).kernel.diff.query({ a, b, ...(values.event !== undefined ? { event: values.event } : {}) }));
      if (values.json) io.stdout(`${JSON.stringify(d, null, 2)}\n`);
      else {
        const lines: string[] = [];
        for (const e of d.removed) lines.push(`${e}: only in ${a}`);
        for (const e of d.added) lines.push(`${e}: only in ${b}`);
        for (const c of d.changed) {
          lines.push(c.changes.length === 0 ? `${c.event}: format differs, same layout` : `${c.event}:`);
          for (const x of c.changes) lines.push(`  ${x.kind}: ${x.text}`);
        }
        lines.push(`${d.same} events with the same format`);
        io.stdout(`${lines.join('\n')}\n`);
      }
      return d.added.length + d.removed.length + d.changed.filter((c) => c.changes.length > 0).length > 0 ? ExitCode.refused : ExitCode.ok;
    }
    throw new CliError(verb ? `unknown subcommand '${verb}' (upload, list, diff)` : `expected upload, list or diff\n\n${help}`);
  },
};
