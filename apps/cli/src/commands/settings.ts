import type { Command } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { callRegistry, parseOptions, registryClient, resolveTarget, targetOptions } from '../registry.js';

const help = `usage: probeyard settings [--strict-char-sign on|off] [--live-sessions N]
                          [--live-duration SECONDS] [--live-cpu PERCENT] [--json]

Shows the tenant's compatibility settings and live-session limits (with the instance's ceilings
over them), or changes them (admin). A compat change recomputes the tenant's whole matrix in the
background; the old verdicts stay visible until it has. A live limit change applies to the
sessions started after it; running ones keep theirs.

  --strict-char-sign on|off  also refuse a read of a plain char field whose signedness changed
                             (signedness-changed). Off by default: char is text, and its
                             signedness is the architecture's. A signedness change of any other
                             field is refused always.
  --live-sessions N          live sessions running at once (at most the instance's ceiling)
  --live-duration SECONDS    the longest a live session runs (at most the ceiling)
  --live-cpu PERCENT         the CPU budget of one live session on each agent, in % of a CPU
  --json                     print the settings as JSON

Exit codes: 0 shown or changed, 1 refused (no permission), 2 unusable input.`;

/** `on`/`off` (and the usual spellings of each) → a boolean; anything else is unusable input. */
export function parseSwitch(name: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['on', 'true', 'yes', '1'].includes(v)) return true;
  if (['off', 'false', 'no', '0'].includes(v)) return false;
  throw new CliError(`--${name}: on or off, not '${value}'`);
}

/** A whole number of at least 1 (a live limit); anything else is unusable input. */
export function parseLimit(name: string, value: string): number {
  const n = Number(value.trim());
  if (value.trim() === '' || !Number.isInteger(n) || n < 1) throw new CliError(`--${name}: a whole number of at least 1, not '${value}'`);
  return n;
}

interface LiveLimits {
  maxSessions: number;
  maxDurationSeconds: number;
  cpuBudgetPercent: number;
}

function formatLive(limits: LiveLimits, ceilings: LiveLimits): string {
  return (
    `live-sessions     ${limits.maxSessions} (ceiling ${ceilings.maxSessions})\n` +
    `live-duration     ${limits.maxDurationSeconds} s (ceiling ${ceilings.maxDurationSeconds} s)\n` +
    `live-cpu          ${limits.cpuBudgetPercent}% (ceiling ${ceilings.cpuBudgetPercent}%)\n`
  );
}

export const settingsCommand: Command = {
  name: 'settings',
  summary: "show or change the tenant's compatibility settings and live limits (--strict-char-sign, --live-sessions, --live-duration, --live-cpu)",
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      ...targetOptions,
      'strict-char-sign': { type: 'string' },
      'live-sessions': { type: 'string' },
      'live-duration': { type: 'string' },
      'live-cpu': { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length !== 0) throw new CliError(`unexpected argument ${positionals[0]}\n\n${help}`);
    const change = values['strict-char-sign'] === undefined ? undefined : parseSwitch('strict-char-sign', values['strict-char-sign']);
    const live: Partial<LiveLimits> = {};
    if (values['live-sessions'] !== undefined) live.maxSessions = parseLimit('live-sessions', values['live-sessions']);
    if (values['live-duration'] !== undefined) live.maxDurationSeconds = parseLimit('live-duration', values['live-duration']);
    if (values['live-cpu'] !== undefined) live.cpuBudgetPercent = parseLimit('live-cpu', values['live-cpu']);
    const liveChange = Object.keys(live).length > 0;
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login`, or pass --token T or PROBEYARD_TOKEN');
    const client = registryClient(url, token);
    if (change === undefined && !liveChange) {
      const [r, l] = await Promise.all([callRegistry(url, () => client.compat.settings.query()), callRegistry(url, () => client.live.limits.query())]);
      io.stdout(
        values.json
          ? `${JSON.stringify({ ...r.settings, live: l }, null, 2)}\n`
          : `strict-char-sign  ${r.settings.strictCharSign ? 'on' : 'off'}\nengine            ${r.settings.engine}\n${formatLive(l.limits, l.ceilings)}`,
      );
      return ExitCode.ok;
    }
    const out: Record<string, unknown> = {};
    if (change !== undefined) {
      const r = await callRegistry(url, () => client.compat.setSettings.mutate({ strictCharSign: change }));
      Object.assign(out, r.settings, { compatJobId: r.compatJobId });
      if (!values.json) {
        io.stdout(
          r.compatJobId === null
            ? `strict-char-sign is already ${change ? 'on' : 'off'}: nothing to recompute\n`
            : `strict-char-sign ${change ? 'on' : 'off'}: the matrix is being computed again (compat job ${r.compatJobId}; see \`probeyard compat NAME\`)\n`,
        );
      }
    }
    if (liveChange) {
      const l = await callRegistry(url, () => client.live.setLimits.mutate(live));
      out.live = l;
      if (!values.json) {
        io.stdout(l.changed ? `live limits changed (sessions started from now on get them):\n` : `live limits already so: nothing changed\n`);
        io.stdout(formatLive(l.limits, l.ceilings));
      }
    }
    if (values.json) io.stdout(`${JSON.stringify(out, null, 2)}\n`);
    return ExitCode.ok;
  },
};
