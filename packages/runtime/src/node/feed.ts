import { type KernelProfile, profileFormat } from '@probeyard/compat';
import { readProfile } from '@probeyard/compat/node';
import type { EventFormat, RecordStream, TraceDatStreamOptions } from '@probeyard/formats';
import { openTraceDatStream, openTracefsStream, removeStaleInstances, type TracefsRecordStream, type TracefsStreamOptions } from '@probeyard/formats/node';

/** A trace feed and the kernel profile its records are laid out by. */
export interface Feed {
  kind: 'live' | 'trace-dat';
  stream: RecordStream<EventFormat>;
  /** The live stream (events can be enabled and disabled while it runs); undefined for a replay. */
  live: TracefsRecordStream | undefined;
  /** The feed's kernel: this machine's tracefs (complete) or the recording's formats (partial). */
  profile: KernelProfile;
}

/** Options of {@link openFeed}. */
export interface OpenFeedOptions {
  /** Live: events to enable at once (`system/event`; those the profile lacks are left out). */
  events?: readonly string[];
  /** Live: options of the tracefs stream (buffer sizes, polling). */
  live?: Omit<TracefsStreamOptions, 'events'>;
  /** Replay: options of the trace.dat stream (batch size). */
  replay?: TraceDatStreamOptions;
}

/**
 * Opens a feed: `live` (this machine's tracefs, in a private instance, after removing the
 * instances of dead processes; root) or the path of a trace.dat, with its kernel profile. Errors
 * are packages/compat's (`CompatError`, reading the profile) or packages/formats' (`FormatError`,
 * opening the stream).
 */
export async function openFeed(source: string, options: OpenFeedOptions = {}): Promise<Feed> {
  const profile = await readProfile(source);
  if (source === 'live') {
    removeStaleInstances();
    const events = [...new Set(options.events ?? [])].filter((e) => profileFormat(profile, e) !== undefined);
    const live = openTracefsStream({ ...options.live, events });
    return { kind: 'live', stream: live, live, profile };
  }
  return { kind: 'trace-dat', stream: openTraceDatStream(source, options.replay), live: undefined, profile };
}
