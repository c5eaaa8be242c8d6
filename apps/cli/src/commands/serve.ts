// Only the types of the registry's server entry cross at compile time; the module itself is loaded
// at run time (see loadRegistryServer).
import type * as RegistryServer from '@probeyard/registry/server';
import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { defaultDataDir, parseOptions } from '../registry.js';

// The one runtime use of the registry app by the CLI: `probeyard serve`, and `probeyard admin`
// when no registry runs, start the registry in-process through its public server entry
// (`@probeyard/registry/server`, an app entry point; docs/ARCHITECTURE.md). Everything else talks
// to a registry over HTTP with the router type only.
const serverEntry = '@probeyard/registry/server';

export async function loadRegistryServer(): Promise<typeof RegistryServer> {
  return (await import(serverEntry)) as typeof RegistryServer;
}

/** Registry errors that mean "refused" (exit 1) rather than a crash. */
export function registryFailure(err: unknown): CliError | undefined {
  const code = (err as { code?: unknown }).code;
  if (code === 'data_folder_locked' || code === 'migration_failed' || code === 'conflict' || code === 'EADDRINUSE') {
    return new CliError((err as Error).message, ExitCode.refused);
  }
  if (code === 'bad_request') return new CliError((err as Error).message, ExitCode.usage);
  return undefined;
}

const help = `usage: probeyard serve [--port P] [--host H] [--data DIR] [--trusted-proxy ADDR ...]

Runs the registry: the tRPC API under /trpc/, /healthz and /readyz, one JSON log line per request
on stdout. The database is PGlite in the data folder (locked while the registry runs; the first
start initialises it, which takes a while), or PostgreSQL when DATABASE_URL=postgres://… is set.
Migrations are applied at start. On first start an instance admin credential is written to
DIR/admin-credential (mode 0600), used by \`probeyard admin create-tenant\`.
SIGINT/SIGTERM stop it gracefully: no new connections, in-flight requests finish, the database closes.

options:
  --port P     port (default 4700; 0 picks a free one)
  --host H     address to listen on (default 127.0.0.1)
  --data DIR   data folder (default .data/ at the repository root, or PROBEYARD_DATA)
  --trusted-proxy ADDR
               a proxy whose X-Forwarded-For gives the client's address (the web app's server,
               a load balancer): an address or a subnet (10.0.0.0/8); repeat for more. Default
               PROBEYARD_TRUSTED_PROXIES (comma-separated), else none: logins are limited per
               socket address, and behind an untrusted proxy every client shares the proxy's.`;

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the registry (embedded PGlite, or PostgreSQL with DATABASE_URL)',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, {
      port: { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      'trusted-proxy': { type: 'string', multiple: true },
    });
    if (positionals.length > 0) throw new CliError(`unexpected argument '${positionals[0]}'`);
    const port = values.port === undefined ? undefined : Number(values.port);
    if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) throw new CliError(`--port: not a port: ${values.port}`);
    const dataDir = values.data ?? defaultDataDir();
    const server = await loadRegistryServer();
    io.stderr(`probeyard serve: opening ${process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : `the database in ${dataDir}`}\n`);
    let registry: RegistryServer.RunningRegistry;
    try {
      registry = await server.startRegistry({
        dataDir,
        databaseUrl: process.env.DATABASE_URL,
        ...(port !== undefined ? { port } : {}),
        ...(values.host ? { host: values.host } : {}),
        ...(values['trusted-proxy'] ? { trustedProxies: values['trusted-proxy'] } : {}),
      });
    } catch (err) {
      throw registryFailure(err) ?? err;
    }
    io.stderr(
      `probeyard serve: registry on ${registry.url}\n` +
        `  first tenant:  probeyard admin create-tenant NAME --owner EMAIL${values.data ? ` --data ${dataDir}` : ''}\n` +
        `  then:          probeyard login --registry ${registry.url} --token <the token it prints>\n`,
    );
    return new Promise<number>((resolve) => server.closeOnSignals(registry, () => resolve(ExitCode.ok)));
  },
};
