// probeyard live: runs a program on a node now (a live session, issue 18). The registry checks the
// program and hands it to the agents over their long poll; each compiles it for its own kernel and
// runs it on its own feed for the duration, ending it itself. This command streams what comes
// back (printf lines and output events as they arrive) and prints the maps at the end as bpftrace
// does, with packages/runtime's drawing, the same as `probeyard run`. Ctrl-C stops the session.
import { drawMaps, formatOutputEvent, type MapSnapshotJson, type OutputEventJson } from '@probeyard/runtime';
import type { Command } from '../command.js';
import { CliError, type CliIo, ExitCode } from '../io.js';
import { callRegistry, parseOptions, type RegistryClient, registryClient, resolveTarget, targetOptions } from '../registry.js';
import { checkSelector } from './deploy.js';

const help = `usage: probeyard live 'SCRIPT' | FILE (--agent NAME | --selector k=v[,k=v…]) [--duration 10s] [--asm]

Runs a program on a node now, for a few seconds: a live session. The registry checks it (a script
parsed, assembly assembled and verified) and the agents get it within a second; each compiles it
for its own kernel, relocates and verifies it, runs it on its own trace feed, and ends it itself at
the duration (even if the registry goes away). Its printf lines and output events print as they
arrive; at the end, the maps print as bpftrace prints them (as \`probeyard run\` does). Ctrl-C stops
the session on the nodes (twice: leave without waiting for their last outputs). Needs the
publisher role; the tenant limits the duration and the sessions at once (300 s and 4 unless an
admin changed them: \`probeyard settings\`).

  SCRIPT           a script: 'tracepoint:sched:sched_switch { @[args.next_comm] = count(); }'
  FILE             a script (.bt) or Probeyard assembly (.s, .asm, or with --asm)
  --agent NAME     one agent, by hostname (as \`probeyard agents list\` shows it) or id
  --selector k=v   every agent whose labels include each pair (at most 50)
  --duration D     seconds (10, 10s, 2m; default 10)
  --asm            the program is assembly

Registry and token: --registry URL --token T, PROBEYARD_REGISTRY / PROBEYARD_TOKEN, or \`probeyard login\`.
Exit codes: 0 ran, 1 refused (or every agent failed to run it), 2 unusable input.`;

/** `10`, `10s`, `2m` → seconds. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d{1,6})\s*(s|m)?\s*$/.exec(text);
  if (!m) throw new CliError(`--duration: '${text}' is not seconds (10, 10s, 2m)`);
  const seconds = Number(m[1]) * (m[2] === 'm' ? 60 : 1);
  if (seconds < 1) throw new CliError('--duration: at least 1 s');
  return seconds;
}

/** The program: a file if one is there by that name, else the text itself (a script). */
async function readProgram(io: CliIo, arg: string, asm: boolean): Promise<{ language: 'script' | 'asm'; source: string }> {
  const looksLikeText = /[{\n]/.test(arg);
  if (!looksLikeText) {
    let bytes: Uint8Array;
    try {
      bytes = await io.readFile(arg);
    } catch (e) {
      throw new CliError(`${arg}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file (a script given inline needs its { … })' : (e as Error).message}`);
    }
    const source = new TextDecoder().decode(bytes);
    return { language: asm || /\.(s|asm)$/i.test(arg) ? 'asm' : 'script', source };
  }
  return { language: asm ? 'asm' : 'script', source: arg };
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An agent by id or hostname (exactly one of the tenant's). */
async function resolveAgent(client: RegistryClient, url: string, name: string): Promise<string> {
  if (uuid.test(name)) return name.toLowerCase();
  const { agents } = await callRegistry(url, () => client.agent.list.query({ q: name }));
  const exact = agents.filter((a) => a.hostname === name && a.revokedAt === null);
  if (exact.length === 1) return exact[0]!.id;
  if (exact.length > 1) throw new CliError(`--agent: ${exact.length} agents are named ${name} (${exact.map((a) => a.id).join(', ')}): give one's id`, ExitCode.refused);
  throw new CliError(`--agent: no agent of the tenant is named ${name}${agents.length ? ` (names containing it: ${agents.map((a) => a.hostname).join(', ')})` : ''}`, ExitCode.refused);
}

interface SnapshotPayload {
  maps: MapSnapshotJson[];
  eventsSeen: number;
  eventsLost: number;
}

export const liveCommand: Command = {
  name: 'live',
  summary: 'run a program on a node now (a live session): stream its output, print its maps at the end',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      ...targetOptions,
      agent: { type: 'string' },
      selector: { type: 'string' },
      duration: { type: 'string' },
      asm: { type: 'boolean', default: false },
    });
    if (positionals.length !== 1) throw new CliError(`expected one SCRIPT or FILE, got ${positionals.length}\n\n${help}`);
    if ((values.agent === undefined) === (values.selector === undefined)) throw new CliError(`give one of --agent NAME and --selector k=v\n\n${help}`);
    const durationSeconds = values.duration === undefined ? undefined : parseDuration(values.duration);
    const program = await readProgram(io, positionals[0]!, values.asm);
    const { url, token } = resolveTarget(values);
    if (!token) throw new CliError('no token: run `probeyard login` or pass --token', ExitCode.refused);
    const client = registryClient(url, token);
    const target = values.agent !== undefined ? { agentId: await resolveAgent(client, url, values.agent) } : { selector: checkSelector(values.selector!) };

    const t0 = performance.now();
    const { session } = await callRegistry(url, () => client.live.start.mutate({ ...program, target, ...(durationSeconds !== undefined ? { durationSeconds } : {}) }));
    // the start includes the registry's check of the program (on a verifier worker, started when none is warm)
    const t1 = performance.now();
    const names = new Map(session.agents.map((a) => [a.agentId, a.name]));
    io.stderr(`live session ${session.id}: ${session.language} on ${session.agents.map((a) => a.name).join(', ')} for ${session.durationSeconds} s, started in ${((t1 - t0) / 1000).toFixed(2)} s (Ctrl-C stops it)\n`);

    // Ctrl-C: stop the session on the nodes and wait for their last outputs; twice: leave now
    let interrupts = 0;
    const leave = new AbortController();
    const onSigint = () => {
      interrupts++;
      if (interrupts === 1) {
        io.stderr('stopping the session…\n');
        void client.live.stop.mutate({ sessionId: session.id }).catch((e: unknown) => io.stderr(`live stop: ${(e as Error).message}\n`));
      } else leave.abort();
    };
    process.on('SIGINT', onSigint);

    const snapshots = new Map<string, SnapshotPayload>();
    let cursor: string | undefined;
    let firstAt: number | undefined;
    try {
      for (;;) {
        if (leave.signal.aborted) break;
        const page = await callRegistry(url, () =>
          client.live.outputs.query({ sessionId: session.id, ...(cursor !== undefined ? { after: cursor } : {}), waitMs: 10_000 }, { signal: leave.signal }),
        ).catch((e: unknown) => {
          if (leave.signal.aborted) return undefined;
          throw e;
        });
        if (page === undefined) break;
        cursor = page.cursor;
        for (const o of page.outputs) {
          if (firstAt === undefined) {
            firstAt = performance.now();
            io.stderr(`first output ${((firstAt - t1) / 1000).toFixed(2)} s after the start\n`);
          }
          const prefix = names.size > 1 ? `[${names.get(o.agentId) ?? o.agentId}] ` : '';
          if (o.kind === 'map_snapshot') snapshots.set(o.agentId, o.payload as unknown as SnapshotPayload);
          else if (o.kind === 'events') {
            for (const e of (o.payload as unknown as { events: OutputEventJson[] }).events) {
              // a script's printf text as it printed it; other outputs as `probeyard run` prints them
              io.stdout(session.language === 'script' && e.source === 'printk' ? `${prefix}${e.text ?? ''}` : `${prefix}${formatOutputEvent(e)}`);
            }
          }
        }
        if (page.ended) break;
      }
    } finally {
      process.off('SIGINT', onSigint);
    }

    const final = (await callRegistry(url, () => client.live.get.query({ sessionId: session.id }))).session;
    for (const a of final.agents) {
      const verdict = a.verdict ? ` (${a.verdict.status}${a.verdict.changes?.length ? `: ${a.verdict.changes.join('; ')}` : ''})` : '';
      io.stderr(`${a.name}: ${a.state}${verdict}${a.error ? `: ${a.error}` : ''}\n`);
    }
    // bpftrace prints two newlines after END's output, then the maps
    for (const a of final.agents) {
      const s = snapshots.get(a.agentId);
      if (!s) continue;
      if (final.agents.length > 1) io.stdout(`\n== ${a.name} ==\n`);
      io.stdout(`${session.language === 'script' ? '\n\n' : ''}${drawMaps(s.maps, { eventsLost: s.eventsLost })}`);
    }
    return final.agents.every((a) => a.state === 'failed') ? ExitCode.refused : ExitCode.ok;
  },
};
