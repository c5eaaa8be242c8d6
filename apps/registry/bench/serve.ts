// The registry under load, in its own process (so the load generator does not share its event
// loop): serves the data folder (or the PostgreSQL URL) given as arguments on an ephemeral port,
// prints its URL, and closes on SIGTERM. Request logs go to stdout as in production
// (`PROBEYARD_BENCH_NO_LOG=1`: none, to measure what logging costs). `PROBEYARD_BENCH_FROM=dist`
// runs the built registry (dist/, packages by their default condition) instead of its sources.
import { monitorEventLoopDelay } from 'node:perf_hooks';

type RegistryModule = typeof import('../src/server/registry.js');
type LogModule = typeof import('../src/server/log.js');
const fromDist = process.env.PROBEYARD_BENCH_FROM === 'dist';
const { startRegistry } = (await import(fromDist ? '../dist/server/registry.js' : '../src/server/registry.js')) as RegistryModule;
const { jsonLogger } = (await import(fromDist ? '../dist/server/log.js' : '../src/server/log.js')) as LogModule;

const [dataDir = '', databaseUrl] = process.argv.slice(2);
const registry = await startRegistry({ dataDir, databaseUrl: databaseUrl || undefined, port: 0, logger: process.env.PROBEYARD_BENCH_NO_LOG ? () => {} : jsonLogger });
process.stderr.write(`listening ${registry.url}\n`);
// The server thread's event-loop delay: over the whole run at exit, and per 5-s window as it goes
// (`window {...}` lines, which the stall bench prints beside its polls' latency).
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
const windowLag = monitorEventLoopDelay({ resolution: 10 });
windowLag.enable();
const ms = (ns: number) => Math.round(ns / 1e4) / 100;
const windows = setInterval(() => {
  process.stderr.write(`window ${JSON.stringify({ p50Ms: ms(windowLag.percentile(50)), p99Ms: ms(windowLag.percentile(99)), maxMs: ms(windowLag.max) })}\n`);
  windowLag.reset();
}, 5000);
windows.unref();
process.on('SIGTERM', () => {
  const s = registry.deps.fleet.stats;
  process.stderr.write(`fleet ${JSON.stringify(s)}\n`);
  process.stderr.write(`lag ${JSON.stringify({ p50Ms: ms(lag.percentile(50)), p99Ms: ms(lag.percentile(99)), maxMs: ms(lag.max) })}\n`);
  registry.close().then(() => process.exit(0));
});
