import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, defaultDataDir, parseOptions, registryClient } from '../registry.js';
import { loadRegistryServer, registryFailure } from './serve.js';

const help = `usage: probeyard admin create-tenant NAME --owner EMAIL [--data DIR] [--registry URL] [--json]

Bootstraps a tenant and its owner with the instance admin credential kept in the data folder
(DIR/admin-credential, mode 0600, written by the registry on its first start). Goes through the
registry running on that data folder (or --registry URL), or, when none runs, opens the database
itself (the data folder lock keeps a registry from starting meanwhile; DATABASE_URL selects
PostgreSQL). Prints the owner's new API token as its last line: give it to \`probeyard login --token\`.

options:
  --owner EMAIL   the owner (a new user, or an existing one)
  --data DIR      data folder (default .data/ at the repository root, or PROBEYARD_DATA)
  --registry URL  the running registry (default: the one running on the data folder)
  --json          print the result as JSON (the token is the "ownerToken" field)`;

function runningRegistry(dataDir: string): string | undefined {
  const path = join(dataDir, 'registry.json');
  if (!existsSync(path)) return undefined;
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as { url: string; pid: number };
    process.kill(info.pid, 0);
    return info.url;
  } catch {
    return undefined;
  }
}

function adminCredential(dataDir: string): string | undefined {
  const path = join(dataDir, 'admin-credential');
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined;
}

export const adminCommand: Command = {
  name: 'admin',
  summary: 'instance administration: create-tenant',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, {
      owner: { type: 'string' },
      data: { type: 'string' },
      registry: { type: 'string' },
      json: { type: 'boolean' },
    });
    const [verb, name, ...extra] = positionals;
    if (verb !== 'create-tenant') throw new CliError(verb ? `unknown subcommand '${verb}' (create-tenant)` : 'expected create-tenant');
    if (!name || extra.length > 0) throw new CliError('create-tenant: expected one NAME');
    if (!values.owner) throw new CliError('create-tenant: --owner EMAIL is required');
    const dataDir = values.data ?? defaultDataDir();
    const url = values.registry?.replace(/\/+$/, '') ?? runningRegistry(dataDir);
    let result: { tenant: { id: string; name: string }; owner: { email: string }; ownerToken: string };
    if (url) {
      const credential = adminCredential(dataDir);
      if (!credential) throw new CliError(`create-tenant: no admin credential in ${dataDir} (the registry writes it on its first start)`, ExitCode.refused);
      result = await callRegistry(url, () => registryClient(url, credential).tenant.create.mutate({ name, ownerEmail: values.owner ?? '' }));
      if (!values.json) io.stderr(`probeyard admin: through the registry at ${url}\n`);
    } else {
      const server = await loadRegistryServer();
      if (!values.json) io.stderr(`probeyard admin: no registry runs on ${dataDir}; opening the database directly\n`);
      try {
        result = await server.createTenantOffline({ dataDir, databaseUrl: process.env.DATABASE_URL, name, ownerEmail: values.owner });
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (code === 'bad_request' || (err as { name?: string }).name === 'ZodError') throw new CliError(`create-tenant: ${(err as Error).message}`);
        throw registryFailure(err) ?? err;
      }
    }
    if (values.json) {
      io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    } else {
      io.stdout(`tenant ${result.tenant.name} (${result.tenant.id})\nowner ${result.owner.email}\nthe owner's API token (shown once):\n${result.ownerToken}\n`);
    }
    return ExitCode.ok;
  },
};
