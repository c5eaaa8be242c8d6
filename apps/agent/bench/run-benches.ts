// `pnpm bench` for the agent: steady memory with ten programs, then 1,000 agents against one
// registry on PostgreSQL. Each prints its figures and the machine; the run ends with one line per
// target met or not.
import { fleetBench } from './fleet-agents.js';
import { steadyMemoryBench } from './steady-memory.js';

const results: [string, boolean][] = [];
results.push(['steady memory ≤ 120 MiB with 10 programs', await steadyMemoryBench()]);
results.push(['1,000 agents: outputs ingested without loss', await fleetBench()]);
for (const [what, ok] of results) console.log(`${ok ? 'met' : 'NOT met'}: ${what}`);
