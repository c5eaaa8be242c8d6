// The state folder: the only place the agent writes. It holds the credential (mode 0600), the
// spool, the last assignments and the artifacts they name (so a restart during a registry outage
// runs what ran before), and a lock file so that two agents never share one folder.
import { closeSync, constants, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AgentError } from '../errors.js';

/** What `enroll` stores: the registry and the credential it issued. Never printed, never logged. */
export interface Credential {
  registry: string;
  agentId: string;
  credential: string;
  hostname: string;
  enrolledAt: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes `data` to `path` through a temporary file: fsync, rename, fsync of the folder. */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, mode);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDir(resolve(path, '..'));
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, constants.O_RDONLY);
    fsyncSync(fd);
  } catch {
    // some filesystems refuse fsync on folders: the rename is still atomic
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export class StateDir {
  readonly path: string;
  private lockFd: number | undefined;

  private constructor(path: string) {
    this.path = path;
  }

  /** Opens (and with `create`, makes, mode 0700) the state folder. */
  static open(path: string, options: { create?: boolean } = {}): StateDir {
    const abs = resolve(path);
    try {
      if (options.create) mkdirSync(abs, { recursive: true, mode: 0o700 });
      if (!statSync(abs).isDirectory()) throw new AgentError('state', `state ${abs}: not a folder`, { path: abs });
    } catch (e) {
      if (e instanceof AgentError) throw e;
      throw new AgentError('state', `state ${abs}: ${(e as Error).message}`, { path: abs, cause: e });
    }
    return new StateDir(abs);
  }

  file(...parts: string[]): string {
    return join(this.path, ...parts);
  }

  /** A sub-folder (made, mode 0700). */
  dir(...parts: string[]): string {
    const p = join(this.path, ...parts);
    mkdirSync(p, { recursive: true, mode: 0o700 });
    return p;
  }

  readJson<T>(name: string): T | undefined {
    let text: string;
    try {
      text = readFileSync(this.file(name), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new AgentError('state', `state ${this.file(name)}: ${(e as Error).message}`, { path: this.file(name), cause: e });
    }
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw new AgentError('state', `state ${this.file(name)}: not valid JSON: ${(e as Error).message}`, { path: this.file(name), cause: e });
    }
  }

  writeJson(name: string, value: unknown): void {
    writeFileAtomic(this.file(name), `${JSON.stringify(value, null, 2)}\n`, 0o600);
  }

  readCredential(): Credential | undefined {
    const c = this.readJson<Partial<Credential>>('credential.json');
    if (c === undefined) return undefined;
    if (typeof c.registry !== 'string' || typeof c.credential !== 'string' || typeof c.agentId !== 'string') {
      throw new AgentError('state', `state ${this.file('credential.json')}: not a credential of probeyard-agent enroll`, { path: this.file('credential.json') });
    }
    const mode = statSync(this.file('credential.json')).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new AgentError('state', `state ${this.file('credential.json')}: mode ${mode.toString(8)} lets others read the credential (chmod 600 it)`, {
        path: this.file('credential.json'),
      });
    }
    return c as Credential;
  }

  writeCredential(c: Credential): void {
    this.writeJson('credential.json', c);
  }

  /**
   * Takes the folder for this process (`agent.lock` holds the pid). A lock left by a process that
   * is gone (SIGKILL) is taken over; one held by a live process is an error.
   */
  lock(): void {
    const path = this.file('agent.lock');
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
        writeSync(fd, `${process.pid}\n`);
        fsyncSync(fd);
        this.lockFd = fd;
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new AgentError('state', `state ${path}: ${(e as Error).message}`, { path, cause: e });
      }
      let pid = Number.NaN;
      try {
        pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
      } catch {
        // removed meanwhile: try again
      }
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new AgentError('state', `state ${this.path}: in use by another agent (pid ${pid})`, { path });
      }
      rmSync(path, { force: true });
    }
    throw new AgentError('state', `state ${path}: could not take the lock`, { path });
  }

  unlock(): void {
    if (this.lockFd === undefined) return;
    closeSync(this.lockFd);
    this.lockFd = undefined;
    rmSync(this.file('agent.lock'), { force: true });
  }
}
