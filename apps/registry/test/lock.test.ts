// The data-folder lock: PGlite has none of its own, and two processes on one folder lose writes.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockDataFolder, lockFileName, lockHolderAlive, ownStartTime } from '../src/db/data-lock.js';
import { readRunningRegistry, runningFileName } from '../src/server/registry.js';
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
      expect(readFileSync(join(dataDir, lockFileName), 'utf8').split('\n')[0]).toBe(String(process.pid));
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
      expect(readFileSync(lock.path, 'utf8').split('\n')[0]).toBe(String(process.pid));
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

  // Issue 13, finding 9: after a SIGKILL, the old process stays a zombie until its parent reaps
  // it, and kill(pid, 0) still succeeds on it: the restart was refused with "in use by pid N".
  it('takes over a lock whose holder was SIGKILLed and is not yet reaped (a zombie)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probeyard-lock-zombie-'));
    const holderScript = fileURLToPath(new URL('fixtures/hold-data-folder.ts', import.meta.url));
    const loader = new URL('../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
    // sh starts the holder in the background, prints its pid, and becomes `sleep`, which never
    // reaps it: once killed, the holder stays a zombie for as long as the sleep lives.
    const parent = spawn('sh', ['-c', `"$0" --import "$1" --conditions=@probeyard/source "$2" "$3" & echo $!; exec sleep 600`, process.execPath, loader, holderScript, dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let out = '';
      parent.stdout.on('data', (c: Buffer) => {
        out += c.toString();
      });
      const deadline = Date.now() + 120_000;
      while (!out.includes('locked') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const pid = Number(out.split('\n')[0]);
      expect(readFileSync(join(dir, lockFileName), 'utf8').split('\n')[0]).toBe(String(pid));
      expect(() => lockDataFolder(dir)).toThrow(`data folder ${dir} is in use by pid ${pid}`);
      process.kill(pid, 'SIGKILL');
      // The holder is a zombie now: its pid still answers kill(pid, 0).
      while (!readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')) await new Promise((r) => setTimeout(r, 20));
      expect(() => process.kill(pid, 0)).not.toThrow();
      const lock = lockDataFolder(dir);
      expect(readFileSync(lock.path, 'utf8').split('\n')[0]).toBe(String(process.pid));
      lock.release();
    } finally {
      parent.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes over a lock whose pid now belongs to another process (another start time, or not Node.js)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'probeyard-lock-reused-'));
    const other = spawn('sleep', ['600'], { stdio: 'ignore' });
    try {
      const pid = other.pid ?? 0;
      // This very process with another start time: a pid reused after a crash or a reboot.
      expect(lockHolderAlive(process.pid, '1')).toBe(false);
      expect(lockHolderAlive(process.pid, readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ')[19])).toBe(true);
      // A lock of an older registry (a pid alone) held by a live program that is not Node.js.
      expect(lockHolderAlive(pid, undefined)).toBe(false);
      expect(lockHolderAlive(process.pid, undefined)).toBe(true);
      writeFileSync(join(dir, lockFileName), `${pid}\n`);
      const lock = lockDataFolder(dir);
      expect(readFileSync(lock.path, 'utf8').split('\n')[0]).toBe(String(process.pid));
      lock.release();
      writeFileSync(join(dir, lockFileName), `${process.pid}\n1\n`);
      const again = lockDataFolder(dir);
      again.release();
    } finally {
      other.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});


describe('the running-registry file', () => {
  it('names a registry only while the process that wrote it runs (not a pid reused by another program)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'probeyard-running-'));
    try {
      const file = join(dir, runningFileName);
      writeFileSync(file, JSON.stringify({ url: 'http://127.0.0.1:1', pid: process.pid, startTime: ownStartTime() }));
      expect(readRunningRegistry(dir)).toEqual({ url: 'http://127.0.0.1:1', pid: process.pid });
      // this pid, but started at another time: another process now has the pid
      writeFileSync(file, JSON.stringify({ url: 'http://127.0.0.1:1', pid: process.pid, startTime: '1' }));
      expect(readRunningRegistry(dir)).toBeUndefined();
      // a live pid of a program that is not Node.js (pid 1), from a registry that wrote no start time
      if (existsSync('/proc/1/stat')) {
        writeFileSync(file, JSON.stringify({ url: 'http://127.0.0.1:1', pid: 1 }));
        const init = readFileSync('/proc/1/cmdline', 'utf8').split('\0')[0] ?? '';
        if (!/(^|\/)node[^/]*$/.test(init)) expect(readRunningRegistry(dir)).toBeUndefined();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
