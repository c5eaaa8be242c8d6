// The data folder holds the database (PGlite's files), the instance admin credential and the lock:
// whoever can write it owns the registry. PGlite creates its files world-writable (0666, whatever
// the umask), so a folder made beforehand with loose permissions (a mounted volume, a `mkdir` under
// umask 000) let anyone on the host rewrite the database. At every start the folder is made
// private to the registry's user, or the start is refused saying why.
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { RegistryError } from '../errors.js';

function refuse(dataDir: string, why: string, context: Record<string, unknown> = {}): RegistryError {
  return new RegistryError('data_folder_unsafe', `data folder ${dataDir}: ${why}`, { dataDir, ...context });
}

/** Removes group and other bits from everything under `dir` (symbolic links are left alone, never followed). */
function tighten(dataDir: string, dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (st.isSymbolicLink()) continue;
    if ((st.mode & 0o077) !== 0) {
      try {
        chmodSync(path, st.mode & 0o700);
      } catch (err) {
        throw refuse(dataDir, `cannot make ${path} private to its owner (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); fix its permissions (chmod go-rwx) and start again`, { path });
      }
    }
    if (st.isDirectory()) tighten(dataDir, path);
  }
}

/**
 * Makes `dataDir` (created when missing) mode 0700 and everything in it unreadable and unwritable by
 * group and others, and sets this process' umask to 077 so that files the registry itself writes
 * start private. Refused (`data_folder_unsafe`) when the folder belongs to another user (its owner
 * could change it back; run the registry as that user or hand the folder over with chown), or when
 * a permission cannot be fixed. Run before the database opens, and again after PGlite opened (it
 * creates files 0666 as it starts; the ones it makes later are behind the 0700 folder).
 */
export function secureDataFolder(dataDir: string): void {
  // process.umask() cannot be set from a worker thread; the main thread's applies to the process.
  if (isMainThread) process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const st = statSync(dataDir);
  if (!st.isDirectory()) throw refuse(dataDir, 'not a directory');
  const uid = process.geteuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw refuse(
      dataDir,
      `belongs to uid ${st.uid}, not to this process' uid ${uid}; another user could change the database. Run the registry as its owner, or give it to this user (chown -R ${uid} ${dataDir})`,
      { ownerUid: st.uid, uid },
    );
  }
  if ((st.mode & 0o777) !== 0o700) {
    try {
      chmodSync(dataDir, 0o700);
    } catch (err) {
      throw refuse(dataDir, `mode ${(st.mode & 0o777).toString(8)} lets other users in, and it cannot be made 0700 (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  tighten(dataDir, dataDir);
}
