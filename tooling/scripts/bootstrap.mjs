#!/usr/bin/env node
// Makes a fresh machine (Node 20 and npm, nothing else) ready for `npm start` and `npm test`:
// installs pnpm when it is missing, then the workspace's dependencies from the lockfile.
// It is idempotent and quiet when there is nothing to do.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const wanted = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
const env = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: '1',
  NEXT_TELEMETRY_DISABLED: '1',
  CHECKPOINT_DISABLE: '1',
  COREPACK_INTEGRITY_KEYS: '0',
  npm_config_nodedir: process.env.npm_config_nodedir ?? '/usr',
};

function log(msg) {
  process.stderr.write(`bootstrap: ${msg}\n`);
}

function pnpmVersion() {
  const r = spawnSync('pnpm', ['--version'], { encoding: 'utf8', env });
  return r.status === 0 ? r.stdout.trim() : null;
}

const have = pnpmVersion();
if (have !== wanted) {
  log(have ? `pnpm ${have} found, installing pnpm ${wanted}` : `installing pnpm ${wanted}`);
  execFileSync('npm', ['install', '--global', '--no-fund', '--no-audit', `pnpm@${wanted}`], {
    stdio: 'inherit',
    env,
  });
}

// Install when node_modules is missing or older than the lockfile.
const lock = join(root, 'pnpm-lock.yaml');
const marker = join(root, 'node_modules', '.modules.yaml');
const stale = !existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs);
if (stale || process.env.CI) {
  log('installing dependencies');
  const args = ['install', '--prefer-offline'];
  if (process.env.CI && existsSync(lock)) args.push('--frozen-lockfile');
  const r = spawnSync('pnpm', args, { cwd: root, stdio: 'inherit', env });
  if (r.status !== 0) {
    log(`pnpm install failed (exit ${r.status})`);
    process.exit(r.status ?? 1);
  }
}
