// Running a script over a trace.dat as `probeyard run` does (compile for the recording's own
// formats, loadForProfile, ScriptSession over a Dispatcher), and reading the same recording's
// records independently, so expectations are computed by hand from the records.
import { type KernelProfile, profileFormat } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import { type EventFormat, readFieldBigInt, readFieldString } from '@probeyard/formats';
import { openTraceDatStream } from '@probeyard/formats/node';
import { Dispatcher, drawMaps, encodeMapSnapshot, type JsonValue, loadForProfile, ScriptSession } from '@probeyard/runtime';
import { compileScript } from '../../src/compile.js';
import type { ProviderResolver } from '../../src/probes.js';
import { formatDiagnostics } from '../../src/source-text.js';
import { targetOfProfile } from '../../src/target.js';

const profiles = new Map<string, Promise<KernelProfile>>();
export function recordingProfile(path: string): Promise<KernelProfile> {
  let p = profiles.get(path);
  if (!p) profiles.set(path, (p = readProfile(path)));
  return p;
}

/** What a run printed and left in its maps. */
export interface RecordingRun {
  /** printf text (and print() output), in order. */
  text: string;
  /** The maps as bpftrace prints them at exit. */
  drawn: string;
  /** name → entries [key, value] (key undefined for a keyless map), sorted by key. */
  maps: Map<string, [JsonValue | undefined, JsonValue | undefined][]>;
  status: string;
  records: number;
  instructions: number;
  runs: number;
}

const order = (a: JsonValue | undefined, b: JsonValue | undefined) =>
  typeof a === 'number' && typeof b === 'number' ? a - b : JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0;

/**
 * Compiles `script` for `profile` (default: the recording's own) and runs it over the recording
 * `path` (whose records are relocated to when the profile differs).
 */
export async function runOnRecording(script: string, path: string, options: { compileFor?: KernelProfile; providers?: ProviderResolver } = {}): Promise<RecordingRun> {
  const feedProfile = await recordingProfile(path);
  const r = await compileScript(script, { target: targetOfProfile(options.compileFor ?? feedProfile), name: 'corpus.bt', ...(options.providers ? { providers: options.providers } : {}) });
  if (!r.ok) throw new Error(formatDiagnostics(r.source, r.diagnostics));
  return runSpecOnRecording(r.spec, path);
}

/** Runs a compiled spec over a recording (relocated for its formats). */
export async function runSpecOnRecording(spec: Parameters<typeof loadForProfile>[0], path: string): Promise<RecordingRun> {
  const profile = await recordingProfile(path);
  const stream = openTraceDatStream(path);
  const out = loadForProfile(spec, profile, { cpuCount: Math.max(1, stream.info.cpuCount), environment: { commOf: (pid) => stream.info.comm(pid) } });
  if (!out.ok) {
    await stream.close();
    throw new Error(`${out.status}: ${out.status === 'refused' ? out.reasons.map((x) => x.text).join('; ') : out.fault.message}`);
  }
  const dispatcher = new Dispatcher();
  const target = dispatcher.attach('t', out.loaded);
  let text = '';
  const session = new ScriptSession(out.loaded, { onText: (t) => (text += t) });
  try {
    await session.run(stream, dispatcher);
  } finally {
    await stream.close();
  }
  if (target.faultCount > 0) throw new Error(`faults: ${JSON.stringify(target.lastFault)}`);
  const snapshot = encodeMapSnapshot(out.loaded, { runId: 'corpus', eventsSeen: target.eventsSeen, eventsLost: target.lostEvents });
  const maps = new Map<string, [JsonValue | undefined, JsonValue | undefined][]>();
  for (const m of snapshot.maps) {
    const rows = m.entries.map((e) => {
      const k = e.key;
      return [k !== null && typeof k === 'object' && !Array.isArray(k) && Object.keys(k).length === 0 ? undefined : k, e.value] as [JsonValue | undefined, JsonValue | undefined];
    });
    maps.set(m.name, rows.sort((a, b) => order(a[0], b[0])));
  }
  const c = target.counters;
  return { text, drawn: drawMaps(snapshot.maps), maps, status: out.status, records: dispatcher.records, instructions: c.instructions, runs: c.runs };
}

/** One record read independently of the VM: its event, time, CPU, pid, comm and fields. */
export interface PlainRecord {
  event: string;
  timeNs: bigint;
  cpu: number;
  pid: number;
  comm: string;
  int(field: string): bigint;
  str(field: string): string;
}

/** Every record of a recording, in time order, fields read with packages/formats' readers. */
export async function readRecording(path: string): Promise<PlainRecord[]> {
  const stream = openTraceDatStream(path);
  const out: PlainRecord[] = [];
  try {
    for await (const batch of stream) {
      for (let r = batch.next(); r !== undefined; r = batch.next()) {
        const format = stream.info.format(r.eventId) as EventFormat | undefined;
        if (format === undefined) continue;
        const view = new DataView(r.data().slice().buffer);
        const len = r.recordLength;
        const field = (name: string) => {
          const f = [...format.commonFields, ...format.fields].find((x) => x.name === name);
          if (f === undefined) throw new Error(`${format.name} has no ${name}`);
          return f;
        };
        const pid = Number(readFieldBigInt(view, 0, field('common_pid')));
        out.push({
          event: `${format.system}/${format.name}`,
          timeNs: r.timestamp(),
          cpu: r.cpu,
          pid,
          comm: stream.info.comm(pid) ?? (pid === 0 ? '<idle>' : '<...>'),
          int: (name) => readFieldBigInt(view, 0, field(name)),
          str: (name) => readFieldString(view, 0, len, field(name)),
        });
      }
    }
  } finally {
    await stream.close();
  }
  return out;
}

/** Counts of keys, as sorted [key, count] rows (numbers numerically). */
export function countRows<K extends JsonValue>(keys: Iterable<K>): [K, number][] {
  const m = new Map<string, [K, number]>();
  for (const k of keys) {
    const id = JSON.stringify(k);
    const row = m.get(id);
    if (row) row[1]++;
    else m.set(id, [k, 1]);
  }
  return [...m.values()].sort((a, b) => order(a[0], b[0]));
}

/** bpftrace's log2 slot of a value (0 negative, 1 zero, 2 + floor(log2 v)). */
export function log2Slot(v: bigint): number {
  if (v < 0n) return 0;
  if (v === 0n) return 1;
  return 2 + v.toString(2).length - 1;
}

export { profileFormat };
