// `pnpm bench` for the agent: steady memory with ten programs, live session start/stop latency, then 1,000 agents against one
// registry on PostgreSQL. Each prints its figures and the machine; the run ends with one line per
// target met or not.
import { fleetBench } from './fleet-agents.js';
import { liveLatencyBench } from './live-latency.js';
import { steadyMemoryBench } from './steady-memory.js';

const results: [string, boolean][] = [];
results.push(['steady memory ≤ 120 MiB with 10 programs', await steadyMemoryBench()]);
results.push(['live.start and live.stop reach the agent within 2 s (medians)', await liveLatencyBench()]);
results.push(['1,000 agents: outputs ingested without loss', await fleetBench()]);
for (const [what, ok] of results) console.log(`${ok ? 'met' : 'NOT met'}: ${what}`);
