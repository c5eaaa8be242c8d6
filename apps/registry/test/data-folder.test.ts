// Issue 13, finding 8: the data folder. PGlite writes its files 0666; a folder made beforehand
// with loose permissions let anyone on the host write the database. At start the registry makes
// the folder 0700 and everything in it private to its owner (PGlite and PostgreSQL: there the
// folder keeps the admin credential), and refuses, in words, a folder another user owns.
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { secureDataFolder } from '../src/db/data-folder.js';
import { startRegistry } from '../src/server/registry.js';
import { prepareDataFolder } from '../src/testing.js';
import { backends, createPostgresDatabase, skipReason } from './harness.js';

/** Paths under `dir` whose mode lets group or others in (symbolic links aside). */
function loose(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (st.isSymbolicLink()) continue;
    if ((st.mode & 0o077) !== 0) out.push(`${path} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) out.push(...loose(path));
  }
  return out;
}

describe.each(backends)('the data folder on %s', (backend) => {
  const skip = skipReason(backend);
  it.skipIf(skip)('is made 0700 with nothing in it open to group or others when it was made with loose permissions', async () => {
    const dataDir = backend === 'pglite' ? await prepareDataFolder('probeyard-perm-') : mkdtempSync(join(tmpdir(), 'probeyard-perm-'));
    const pg = backend === 'postgres' ? await createPostgresDatabase() : undefined;
    try {
      // As a mounted volume or a `mkdir` under umask 000 leaves it; the PGlite template's files are 0666 already.
      chmodSync(dataDir, 0o777);
      writeFileSync(join(dataDir, 'notes.txt'), 'left here\n', { mode: 0o666 });
      chmodSync(join(dataDir, 'notes.txt'), 0o666);
      if (backend === 'pglite') expect(loose(dataDir).length).toBeGreaterThan(100);
      const registry = await startRegistry({ dataDir, databaseUrl: pg?.url, port: 0, logger: () => {} });
      try {
        expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
        expect(loose(dataDir)).toEqual([]);
        // What the registry writes itself starts private (the credential, registry.json).
        expect((statSync(join(dataDir, 'admin-credential')).mode & 0o777).toString(8)).toBe('600');
        expect((statSync(join(dataDir, 'registry.json')).mode & 0o777).toString(8)).toBe('600');
        expect(process.umask()).toBe(0o077);
      } finally {
        await registry.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await pg?.drop();
    }
  });

  it.skipIf(skip)("refuses, saying why, a folder that belongs to another user, and touches nothing in it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'probeyard-perm-other-'));
    const pg = backend === 'postgres' ? await createPostgresDatabase() : undefined;
    const uid = process.geteuid?.() ?? 0;
    try {
      writeFileSync(join(dataDir, 'notes.txt'), 'theirs\n');
      chmodSync(join(dataDir, 'notes.txt'), 0o666);
      chownSync(dataDir, 65534, 65534);
      chmodSync(dataDir, 0o777);
      await expect(startRegistry({ dataDir, databaseUrl: pg?.url, port: 0, logger: () => {} })).rejects.toMatchObject({
        code: 'data_folder_unsafe',
        message: `data folder ${dataDir}: belongs to uid 65534, not to this process' uid ${uid}; another user could change the database. Run the registry as its owner, or give it to this user (chown -R ${uid} ${dataDir})`,
      });
      expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('777');
      expect((statSync(join(dataDir, 'notes.txt')).mode & 0o777).toString(8)).toBe('666');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await pg?.drop();
    }
  });
});

describe('secureDataFolder', () => {
  it('leaves symbolic links alone and never follows them out of the folder', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'probeyard-perm-link-'));
    const outside = mkdtempSync(join(tmpdir(), 'probeyard-perm-outside-'));
    try {
      chmodSync(outside, 0o755);
      mkdirSync(join(dataDir, 'sub'), { mode: 0o777 });
      chmodSync(join(dataDir, 'sub'), 0o777);
      symlinkSync(outside, join(dataDir, 'sub', 'elsewhere'));
      secureDataFolder(dataDir);
      expect((statSync(join(dataDir, 'sub')).mode & 0o777).toString(8)).toBe('700');
      expect((statSync(outside).mode & 0o777).toString(8)).toBe('755');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
