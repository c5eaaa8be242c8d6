import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FormatError } from '../errors.js';
import { parseEventFormat, type EventFormat } from '../event-format/event-format.js';
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

const candidates = ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'];

function isTracefs(path: string): boolean {
  return existsSync(join(path, 'instances')) && existsSync(join(path, 'events', 'header_page'));
}

/**
 * Finds a mounted tracefs, or (with `mount: true`, as root) mounts one on a fresh temporary
 * directory (`mount -t tracefs nodev DIR`). Returns undefined when there is none and none can be
 * mounted.
 */
export function findTracefs(options: { mount?: boolean } = {}): TracefsMount | undefined {
  for (const p of candidates) if (isTracefs(p)) return { path: p, mountedHere: false };
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
  /** Events to enable, as `system:event` or `system/event`. */
  events: readonly string[];
  /** A tracefs mount to use; default: found or mounted by {@link findTracefs}. */
  tracefs?: TracefsMount;
  /** Milliseconds between polls when every CPU buffer was empty (default 25). */
  pollIntervalMs?: number;
  /** Sub-buffers read per CPU per poll at most (default 64): bounds the memory of one batch. */
  maxSubBuffersPerPoll?: number;
  /** buffer_size_kb of the instance (per CPU); default: the kernel's default for instances. */
  bufferSizeKb?: number;
  /** Name suffix of the instance (default `<pid>-<random>`); the instance is `probeyard-<suffix>`. */
  instanceSuffix?: string;
}

/** A live tracefs feed: the {@link RecordStream} plus where its instance is. */
export interface TracefsRecordStream extends RecordStream<EventFormat> {
  /** Path of the private instance (removed on close). */
  readonly instancePath: string;
  /** CPUs read. */
  readonly cpus: readonly number[];
  /** Sub-buffer layout read from the instance's header_page. */
  readonly headerPage: HeaderPageLayout;
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

function parseEventName(spec: string): { system: string; name: string } {
  const m = /^([\w-]+)[:/]([\w-]+)$/.exec(spec);
  if (!m) throw new FormatError('malformed', `tracefs: event '${spec}' is not system:event`, { event: spec });
  return { system: m[1]!, name: m[2]! };
}

/** Reads the pages of one poll of one CPU, in order. */
class PageListReader implements RecordReader<EventFormat> {
  private index = 0;
  private loaded = false;
  constructor(
    private readonly pages: { bytes: Uint8Array; view: DataView; length: number }[],
    private readonly reader: PageReader<EventFormat>,
    private readonly formats: Map<number, EventFormat>,
  ) {}
  next(): TraceRecord<EventFormat> | undefined {
    for (;;) {
      if (this.loaded && this.reader.next()) {
        const r = this.reader.record;
        r.format = this.formats.get(r.eventId);
        return r;
      }
      const p = this.pages[this.index++];
      if (!p) return undefined;
      this.reader.load(p.bytes, p.view, 0, p.length);
      this.loaded = true;
    }
  }
}

/**
 * Opens the live ring buffer: creates a private tracefs instance
 * (`instances/probeyard-<pid>-<random>`), enables the given events in it only (global tracing is
 * never touched), and reads each CPU's `per_cpu/cpuN/trace_pipe_raw` with non-blocking reads of
 * whole sub-buffers, polling when all are empty. Each batch holds the records of one poll, merged
 * across CPUs in time order. The instance is removed by `close()`, when iteration ends or fails,
 * at process exit and on SIGINT/SIGTERM. Needs root.
 */
export function openTracefsStream(options: TracefsStreamOptions): TracefsRecordStream {
  const mount = options.tracefs ?? findTracefs({ mount: true });
  if (!mount) throw new FormatError('not-found', 'tracefs: not mounted and cannot be mounted (root needed)', { section: 'tracefs' });
  const events = options.events.map(parseEventName);
  const suffix = options.instanceSuffix ?? `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  if (!/^[\w.-]+$/.test(suffix)) throw new FormatError('malformed', `tracefs: instance suffix '${suffix}'`, { section: 'tracefs' });
  const instancePath = join(mount.path, 'instances', `probeyard-${suffix}`);
  const fds: number[] = [];
  let removed = false;
  let created = false;

  const cleanup = () => {
    if (removed) return;
    removed = true;
    live.delete(cleanup);
    for (const fd of fds.splice(0)) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    if (created) {
      try {
        writeFileSync(join(instancePath, 'tracing_on'), '0');
      } catch {
        // the instance may be gone already
      }
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
    if (options.bufferSizeKb !== undefined) writeFileSync(join(instancePath, 'buffer_size_kb'), String(options.bufferSizeKb));
    const eventsDir = join(instancePath, 'events');
    const headerPage = parseHeaderPage(readFileSync(join(eventsDir, 'header_page'), 'utf8'));
    parseHeaderEvent(readFileSync(join(eventsDir, 'header_event'), 'utf8'));
    const formats = new Map<number, EventFormat>();
    for (const e of events) {
      const dir = join(eventsDir, e.system, e.name);
      if (!existsSync(join(dir, 'format'))) throw new FormatError('not-found', `tracefs: no event ${e.system}:${e.name}`, { event: `${e.system}:${e.name}` });
      const f = parseEventFormat(readFileSync(join(dir, 'format'), 'utf8'), { system: e.system });
      formats.set(f.id, f);
    }
    for (const e of events) writeFileSync(join(eventsDir, e.system, e.name, 'enable'), '1');
    const cpus = readdirSync(join(instancePath, 'per_cpu'))
      .map((d) => /^cpu(\d+)$/.exec(d)?.[1])
      .filter((d): d is string => d !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    for (const cpu of cpus) {
      fds.push(openSync(join(instancePath, 'per_cpu', `cpu${cpu}`, 'trace_pipe_raw'), constants.O_RDONLY | constants.O_NONBLOCK));
    }
    writeFileSync(join(instancePath, 'tracing_on'), '1');

    const subBuffer = headerPage.subBufferSize;
    const maxPages = options.maxSubBuffersPerPoll ?? 64;
    const pollMs = options.pollIntervalMs ?? 25;
    const stats: RecordStreamStats = { records: 0, lostEvents: 0, lostUnknown: 0, lostByCpu: new Array<number>(Math.max(0, ...cpus) + 1).fill(0) };
    const pageReaders = cpus.map((cpu) => {
      const pr = new PageReader<EventFormat>(headerPage, true);
      pr.record.cpu = cpu;
      pr.record.bufferName = `probeyard-${suffix}`;
      return pr;
    });
    let closed = false;
    let wake: (() => void) | undefined;
    const cmdlinesPath = join(mount.path, 'saved_cmdlines');
    let cmdlines: Map<number, string> | undefined;

    // The commit word's low 32 bits (this host's byte order; the flags sit in bits 30 and 31).
    const commitLow = headerPage.commitOffset + (headerPage.commitSize === 8 && !hostLittleEndian ? 4 : 0);
    /** Whether the last poll stopped at maxPages on some CPU (it is behind: poll again at once). */
    let behind = false;

    /**
     * One poll: up to maxPages sub-buffers per CPU. EAGAIN ends a CPU's turn, and so does a page
     * less than half full: the kernel handed over the page it is writing, so this reader has
     * caught up. Reading on then would only return the events its own reads make (a trace of
     * syscalls feeds on itself); the next poll comes after the interval.
     */
    const poll = (): MergedRecordReader<EventFormat> | undefined => {
      const readers: RecordReader<EventFormat>[] = [];
      let any = false;
      behind = false;
      cpus.forEach((_cpu, i) => {
        const pages: { bytes: Uint8Array; view: DataView; length: number }[] = [];
        for (let n = 0; n < maxPages; n++) {
          const bytes = new Uint8Array(subBuffer);
          let got: number;
          try {
            got = readSync(fds[i]!, bytes, 0, subBuffer, null);
          } catch (e) {
            const code = (e as NodeJS.ErrnoException).code;
            if (code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EINTR') break;
            throw e;
          }
          if (got <= 0) break;
          if (got < headerPage.dataOffset) continue;
          const view = new DataView(bytes.buffer);
          pages.push({ bytes, view, length: got });
          if ((view.getUint32(commitLow, hostLittleEndian) & commitLengthMask) * 2 < headerPage.dataSize) break;
          if (n === maxPages - 1) behind = true;
        }
        if (pages.length > 0) {
          any = true;
          readers.push(new PageListReader(pages, pageReaders[i]!, formats));
        }
      });
      return any ? new MergedRecordReader(readers) : undefined;
    };

    const info: RecordStreamInfo<EventFormat> = {
      kind: 'tracefs',
      cpuCount: cpus.length,
      littleEndian: hostLittleEndian,
      longSize: headerPage.commitSize === 4 ? 4 : 8,
      format: (id) => formats.get(id),
      comm: (pid) => {
        if (pid === 0) return '<idle>';
        if (!cmdlines) {
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
        return cmdlines.get(pid);
      },
    };

    const stream: TracefsRecordStream = {
      info,
      stats,
      instancePath,
      cpus,
      headerPage,
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
              const batch = new CountingBatch(merged, stats);
              batch.reset(Number.MAX_SAFE_INTEGER);
              yield batch;
              if (behind || closed) continue;
            }
            await new Promise<void>((resolve) => {
              wake = resolve;
              setTimeout(resolve, pollMs);
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
