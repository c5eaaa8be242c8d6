// probeyard run: relocate a program for a feed's own formats, verify, run it in packages/vm over
// the feed, print the maps the way bpftrace does. The work is packages/runtime's (loadForProfile,
// Dispatcher, encodeMapSnapshot, drawMaps), shared with the agent and the web app.

import { formatVerdict, profileFormat } from '@probeyard/compat';
import { type EventFormat, FormatError, type RecordStream } from '@probeyard/formats';
import { openTraceDatStream, openTracefsStream } from '@probeyard/formats/node';
import { Dispatcher, drawMaps, encodeMapSnapshot, loadForProfile } from '@probeyard/runtime';
import { type Command, parseCommandArgs } from '../command.js';
import { CliError, ExitCode } from '../io.js';
import { loadProfile, loadSpecFile } from './inspect.js';

const help = `usage: probeyard run PROGRAM --feed FILE.dat|live [--duration S] [--json] [--built-against P]

Runs a tracing program over a trace feed in Probeyard's VM: relocates it for the feed's own event
formats (a trace.dat's formats, or this machine's tracefs), verifies it, runs every program on the
records of its event, and prints the maps at the end as bpftrace does (counts sorted, histograms
drawn as bars; how each map is drawn is its display hint: see packages/runtime's README). Events
the feed lost are counted per CPU and printed first (\`Lost N events\`), beside the maps.

  PROGRAM          a BPF ELF object or Probeyard assembly
  --feed FILE.dat  replay a trace-cmd recording (its formats are the kernel profile)
  --feed live      the live tracefs ring buffer (root), in a private instance
  --duration S     stop a live feed after S seconds (default 5)
  --built-against  formats the program was built for (names hard-coded offsets)
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
        }, help);
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new CliError(`expected one PROGRAM, got ${positionals.length}\n\n${help}`);
    const feed = values.feed;
    if (feed === undefined) throw new CliError(`--feed FILE.dat|live is needed\n\n${help}`);
    const duration = values.duration === undefined ? 5 : Number(values.duration);
    if (!Number.isFinite(duration) || duration <= 0) throw new CliError(`--duration takes seconds > 0, not ${values.duration}`);
    const spec = await loadSpecFile(io, positionals[0]!, values['built-against']);
    const profile = await loadProfile(feed);
    // the feed first: its CPU count sizes per-CPU maps (a live instance enables only the events
    // the profile has; a program needing another one is refused below)
    const wantedEvents = spec.programs.flatMap((p) => (p.attach.kind === 'tracepoint' ? [`${p.attach.system}/${p.attach.event}`] : []));
    let stream: RecordStream<EventFormat>;
    try {
      stream = feed === 'live' ? openTracefsStream({ events: [...new Set(wantedEvents.filter((e) => profileFormat(profile, e) !== undefined))] }) : openTraceDatStream(feed);
    } catch (e) {
      if (e instanceof FormatError) throw new CliError(`feed ${feed}: ${e.message}`);
      throw e;
    }
    const outcome = loadForProfile(spec, profile, { cpuCount: Math.max(1, stream.info.cpuCount), environment: { commOf: (pid) => stream.info.comm(pid) } });
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
    try {
      for await (const batch of stream) {
        dispatcher.dispatch(batch);
        dispatcher.syncLost(stream.stats);
        // a busy live feed may never leave the microtask queue: check the clock between batches too
        if (deadline !== undefined && Date.now() >= deadline) break;
      }
    } finally {
      if (timer) clearTimeout(timer);
      await stream.close();
    }
    // losses the feed only accounted for at close (the live ring buffer's own counters)
    dispatcher.syncLost(stream.stats);
    const records = dispatcher.records;
    const eventsLost = target.lostEvents;
    const lostByCpu = [...dispatcher.lostByCpu];
    const counters = loaded.programs.map((p) => ({ program: p.name, event: p.event, ...p.runtime.counters }));
    const snapshot = encodeMapSnapshot(loaded, { runId: 'run', traceTimeNs: dispatcher.traceTimeNs, eventsSeen: target.eventsSeen, eventsLost });
    if (values.json) {
      io.stdout(
        `${JSON.stringify({ verdict: { status: verdict.status, reasons: verdict.reasons, programs: verdict.programs }, records, eventsLost, lostByCpu, counters, target: target.counters, maps: snapshot.maps }, null, 2)}\n`,
      );
      return ExitCode.ok;
    }
    const changes = verdict.programs.flatMap((p) => p.changes.map((c) => `${p.program}: ${c}`));
    io.stderr(`${verdict.status} for this feed's kernel${changes.length ? ` (${changes.join('; ')})` : ''}; ${records} records\n`);
    if (eventsLost > 0) io.stderr(`the feed lost ${eventsLost} events (${lostByCpu.map((n, cpu) => `cpu${cpu} ${n}`).join(', ')}): the maps miss them\n`);
    for (const c of counters) if (c.faults > 0) io.stderr(`${c.program}: ${c.faults} faults\n`);
    io.stdout(drawMaps(snapshot.maps, { eventsLost }));
    return ExitCode.ok;
  },
};
