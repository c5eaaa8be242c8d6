import { TRPCClientError } from '@trpc/client';
import { readProfile } from '@probeyard/compat/node';
import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, targetOptions } from '../registry.js';
import { compileForCli, isScriptPath, readProviderFiles } from '../script-input.js';
import { fetchProviders } from './providers.js';
import { readInput } from './asm.js';
import { loadProfile } from './inspect.js';

const help = `usage: probeyard publish FILE --name NAME --version VERSION [--built-against PROFILE]
                         [--kernel DIR|FILE|live] [--description TEXT] [--tag TAG …] [--json]

Publishes a tracing program to the registry: a BPF ELF object (clang -target bpf), Probeyard
assembly (FILE, or - for stdin), or a script (FILE.bt: compiled here for --kernel's formats, and
published as its artifact, the source with those formats, which the registry compiles again).
The registry parses it, verifies every program in it, extracts
the manifest (events and fields read by name), stores the version tagged "module-like, no ABI",
and computes its compatibility with every kernel profile of the tenant in the background
(\`probeyard compat NAME@VERSION\`). Versions are immutable: the same version again with the same
bytes is a no-op, with other bytes a conflict. Progress goes to stderr.

  --name NAME          the program (lowercase letters, digits, . _ -)
  --version VERSION    semantic version: 1.2.3, 1.0.0-rc.1
  --built-against P    a kernel profile in the registry the program was built for: assembly
                       field symbols take its offsets, hard-coded offsets are named from it
  --kernel DIR|FILE|live  the formats a script is compiled for (its args.FIELD types and build
                       layout): an events/ tree, a tarball, a trace.dat, or this machine's
                       tracefs; default live when readable, else none (then a script may read no
                       args and use no wildcards)
  --provider FILE      a provider (JSON) the script's provider probes (proc:::exec) resolve through
                       (repeatable); without one, a script with provider probes resolves through
                       the providers the registry has for the tenant (its own, the instance's)
  --description TEXT   set the program's description
  --tag TAG            set the program's tags (repeat)
  --json               print the registry's answer as JSON
  --registry URL --token T   the registry (or PROBEYARD_REGISTRY / PROBEYARD_TOKEN / probeyard login)

Exit codes: 0 published (or already there), 1 refused (the verifier's diagnostics are printed;
conflict; no permission), 2 unusable input.`;

/** Uploads above this size report their progress. */
export const progressThreshold = 512 * 1024;

/** A fetch that streams a large request body in chunks and reports each 10% sent on stderr. */
export function progressFetch(io: CliIo, label: string): typeof fetch {
  return async (input, init) => {
    const body = init?.body;
    if (typeof body !== 'string' || body.length < progressThreshold) return fetch(input, init);
    const bytes = new TextEncoder().encode(body);
    let sent = 0;
    let reported = -1;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= bytes.length) {
          controller.close();
          return;
        }
        const chunk = bytes.subarray(sent, sent + 128 * 1024);
        sent += chunk.length;
        const tenth = Math.floor((sent * 10) / bytes.length);
        if (tenth !== reported) {
          reported = tenth;
          io.stderr(`${label}: sent ${tenth * 10}% (${sent} of ${bytes.length} bytes)\n`);
        }
        controller.enqueue(chunk);
      },
    });
    return fetch(input, { ...init, body: stream, duplex: 'half' } as RequestInit);
  };
}

/** The verifier's diagnostics of a refused publish, one line each, as the kernel's log names them. */
function diagnosticsOf(err: unknown): string {
  if (!(err instanceof TRPCClientError)) return '';
  const d = (err.data as { diagnostics?: { program: string; insnIndex: number; insnText: string; message: string }[] } | undefined)?.diagnostics;
  return (d ?? []).map((x) => `  ${x.program}: insn ${x.insnIndex}: ${x.insnText}\n    ${x.message}\n`).join('');
}

/** The kernel a script compiles for: --kernel, else this machine's tracefs when readable, else none. */
async function scriptKernel(kernel: string | undefined) {
  if (kernel !== undefined) return loadProfile(kernel);
  try {
    return await readProfile('live');
  } catch {
    return undefined;
  }
}

export const publishCommand: Command = {
  name: 'publish',
  summary: 'publish a program version (ELF object, assembly or script) to the registry',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      ...targetOptions,
      name: { type: 'string' },
      version: { type: 'string' },
      description: { type: 'string' },
      tag: { type: 'string', multiple: true },
      'built-against': { type: 'string' },
      kernel: { type: 'string' },
      provider: { type: 'string', multiple: true },
      json: { type: 'boolean' },
    });
    if (positionals.length !== 1) throw new CliError(`expected one FILE, got ${positionals.length}\n\n${help}`);
    if (!values.name) throw new CliError(`--name NAME is needed\n\n${help}`);
    if (!values.version) throw new CliError(`--version VERSION is needed\n\n${help}`);
    const file = positionals[0]!;
    let bytes = await readInput(io, file);
    if (bytes.length === 0) throw new CliError(`${file}: empty`);
    if (isScriptPath(file)) {
      // provider probes (`proc:::exec`): through --provider files, else the registry's providers
      const usesProviders = /\b[a-z_][a-z0-9_]*:::[a-z_]/.test(new TextDecoder().decode(bytes));
      let providers = readProviderFiles(values.provider);
      if (providers === undefined && usesProviders) {
        const { url, token } = resolveTarget(values);
        if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
        providers = await fetchProviders(url, token);
      }
      const compiled = await compileForCli(file, bytes, await scriptKernel(values.kernel), providers);
      io.stderr(`publish: ${file} compiled: ${compiled.spec.programs.length} program${compiled.spec.programs.length === 1 ? '' : 's'}, ${compiled.spec.maps.length} map${compiled.spec.maps.length === 1 ? '' : 's'}\n`);
      bytes = compiled.artifact;
    } else if (values.kernel !== undefined || values.provider !== undefined) throw new CliError('--kernel and --provider are for scripts (FILE.bt)');
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const api = registryClient(url, token, { fetch: progressFetch(io, 'publish') });
    io.stderr(`publish: ${values.name}@${values.version} from ${file} (${bytes.length} bytes) to ${url}\n`);
    const r = await callRegistry(url, () =>
        api.program.publish.mutate({
          name: values.name ?? '',
          version: values.version ?? '',
          artifact: Buffer.from(bytes).toString('base64'),
          ...(values.description !== undefined ? { description: values.description } : {}),
          ...(values.tag !== undefined ? { tags: values.tag } : {}),
          ...(values['built-against'] !== undefined ? { builtAgainst: values['built-against'] } : {}),
        }),
    ).catch((err: unknown) => {
      if (err instanceof CliError) {
        const cause = (err as { cause?: unknown }).cause;
        throw new CliError(`${err.message}\n${diagnosticsOf(cause)}`.trimEnd(), err.exitCode);
      }
      throw err;
    });
    if (values.json) {
      io.stdout(`${JSON.stringify(r, null, 2)}\n`);
      return ExitCode.ok;
    }
    const v = r.version;
    if (!r.created) {
      io.stdout(`${r.program.name}@${v.version} is already published with these bytes (sha256 ${v.digest}); nothing changed\n`);
      return ExitCode.ok;
    }
    io.stdout(`published ${r.program.name}@${v.version} (${v.artifactKind}, ${v.size} bytes, sha256 ${v.digest}), ${v.abi}\n`);
    io.stderr(`publish: compatibility with every kernel profile is computed in the background (job ${r.compatJobId}); see \`probeyard compat ${r.program.name}@${v.version}\`\n`);
    return ExitCode.ok;
  },
};
