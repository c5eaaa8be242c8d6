#!/usr/bin/env -S node --max-semi-space-size=2
// A young generation of 2 MiB semi-spaces instead of V8's 16: the agent allocates next to nothing per
// event, and the default new space alone is 32 MiB of its resident memory (see README, Measured).
// Launcher for the built agent (apps/agent/dist). `pnpm build` (or `npm start`) builds it.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
if (!existsSync(main)) {
  process.stderr.write('probeyard-agent: the agent is not built yet: run `pnpm build` at the repository root\n');
  process.exit(2);
}
const { main: run } = await import(pathToFileURL(main).href);
// Exit when done: an idle keep-alive connection to the registry must not hold the process.
process.exit(await run(process.argv.slice(2)));
