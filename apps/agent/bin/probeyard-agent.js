#!/usr/bin/env node
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
