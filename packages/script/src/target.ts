import { type KernelProfile, profileFormat } from '@probeyard/compat';
import type { EventFormat } from '@probeyard/formats';

/**
 * The kernel a script is compiled for: which tracepoint events exist (to expand wildcards and say
 * what is missing) and their formats (the types and build-time layout of `args.FIELD`). The
 * compiled program still reads every field by name and relocates to other kernels.
 */
export interface ScriptTarget {
  /** Every `system/event` of the kernel, sorted; undefined when unknown (then wildcards cannot expand). */
  readonly events: readonly string[] | undefined;
  /** Whether the kernel has the event; undefined when the list of events is unknown. */
  hasEvent(system: string, event: string): boolean | undefined;
  /** The format of one event; undefined when the kernel has no such event (or it is unknown). */
  format(system: string, event: string): EventFormat | undefined;
  /** Where the formats came from, for messages (`linux 6.18.44`, `the feed's formats`). */
  readonly description: string;
}

/** A target of a list of formats (a trace.dat's, an events tree's, the ones an artifact carries). */
export function targetOfFormats(formats: readonly EventFormat[], description = 'the given formats'): ScriptTarget {
  const byKey = new Map<string, EventFormat>();
  for (const f of formats) byKey.set(`${f.system}/${f.name}`, f);
  return targetOf([...byKey.keys()], (system, event) => byKey.get(`${system}/${event}`), description);
}

/** A target of a list of events and a lookup of formats (an event may lack a format). */
export function targetOf(events: Iterable<string>, format: (system: string, event: string) => EventFormat | undefined, description: string): ScriptTarget {
  const set = new Set(events);
  return { events: [...set].sort(), hasEvent: (system, event) => set.has(`${system}/${event}`), format, description };
}

/** A target of a kernel profile (packages/compat). */
export function targetOfProfile(profile: KernelProfile): ScriptTarget {
  const description = profile.release === '' ? `kernel profile ${profile.hash.slice(0, 12)}` : `kernel ${profile.release}`;
  return targetOf(profile.events.keys(), (system, event) => profileFormat(profile, `${system}/${event}`), description);
}

/** No kernel at all: scripts that read no `args` and use no wildcards still compile. */
export const noTarget: ScriptTarget = { events: undefined, hasEvent: () => undefined, format: () => undefined, description: 'no kernel formats' };
