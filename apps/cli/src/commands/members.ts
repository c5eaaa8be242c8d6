import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, table, targetOptions } from '../registry.js';

const roles = ['owner', 'admin', 'publisher', 'viewer'] as const;
type Role = (typeof roles)[number];

const help = `usage: probeyard members [list] [--json]
       probeyard members invite EMAIL --role ROLE [--expires-hours N] [--json]
       probeyard members invitations [--json]
       probeyard members revoke-invitation ID

Members of the tenant of the current token, and invitations to it. \`invite\` (admin) prints a
one-time secret as its last line, shown once: give it to the invited person, who runs
\`probeyard invitations accept SECRET\` (or opens the web app's /invitations/accept) and chooses
their own password; someone who already has an account accepts with that account's own
credential. The answer is the same whether or not the email has an account. A role is at most
yours (owner, admin, publisher, viewer); an invitation expires after 72 hours unless
--expires-hours says otherwise (1 to 720). \`invitations\` lists the pending ones; \`revoke-invitation\`
makes one unusable. Registry and token: --registry URL --token T, PROBEYARD_REGISTRY /
PROBEYARD_TOKEN, or \`probeyard login\`.`;

export const membersCommand: Command = {
  name: 'members',
  summary: 'list members, invite someone, list and revoke pending invitations',
  help,
  async run(args: string[], io: CliIo) {
    const { values, positionals } = parseOptions(args, {
      ...targetOptions,
      role: { type: 'string' },
      'expires-hours': { type: 'string' },
      json: { type: 'boolean' },
    });
    const [verb = 'list', ...rest] = positionals;
    if (!['list', 'invite', 'invitations', 'revoke-invitation'].includes(verb)) {
      throw new CliError(`unknown subcommand '${verb}' (list, invite, invitations, revoke-invitation)`);
    }
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const api = registryClient(url, token);
    if (verb === 'invite') {
      if (rest.length !== 1 || !rest[0]) throw new CliError('invite: expected one EMAIL');
      if (!roles.includes(values.role as Role)) throw new CliError(`invite: --role must be one of ${roles.join(', ')}`);
      const hours = values['expires-hours'] === undefined ? undefined : Number(values['expires-hours']);
      if (hours !== undefined && !(Number.isInteger(hours) && hours >= 1 && hours <= 720)) throw new CliError('invite: --expires-hours must be an integer from 1 to 720');
      const r = await callRegistry(url, () => api.member.invite.mutate({ email: rest[0] ?? '', role: values.role as Role, ...(hours ? { expiresInHours: hours } : {}) }));
      if (values.json) io.stdout(`${JSON.stringify(r, null, 2)}\n`);
      else {
        io.stdout(`invitation ${r.invitation.id} for ${r.invitation.email} (${r.invitation.role}), expires ${r.invitation.expiresAt}\n`);
        io.stdout('give the invited person this secret, shown once (probeyard invitations accept SECRET):\n');
        io.stdout(`${r.secret}\n`);
      }
      return ExitCode.ok;
    }
    if (rest.length > (verb === 'revoke-invitation' ? 1 : 0)) throw new CliError(`${verb}: unexpected argument '${rest.at(-1)}'`);
    if (verb === 'revoke-invitation') {
      const id = rest[0] ?? '';
      if (!/^[0-9a-f-]{36}$/i.test(id)) throw new CliError(`revoke-invitation: not an invitation id: ${id}`);
      const r = await callRegistry(url, () => api.member.revokeInvitation.mutate({ id }));
      io.stdout(values.json ? `${JSON.stringify(r.invitation, null, 2)}\n` : `revoked the invitation of ${r.invitation.email} (${r.invitation.role})\n`);
      return ExitCode.ok;
    }
    if (verb === 'invitations') {
      const r = await callRegistry(url, () => api.member.invitations.query({ limit: 500 }));
      if (values.json) {
        io.stdout(`${JSON.stringify(r.invitations, null, 2)}\n`);
        return ExitCode.ok;
      }
      const rows = [['ID', 'EMAIL', 'ROLE', 'PREFIX', 'CREATED', 'EXPIRES']];
      for (const i of r.invitations) rows.push([i.id, i.email, i.role, i.prefix, i.createdAt.slice(0, 19), i.expiresAt.slice(0, 19)]);
      io.stdout(r.invitations.length === 0 ? 'no pending invitations\n' : `${table(rows)}\n`);
      return ExitCode.ok;
    }
    const r = await callRegistry(url, () => api.member.list.query({ limit: 500 }));
    if (values.json) {
      io.stdout(`${JSON.stringify(r.members, null, 2)}\n`);
      return ExitCode.ok;
    }
    const rows = [['USER', 'EMAIL', 'ROLE', 'SINCE']];
    for (const m of r.members) rows.push([m.userId, m.email, m.role, m.since.slice(0, 19)]);
    io.stdout(`${table(rows)}\n`);
    return ExitCode.ok;
  },
};
