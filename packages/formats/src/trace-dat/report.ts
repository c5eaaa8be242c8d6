import { decodeCString } from '../event-format/field-read.js';
import type { RecordWriter } from '../print-fmt/record-writer.js';
import { encodeText, TextWriter } from '../print-fmt/text-writer.js';
import type { RecordEventFormat, TraceRecord } from '../ring-buffer/trace-record.js';
import { KallsymsTable, parsePrintkFormats } from './kallsyms.js';
import type { RecordReader } from './merge.js';
import type { TraceDatReader } from './trace-dat-reader.js';

/** What record renderers need to know about the traced machine (the event-format `RenderEnv`). */
export interface ReportRenderEnv {
  littleEndian?: boolean;
  longSize?: 4 | 8;
  lookupSymbol?(address: bigint): { name: string; offset: number } | undefined;
  lookupPrintkFormat?(address: bigint): string | undefined;
  /** `trace-cmd`: trace-cmd's event handlers where it has one; `print-fmt`: the kernel's print fmt only. */
  handlers?: 'trace-cmd' | 'print-fmt';
}

/** A format as the report needs it: name, id, and where `common_pid` is. */
export interface ReportEventFormat extends RecordEventFormat {
  commonFields?: readonly { name: string; byteOffset: number; size: number }[];
  /** The event's own fields (sched_switch/sched_wakeup: where the comm and pid to remember are). */
  fields?: readonly { name: string; byteOffset: number; size: number; dynamic?: unknown; array?: unknown }[];
}

/**
 * Renders the text of one record after `event_name: `, as trace-cmd report prints it (the
 * event-format package's `formatRecord` / `formatRecordRaw`). `bytes` starts at `common_type`.
 */
export type RecordTextFormatter<F> = (format: F, bytes: Uint8Array, env: ReportRenderEnv) => string;

export interface ReportOptions<F> {
  /** The normal rendering (print fmt and trace-cmd's plugins). */
  formatRecord: RecordTextFormatter<F>;
  /** `report -R`: raw field values. */
  formatRecordRaw: RecordTextFormatter<F>;
  /**
   * Compiles, once per event, a writer of `formatRecord`'s text straight into the output bytes
   * (the event-format package's `compileRecordWriter`); undefined, or a format it returns
   * undefined for, renders through `formatRecord`. Not used for `-R`.
   */
  compileWriter?: (format: F, env: ReportRenderEnv) => RecordWriter | undefined;
  /** Print raw fields (`-R`). */
  raw?: boolean;
  /** Size of each yielded chunk, in UTF-8 bytes of text (default 64 KiB; a chunk ends with a line). */
  chunkChars?: number;
  /**
   * sched_switch's `prev_state` letters from the kernel's print fmt (default true). trace-cmd 3.1.6
   * maps them with a fixed table (`SDTtZXxW`) that disagrees with 6.x kernels: 0x80 is `I`
   * (TASK_REPORT_IDLE) not `W`, 0x10/0x20 are `X`/`Z` not `Z`/`X`, and 0x100 (preempted) is `R+`.
   * False prints trace-cmd's letters.
   */
  kernelStateLetters?: boolean;
  /**
   * Index of the first record to print (default 0): earlier records are decoded but not rendered,
   * and the `cpus=` header is left out when it is not 0 (paging through a large recording).
   */
  startRecord?: number;
}

const switchStateRe = /^(.*?\[-?\d+\] )(\S+)( ==> )/;
const kernelStateRe = /prev_state=(\S*) ==> /;

/**
 * The sched_switch text of trace-cmd's handler with the state letters the kernel's own print fmt
 * gives for the same record (unchanged when either text is not in the expected shape).
 */
function withKernelState(handlerText: string, printFmtText: string): string {
  const k = kernelStateRe.exec(printFmtText);
  const m = switchStateRe.exec(handlerText);
  if (!k || !m || m[2] === k[1]) return handlerText;
  return `${m[1]}${k[1]}${m[3]}${handlerText.slice(m[0].length)}`;
}

/** The `ts` column of trace-cmd report: µs rounded to nearest, `%5llu.%06llu` (`%12llu` below 1 s). */
export function formatReportTime(r: TraceRecord): string {
  let usHigh: number;
  let usLow: number;
  if (r.isTimestampExact) {
    const us = Math.floor((r.timestampNs + 500) / 1000);
    usHigh = Math.floor(us / 1e6);
    usLow = us - usHigh * 1e6;
    if (us <= 1e6) return String(us).padStart(12);
  } else {
    const us = (r.timestamp() + 500n) / 1000n;
    if (us <= 1000000n) return us.toString().padStart(12);
    usHigh = Number(us / 1000000n);
    usLow = Number(us % 1000000n);
  }
  return `${String(usHigh).padStart(5)}.${String(usLow).padStart(6, '0')}`;
}

/** The environment of a trace.dat's machine: byte order, kernel long size, kallsyms, printk formats. */
export function traceDatRenderEnv(dat: TraceDatReader<RecordEventFormat>['dat']): ReportRenderEnv {
  let syms: KallsymsTable | undefined;
  let printk: Map<bigint, string> | undefined;
  const symbolCache = new Map<bigint, { name: string; offset: number } | undefined>();
  return {
    littleEndian: dat.littleEndian,
    longSize: dat.headerPage.commitSize === 4 ? 4 : 8,
    lookupSymbol(address) {
      // Traces repeat the same few function pointers: remember the last answers.
      const hit = symbolCache.get(address);
      if (hit !== undefined || symbolCache.has(address)) return hit;
      syms ??= KallsymsTable.parse(dat.kallsymsText);
      const found = syms.lookup(address);
      if (symbolCache.size >= 4096) symbolCache.clear();
      symbolCache.set(address, found);
      return found;
    },
    lookupPrintkFormat(address) {
      printk ??= parsePrintkFormats(dat.printkText);
      return printk.get(address);
    },
  };
}

/**
 * Yields the output of `trace-cmd report [-R]` for a trace.dat in chunks of text: the `cpus=N`
 * header, then one line per record in time order (`comm-pid [cpu] ts: event: info`, prefixed with
 * `instance: ` for instance buffers), with trace-cmd's `CPU:N [M EVENTS DROPPED]` lines where the
 * kernel lost events. Nothing but the current chunk is held in memory.
 */
export function* reportChunks<F extends ReportEventFormat>(reader: TraceDatReader<F>, options: ReportOptions<F>): Generator<string> {
  const dat = reader.dat;
  const env = traceDatRenderEnv(dat);
  const kernelEnv: ReportRenderEnv = { ...env, handlers: 'print-fmt' };
  const kernelStates = options.kernelStateLetters !== false;
  const chunkChars = options.chunkChars ?? 65536;
  const render = options.raw ? options.formatRecordRaw : options.formatRecord;
  const raw = options.raw === true;
  const compileWriter = raw ? undefined : options.compileWriter;
  const startRecord = options.startRecord ?? 0;
  // The text is written as bytes into one buffer and taken out as a string per chunk.
  const out = new TextWriter(chunkChars + 4096);
  if (startRecord === 0) out.text(`cpus=${dat.cpuCount}\n`);
  let index = 0;
  const records: RecordReader<F> = reader.records();
  const cpuText: Uint8Array[] = [];
  const prefixText: Uint8Array[] = [];
  const commText = new Map<number, Uint8Array>();
  // Per event id: the padded `name: ` column, where common_pid is, and the compiled writer.
  const eventText: (EventColumns | undefined)[] = [];
  const le = dat.littleEndian;
  // Comms trace-cmd's sched plugin learns from the records (next_comm of sched_switch, comm of
  // sched_wakeup) for pids that saved_cmdlines lacks: later lines of those pids show the comm.
  const learned = new Map<number, string>();
  const learnComm = (r: TraceRecord<F>, learn: NonNullable<EventColumns['learnComm']>): void => {
    if (r.recordLength < learn.end) return;
    const pid = r.view.getInt32(r.recordOffset + learn.pidOffset, le);
    if (dat.cmdlines.has(pid) || learned.has(pid)) return;
    learned.set(pid, decodeCString(r.bytes, r.recordOffset + learn.commOffset, learn.commSize));
    commText.delete(pid);
  };
  for (let r = records.next(); r; r = records.next()) {
    const f = r.format;
    let ev = eventText[r.eventId];
    if (ev === undefined) {
      const pidField = f?.commonFields?.find((c) => c.name === 'common_pid');
      const isSwitch = f?.name === 'sched_switch' && f.system === 'sched';
      ev = {
        name: encodeText(f ? `${f.name}:`.padEnd(21) : `[UNKNOWN EVENT ${r.eventId}]`),
        pidOffset: pidField?.byteOffset ?? 4,
        // sched_switch gets its state letters patched below: always through formatRecord.
        writer: f && compileWriter && !(isSwitch && kernelStates) ? compileWriter(f, env) : undefined,
        learnComm: raw || !f ? undefined : commToLearn(f),
      };
      if (r.eventId >= 0) eventText[r.eventId] = ev;
    }
    // trace-cmd learns while it prints the record's text: after this line's own comm column.
    const learn = ev.learnComm;
    if (index++ < startRecord) {
      if (learn !== undefined) learnComm(r, learn);
      continue;
    }
    if (r.missedEvents !== 0) {
      // trace-cmd prints the instance prefix, the lost-events line, then the record without prefix.
      const prefix = r.bufferName === '' ? '' : `${r.bufferName}: `;
      out.text(r.missedEvents > 0 ? `${prefix}CPU:${r.cpu} [${r.missedEvents} EVENTS DROPPED]\n` : `${prefix}CPU:${r.cpu} [EVENTS DROPPED]\n`);
    } else if (r.bufferName !== '') {
      out.bytes((prefixText[r.bufferIndex] ??= encodeText(`${r.bufferName}: `)));
    }
    const pidAt = r.recordOffset + ev.pidOffset;
    const pid = pidAt + 4 <= r.recordOffset + r.recordLength ? r.view.getInt32(pidAt, le) : -1;
    let comm = commText.get(pid);
    if (comm === undefined) {
      const name = pid === 0 ? '<idle>' : (dat.cmdlines.get(pid) ?? learned.get(pid) ?? '<...>');
      comm = encodeText(`${name.padStart(16)}-${String(pid).padEnd(5)} [`);
      commText.set(pid, comm);
    }
    out.bytes(comm);
    out.bytes((cpuText[r.cpu] ??= encodeText(`${String(r.cpu).padStart(3, '0')}] `)));
    // The time column: µs rounded to nearest, `%5llu.%06llu` (`%12llu` up to 1 s).
    const us = r.isTimestampExact ? Math.floor((r.timestampNs + 500) / 1000) : -1;
    if (us > 1e6) {
      const seconds = Math.floor(us / 1e6);
      if (seconds < 10000) out.repeat(32, seconds < 10 ? 4 : seconds < 100 ? 3 : seconds < 1000 ? 2 : 1);
      out.decimal(seconds);
      out.byte(46);
      out.decimalZeroPadded(us - seconds * 1e6, 6);
    } else {
      out.text(formatReportTime(r));
    }
    out.byte(58);
    out.byte(32);
    out.bytes(ev.name);
    out.byte(32);
    if (f) {
      const writer = ev.writer;
      const mark = out.length;
      if (writer === undefined || !writer(r.view, r.recordOffset, r.recordLength, out)) {
        out.truncate(mark);
        const bytes = r.bytes.subarray(r.recordOffset, r.recordOffset + r.recordLength);
        let info = render(f, bytes, env);
        if (raw && !info.startsWith(' ')) info = ` ${info}`;
        else if (!raw && kernelStates && f.name === 'sched_switch' && f.system === 'sched') {
          info = withKernelState(info, render(f, bytes, kernelEnv));
        }
        out.text(info);
      }
    }
    out.byte(10);
    if (learn !== undefined) learnComm(r, learn);
    if (out.length >= chunkChars) yield out.take();
  }
  if (out.length > 0) yield out.take();
}

/** What the report prints for every record of one event, computed on its first record. */
interface EventColumns {
  /** `name:` padded to 21 columns, as UTF-8. */
  name: Uint8Array;
  /** Offset of common_pid in the record. */
  pidOffset: number;
  writer: RecordWriter | undefined;
  /** Where a comm and its pid are that trace-cmd's sched plugin remembers. */
  learnComm: { pidOffset: number; commOffset: number; commSize: number; end: number } | undefined;
}

/**
 * trace-cmd's sched_switch and sched_wakeup handlers register the comm they print
 * (`tep_register_comm`, which never overrides a known pid): next_comm/next_pid and comm/pid.
 */
function commToLearn(f: ReportEventFormat): EventColumns['learnComm'] {
  if (f.system !== 'sched') return undefined;
  const names = f.name === 'sched_switch' ? ['next_comm', 'next_pid'] : f.name === 'sched_wakeup' || f.name === 'sched_wakeup_new' ? ['comm', 'pid'] : undefined;
  if (!names) return undefined;
  const comm = f.fields?.find((x) => x.name === names[0]);
  const pid = f.fields?.find((x) => x.name === names[1]);
  if (!comm || !pid || pid.size !== 4 || comm.dynamic !== undefined || comm.array === undefined) return undefined;
  return { pidOffset: pid.byteOffset, commOffset: comm.byteOffset, commSize: comm.size, end: Math.max(pid.byteOffset + 4, comm.byteOffset + comm.size) };
}
