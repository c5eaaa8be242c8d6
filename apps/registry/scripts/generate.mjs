#!/usr/bin/env node
// Generates the Prisma 7 client (src/generated/prisma, not committed) from prisma/schema.prisma.
// Runs from `build`, `typecheck` and `postinstall`; skips when the stamp (a hash of the schema and
// the Prisma version) says the output is current. `prisma generate` touches no database, but the
// CLI insists that a schema engine file exists, so any existing file (node itself) is named.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const schema = join(root, 'prisma', 'schema.prisma');
const out = join(root, 'src', 'generated', 'prisma');
const stampFile = join(out, '.stamp');

const require = createRequire(join(root, 'package.json'));
let prismaPkg;
try {
  prismaPkg = require.resolve('prisma/package.json');
} catch {
  process.stderr.write('registry generate: prisma is not installed yet (run pnpm install)\n');
  process.exit(process.env.npm_lifecycle_event === 'postinstall' ? 0 : 1);
}
const version = JSON.parse(readFileSync(prismaPkg, 'utf8')).version;
const stamp = createHash('sha256')
  .update(version)
  .update(readFileSync(schema))
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .digest('hex');
if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && !process.argv.includes('--force')) {
  process.exit(0);
}

const r = spawnSync(process.execPath, [join(dirname(prismaPkg), 'build', 'index.js'), 'generate', '--schema', schema], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
  env: {
    ...process.env,
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
    PRISMA_QUERY_ENGINE_LIBRARY: process.env.PRISMA_QUERY_ENGINE_LIBRARY ?? process.execPath,
  },
});
if (r.status !== 0) {
  process.stderr.write(`registry generate: prisma generate failed (exit ${r.status})\n`);
  process.exit(r.status ?? 1);
}
writeFileSync(stampFile, stamp);
