import type { EventFormat } from '../event-format/event-format.js';
import { formatRecord, formatRecordRaw } from '../print-fmt/format-record.js';
import { compileRecordWriter } from '../print-fmt/record-writer.js';
import { loadZstdWasm } from '../trace-dat/decompress.js';
import { reportChunks, type ReportOptions } from '../trace-dat/report.js';
import { openTraceDatFile } from './trace-dat-file.js';

/** Where report text goes: resolves when the chunk may be followed by the next (backpressure). */
export type ReportSink = (chunk: string) => void | Promise<void>;

/**
 * Prints a trace.dat the way `trace-cmd report [-R]` does, streaming: chunks of about 64 KiB are
 * handed to `sink` one at a time, so a recording of millions of events never sits in memory.
 * Returns the number of chunks written.
 */
export async function writeTraceDatReport(
  path: string,
  options: Pick<ReportOptions<EventFormat>, 'raw' | 'kernelStateLetters' | 'startRecord'>,
  sink: ReportSink,
): Promise<number> {
  await loadZstdWasm();
  const file = openTraceDatFile(path, { prefetch: true });
  try {
    let chunks = 0;
    for (const chunk of reportChunks<EventFormat>(file.reader, {
      formatRecord: (f, bytes, env) => formatRecord(f, bytes, env),
      formatRecordRaw: (f, bytes, env) => formatRecordRaw(f, bytes, env),
      compileWriter: (f, env) => compileRecordWriter(f, env),
      ...options,
    })) {
      await sink(chunk);
      chunks++;
    }
    return chunks;
  } finally {
    file.close();
  }
}
