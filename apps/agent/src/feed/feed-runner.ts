// The agent's one feed: the records of the node (a private tracefs instance enabling exactly the
// events the attached targets need) or of a recording (once or in a loop, as fast as it goes or at
// its own pace), each record dispatched by event id to the targets attached to it.
import { type EventFormat, loadZstdWasm, type RecordStream, type TraceRecord, traceDatRecordStream } from '@probeyard/formats';
import { openTracefsStream, type TraceDatFile } from '@probeyard/formats/node';
import type { Dispatcher } from '@probeyard/runtime';
import { sleep } from '../backoff.js';
import { AgentError } from '../errors.js';
import type { FeedOptions } from '../feed-options.js';
import type { Logger } from '../log.js';
import type { FeedSample } from '../metrics/agent-metrics.js';

export interface FeedRunnerOptions {
  feed: FeedOptions;
  /** The recording of a file feed, opened once (its metadata and formats decoded once for every pass). */
  recording?: TraceDatFile;
  dispatcher: Dispatcher;
  log: Logger;
  /** Speed of a `recorded` pace (1: real time; 0.5: half as fast). */
  speed?: number;
  /** buffer_size_kb of the instance, per CPU (default: packages/formats' `defaultBufferSizeKb`). */
  bufferSizeKb?: number;
  /** After every batch (limits, deadlines). */
  onBatch?: () => void;
  /** A recording reached its end (once per pass). */
  onEnd?: (pass: number) => void;
}

const timeMs = (r: TraceRecord) => (r.tsHigh * 4294967296 + r.tsLow) / 1e6;

/** A turn of the event loop (timers and I/O run): a replay never starves the agent's other parts. */
const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

export class FeedRunner {
  private stream: RecordStream<EventFormat> | undefined;
  /** Records read, and events lost per CPU, over every stream of this runner. */
  records = 0;
  private lostBase: number[] = [];
  private lostUnknownBase = 0;
  passes = 0;
  private eventsWanted: string[] = [];
  private eventsOpen: string[] | undefined;
  private changed = false;
  private wake: (() => void) | undefined;
  /** CPUs of the feed (known once a stream is open; the recording's or this machine's). */
  cpuCount = 1;

  constructor(private readonly options: FeedRunnerOptions) {}

  /** The command name of a pid on the feed's node (saved_cmdlines), when known. */
  comm(pid: number): string | undefined {
    return this.stream?.info.comm(pid);
  }

  /** The attached targets' events changed: a live feed enables exactly the new set. */
  eventsChanged(): void {
    this.eventsWanted = this.options.dispatcher.events();
    this.changed = true;
    this.wake?.();
  }

  sample(): FeedSample {
    const lost = new Map<number, number>();
    const now = this.stream?.stats.lostByCpu ?? [];
    const n = Math.max(now.length, this.lostBase.length);
    for (let c = 0; c < n; c++) {
      const v = (this.lostBase[c] ?? 0) + (now[c] ?? 0);
      if (v > 0) lost.set(c, v);
    }
    return { kind: this.options.feed.kind === 'live' ? 'live' : 'replay', records: this.records, lostByCpu: lost, lostUnknown: this.lostUnknownBase + (this.stream?.stats.lostUnknown ?? 0) };
  }

  private retire(stream: RecordStream<EventFormat>): void {
    const byCpu = stream.stats.lostByCpu ?? [];
    for (let c = 0; c < byCpu.length; c++) this.lostBase[c] = (this.lostBase[c] ?? 0) + (byCpu[c] ?? 0);
    this.lostUnknownBase += stream.stats.lostUnknown;
  }

  /** Runs the feed until `signal` aborts (or a recording without --loop ends). */
  async run(signal: AbortSignal): Promise<void> {
    if (this.options.feed.kind === 'live') await this.runLive(signal);
    else await this.runReplay(this.options.feed, signal);
  }

  private async runReplay(feed: Extract<FeedOptions, { kind: 'file' }>, signal: AbortSignal): Promise<void> {
    const { dispatcher } = this.options;
    const paced = feed.pace === 'recorded';
    const speed = this.options.speed ?? 1;
    // The recording's first timestamp: each pass after the first is shifted to begin 1 µs after
    // the previous one ended, so time only moves forward for the programs.
    let firstNs: bigint | undefined;
    do {
      // records that would go to no target are not worth reading: wait for one to attach (a
      // `continue` here would end a replay without --loop before it began: the test of a do-while)
      while (dispatcher.attached().length === 0) {
        await this.untilEventsChange(signal);
        if (signal.aborted) return;
      }
      const recording = this.options.recording;
      if (recording === undefined) throw new AgentError('feed', `feed ${feed.path}: the recording is not open`, { path: feed.path });
      // every pass reads the same decoded file again: no second decode of its formats, no new worker
      await loadZstdWasm();
      const stream: RecordStream<EventFormat> = traceDatRecordStream(recording.reader, paced ? { batchSize: 4096 } : {});
      this.stream = stream;
      this.cpuCount = stream.info.cpuCount;
      let first: number | undefined;
      const started = performance.now();
      try {
        for await (const batch of stream) {
          if (!paced) {
            if (firstNs === undefined) {
              const r = batch.next();
              if (r !== undefined) {
                firstNs = r.timestamp();
                dispatcher.dispatchRecord(r);
                this.records++;
              }
            }
            this.records += dispatcher.dispatch(batch);
          } else {
            for (let r = batch.next(); r !== undefined; r = batch.next()) {
              firstNs ??= r.timestamp();
              const t = timeMs(r);
              first ??= t;
              const wait = started + (t - first) / speed - performance.now();
              // the record stays valid while the batch is not advanced
              if (wait > 1) await sleep(wait, signal);
              if (signal.aborted) break;
              dispatcher.dispatchRecord(r);
              this.records++;
            }
          }
          dispatcher.syncLost(stream.stats);
          this.options.onBatch?.();
          await macrotask();
          if (signal.aborted) break;
        }
      } finally {
        this.retire(stream);
        await stream.close();
        this.stream = undefined;
      }
      if (signal.aborted) return;
      if (feed.loop && firstNs !== undefined) dispatcher.shiftTime(BigInt(dispatcher.traceTimeNs) - firstNs + 1000n);
      this.passes++;
      this.options.onEnd?.(this.passes);
    } while (feed.loop && !signal.aborted);
  }

  private untilEventsChange(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.wake = undefined;
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private async runLive(signal: AbortSignal): Promise<void> {
    const { dispatcher } = this.options;
    while (!signal.aborted) {
      this.changed = false;
      const events = this.eventsWanted;
      if (events.length === 0) {
        // nothing to trace: no instance at all until a target attaches
        await this.untilEventsChange(signal);
        continue;
      }
      let stream: ReturnType<typeof openTracefsStream>;
      try {
        stream = openTracefsStream({
          events,
          ...(this.options.bufferSizeKb !== undefined ? { bufferSizeKb: this.options.bufferSizeKb } : {}),
        });
      } catch (e) {
        throw new AgentError('feed', `feed live: ${(e as Error).message}`, { cause: e });
      }
      this.stream = stream;
      this.cpuCount = stream.info.cpuCount;
      this.eventsOpen = events;
      this.options.log('info', `feed live: tracing ${events.length} events in ${stream.instancePath}`, { events });
      try {
        for await (const batch of stream) {
          this.records += dispatcher.dispatch(batch);
          dispatcher.syncLost(stream.stats);
          this.options.onBatch?.();
          await macrotask();
          if (signal.aborted) break;
          if (this.changed && this.eventsWanted.length === 0) break; // nothing to trace: the instance goes
          if (this.changed && !sameEvents(this.eventsWanted, this.eventsOpen)) {
            // the others' records are untouched: the buffer is never reset
            stream.setEvents(this.eventsWanted);
            this.eventsOpen = this.eventsWanted;
            this.options.log('info', `feed live: now tracing ${this.eventsOpen.length} events`, { events: this.eventsOpen });
          }
          this.changed = false;
        }
      } finally {
        this.retire(stream);
        await stream.close();
        this.stream = undefined;
      }
    }
  }
}

function sameEvents(a: readonly string[], b: readonly string[] | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((e, i) => e === b[i]);
}
