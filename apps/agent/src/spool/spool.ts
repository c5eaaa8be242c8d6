// The on-disk spool: every output batch the registry has not acknowledged, across agent and
// registry restarts.
//
// Batches are appended to segment files (`seg-<n>.log`) in the state folder and fsynced before
// `append` returns: only then does a batch count as taken. Each record is
//
//   magic u32 'PYS1' | body length u32 | crc32(body) u32 | body
//   body = meta length u16 | meta JSON {t: target, s: sequence, k: kind, es, el} | payload JSON
//
// so the index is rebuilt at start from the small meta alone, and a record torn by a crash fails
// its length or CRC and is cut off (it was never fsynced, so never counted as taken). The
// sequence of a batch is per target and assigned here; `state.json` keeps the head (the oldest
// unacknowledged record) and each target's next sequence, so that nothing is uploaded twice under
// two sequences and no sequence is reused for other content.
//
// The spool is capped (default 256 MiB of unacknowledged batches): past the cap the oldest are
// dropped and counted (`dropped`, per target), never silently. A batch the registry refuses for
// good (not a transient error) is also dropped and counted (`rejected`).
import { closeSync, constants, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { AgentError } from '../errors.js';
import type { Logger } from '../log.js';
import { fsyncDir, writeFileAtomic } from '../state/state-dir.js';

export const outputKinds = ['map_snapshot', 'events', 'counters'] as const;
export type OutputKind = (typeof outputKinds)[number];

/** A batch as a producer hands it in (the spool gives it its sequence). */
export interface NewBatch {
  targetId: string;
  kind: OutputKind;
  payload: unknown;
  eventsSeen: number;
  eventsLost: number;
}

/** A batch as the registry's `agent.uploadOutputs` takes it. */
export interface SpooledBatch extends NewBatch {
  sequence: number;
}

/** One record in the index (oldest first). */
export interface SpoolEntry {
  /** Position in the spool's history, increasing (ack up to an entry by its `no`). */
  no: number;
  segment: number;
  byteOffset: number;
  /** Bytes of the whole record (header and body). */
  size: number;
  targetId: string;
  sequence: number;
  kind: OutputKind;
}

export interface SpoolOptions {
  /** Bytes of unacknowledged batches kept at most (default 256 MiB). */
  capBytes?: number;
  /** A new segment file is started past this size (default min(8 MiB, cap / 8)). */
  segmentBytes?: number;
  /**
   * fsync each append (default true: a batch counts as taken once it is on disk). Only a
   * simulator running a thousand agents' spools on one thread turns it off (bench/fleet-agents.ts):
   * there a thousand synchronous fsyncs every 10 s would measure its own disk, not the registry.
   */
  durable?: boolean;
  log?: Logger;
}

interface SpoolState {
  v: 1;
  /** The oldest record not yet acknowledged or dropped. */
  head: { segment: number; byteOffset: number };
  /** Next sequence per target. */
  sequences: Record<string, number>;
  /** Batches dropped past the cap, in all and per target. */
  dropped: { total: number; byTarget: Record<string, number> };
  /** Batches the registry refused for good, in all and per target. */
  rejected: { total: number; byTarget: Record<string, number> };
}

const magic = 0x31535950; // 'PYS1' little-endian
const headerBytes = 12;
export const defaultSpoolCapBytes = 256 * 1024 * 1024;

const segmentName = (n: number) => `seg-${String(n).padStart(12, '0')}.log`;

export class Spool {
  readonly dir: string;
  readonly capBytes: number;
  readonly segmentBytes: number;
  private readonly log: Logger | undefined;
  private readonly durable: boolean;
  private state: SpoolState;
  private entries: SpoolEntry[] = [];
  /** Index of the first live entry in `entries` (the array is compacted now and then). */
  private first = 0;
  private nextNo = 0;
  private pendingBytes = 0;
  private readFds = new Map<number, number>();
  private writeFd: number | undefined;
  private writeSegment = 0;
  private writeSize = 0;
  /** Entries handed to an upload and not yet acknowledged: the cap does not drop them. */
  private inflightUpTo = -1;
  /** Batches appended since the spool was opened. */
  appended = 0;
  /** Batches acknowledged since the spool was opened. */
  acknowledged = 0;

  private constructor(dir: string, options: SpoolOptions, state: SpoolState) {
    this.dir = dir;
    this.capBytes = options.capBytes ?? defaultSpoolCapBytes;
    this.segmentBytes = options.segmentBytes ?? Math.max(64 * 1024, Math.min(8 * 1024 * 1024, Math.floor(this.capBytes / 8)));
    this.log = options.log;
    this.durable = options.durable ?? true;
    this.state = state;
  }

  /** Opens the spool in `dir` (made if missing), rebuilding the index from the segment files. */
  static open(dir: string, options: SpoolOptions = {}): Spool {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    let state: SpoolState = { v: 1, head: { segment: 0, byteOffset: 0 }, sequences: {}, dropped: { total: 0, byTarget: {} }, rejected: { total: 0, byTarget: {} } };
    const statePath = join(dir, 'state.json');
    try {
      if (existsSync(statePath)) {
        const read = JSON.parse(readFileSync(statePath, 'utf8')) as Partial<SpoolState>;
        state = {
          v: 1,
          head: read.head ?? state.head,
          sequences: read.sequences ?? {},
          dropped: read.dropped ?? state.dropped,
          rejected: read.rejected ?? state.rejected,
        };
      }
    } catch (e) {
      throw new AgentError('spool', `spool ${statePath}: ${(e as Error).message}`, { path: statePath, cause: e });
    }
    const spool = new Spool(dir, options, state);
    spool.recover();
    return spool;
  }

  private recover(): void {
    const segments = readdirSync(this.dir)
      .map((f) => /^seg-(\d{12})\.log$/.exec(f)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const lastSeq = new Map<string, number>();
    for (const seg of segments) {
      const path = join(this.dir, segmentName(seg));
      if (seg < this.state.head.segment) {
        rmSync(path, { force: true }); // fully acknowledged before a crash
        continue;
      }
      const fd = openSync(path, constants.O_RDWR);
      const size = fstatSync(fd).size;
      let at = seg === this.state.head.segment ? this.state.head.byteOffset : 0;
      const header = Buffer.alloc(headerBytes);
      let torn: string | undefined;
      while (at < size) {
        if (size - at < headerBytes) {
          torn = `${size - at} bytes of a record header`;
          break;
        }
        readSync(fd, header, 0, headerBytes, at);
        const length = header.readUInt32LE(4);
        if (header.readUInt32LE(0) !== magic || length < 2 || at + headerBytes + length > size) {
          torn = `a record of ${length} bytes at ${at} runs past the end (${size})`;
          break;
        }
        const body = Buffer.alloc(length);
        readSync(fd, body, 0, length, at + headerBytes);
        if (crc32(body) !== header.readUInt32LE(8)) {
          torn = `the record at ${at} fails its CRC`;
          break;
        }
        const meta = decodeMeta(body);
        this.entries.push({ no: this.nextNo++, segment: seg, byteOffset: at, size: headerBytes + length, targetId: meta.t, sequence: meta.s, kind: meta.k });
        this.pendingBytes += headerBytes + length;
        lastSeq.set(meta.t, Math.max(lastSeq.get(meta.t) ?? -1, meta.s));
        at += headerBytes + length;
      }
      if (torn !== undefined) {
        // Never fsynced (a crash during append): never taken, so cut off.
        this.log?.('warn', `spool: ${segmentName(seg)}: cut at ${at}: ${torn}`, { segment: seg });
        ftruncateSync(fd, at);
        fsyncSync(fd);
      }
      this.readFds.set(seg, fd);
      this.writeSegment = Math.max(this.writeSegment, seg);
    }
    for (const [t, s] of lastSeq) this.state.sequences[t] = Math.max(this.state.sequences[t] ?? 0, s + 1);
    // Appends go to a new segment: a recovered one is only read.
    this.writeSegment = segments.length > 0 ? this.writeSegment + 1 : Math.max(this.state.head.segment, 1);
    this.writeSize = 0;
    if (this.entries.length === 0) this.state.head = { segment: this.writeSegment, byteOffset: 0 };
  }

  /** Batches waiting for the registry. */
  get batches(): number {
    return this.entries.length - this.first;
  }

  /** Bytes of batches waiting for the registry. */
  get bytes(): number {
    return this.pendingBytes;
  }

  get droppedTotal(): number {
    return this.state.dropped.total;
  }

  get rejectedTotal(): number {
    return this.state.rejected.total;
  }

  /** Batches of `targetId` dropped past the cap or refused by the registry (for its counters). */
  lostBatchesOf(targetId: string): number {
    return (this.state.dropped.byTarget[targetId] ?? 0) + (this.state.rejected.byTarget[targetId] ?? 0);
  }

  /** The sequence the next batch of `targetId` gets. */
  nextSequence(targetId: string): number {
    return this.state.sequences[targetId] ?? 0;
  }

  /**
   * Appends batches, each with the next sequence of its target, and fsyncs: when this returns
   * they are taken. Throws AgentError `spool` when the disk refuses (nothing of the call is kept).
   */
  append(batches: readonly NewBatch[]): SpooledBatch[] {
    if (batches.length === 0) return [];
    if (this.writeFd === undefined || this.writeSize >= this.segmentBytes) this.rotate();
    const fd = this.writeFd!;
    const out: SpooledBatch[] = [];
    const records: Buffer[] = [];
    const sizes: number[] = [];
    const next = new Map<string, number>();
    for (const b of batches) {
      const sequence = next.get(b.targetId) ?? this.nextSequence(b.targetId);
      next.set(b.targetId, sequence + 1);
      const meta = Buffer.from(JSON.stringify({ t: b.targetId, s: sequence, k: b.kind, es: b.eventsSeen, el: b.eventsLost }));
      const payload = Buffer.from(JSON.stringify(b.payload));
      const body = Buffer.allocUnsafe(2 + meta.length + payload.length);
      body.writeUInt16LE(meta.length, 0);
      meta.copy(body, 2);
      payload.copy(body, 2 + meta.length);
      const header = Buffer.allocUnsafe(headerBytes);
      header.writeUInt32LE(magic, 0);
      header.writeUInt32LE(body.length, 4);
      header.writeUInt32LE(crc32(body), 8);
      records.push(header, body);
      sizes.push(headerBytes + body.length);
      out.push({ ...b, sequence });
    }
    const all = Buffer.concat(records);
    const start = this.writeSize;
    try {
      let at = 0;
      while (at < all.length) at += writeSync(fd, all, at, all.length - at, start + at);
      if (this.durable) fsyncSync(fd);
    } catch (e) {
      try {
        ftruncateSync(fd, start);
      } catch {
        // the next open cuts a torn tail anyway
      }
      throw new AgentError('spool', `spool: append of ${batches.length} batches (${all.length} bytes): ${(e as Error).message}`, { path: this.dir, cause: e });
    }
    let offset = start;
    for (let i = 0; i < out.length; i++) {
      const b = out[i]!;
      this.entries.push({ no: this.nextNo++, segment: this.writeSegment, byteOffset: offset, size: sizes[i]!, targetId: b.targetId, sequence: b.sequence, kind: b.kind });
      offset += sizes[i]!;
      this.pendingBytes += sizes[i]!;
    }
    this.writeSize = offset;
    for (const [t, s] of next) this.state.sequences[t] = s;
    this.appended += out.length;
    this.enforceCap();
    return out;
  }

  private rotate(): void {
    if (this.writeFd !== undefined) {
      this.writeSegment++;
    }
    const path = join(this.dir, segmentName(this.writeSegment));
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_TRUNC, 0o600);
    fsyncDir(this.dir);
    this.writeFd = fd;
    this.writeSize = 0;
    this.readFds.set(this.writeSegment, fd);
  }

  /** Drops the oldest batches (not those being uploaded) while over the cap, counting them. */
  private enforceCap(): void {
    if (this.pendingBytes <= this.capBytes) return;
    let dropped = 0;
    while (this.pendingBytes > this.capBytes && this.first < this.entries.length) {
      const e = this.entries[this.first]!;
      if (e.no <= this.inflightUpTo) break;
      this.first++;
      this.pendingBytes -= e.size;
      this.state.dropped.total++;
      this.state.dropped.byTarget[e.targetId] = (this.state.dropped.byTarget[e.targetId] ?? 0) + 1;
      dropped++;
    }
    if (dropped > 0) {
      this.log?.('warn', `spool: over its cap of ${this.capBytes} bytes: dropped the ${dropped} oldest batches (${this.state.dropped.total} in all)`, { dropped });
      this.advanceHead();
    }
  }

  /**
   * The oldest waiting batches, at most `maxBatches` and (but for the first) `maxBytes` of
   * records, read back from disk. They stay in the spool until {@link ack}.
   */
  peek(maxBatches: number, maxBytes: number): { entries: SpoolEntry[]; batches: SpooledBatch[] } {
    const entries: SpoolEntry[] = [];
    const batches: SpooledBatch[] = [];
    let bytes = 0;
    for (let i = this.first; i < this.entries.length && entries.length < maxBatches; i++) {
      const e = this.entries[i]!;
      if (entries.length > 0 && bytes + e.size > maxBytes) break;
      bytes += e.size;
      entries.push(e);
      batches.push(this.read(e));
    }
    if (entries.length > 0) this.inflightUpTo = Math.max(this.inflightUpTo, entries.at(-1)!.no);
    return { entries, batches };
  }

  /** Reads one record back (for the upload, or a test). */
  read(e: SpoolEntry): SpooledBatch {
    let fd = this.readFds.get(e.segment);
    if (fd === undefined) {
      fd = openSync(join(this.dir, segmentName(e.segment)), constants.O_RDONLY);
      this.readFds.set(e.segment, fd);
    }
    const body = Buffer.alloc(e.size - headerBytes);
    readSync(fd, body, 0, body.length, e.byteOffset + headerBytes);
    const meta = decodeMeta(body);
    const metaLength = body.readUInt16LE(0);
    return {
      targetId: meta.t,
      sequence: meta.s,
      kind: meta.k,
      eventsSeen: meta.es,
      eventsLost: meta.el,
      payload: JSON.parse(body.toString('utf8', 2 + metaLength)),
    };
  }

  /** The upload of everything up to entry `no` ended (acknowledged, or given up): no longer in flight. */
  settle(): void {
    this.inflightUpTo = -1;
    this.enforceCap();
  }

  /** The registry has the batches up to entry `no`: they leave the spool. */
  ack(no: number): void {
    let n = 0;
    while (this.first < this.entries.length && this.entries[this.first]!.no <= no) {
      this.pendingBytes -= this.entries[this.first]!.size;
      this.first++;
      n++;
    }
    this.acknowledged += n;
    if (n > 0) this.advanceHead();
  }

  /** The registry refused entry `no` for good (it is the oldest): it leaves the spool, counted. */
  reject(no: number): void {
    const e = this.entries[this.first];
    if (!e || e.no !== no) return;
    this.first++;
    this.pendingBytes -= e.size;
    this.state.rejected.total++;
    this.state.rejected.byTarget[e.targetId] = (this.state.rejected.byTarget[e.targetId] ?? 0) + 1;
    this.advanceHead();
  }

  /** Persists the head and sequences; deletes segments wholly behind the head. */
  private advanceHead(): void {
    if (this.first > 1024 && this.first * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.first);
      this.first = 0;
    }
    const head = this.entries[this.first];
    this.state.head = head ? { segment: head.segment, byteOffset: head.byteOffset } : { segment: this.writeSegment, byteOffset: this.writeSize };
    if (this.durable) writeFileAtomic(join(this.dir, 'state.json'), JSON.stringify(this.state), 0o600);
    else writeFileSync(join(this.dir, 'state.json'), JSON.stringify(this.state), { mode: 0o600 });
    for (const [seg, fd] of [...this.readFds]) {
      if (seg >= this.state.head.segment) continue;
      closeSync(fd);
      this.readFds.delete(seg);
      rmSync(join(this.dir, segmentName(seg)), { force: true });
    }
  }

  close(): void {
    for (const fd of this.readFds.values()) closeSync(fd);
    this.readFds.clear();
    this.writeFd = undefined;
  }
}

function decodeMeta(body: Buffer): { t: string; s: number; k: OutputKind; es: number; el: number } {
  const metaLength = body.readUInt16LE(0);
  return JSON.parse(body.toString('utf8', 2, 2 + metaLength));
}

