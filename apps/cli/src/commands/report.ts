import { isFormatError } from '@probeyard/formats';
import { writeTraceDatReport } from '@probeyard/formats/node';
import type { Command } from '../command.js';
import { CliError, ExitCode, processIo } from '../io.js';

const help = `usage: probeyard report FILE [-R]

Prints a trace-cmd recording (trace.dat, file version 6 or 7, zstd/zlib compressed or not) the
way \`trace-cmd report\` does: a \`cpus=N\` line, then one line per event in time order,
\`comm-pid [cpu] seconds.micros: event: text\`, with \`CPU:N [M EVENTS DROPPED]\` where the kernel
lost events and an \`instance: \` prefix for events of a tracefs instance buffer.

One difference on purpose: sched_switch's prev_state letters come from the kernel's own print fmt
(6.18: I = idle, Z = zombie, R+ = preempted), where trace-cmd 3.1.6 uses a fixed table (W, X, R).

options:
  -R, --raw   print every field as name=value instead of the event's text
`;

/** Writes to process.stdout and waits for it to drain (a slow pipe never fills memory). */
async function writeStdout(chunk: string): Promise<void> {
  if (process.stdout.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const onDrain = () => {
      process.stdout.off('error', onError);
      resolve();
    };
    const onError = (e: Error) => {
      process.stdout.off('drain', onDrain);
      reject(e);
    };
    process.stdout.once('drain', onDrain);
    process.stdout.once('error', onError);
  });
}

export const reportCommand: Command = {
  name: 'report',
  summary: 'print a trace.dat recording like trace-cmd report',
  help,
  async run(args, io) {
    let raw = false;
    const files: string[] = [];
    for (const a of args) {
      if (a === '-R' || a === '--raw') raw = true;
      else if (a.startsWith('-') && a !== '-') throw new CliError(`unknown option '${a}'`);
      else files.push(a);
    }
    if (files.length !== 1) throw new CliError('expected one trace.dat file');
    const sink = io.stdout === processIo.stdout ? writeStdout : (chunk: string) => io.stdout(chunk);
    try {
      await writeTraceDatReport(files[0]!, { raw }, sink);
    } catch (e) {
      if (isFormatError(e)) {
        const where = e.byteOffset === undefined ? '' : ` (byte ${e.byteOffset})`;
        throw new CliError(`${files[0]}: ${e.code}: ${e.message}${where}`, ExitCode.usage);
      }
      if ((e as { code?: unknown }).code === 'EPIPE') return ExitCode.ok;
      throw e;
    }
    return ExitCode.ok;
  },
};
