import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, targetOptions } from '../registry.js';

const help = `usage: probeyard invitations accept SECRET [--registry URL] [--password-stdin | --signed-in] [--json]

Joins the tenant an invitation (\`probeyard members invite\`) is for, with its role; the secret works
once. Without an account for the invited email, the account is made with the password you give
(at least 12 characters). With an account, give that account's current password, or accept with
--signed-in as that account (the token of \`probeyard login\`, --token T or PROBEYARD_TOKEN, of the
account's full role). The password comes from PROBEYARD_PASSWORD, or the first line of stdin with
--password-stdin.`;

export const invitationsCommand: Command = {
  name: 'invitations',
  summary: 'accept an invitation to a tenant (choose a password, or as the signed-in account)',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, {
      ...targetOptions,
      'password-stdin': { type: 'boolean' },
      'signed-in': { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const [verb, secret, ...rest] = positionals;
    if (verb !== 'accept') throw new CliError(verb ? `unknown subcommand '${verb}' (accept)` : 'expected accept SECRET');
    if (!secret || rest.length > 0) throw new CliError('accept: expected one SECRET');
    if (!secret.startsWith('pyv_')) throw new CliError('accept: not an invitation secret (they start with pyv_)');
    if (values['signed-in'] && values['password-stdin']) throw new CliError('accept: give either --signed-in or --password-stdin');
    const { url, token } = resolveTarget(values);
    let password: string | undefined;
    if (values['signed-in']) {
      if (!token) throw new CliError('accept --signed-in: no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    } else {
      password = values['password-stdin'] ? new TextDecoder().decode(await io.readStdin()).split('\n')[0] : process.env.PROBEYARD_PASSWORD;
      if (!password) throw new CliError('accept: no password (use --password-stdin or PROBEYARD_PASSWORD), or --signed-in as the account');
    }
    const api = registryClient(url, values['signed-in'] ? token : undefined);
    const r = await callRegistry(url, () => api.auth.acceptInvitation.mutate({ secret, ...(password ? { password } : {}) }));
    if (values.json) io.stdout(`${JSON.stringify(r, null, 2)}\n`);
    else {
      io.stdout(`${r.email} joined tenant ${r.tenant.name} as ${r.role}${r.accountCreated ? ' (account created)' : ''}\n`);
      io.stdout(`log in: probeyard login --registry ${url} --email ${r.email} --tenant ${r.tenant.name} --password-stdin\n`);
    }
    return ExitCode.ok;
  },
};
