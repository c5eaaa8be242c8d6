// `probeyard-agent enroll | run`: the command line of the node agent.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { Agent, type AgentOptions } from './agent.js';
import { enroll, readTokenFile } from './enroll.js';
import { AgentError, isAgentError } from './errors.js';
import { parseFeedOptions } from './feed-options.js';
import { parseLabelFlags } from './labels.js';
import { jsonLogger, type LogLevel } from './log.js';

const usage = `usage: probeyard-agent enroll --registry URL (--token T | --token-file F) --state DIR [--label k=v ...]
                              [--config FILE] [--hostname H] [--feed live|FILE.dat] [--force]
       probeyard-agent run --state DIR [--registry URL] [--feed live|FILE.dat [--loop] [--pace recorded|max [--speed F]]]
                           [--metrics HOST:PORT] [--snapshot-interval S] [--spool-cap MIB]
                           [--poll-interval S] [--memory-budget MIB] [--cpu-budget PERCENT]
                           [--max-faults N] [--backoff-max S] [--log-level debug|info|warn|error]

The Probeyard node agent. \`enroll\` trades a one-time enrolment token (from \`probeyard agents
enroll-token\`) for the agent's credential, kept in the state folder (mode 0600, never printed);
labels are the node's own (kernel.release, arch, hostname, os), then the config file's
({"labels": {...}}), then --label flags, then the token's. The token may also come from
PROBEYARD_ENROLL_TOKEN.

\`run\` reports the node's kernel profile, polls for its assignments, and runs each assigned
program on the node's trace feed: relocated for this node's own formats, verified, loaded into
the VM; map snapshots (every --snapshot-interval, default 10 s), events and counters go through an
on-disk spool (--spool-cap MiB, default 256) to the registry.

  --registry URL     the registry, when it is no longer at the URL the agent enrolled with
  --feed live        the live tracefs ring buffer (root), one private instance (default)
  --feed FILE.dat    replay a trace-cmd recording: the node is the recording's kernel
  --loop             start the recording again at its end
  --pace recorded    replay at the recording's own pace (default max: as fast as it goes)
  --speed F          with --pace recorded: F times the recorded pace (0.1: ten times slower)
  --metrics ADDR     serve /metrics (Prometheus) and /healthz on ADDR (e.g. 127.0.0.1:9464)
  --backoff-max S    longest wait between two tries of a failed registry call (default 60; the
                     waits double from 1 s with full jitter)

Limits, so a program never hurts its node: a target over --cpu-budget percent of one core over
10 s (default 5) is throttled (its events are counted lost to it), and stopped with the reason
cpu-budget when that happens 3 times in a minute; one faulting more than --max-faults times a
minute (default 60) is stopped with the fault; the maps of all targets together may take
--memory-budget MiB (default 64): a target whose maps do not fit is refused with the reason.

SIGINT/SIGTERM stop the programs, flush the spool, remove the tracefs instance and exit 0.
Exit codes: 0 done, 1 refused (enrolment refused, credential revoked), 2 unusable input.`;

function positive(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new AgentError('usage', `--${name}: '${text}' is not a number > 0`);
  return n;
}

const logLevels = ['debug', 'info', 'warn', 'error'] as const;

/** Runs the agent with `argv` (without node and script); resolves with the exit code. */
export async function main(argv: string[], io: { out: (s: string) => void; err: (s: string) => void } = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) }): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(`${usage}\n`);
    return command === undefined ? 2 : 0;
  }
  try {
    if (command === 'enroll') return await enrollCommand(rest, io);
    if (command === 'run') return await runCommand(rest, io);
    io.err(`probeyard-agent: unknown command '${command}'\n\n${usage}\n`);
    return 2;
  } catch (err) {
    if (isAgentError(err)) {
      io.err(`probeyard-agent ${command}: ${err.message}\n`);
      return err.code === 'usage' || err.code === 'state' || err.code === 'profile' || err.code === 'feed' ? 2 : 1;
    }
    io.err(`probeyard-agent ${command}: internal error: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<T extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: T & { help: { type: 'boolean'; short: 'h' } }; allowPositionals: false; strict: true }>>;

function parse<const T extends Options>(args: string[], options: T): Parsed<T> {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } as const }, allowPositionals: false, strict: true }) as Parsed<T>;
  } catch (e) {
    throw new AgentError('usage', `${(e as Error).message.split('\n')[0]}\n\n${usage}`);
  }
}

async function enrollCommand(args: string[], io: { out: (s: string) => void }): Promise<number> {
  const { values } = parse(args, {
    registry: { type: 'string' },
    token: { type: 'string' },
    'token-file': { type: 'string' },
    state: { type: 'string' },
    label: { type: 'string', multiple: true },
    config: { type: 'string' },
    hostname: { type: 'string' },
    feed: { type: 'string' },
    force: { type: 'boolean' },
  });
  if (values.help) {
    io.out(`${usage}\n`);
    return 0;
  }
  if (!values.registry) throw new AgentError('usage', '--registry URL is needed');
  if (!values.state) throw new AgentError('usage', '--state DIR is needed');
  const token = values.token ?? (values['token-file'] ? readTokenFile(values['token-file']) : process.env.PROBEYARD_ENROLL_TOKEN);
  if (!token) throw new AgentError('usage', 'an enrolment token is needed: --token T, --token-file F or PROBEYARD_ENROLL_TOKEN');
  const r = await enroll({
    registry: values.registry,
    token,
    state: values.state,
    labels: parseLabelFlags(values.label ?? []),
    ...(values.config ? { configPath: values.config } : {}),
    ...(values.hostname ? { hostname: values.hostname } : {}),
    ...(values.feed ? { feed: values.feed } : {}),
    force: values.force ?? false,
  });
  const labels = Object.entries(r.labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  io.out(`enrolled agent ${r.agentId} (${r.hostname}) with labels ${labels}\ncredential stored in ${r.credentialPath} (mode 0600)\n`);
  return 0;
}

async function runCommand(args: string[], io: { out: (s: string) => void }): Promise<number> {
  const { values } = parse(args, {
    state: { type: 'string' },
    registry: { type: 'string' },
    feed: { type: 'string' },
    loop: { type: 'boolean' },
    pace: { type: 'string' },
    metrics: { type: 'string' },
    'snapshot-interval': { type: 'string' },
    'spool-cap': { type: 'string' },
    'poll-interval': { type: 'string' },
    speed: { type: 'string' },
    'memory-budget': { type: 'string' },
    'cpu-budget': { type: 'string' },
    'max-faults': { type: 'string' },
    'backoff-max': { type: 'string' },
    'log-level': { type: 'string' },
  });
  if (values.help) {
    io.out(`${usage}\n`);
    return 0;
  }
  if (!values.state) throw new AgentError('usage', '--state DIR is needed');
  const level = values['log-level'] ?? 'info';
  if (!(logLevels as readonly string[]).includes(level)) throw new AgentError('usage', `--log-level: '${level}' is not one of ${logLevels.join(', ')}`);
  const snapshot = positive('snapshot-interval', values['snapshot-interval']);
  const cap = positive('spool-cap', values['spool-cap']);
  const poll = positive('poll-interval', values['poll-interval']);
  const speed = positive('speed', values.speed);
  const backoffMax = positive('backoff-max', values['backoff-max']);
  if (speed !== undefined && values.pace !== 'recorded') throw new AgentError('usage', '--speed: only with --pace recorded');
  const memory = positive('memory-budget', values['memory-budget']);
  const cpu = positive('cpu-budget', values['cpu-budget']);
  if (cpu !== undefined && cpu > 100) throw new AgentError('usage', `--cpu-budget: ${cpu} is more than 100 (percent of one core)`);
  const faults = values['max-faults'] === undefined ? undefined : Number(values['max-faults']);
  if (faults !== undefined && !(Number.isInteger(faults) && faults >= 0)) throw new AgentError('usage', `--max-faults: '${values['max-faults']}' is not a whole number`);
  const limits: NonNullable<AgentOptions['limits']> = {
    ...(memory ? { memoryBudgetBytes: Math.round(memory * 1024 * 1024) } : {}),
    ...(cpu ? { cpu: { share: cpu / 100 } } : {}),
    ...(faults !== undefined ? { maxFaultsPerMinute: faults } : {}),
  };
  if (values.registry !== undefined) {
    try {
      const url = new URL(values.registry);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw new AgentError('usage', `--registry: '${values.registry}' is not an http(s) URL`);
    }
  }
  const options: AgentOptions = {
    state: values.state,
    ...(values.registry !== undefined ? { registry: values.registry } : {}),
    feed: parseFeedOptions(values.feed, values.loop, values.pace),
    log: jsonLogger({ minLevel: level as LogLevel }),
    ...(values.metrics ? { metrics: values.metrics } : {}),
    ...(snapshot ? { snapshotIntervalMs: snapshot * 1000 } : {}),
    ...(cap ? { spoolCapBytes: Math.round(cap * 1024 * 1024) } : {}),
    ...(poll ? { pollIntervalMs: poll * 1000 } : {}),
    ...(speed ? { speed } : {}),
    ...(backoffMax ? { backoff: { baseMs: Math.min(1000, backoffMax * 1000), capMs: backoffMax * 1000 } } : {}),
    limits,
  };
  const agent = await Agent.start(options);
  const onSignal = (sig: NodeJS.Signals) => {
    void agent.stop(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await agent.done;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
