import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { RegistryError } from '../errors.js';

/** The lock file in a data folder: the pid of the process that holds it, and that process' start time (Linux). */
export const lockFileName = 'registry.lock';

/** A held data-folder lock. */
export interface DataLock {
  readonly path: string;
  release(): void;
}

/** A process as /proc tells it (Linux): its state letter and its start time (clock ticks after boot). */
function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    const startTime = fields[19];
    if (state === undefined || startTime === undefined) return undefined;
    return { state, startTime };
  } catch {
    return undefined;
  }
}

/** This process' start time, written into the lock beside its pid (empty where /proc is not). */
export function ownStartTime(): string {
  return procStat(process.pid)?.startTime ?? '';
}

/**
 * Whether the process that wrote a lock still holds it: `pid` alive, not a zombie (a process
 * SIGKILLed and not yet reaped by its parent still answers kill(pid, 0)), and the same process —
 * the start time in the lock is its own (a pid reused by another program after a crash or a
 * reboot has another). A lock without a start time (an older registry) counts as held only by a
 * live Node.js process.
 */
export function lockHolderAlive(pid: number, startTime: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(pid);
  // No /proc (not Linux), or it hides other users' processes: the live pid is taken as the holder.
  if (!stat) return true;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  if (startTime) return stat.startTime === startTime;
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return /(^|\/)node[^/]*$/.test(argv0);
  } catch {
    return false;
  }
}

/**
 * Takes the data folder for this process. PGlite has no lock of its own, and two processes on one
 * folder silently lose writes, so a second process gets `data_folder_locked` naming the holder.
 * A lock left by a process that is gone (crash, kill -9, even while not yet reaped) or by a pid
 * now used by another process is taken over ({@link lockHolderAlive}).
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
      let startTime: string | undefined;
      try {
        const [first, second] = readFileSync(path, 'utf8').split('\n');
        pid = Number.parseInt(first?.trim() ?? '', 10);
        startTime = second?.trim() || undefined;
      } catch {
        // Removed meanwhile: try again.
      }
      if (Number.isInteger(pid) && pid > 0 && lockHolderAlive(pid, startTime)) {
        throw new RegistryError('data_folder_locked', `data folder ${dataDir} is in use by pid ${pid}`, { dataDir, pid });
      }
      // Stale (holder gone) or half-written: take it over.
      rmSync(path, { force: true });
      continue;
    }
    writeSync(fd, `${process.pid}\n${ownStartTime()}\n`);
    closeSync(fd);
    let released = false;
    return {
      path,
      release() {
        if (released) return;
        released = true;
        try {
          if (readFileSync(path, 'utf8').split('\n')[0]?.trim() === String(process.pid)) rmSync(path, { force: true });
        } catch {
          // Already gone.
        }
      },
    };
  }
  throw new RegistryError('data_folder_locked', `data folder ${dataDir}: could not take the lock ${path}`, { dataDir });
}
