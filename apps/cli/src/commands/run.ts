// probeyard run: relocate a program for a feed's own formats, verify, run it in packages/vm over
// the feed, print the maps the way bpftrace does. The work is packages/runtime's (loadForProfile,
// Dispatcher, encodeMapSnapshot, drawMaps), shared with the agent and the web app.

import { bindProviderPrograms, CompatError, formatVerdict, parseRodataAssignment, profileFormat, setRodata, verdictHeadline } from '@probeyard/compat';
import { type EventFormat, FormatError, type RecordStream } from '@probeyard/formats';
import { openTraceDatStream, openTracefsStream, removeStaleInstances } from '@probeyard/formats/node';
import { Dispatcher, drawMaps, encodeEvents, encodeMapSnapshot, formatOutputEvent, loadForProfile, type OutputEventJson, ScriptSession } from '@probeyard/runtime';
import { type Command, parseCommandArgs } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { readProviderFiles, scriptSpec } from '../script-input.js';
import { loadProfile, loadSpecFile } from './inspect.js';

const help = `usage: probeyard run PROGRAM|-e SCRIPT --feed FILE.dat|live [--duration S] [--json] [--built-against P] [--set NAME=VALUE]...

Runs a tracing program over a trace feed in Probeyard's VM: relocates it for the feed's own event
formats (a trace.dat's formats, or this machine's tracefs), verifies it, runs every program on the
records of its event, and prints the maps at the end as bpftrace does (counts sorted, histograms
drawn as bars; how each map is drawn is its display hint: see packages/runtime's README). Events
the feed lost are counted per CPU and printed first (\`Lost N events\`), beside the maps.
A script (bpftrace's language, packages/script) is compiled for the feed's kernel first; its
printf lines print as they come, BEGIN, END and interval probes run as bpftrace runs them.

  PROGRAM          a BPF ELF object, Probeyard assembly, or a script (.bt)
  -e SCRIPT        a script given on the command line: 'tracepoint:raw_syscalls:sys_enter { @[args.id] = count(); }'
  --feed FILE.dat  replay a trace-cmd recording (its formats are the kernel profile)
  --feed live      the live tracefs ring buffer (root), in a private instance
  --duration S     stop a live feed after S seconds (default 5)
  --built-against  formats the program was built for (names hard-coded offsets)
  --set NAME=VAL   a .rodata option (\`const volatile\` variable) of the object, as a libbpf tool's
                   command line sets it before load (repeatable): --set filter_pid=1234
                   --set count_by_process=true. Frozen .rodata is constant to the verifier.
  --provider FILE|DIR  a provider (JSON, packages/compat's format; a folder: each .json in it;
                   repeatable) the provider probes resolve through, a script's
                   (-e 'proc:::exec { @[args.filename] = count(); }' --provider library/providers)
                   or a C object's (SEC("provider/proc/exec"): library/include/probeyard/provider.h)
  --json           print { verdict, records, eventsLost, lostByCpu, counters, maps } as JSON
                   (maps as in an agent's map_snapshot output, docs/OUTPUTS.md)

Exit codes: 0 ran, 1 refused on this feed's kernel (the reasons are printed), 2 unusable input.`;

export const runCommand: Command = {
  name: 'run',
  summary: 'relocate, verify and run a program over a trace.dat or the live feed; print its maps',
  help,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
          feed: { type: 'string' },
          duration: { type: 'string' },
          json: { type: 'boolean', default: false },
          'built-against': { type: 'string' },
          expr: { type: 'string', short: 'e' },
          set: { type: 'string', multiple: true },
          provider: { type: 'string', multiple: true },
        }, help);
    const { values, positionals } = parsed;
    if (values.expr !== undefined && positionals.length > 0) throw new CliError(`-e SCRIPT and PROGRAM: give one of them\n\n${help}`);
    if (values.expr === undefined && positionals.length !== 1) throw new CliError(`expected one PROGRAM, got ${positionals.length}\n\n${help}`);
    const feed = values.feed;
    if (feed === undefined) throw new CliError(`--feed FILE.dat|live is needed\n\n${help}`);
    const duration = values.duration === undefined ? 5 : Number(values.duration);
    if (!Number.isFinite(duration) || duration <= 0) throw new CliError(`--duration takes seconds > 0, not ${values.duration}`);
    const profile = await loadProfile(feed);
    // a script compiles for the feed's kernel: its formats type args.FIELD, its events expand wildcards
    const providers = readProviderFiles(values.provider);
    const read = values.expr !== undefined ? await scriptSpec('-e', new TextEncoder().encode(values.expr), profile, providers) : await loadSpecFile(io, positionals[0]!, values['built-against'], profile, providers);
    // --set NAME=VALUE: a .rodata option, as a libbpf tool's command line sets it before load
    let spec = read;
    if (values.set !== undefined && values.set.length > 0) {
      try {
        spec = setRodata(read, Object.fromEntries(values.set.map(parseRodataAssignment)));
      } catch (e) {
        if (e instanceof CompatError) throw new CliError(e.message);
        throw e;
      }
    }
    // the feed first: its CPU count sizes per-CPU maps (a live instance enables only the events
    // the profile has; a program needing another one is refused below)
    const wantedEvents = spec.programs.flatMap((p) => (p.attach.kind === 'tracepoint' ? [`${p.attach.system}/${p.attach.event}`] : []));
    // a C object's provider probes fire on the events their implementations choose on this kernel
    for (const b of bindProviderPrograms(spec, profile, providers ?? []).bindings) wantedEvents.push(`${b.system}/${b.event}`);
    let stream: RecordStream<EventFormat>;
    // instances of earlier runs killed with SIGKILL (their process is gone) go first
    if (feed === 'live') removeStaleInstances();
    try {
      // a script of BEGIN, END and intervals reads no events: no instance to make
      if (feed === 'live' && wantedEvents.length === 0) stream = noRecords();
      else stream = feed === 'live' ? openTracefsStream({ events: [...new Set(wantedEvents.filter((e) => profileFormat(profile, e) !== undefined))] }) : openTraceDatStream(feed);
    } catch (e) {
      if (e instanceof FormatError) throw new CliError(`feed ${feed}: ${e.message}`);
      throw e;
    }
    const outcome = loadForProfile(spec, profile, { cpuCount: Math.max(1, stream.info.cpuCount), environment: { commOf: (pid) => stream.info.comm(pid) }, ...(providers !== undefined ? { providers } : {}) });
    if (!outcome.ok) {
      await stream.close();
      const where = profile.release || profile.hash.slice(0, 16);
      if (outcome.status === 'refused') io.stderr(`probeyard run: refused on this feed's kernel (${where}): ${formatVerdict(outcome.verdict)}`);
      else io.stderr(`probeyard run: ${outcome.fault.message}\n`);
      return ExitCode.refused;
    }
    const { verdict, loaded } = outcome;
    const dispatcher = new Dispatcher();
    const target = dispatcher.attach('run', loaded);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = feed === 'live' ? Date.now() + duration * 1000 : undefined;
    if (feed === 'live') timer = setTimeout(() => void stream.close(), duration * 1000);
    let printed = '';
    // perf-buffer and ring-buffer records and printk lines, printed as they come (text) or kept for
    // the JSON's `events` (decoded with the object's BTF record struct by field name)
    const events: OutputEventJson[] = [];
    let eventsDropped = 0;
    const drainOutputs = () => {
      const { outputs, dropped } = loaded.outputs.take();
      eventsDropped += dropped;
      if (outputs.length === 0) return;
      const payload = encodeEvents(loaded, outputs, dropped, 'run');
      if (values.json) events.push(...payload.events);
      else io.stdout(payload.events.map(formatOutputEvent).join(''));
    };
    const session = spec.script === undefined ? undefined : new ScriptSession(loaded, { onText: (t) => (values.json ? (printed += t) : io.stdout(t)) });
    try {
      if (session !== undefined) await runScript(session, stream, dispatcher, feed === 'live', deadline);
      else {
        for await (const batch of stream) {
          dispatcher.dispatch(batch);
          dispatcher.syncLost(stream.stats);
          drainOutputs();
          // a busy live feed may never leave the microtask queue: check the clock between batches too
          if (deadline !== undefined && Date.now() >= deadline) break;
        }
      }
    } finally {
      if (timer) clearTimeout(timer);
      await stream.close();
    }
    // losses the feed only accounted for at close (the live ring buffer's own counters)
    dispatcher.syncLost(stream.stats);
    if (session === undefined) drainOutputs();
    const records = dispatcher.records;
    const eventsLost = target.lostEvents;
    const lostByCpu = [...dispatcher.lostByCpu];
    const counters = loaded.programs.map((p) => ({ program: p.name, event: p.event, ...p.runtime.counters }));
    const snapshot = encodeMapSnapshot(loaded, { runId: 'run', traceTimeNs: dispatcher.traceTimeNs, eventsSeen: target.eventsSeen, eventsLost });
    if (values.json) {
      io.stdout(
        `${JSON.stringify({ verdict: { status: verdict.status, reasons: verdict.reasons, programs: verdict.programs, skipped: verdict.skipped, kernelMemory: verdict.kernelMemory }, records, eventsLost, lostByCpu, counters, target: target.counters, maps: snapshot.maps, ...(session === undefined ? { events, eventsDropped } : {}), ...(session !== undefined ? { output: printed } : {}) }, null, 2)}\n`,
      );
      return ExitCode.ok;
    }
    const changes = verdict.programs.flatMap((p) => p.changes.map((c) => `${p.program}: ${c}`));
    io.stderr(`${verdictHeadline(verdict)} for this feed's kernel${changes.length ? ` (${changes.join('; ')})` : ''}; ${records} records\n`);
    for (const p of verdict.programs) if (p.via !== undefined) io.stderr(`${p.program}: ${p.via}\n`);
    if (eventsLost > 0) io.stderr(`the feed lost ${eventsLost} events (${lostByCpu.map((n, cpu) => `cpu${cpu} ${n}`).join(', ')}): the maps miss them\n`);
    for (const c of counters) if (c.faults > 0) io.stderr(`${c.program}: ${c.faults} faults\n`);
    for (const c of counters) {
      if (c.kernelReadsFailed > 0) io.stderr(`${c.program}: ${c.kernelReadsFailed} reads of kernel memory failed (-EFAULT, zeros): a userspace runtime cannot see kernel memory\n`);
      if (c.userReadsFailed > 0) io.stderr(`${c.program}: ${c.userReadsFailed} reads of user memory failed (-EFAULT, zeros): a replay holds no process memory\n`);
    }
    if (target.eventsSeen === 0) {
      io.stderr(`no event matched: the feed has no records of ${loaded.events.join(', ') || 'the programs\' events'}\n`);
    }
    if (eventsDropped > 0) io.stderr(`${eventsDropped} outputs dropped (over the output queue's bounds)\n`);
    // bpftrace prints two newlines after END's output, then the maps
    io.stdout(`${session !== undefined ? '\n\n' : ''}${drawMaps(snapshot.maps, { eventsLost })}`);
    return ExitCode.ok;
  },
};

/** A feed without records (a live run that enables no event). */
function noRecords(): RecordStream<EventFormat> {
  return {
    info: { kind: 'tracefs', cpuCount: 1, littleEndian: true, longSize: 8, format: () => undefined, comm: () => undefined },
    stats: { records: 0, lostEvents: 0, lostUnknown: 0, lostByCpu: [0] },
    async close() {},
    async *[Symbol.asyncIterator]() {},
  };
}

/**
 * A script's run: BEGIN before the first record, intervals by the records' time (on a live feed
 * also by the clock between batches, so they fire while nothing happens), actions as they come,
 * END at the end of the feed, at the deadline, or after an exit().
 */
async function runScript(session: ScriptSession, stream: RecordStream<EventFormat>, dispatcher: Dispatcher, live: boolean, deadline: number | undefined): Promise<void> {
  const hasEvents = session.loaded.events.length > 0;
  const startWall = process.hrtime.bigint();
  let lastRecords = -1;
  let lastNs = 0n;
  let lastWall = startWall;
  if (!hasEvents) {
    // BEGIN/END/interval only: no records to wait for
    session.begin(0n);
    while (live && !session.exited && session.hasIntervals && deadline !== undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      session.advance(process.hrtime.bigint() - startWall);
    }
    session.end(live ? process.hrtime.bigint() - startWall : 0n);
    return;
  }
  await session.run(stream, dispatcher, {
    onBatch: () => {
      if (live) {
        const now = process.hrtime.bigint();
        if (dispatcher.records !== lastRecords) {
          lastRecords = dispatcher.records;
          lastNs = (BigInt(dispatcher.lastTsHigh >>> 0) << 32n) | BigInt(dispatcher.lastTsLow >>> 0);
          lastWall = now;
        } else if (dispatcher.records > 0) session.advance(lastNs + (now - lastWall));
      }
      // a busy live feed may never leave the microtask queue: check the clock between batches too
      return deadline !== undefined && Date.now() >= deadline;
    },
  });
}
