import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, configPath, defaultRegistryUrl, parseOptions, registryClient, resolveTarget, targetOptions, writeConfig } from '../registry.js';

// Only the router's type crosses from the registry app (docs/ARCHITECTURE.md).

const help = `usage: probeyard login [--registry URL] (--token T | --email E [--tenant NAME] [--password-stdin])

Checks a token (or trades an email and password for a 12-hour session token) with the registry and
saves the registry URL and token in ${configPath()} (mode 0600).
Later commands take the registry and token from --registry/--token, then PROBEYARD_REGISTRY and
PROBEYARD_TOKEN, then that file. The default registry is ${defaultRegistryUrl}.

options:
  --registry URL     the registry
  --token T          an API token (from \`probeyard admin create-tenant\` or \`probeyard tokens create\`)
  --email E          log in with a password instead: read from PROBEYARD_PASSWORD, or stdin with
  --password-stdin   (first line)
  --tenant NAME      the tenant to act in, when the user belongs to several`;

export const loginCommand: Command = {
  name: 'login',
  summary: 'save a registry URL and token for later commands',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, {
      ...targetOptions,
      email: { type: 'string' },
      tenant: { type: 'string' },
      'password-stdin': { type: 'boolean' },
    });
    if (positionals.length > 0) throw new CliError(`unexpected argument '${positionals[0]}'`);
    const { url } = resolveTarget({ registry: values.registry });
    let token = values.token;
    if (!token && values.email) {
      const password = values['password-stdin']
        ? new TextDecoder().decode(await io.readStdin()).split('\n')[0]
        : process.env.PROBEYARD_PASSWORD;
      if (!password) throw new CliError('no password (use --password-stdin or PROBEYARD_PASSWORD)');
      const r = await callRegistry(url, () =>
        registryClient(url).auth.login.mutate({ email: values.email ?? '', password, ...(values.tenant ? { tenant: values.tenant } : {}) }),
      );
      token = r.token;
    }
    if (!token) throw new CliError('give --token T or --email E');
    const me = await callRegistry(url, () => registryClient(url, token).whoami.query());
    const path = writeConfig({ registry: url, token });
    io.stdout(`logged in to ${url} as ${me.user.email} (${me.role}) in tenant ${me.tenant.name}\nsaved to ${path}\n`);
    return ExitCode.ok;
  },
};
