// The registry under load, in its own process (so the load generator does not share its event
// loop): serves the data folder (or the PostgreSQL URL) given as arguments on an ephemeral port,
// prints its URL, and closes on SIGTERM. Request logs go to stdout as in production
// (`PROBEYARD_BENCH_NO_LOG=1`: none, to measure what logging costs).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { jsonLogger } from '../src/server/log.js';
import { startRegistry } from '../src/server/registry.js';

const [dataDir = '', databaseUrl] = process.argv.slice(2);
const registry = await startRegistry({ dataDir, databaseUrl: databaseUrl || undefined, port: 0, logger: process.env.PROBEYARD_BENCH_NO_LOG ? () => {} : jsonLogger });
process.stderr.write(`listening ${registry.url}\n`);
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
process.on('SIGTERM', () => {
  const s = registry.deps.fleet.stats;
  process.stderr.write(`fleet ${JSON.stringify(s)}\n`);
  process.stderr.write(`lag ${JSON.stringify({ p50Ms: lag.percentile(50) / 1e6, p99Ms: lag.percentile(99) / 1e6 })}\n`);
  registry.close().then(() => process.exit(0));
});
