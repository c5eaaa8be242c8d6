// The data-folder lock: PGlite has none of its own, and two processes on one folder lose writes.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockDataFolder, lockFileName } from '../src/db/data-lock.js';
import { openDatabase } from '../src/db/open.js';
import { pgliteTemplate } from './harness.js';

const tsx = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url));
const child = fileURLToPath(new URL('fixtures/open-data-folder.ts', import.meta.url));

function openInAnotherProcess(dataDir: string) {
  return spawnSync(process.execPath, [tsx, '--conditions=@probeyard/source', child, dataDir], { encoding: 'utf8', timeout: 120_000 });
}

describe('data-folder lock', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'probeyard-lock-'));
    cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('gives a second process a clear error naming the holder, and lets it in once released', async () => {
    const db = await openDatabase({ dataDir });
    try {
      expect(readFileSync(join(dataDir, lockFileName), 'utf8').trim()).toBe(String(process.pid));
      const r = openInAnotherProcess(dataDir);
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toBe(`data_folder_locked: data folder ${dataDir} is in use by pid ${process.pid}`);
    } finally {
      await db.close();
    }
    expect(existsSync(join(dataDir, lockFileName))).toBe(false);
    const r = openInAnotherProcess(dataDir);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('opened\n');
    expect(r.status).toBe(0);
  });

  it('takes over a lock left by a process that is gone', () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const dir = mkdtempSync(join(tmpdir(), 'probeyard-lock-stale-'));
    try {
      writeFileSync(join(dir, lockFileName), `${gone.stdout}\n`);
      const lock = lockDataFolder(dir);
      expect(readFileSync(lock.path, 'utf8').trim()).toBe(String(process.pid));
      lock.release();
      expect(existsSync(lock.path)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a second lock in the same process too', () => {
    const dir = mkdtempSync(join(tmpdir(), 'probeyard-lock-twice-'));
    try {
      const lock = lockDataFolder(dir);
      expect(() => lockDataFolder(dir)).toThrow(`data folder ${dir} is in use by pid ${process.pid}`);
      lock.release();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
