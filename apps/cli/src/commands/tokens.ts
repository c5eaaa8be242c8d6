import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, table, targetOptions } from '../registry.js';

const roles = ['owner', 'admin', 'publisher', 'viewer'] as const;
type Role = (typeof roles)[number];

const help = `usage: probeyard tokens create NAME [--role ROLE] [--expires-days N]
       probeyard tokens list [--all] [--json]
       probeyard tokens revoke ID

API tokens of the tenant of the current token. \`create\` prints the new secret once, as its last
line; a token can have at most the role of the token that makes it (owner, admin, publisher,
viewer). \`list\` shows admins and owners every token of the tenant, others their own (--all
includes revoked ones). Registry and token: --registry URL --token T, PROBEYARD_REGISTRY /
PROBEYARD_TOKEN, or \`probeyard login\`.`;

export const tokensCommand: Command = {
  name: 'tokens',
  summary: 'create, list and revoke API tokens',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, {
      ...targetOptions,
      role: { type: 'string' },
      'expires-days': { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const [verb, ...rest] = positionals;
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const api = registryClient(url, token);
    if (verb === 'create') {
      if (rest.length !== 1 || !rest[0]) throw new CliError('create: expected one NAME');
      if (values.role !== undefined && !roles.includes(values.role as Role)) throw new CliError(`create: --role must be one of ${roles.join(', ')}`);
      const days = values['expires-days'] === undefined ? undefined : Number(values['expires-days']);
      if (days !== undefined && !(Number.isInteger(days) && days > 0)) throw new CliError('create: --expires-days must be a positive integer');
      const r = await callRegistry(url, () =>
        api.token.create.mutate({
          name: rest[0] ?? '',
          ...(values.role ? { role: values.role as Role } : {}),
          ...(days ? { expiresInDays: days } : {}),
        }),
      );
      if (values.json) io.stdout(`${JSON.stringify(r, null, 2)}\n`);
      else {
        io.stdout(`token ${r.token.id} '${r.token.name}' (${r.token.role})${r.token.expiresAt ? `, expires ${r.token.expiresAt}` : ''}\n`);
        io.stdout('the secret is shown once:\n');
        io.stdout(`${r.secret}\n`);
      }
      return ExitCode.ok;
    }
    if (verb === 'list') {
      if (rest.length > 0) throw new CliError(`list: unexpected argument '${rest[0]}'`);
      const r = await callRegistry(url, () => api.token.list.query({ includeRevoked: values.all ?? false }));
      if (values.json) {
        io.stdout(`${JSON.stringify(r.tokens, null, 2)}\n`);
        return ExitCode.ok;
      }
      const rows = [['ID', 'NAME', 'ROLE', 'KIND', 'USER', 'PREFIX', 'CREATED', 'LAST USED', 'STATE']];
      for (const t of r.tokens) {
        const state = t.revokedAt ? 'revoked' : t.expiresAt && new Date(t.expiresAt) <= new Date() ? 'expired' : 'active';
        rows.push([t.id, t.name, t.role, t.kind, t.user.email, t.prefix, t.createdAt.slice(0, 19), t.lastUsedAt?.slice(0, 19) ?? '-', state]);
      }
      io.stdout(`${table(rows)}\n`);
      return ExitCode.ok;
    }
    if (verb === 'revoke') {
      if (rest.length !== 1 || !rest[0]) throw new CliError('revoke: expected one ID');
      const id = rest[0];
      if (!/^[0-9a-f-]{36}$/i.test(id)) throw new CliError(`revoke: not a token id: ${id}`);
      const r = await callRegistry(url, () => api.token.revoke.mutate({ id }));
      io.stdout(values.json ? `${JSON.stringify(r.token, null, 2)}\n` : `revoked token ${r.token.id} '${r.token.name}'\n`);
      return ExitCode.ok;
    }
    throw new CliError(verb ? `unknown subcommand '${verb}' (create, list, revoke)` : 'expected create, list or revoke');
  },
};
