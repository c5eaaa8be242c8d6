import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { RegistryError } from '../errors.js';

/** The lock file in a data folder: its content is the pid of the process that holds it. */
export const lockFileName = 'registry.lock';

/** A held data-folder lock. */
export interface DataLock {
  readonly path: string;
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the data folder for this process. PGlite has no lock of its own, and two processes on one
 * folder silently lose writes, so a second process gets `data_folder_locked` naming the holder.
 * A lock left by a process that is gone (crash, kill -9) is taken over.
 */
export function lockDataFolder(dataDir: string): DataLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, lockFileName);
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let pid = Number.NaN;
      try {
        pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      } catch {
        // Removed meanwhile: try again.
      }
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
        throw new RegistryError('data_folder_locked', `data folder ${dataDir} is in use by pid ${pid}`, { dataDir, pid });
      }
      // Stale (holder gone) or half-written: take it over.
      rmSync(path, { force: true });
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    let released = false;
    return {
      path,
      release() {
        if (released) return;
        released = true;
        try {
          if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, { force: true });
        } catch {
          // Already gone.
        }
      },
    };
  }
  throw new RegistryError('data_folder_locked', `data folder ${dataDir}: could not take the lock ${path}`, { dataDir });
}
