import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FormatError } from '../errors.js';
import { parseEventFormat, type EventFormat } from '../event-format/event-format.js';
import { decodeCString } from '../event-format/field-read.js';
import { CountingBatch, type RecordBatch, type RecordStream, type RecordStreamInfo, type RecordStreamStats } from '../record-stream.js';
import { parseHeaderEvent } from '../ring-buffer/header-event.js';
import { parseHeaderPage, type HeaderPageLayout } from '../ring-buffer/header-page.js';
import { commitLengthMask, PageReader } from '../ring-buffer/page.js';
import type { TraceRecord } from '../ring-buffer/trace-record.js';
import { MergedRecordReader, type RecordReader } from '../trace-dat/merge.js';

/** Where tracefs is, and whether this process mounted it. */
export interface TracefsMount {
  path: string;
  mountedHere: boolean;
}

/** Where tracefs is looked for first: its own mount point, then the old one under debugfs. */
export const tracefsDefaultPaths: readonly string[] = ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'];

function isTracefs(path: string): boolean {
  return existsSync(join(path, 'instances')) && existsSync(join(path, 'events', 'header_page'));
}

/** `\040` and the other octal escapes `/proc/mounts` writes for space, tab, newline and backslash. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

/**
 * The mount points of `/proc/mounts` text (`fstab` format) that can hold tracefs: every `tracefs`
 * mount, and `tracing/` under every `debugfs` mount (where kernels before 4.1 put it), in the
 * file's order.
 */
export function tracefsMountsOf(procMounts: string): string[] {
  const out: string[] = [];
  for (const line of procMounts.split('\n')) {
    const [, dir, type] = line.trim().split(/\s+/);
    if (dir === undefined || type === undefined) continue;
    if (type === 'tracefs') out.push(unescapeMountPath(dir));
    else if (type === 'debugfs') out.push(join(unescapeMountPath(dir), 'tracing'));
  }
  return out;
}

/** Where {@link findTracefs} looks and what it found there. */
export interface TracefsSearch {
  mount: TracefsMount | undefined;
  /** Every path looked at, in order (the default paths, then the mounts of `/proc/mounts`). */
  looked: string[];
  /** Why `/proc/mounts` could not be read, when it could not. */
  mountsError?: string;
}

/** Options of {@link findTracefs} / {@link searchTracefs}. */
export interface FindTracefsOptions {
  /** As root, mount a tracefs on a fresh temporary directory when none is mounted. */
  mount?: boolean;
  /** The paths to try first (default {@link tracefsDefaultPaths}). */
  paths?: readonly string[];
  /** The mount table to read (default `/proc/mounts`). */
  mountsFile?: string;
}

/**
 * Looks for a mounted tracefs: `/sys/kernel/tracing`, `/sys/kernel/debug/tracing`, then every
 * tracefs mount (and debugfs `tracing/`) of `/proc/mounts`, wherever it is. A path counts when it
 * has `instances/` and `events/header_page`.
 */
export function searchTracefs(options: Omit<FindTracefsOptions, 'mount'> = {}): TracefsSearch {
  const looked: string[] = [];
  const tryPath = (p: string): TracefsMount | undefined => {
    if (looked.includes(p)) return undefined;
    looked.push(p);
    return isTracefs(p) ? { path: p, mountedHere: false } : undefined;
  };
  for (const p of options.paths ?? tracefsDefaultPaths) {
    const m = tryPath(p);
    if (m) return { mount: m, looked };
  }
  let text: string;
  try {
    text = readFileSync(options.mountsFile ?? '/proc/mounts', 'utf8');
  } catch (e) {
    return { mount: undefined, looked, mountsError: `${options.mountsFile ?? '/proc/mounts'}: ${(e as Error).message}` };
  }
  for (const p of tracefsMountsOf(text)) {
    const m = tryPath(p);
    if (m) return { mount: m, looked };
  }
  return { mount: undefined, looked };
}

/** Words for a failed {@link searchTracefs}: `no tracefs at A, B or any tracefs mount of /proc/mounts`. */
export function describeTracefsSearch(search: TracefsSearch, mountsFile = '/proc/mounts'): string {
  const where = search.looked.join(', ');
  const mounts = search.mountsError !== undefined ? `; ${search.mountsError}` : ` (all of them and every tracefs mount of ${mountsFile})`;
  return `no mounted tracefs: looked in ${where}${mounts}; mount one with \`mount -t tracefs nodev /sys/kernel/tracing\` (root)`;
}

/**
 * Finds a mounted tracefs ({@link searchTracefs}), or (with `mount: true`, as root) mounts one on
 * a fresh temporary directory (`mount -t tracefs nodev DIR`). Returns undefined when there is
 * none and none can be mounted.
 */
export function findTracefs(options: FindTracefsOptions = {}): TracefsMount | undefined {
  const found = searchTracefs(options).mount;
  if (found) return found;
  if (!options.mount || process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-tracefs-'));
  try {
    execFileSync('mount', ['-t', 'tracefs', 'nodev', dir], { stdio: 'ignore', timeout: 10_000 });
  } catch {
    rmdirSync(dir);
    return undefined;
  }
  if (!isTracefs(dir)) {
    unmountTracefs({ path: dir, mountedHere: true });
    return undefined;
  }
  return { path: dir, mountedHere: true };
}

/** Unmounts a tracefs that {@link findTracefs} mounted (a no-op for one found mounted). */
export function unmountTracefs(m: TracefsMount): void {
  if (!m.mountedHere) return;
  try {
    execFileSync('umount', [m.path], { stdio: 'ignore', timeout: 10_000 });
    rmdirSync(m.path);
  } catch {
    // left mounted: nothing else to do
  }
}

const hostLittleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** Options of {@link openTracefsStream}. */
export interface TracefsStreamOptions {
  /** Events to enable at once, as `system:event` or `system/event` (more can come later: {@link TracefsRecordStream.setEvents}). */
  events: readonly string[];
  /** A tracefs mount to use; default: found or mounted by {@link findTracefs}. */
  tracefs?: TracefsMount;
  /** Milliseconds between polls while every CPU buffer is empty (default 25). */
  pollIntervalMs?: number;
  /** Milliseconds before the next poll after one that read a full sub-buffer but caught up (default 2). */
  busyPollIntervalMs?: number;
  /** Sub-buffers read per CPU per poll at most (default: 1 MiB worth): bounds the memory of one batch. */
  maxSubBuffersPerPoll?: number;
  /**
   * `buffer_size_kb` of the instance (per CPU). Default: 64 MiB shared by the CPUs, between 2 and
   * 32 MiB each, so a burst of a million events a second survives a reader held up for tenths of a
   * second (`defaultBufferSizeKb`).
   */
  bufferSizeKb?: number;
  /**
   * `buffer_subbuf_size_kb` of the instance (Linux 6.8+; ignored where the file is absent): larger
   * sub-buffers mean fewer reads. Default 64; 0 keeps the kernel's (the page size).
   */
  subBufferSizeKb?: number;
  /** Milliseconds between reads of the per-CPU `stats` files while records flow (default 100). */
  statsIntervalMs?: number;
  /**
   * Name suffix of the instance; default `<pid>-<process start time>-<random>`, which
   * {@link removeStaleInstances} recognises once that process is gone. The instance is
   * `probeyard-<suffix>`.
   */
  instanceSuffix?: string;
  /**
   * Learn task names from the feed itself (default true): `task/task_newtask` and
   * `task/task_rename` (an exec renames) are enabled in the instance where the kernel has them,
   * read in time order with the other records and kept from the batches (unless asked for), so
   * `info.comm(pid)` names a short-lived process at its records' time as `bpf_get_current_comm`
   * does. Without them (or for a task older than the stream) it is `saved_cmdlines`, then
   * `/proc/PID/comm` in the initial pid namespace.
   */
  learnComms?: boolean;
}

/** One CPU's ring-buffer accounting (`per_cpu/cpuN/stats`). */
export interface TracefsCpuStats {
  cpu: number;
  /** Events in the buffer now. */
  entries: number;
  /** Events overwritten before they were read (overwrite mode). */
  overrun: number;
  /** Events lost because a nested writer wrapped the buffer. */
  commitOverrun: number;
  /** Events dropped because the buffer was full (non-overwrite mode). */
  droppedEvents: number;
  /** Events read. */
  readEvents: number;
}

/** A live tracefs feed: the {@link RecordStream} plus where its instance is and which events it has on. */
export interface TracefsRecordStream extends RecordStream<EventFormat> {
  /** Path of the private instance (removed on close). */
  readonly instancePath: string;
  /** CPUs read. */
  readonly cpus: readonly number[];
  /** Sub-buffer layout read from the instance's header_page. */
  readonly headerPage: HeaderPageLayout;
  /** `buffer_size_kb` per CPU, as the instance has it. */
  readonly bufferSizeKb: number;
  /** Events enabled now, as `system/event`, sorted. */
  readonly events: readonly string[];
  /**
   * Enables exactly `events` (`system:event` or `system/event`) while the stream runs: those not
   * on yet are enabled, those no longer wanted disabled; records of the others are untouched (the
   * buffer is never reset). Checks every name first: an unknown event throws and changes nothing.
   */
  setEvents(events: readonly string[]): void;
  /** Enables more events (see {@link setEvents}). */
  addEvents(events: readonly string[]): void;
  /** Disables events; records of them already in the buffer still come, with their format. */
  removeEvents(events: readonly string[]): void;
  /** The per-CPU ring-buffer accounting, read now. */
  readBufferStats(): TracefsCpuStats[];
}

/** Default `buffer_size_kb` per CPU for `cpuCount` CPUs: 64 MiB shared, 2 to 32 MiB each. */
export function defaultBufferSizeKb(cpuCount: number): number {
  return Math.max(2048, Math.min(32768, Math.floor(65536 / Math.max(1, cpuCount))));
}

// Instances open in this process, removed on exit and on SIGINT/SIGTERM.
const live = new Set<() => void>();
let handlersInstalled = false;

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const cleanupAll = () => {
    for (const c of [...live]) c();
  };
  process.on('exit', cleanupAll);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    const handler = () => {
      cleanupAll();
      // Only this handler was installed by us: if nobody else listens, behave as the default.
      if (process.listenerCount(sig) === 1) {
        process.removeListener(sig, handler);
        process.kill(process.pid, sig);
      }
    };
    process.on(sig, handler);
  }
}

function parseEventName(spec: string): { system: string; name: string; key: string } {
  const m = /^([\w-]+)[:/]([\w-]+)$/.exec(spec);
  if (!m) throw new FormatError('malformed', `tracefs: event '${spec}' is not system:event`, { event: spec });
  return { system: m[1]!, name: m[2]!, key: `${m[1]}/${m[2]}` };
}

/** Start time of a process (`/proc/<pid>/stat` field 22, clock ticks since boot), or undefined when it does not exist. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces and parentheses: fields after it follow the last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

const instanceNameRe = /^probeyard-(\d+)-(?:(\d+)-)?([a-z0-9]+)$/;

/** A Probeyard instance left by a process that is gone. */
export interface StaleInstance {
  name: string;
  path: string;
  pid: number;
}

/**
 * Finds the instances this module names (`probeyard-<pid>-<start time>-<random>`, and the older
 * `probeyard-<pid>-<random>`) whose process is gone (no such pid, or a pid reused by a process
 * started at another time), and removes them: a process killed with SIGKILL leaves its instance,
 * events still enabled and buffers allocated, and the next start calls this. Instances of live
 * processes and instances named otherwise are never touched. Needs root.
 */
export function removeStaleInstances(options: { tracefs?: TracefsMount } = {}): { removed: StaleInstance[]; failed: (StaleInstance & { error: string })[] } {
  const out: { removed: StaleInstance[]; failed: (StaleInstance & { error: string })[] } = { removed: [], failed: [] };
  const mount = options.tracefs ?? findTracefs();
  if (!mount) return out;
  let names: string[];
  try {
    names = readdirSync(join(mount.path, 'instances'));
  } catch {
    return out;
  }
  for (const name of names) {
    const m = instanceNameRe.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    const started = processStartTime(pid);
    const alive = started !== undefined && (m[2] === undefined || m[2] === started);
    if (alive) continue;
    const stale: StaleInstance = { name, path: join(mount.path, 'instances', name), pid };
    try {
      try {
        writeFileSync(join(stale.path, 'tracing_on'), '0');
      } catch {
        // removing it is what matters
      }
      rmdirSync(stale.path);
      out.removed.push(stale);
    } catch (e) {
      out.failed.push({ ...stale, error: (e as Error).message });
    }
  }
  return out;
}

/** One sub-buffer read in a poll: where it sits in its CPU's pool. */
interface PageSlot {
  byteOffset: number;
  length: number;
}

/** Reads the pages of one poll of one CPU, in order; reused from poll to poll. */
class PageListReader implements RecordReader<EventFormat> {
  private index = 0;
  private loaded = false;
  count = 0;
  constructor(
    readonly pages: PageSlot[],
    readonly bytes: Uint8Array,
    readonly view: DataView,
    private readonly reader: PageReader<EventFormat>,
    private readonly formats: (EventFormat | undefined)[],
  ) {}
  reset(count: number): void {
    this.count = count;
    this.index = 0;
    this.loaded = false;
  }
  next(): TraceRecord<EventFormat> | undefined {
    for (;;) {
      if (this.loaded && this.reader.next()) {
        const r = this.reader.record;
        r.format = this.formats[r.eventId];
        return r;
      }
      if (this.index >= this.count) return undefined;
      const p = this.pages[this.index++]!;
      this.reader.load(this.bytes, this.view, p.byteOffset, p.length);
      this.loaded = true;
    }
  }
}

const statsLine = /^(entries|overrun|commit overrun|dropped events|read events):\s*(\d+)/gm;

function parseCpuStats(cpu: number, text: string): TracefsCpuStats {
  const s: TracefsCpuStats = { cpu, entries: 0, overrun: 0, commitOverrun: 0, droppedEvents: 0, readEvents: 0 };
  for (const m of text.matchAll(statsLine)) {
    const n = Number(m[2]);
    if (m[1] === 'entries') s.entries = n;
    else if (m[1] === 'overrun') s.overrun = n;
    else if (m[1] === 'commit overrun') s.commitOverrun = n;
    else if (m[1] === 'dropped events') s.droppedEvents = n;
    else s.readEvents = n;
  }
  return s;
}

const now = () => performance.now();

/** The events a live stream learns task names from (`learnComms`). */
const commEvents = [
  { system: 'task', name: 'task_newtask', key: 'task/task_newtask' },
  { system: 'task', name: 'task_rename', key: 'task/task_rename' },
];

/**
 * Task names learnt from the feed, in time order: a new task's (`task_newtask`: `pid`, `comm`)
 * and a rename's (`task_rename`: `pid`, `newcomm`; exec renames). {@link over} wraps one batch's
 * merged records: each of these records is learnt as it is reached, so a name holds from its
 * record's time on, and is kept from the batch unless the caller asked for its event.
 */
class CommLearner implements RecordReader<EventFormat> {
  readonly comms = new Map<number, string>();
  private readonly learn: ({ pidOffset: number; commOffset: number; commSize: number; end: number } | undefined)[] = [];
  private readonly keys: string[] = [];
  private readonly hidden: boolean[] = [];
  private inner: RecordReader<EventFormat> | undefined;

  constructor(formats: EventFormat[]) {
    for (const f of formats) {
      const pid = f.fields.find((x) => x.name === 'pid');
      const comm = f.fields.find((x) => x.name === (f.name === 'task_rename' ? 'newcomm' : 'comm'));
      if (!pid || pid.size !== 4 || !comm || comm.dynamic !== undefined) continue;
      this.learn[f.id] = { pidOffset: pid.byteOffset, commOffset: comm.byteOffset, commSize: comm.size, end: Math.max(pid.byteOffset + 4, comm.byteOffset + comm.size) };
      this.keys[f.id] = `${f.system}/${f.name}`;
      this.hidden[f.id] = true;
    }
  }

  /** The caller's events: a learning event it asked for stays in the batches. */
  setAsked(asked: ReadonlySet<string>): void {
    this.keys.forEach((key, id) => {
      if (key !== undefined) this.hidden[id] = !asked.has(key);
    });
  }

  over(inner: RecordReader<EventFormat>): RecordReader<EventFormat> {
    this.inner = inner;
    return this;
  }

  next(): TraceRecord<EventFormat> | undefined {
    const inner = this.inner!;
    for (;;) {
      const r = inner.next();
      if (r === undefined) return r;
      const learn = this.learn[r.eventId];
      if (learn === undefined) return r;
      if (r.recordLength >= learn.end) {
        if (this.comms.size >= 65536) this.forgetOldest();
        const pid = r.view.getInt32(r.recordOffset + learn.pidOffset, hostLittleEndian);
        // a rename moves the name to the end (Map order: oldest first)
        this.comms.delete(pid);
        this.comms.set(pid, decodeCString(r.bytes, r.recordOffset + learn.commOffset, learn.commSize));
      }
      if (!this.hidden[r.eventId]) return r;
    }
  }

  /** Drops the oldest quarter (tasks long gone, most likely: pids are recycled slowly). */
  private forgetOldest(): void {
    let drop = this.comms.size >> 2;
    for (const pid of this.comms.keys()) {
      if (drop-- <= 0) break;
      this.comms.delete(pid);
    }
  }
}

/** The initial pid namespace's inode (the kernel's PROC_PID_INIT_INO): `/proc/self/ns/pid` reads `pid:[4026531836]` there. */
const initialPidNamespace = 'pid:[4026531836]';

/** Whether this process sees the kernel's own pids (the ones trace records carry) in /proc. */
function inInitialPidNamespace(): boolean {
  try {
    return readlinkSync('/proc/self/ns/pid') === initialPidNamespace;
  } catch {
    return false;
  }
}

/** A live task's name from /proc (threads too: /proc/TID exists though it is not listed), or undefined once it is gone. */
function readProcComm(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/comm`, 'utf8');
    return text.endsWith('\n') ? text.slice(0, -1) : text;
  } catch {
    return undefined;
  }
}
const sleep = (ms: number, wakeUp: (w: () => void) => void) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    wakeUp(() => {
      clearTimeout(t);
      resolve();
    });
  });

/**
 * Opens the live ring buffer: creates a private tracefs instance
 * (`instances/probeyard-<pid>-<start time>-<random>`), sizes its buffers, enables the given events
 * in it only (global tracing is never touched; more events can be enabled and disabled while it
 * runs), and reads each CPU's `per_cpu/cpuN/trace_pipe_raw` with non-blocking reads of whole
 * sub-buffers into buffers reused from poll to poll. Each batch holds the records of one poll,
 * merged across CPUs in time order.
 *
 * Every lost event is counted per CPU (`stats.lostByCpu`): the missed-events flags of the pages
 * read, and the ring buffer's own accounting (`per_cpu/cpuN/stats`: overrun, commit overrun,
 * dropped events), read while records flow and once more when the stream closes, whichever
 * says more. The instance is removed by `close()`, when iteration ends or fails, at process exit
 * and on SIGINT/SIGTERM (and, after a SIGKILL, by the next process's
 * {@link removeStaleInstances}). Needs root.
 */
export function openTracefsStream(options: TracefsStreamOptions): TracefsRecordStream {
  const mount = options.tracefs ?? findTracefs({ mount: true });
  if (!mount) throw new FormatError('not-found', 'tracefs: not mounted and cannot be mounted (root needed)', { section: 'tracefs' });
  const initial = options.events.map(parseEventName);
  const suffix = options.instanceSuffix ?? `${process.pid}-${processStartTime(process.pid) ?? 0}-${Math.random().toString(36).slice(2, 10).padEnd(8, '0')}`;
  if (!/^[\w.-]+$/.test(suffix)) throw new FormatError('malformed', `tracefs: instance suffix '${suffix}'`, { section: 'tracefs' });
  const instancePath = join(mount.path, 'instances', `probeyard-${suffix}`);
  const eventsDir = join(instancePath, 'events');
  const fds: number[] = [];
  let removed = false;
  let created = false;
  let cpus: number[] = [];
  // losses per CPU: from page flags (counted by the batches) and from the stats files
  const flagStats: RecordStreamStats = { records: 0, lostEvents: 0, lostUnknown: 0, lostByCpu: [] };
  const fileLost: number[] = [];
  const lostByCpu: number[] = [];

  let lastBufferStats: TracefsCpuStats[] = [];
  /** The stats files now (after the instance is removed: as they were last read). */
  const readBufferStats = (): TracefsCpuStats[] => {
    if (removed) return lastBufferStats;
    lastBufferStats = cpus.map((cpu) => parseCpuStats(cpu, readFileSync(join(instancePath, 'per_cpu', `cpu${cpu}`, 'stats'), 'utf8')));
    return lastBufferStats;
  };
  const readLossFiles = () => {
    for (const s of readBufferStats()) fileLost[s.cpu] = s.overrun + s.commitOverrun + s.droppedEvents;
  };

  const cleanup = () => {
    if (removed) return;
    live.delete(cleanup);
    if (created) {
      try {
        writeFileSync(join(instancePath, 'tracing_on'), '0');
        readLossFiles(); // the last word on what was lost
      } catch {
        // the instance may be gone already
      }
    }
    removed = true;
    for (const fd of fds.splice(0)) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    if (created) {
      // Up to 5 s: the kernel refuses (EBUSY) while a reader of the instance is still closing.
      for (let i = 0; i < 250; i++) {
        try {
          rmdirSync(instancePath);
          break;
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          if (code !== 'EBUSY') break;
          // Busy: a reader is still closing. Wait a moment (synchronously: this also runs at exit).
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        }
      }
    }
    if (options.tracefs === undefined) unmountTracefs(mount);
  };

  try {
    mkdirSync(instancePath);
    created = true;
    installHandlers();
    live.add(cleanup);
    writeFileSync(join(instancePath, 'tracing_on'), '0');
    cpus = readdirSync(join(instancePath, 'per_cpu'))
      .map((d) => /^cpu(\d+)$/.exec(d)?.[1])
      .filter((d): d is string => d !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const subKb = options.subBufferSizeKb ?? 64;
    if (subKb > 0 && existsSync(join(instancePath, 'buffer_subbuf_size_kb'))) {
      try {
        writeFileSync(join(instancePath, 'buffer_subbuf_size_kb'), String(subKb));
      } catch {
        // a kernel that refuses this size keeps its own
      }
    }
    writeFileSync(join(instancePath, 'buffer_size_kb'), String(options.bufferSizeKb ?? defaultBufferSizeKb(cpus.length)));
    const bufferSizeKb = Number(readFileSync(join(instancePath, 'buffer_size_kb'), 'utf8').trim().split(/\s/)[0]);
    const headerPage = parseHeaderPage(readFileSync(join(eventsDir, 'header_page'), 'utf8'));
    parseHeaderEvent(readFileSync(join(eventsDir, 'header_event'), 'utf8'));

    // events: formats by id (kept after an event is disabled: its records may still be buffered)
    const formatsById: (EventFormat | undefined)[] = [];
    const enabled = new Set<string>();
    const formatOf = (e: { system: string; name: string; key: string }): EventFormat => {
      const file = join(eventsDir, e.system, e.name, 'format');
      if (!existsSync(file)) throw new FormatError('not-found', `tracefs: no event ${e.system}:${e.name}`, { event: `${e.system}:${e.name}` });
      return parseEventFormat(readFileSync(file, 'utf8'), { system: e.system });
    };
    /** Events enabled for the stream's own use (comm learning), not shown in `events` unless asked for too. */
    const internal: { system: string; name: string; key: string }[] =
      options.learnComms === false ? [] : commEvents.filter((e) => existsSync(join(eventsDir, e.system, e.name, 'format')));
    /** Events the caller asked for (what `events` lists and the batches carry). */
    const asked = new Set<string>();
    const applyEvents = (want: readonly { system: string; name: string; key: string }[]) => {
      const wanted = new Map([...internal, ...want].map((e) => [e.key, e]));
      // check and parse every new one before changing anything
      const adding = [...wanted.values()].filter((e) => !enabled.has(e.key)).map((e) => ({ e, format: formatOf(e) }));
      for (const { e, format } of adding) {
        formatsById[format.id] = format;
        writeFileSync(join(eventsDir, e.system, e.name, 'enable'), '1');
        enabled.add(e.key);
      }
      for (const key of [...enabled]) {
        if (wanted.has(key)) continue;
        const [system, name] = key.split('/') as [string, string];
        writeFileSync(join(eventsDir, system, name, 'enable'), '0');
        enabled.delete(key);
      }
      asked.clear();
      for (const e of want) asked.add(e.key);
      learner?.setAsked(asked);
    };
    const learner: CommLearner | undefined = internal.length > 0 ? new CommLearner(internal.map((e) => formatOf(e))) : undefined;
    applyEvents(initial);
    for (const cpu of cpus) {
      fds.push(openSync(join(instancePath, 'per_cpu', `cpu${cpu}`, 'trace_pipe_raw'), constants.O_RDONLY | constants.O_NONBLOCK));
    }
    writeFileSync(join(instancePath, 'tracing_on'), '1');

    const subBuffer = headerPage.subBufferSize;
    const maxPages = options.maxSubBuffersPerPoll ?? Math.max(4, Math.floor((1 << 20) / subBuffer));
    const idleMs = options.pollIntervalMs ?? 25;
    const busyMs = options.busyPollIntervalMs ?? 2;
    const statsMs = options.statsIntervalMs ?? 100;
    const maxCpu = Math.max(0, ...cpus);
    for (let c = 0; c <= maxCpu; c++) {
      fileLost[c] = 0;
      lostByCpu[c] = 0;
      flagStats.lostByCpu[c] = 0;
    }
    const stats: RecordStreamStats = {
      get records() {
        return flagStats.records;
      },
      get lostUnknown() {
        return flagStats.lostUnknown;
      },
      get lostByCpu() {
        // the larger of the two accounts of each CPU (both only grow, so this does too)
        for (let c = 0; c < lostByCpu.length; c++) lostByCpu[c] = Math.max(lostByCpu[c]!, flagStats.lostByCpu[c] ?? 0, fileLost[c] ?? 0);
        return lostByCpu;
      },
      get lostEvents() {
        let n = 0;
        for (const x of this.lostByCpu) n += x;
        return n;
      },
    };
    // per CPU: one pool of sub-buffers, reused by every poll (a batch is valid until the next one)
    const readers = cpus.map((cpu) => {
      const bytes = new Uint8Array(maxPages * subBuffer);
      const view = new DataView(bytes.buffer);
      const pr = new PageReader<EventFormat>(headerPage, hostLittleEndian);
      pr.record.cpu = cpu;
      pr.record.bufferName = `probeyard-${suffix}`;
      const pages: PageSlot[] = Array.from({ length: maxPages }, (_, i) => ({ byteOffset: i * subBuffer, length: 0 }));
      return new PageListReader(pages, bytes, view, pr, formatsById);
    });
    let closed = false;
    let wake: (() => void) | undefined;
    const cmdlinesPath = join(mount.path, 'saved_cmdlines');
    let cmdlines: Map<number, string> | undefined;
    let cmdlinesReadAt = 0;
    // /proc/PID/comm names the kernel's pids only in the initial pid namespace (not in a container's)
    const hostPids = inInitialPidNamespace();
    const procComms = new Map<number, { name: string | undefined; at: number }>();

    // The commit word's low 32 bits (this host's byte order; the flags sit in bits 30 and 31).
    const commitLow = headerPage.commitOffset + (headerPage.commitSize === 8 && !hostLittleEndian ? 4 : 0);
    /** Whether the last poll stopped at maxPages on some CPU (it is behind: poll again at once). */
    let behind = false;
    /** Whether the last poll read a full page somewhere (records flow: poll again soon). */
    let flowing = false;
    let lastStatsAt = 0;

    /**
     * One poll: up to maxPages sub-buffers per CPU. EAGAIN ends a CPU's turn, and so does a page
     * less than half full: the kernel handed over the page it is writing, so this reader has
     * caught up. Reading on then would only return the events its own reads make (a trace of
     * syscalls feeds on itself); the next poll comes after `busyPollIntervalMs` when a full page
     * was read (records flow), else after `pollIntervalMs`.
     */
    const poll = (): RecordReader<EventFormat> | undefined => {
      const active: RecordReader<EventFormat>[] = [];
      behind = false;
      flowing = false;
      readers.forEach((reader, i) => {
        const { bytes, view } = reader;
        let n = 0;
        for (; n < maxPages; ) {
          const slot = reader.pages[n]!;
          let got: number;
          try {
            got = readSync(fds[i]!, bytes, slot.byteOffset, subBuffer, null);
          } catch (e) {
            const code = (e as NodeJS.ErrnoException).code;
            if (code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EINTR') break;
            throw e;
          }
          if (got <= 0) break;
          if (got < headerPage.dataOffset) continue;
          slot.length = got;
          n++;
          if ((view.getUint32(slot.byteOffset + commitLow, hostLittleEndian) & commitLengthMask) * 2 < headerPage.dataSize) break;
          flowing = true;
          if (n === maxPages) behind = true;
        }
        if (n > 0) {
          reader.reset(n);
          active.push(reader);
        }
      });
      const t = now();
      if (active.length > 0 && t - lastStatsAt >= statsMs) {
        lastStatsAt = t;
        try {
          readLossFiles();
        } catch {
          // the instance is being removed
        }
      }
      if (active.length === 0) return undefined;
      const merged = new MergedRecordReader(active);
      return learner ? learner.over(merged) : merged;
    };

    const info: RecordStreamInfo<EventFormat> = {
      kind: 'tracefs',
      cpuCount: cpus.length,
      littleEndian: hostLittleEndian,
      longSize: headerPage.commitSize === 4 ? 4 : 8,
      format: (id) => formatsById[id],
      comm: (pid) => {
        if (pid === 0) return '<idle>';
        const learned = learner?.comms.get(pid);
        if (learned !== undefined) return learned;
        const t = now();
        // read saved_cmdlines once, and again (at most once a second) for a pid it did not have
        if (!cmdlines || (!cmdlines.has(pid) && t - cmdlinesReadAt > 100)) {
          cmdlinesReadAt = t;
          cmdlines = new Map();
          try {
            for (const line of readFileSync(cmdlinesPath, 'utf8').split('\n')) {
              const sp = line.indexOf(' ');
              if (sp > 0) cmdlines.set(Number(line.slice(0, sp)), line.slice(sp + 1));
            }
          } catch {
            // no saved_cmdlines
          }
        }
        const saved = cmdlines.get(pid);
        if (saved !== undefined || !hostPids) return saved;
        // saved_cmdlines holds the tasks the kernel saw switching while tracing ran: a task it has
        // not saved yet (a short burst of syscalls, a new process) is still in /proc while it lives
        let known = procComms.get(pid);
        if (known === undefined || t - known.at > 1000) {
          if (procComms.size > 65536) procComms.clear();
          known = { name: readProcComm(pid), at: t };
          procComms.set(pid, known);
        }
        return known.name;
      },
    };

    const stream: TracefsRecordStream = {
      info,
      stats,
      instancePath,
      cpus,
      headerPage,
      bufferSizeKb,
      get events() {
        return [...asked].sort();
      },
      setEvents(events) {
        if (removed) throw new FormatError('malformed', 'tracefs: the stream is closed', { section: 'tracefs' });
        applyEvents(events.map(parseEventName));
      },
      addEvents(events) {
        const add = events.map(parseEventName);
        this.setEvents([...asked, ...add.map((e) => e.key)]);
      },
      removeEvents(events) {
        const drop = new Set(events.map((e) => parseEventName(e).key));
        this.setEvents([...asked].filter((k) => !drop.has(k)));
      },
      readBufferStats,
      async close() {
        closed = true;
        wake?.();
        cleanup();
      },
      async *[Symbol.asyncIterator](): AsyncGenerator<RecordBatch<EventFormat>> {
        try {
          while (!closed) {
            const merged = poll();
            if (merged) {
              const batch = new CountingBatch(merged, flagStats);
              batch.reset(Number.MAX_SAFE_INTEGER);
              yield batch;
              if (closed) break;
              // behind: read on at once, but let timers and I/O of the process run first
              if (behind) {
                await new Promise<void>((resolve) => setImmediate(resolve));
                continue;
              }
            }
            await sleep(flowing ? busyMs : idleMs, (w) => {
              wake = w;
            });
            wake = undefined;
          }
        } finally {
          closed = true;
          cleanup();
        }
      },
    };
    return stream;
  } catch (e) {
    cleanup();
    throw e;
  }
}
