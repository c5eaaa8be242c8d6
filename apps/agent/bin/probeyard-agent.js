#!/usr/bin/env -S node --max-semi-space-size=2 --optimize-for-size
// V8 tuned for a resident agent (apps/agent/README.md, Measured): 2 MiB semi-spaces instead of 16
// (it allocates next to nothing per event; the default new space alone is 32 MiB of RSS), and a
// heap that grows less before collecting (ten programs: 107 MiB mean instead of 130, for ~1% CPU).
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
