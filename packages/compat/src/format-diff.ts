import type { EventFormat } from '@probeyard/formats';
import { type KernelProfile, profileFormat } from './kernel-profile.js';
import { type LayoutField, layoutOf } from './event-layout.js';

/** Kinds of change between two layouts of one event. */
export type FieldChangeKind =
  | 'added'
  | 'removed'
  | 'moved'
  | 'resized'
  | 'type-changed'
  | 'became-dynamic'
  | 'became-static'
  | 'signedness-changed';

/** One change of one field from layout A to layout B. */
export interface FieldChange {
  kind: FieldChangeKind;
  field: string;
  /** The field in A (undefined when added) and in B (undefined when removed). */
  before: LayoutField | undefined;
  after: LayoutField | undefined;
  /** Readable text: `next_pid moved from offset 56 to 52`. */
  text: string;
}

/** The diff of one event between two profiles. */
export interface EventDiff {
  /** `system/event`. */
  event: string;
  status: 'same' | 'changed' | 'only-in-a' | 'only-in-b';
  changes: FieldChange[];
}

const decl = (f: LayoutField) =>
  f.dynamic ? `__${f.dynamic} ${f.type}[] ${f.name}` : f.arrayLength !== undefined ? `${f.type} ${f.name}[${f.arrayLength}]` : `${f.type} ${f.name}`;

/** Field-by-field changes from format `a` to format `b` (matched by field name). */
export function diffEventFormats(a: EventFormat, b: EventFormat): FieldChange[] {
  const la = layoutOf(a).fields;
  const lb = layoutOf(b).fields;
  const byName = new Map(lb.map((f) => [f.name, f]));
  const changes: FieldChange[] = [];
  for (const before of la) {
    const after = byName.get(before.name);
    const name = before.name;
    if (after === undefined) {
      changes.push({ kind: 'removed', field: name, before, after, text: `${name} removed (was ${decl(before)} at offset ${before.byteOffset}, size ${before.size})` });
      continue;
    }
    if (!before.dynamic && after.dynamic) {
      changes.push({ kind: 'became-dynamic', field: name, before, after, text: `${name} became dynamic: ${decl(before)} is now ${decl(after)}` });
    } else if (before.dynamic && !after.dynamic) {
      changes.push({ kind: 'became-static', field: name, before, after, text: `${name} is no longer dynamic: ${decl(before)} is now ${decl(after)}` });
    } else if (before.dynamic !== after.dynamic) {
      changes.push({ kind: 'type-changed', field: name, before, after, text: `${name} changed from ${decl(before)} to ${decl(after)}` });
    } else {
      if (before.type !== after.type || before.arrayLength !== after.arrayLength) {
        changes.push({ kind: 'type-changed', field: name, before, after, text: `${name} changed type from ${decl(before)} to ${decl(after)}` });
      }
      if (before.size !== after.size) {
        changes.push({ kind: 'resized', field: name, before, after, text: `${name} resized from ${before.size} to ${after.size} bytes` });
      }
      if (before.signed !== after.signed) {
        changes.push({
          kind: 'signedness-changed',
          field: name,
          before,
          after,
          text: `${name} became ${after.signed ? 'signed' : 'unsigned'}`,
        });
      }
    }
    if (before.byteOffset !== after.byteOffset) {
      changes.push({ kind: 'moved', field: name, before, after, text: `${name} moved from offset ${before.byteOffset} to ${after.byteOffset}` });
    }
  }
  const inA = new Set(la.map((f) => f.name));
  for (const after of lb) {
    if (!inA.has(after.name)) {
      changes.push({ kind: 'added', field: after.name, before: undefined, after, text: `${after.name} added (${decl(after)} at offset ${after.byteOffset}, size ${after.size})` });
    }
  }
  return changes;
}

/**
 * The diff of two profiles, event by event (`options.event`: only that one, as `system/event`
 * or a bare event name). Events present in both with identical layouts are `same`.
 */
export function diffProfiles(a: KernelProfile, b: KernelProfile, options: { event?: string; includeSame?: boolean } = {}): EventDiff[] {
  const keys = [...new Set([...a.events.keys(), ...b.events.keys()])].sort();
  const want = options.event;
  const selected = want === undefined ? keys : keys.filter((k) => k === want || k.slice(k.indexOf('/') + 1) === want);
  const out: EventDiff[] = [];
  for (const key of selected) {
    const fa = profileFormat(a, key);
    const fb = profileFormat(b, key);
    if (fa === undefined) {
      out.push({ event: key, status: 'only-in-b', changes: [] });
      continue;
    }
    if (fb === undefined) {
      out.push({ event: key, status: 'only-in-a', changes: [] });
      continue;
    }
    const changes = a.events.get(key) === b.events.get(key) ? [] : diffEventFormats(fa, fb);
    if (changes.length > 0) out.push({ event: key, status: 'changed', changes });
    else if (options.includeSame || want !== undefined) out.push({ event: key, status: 'same', changes });
  }
  return out;
}

/** Readable text of a profile diff, one event a block. */
export function formatEventDiffs(diffs: readonly EventDiff[]): string {
  const lines: string[] = [];
  for (const d of diffs) {
    if (d.status === 'only-in-a') lines.push(`${d.event}: only in A`);
    else if (d.status === 'only-in-b') lines.push(`${d.event}: only in B`);
    else if (d.status === 'same') lines.push(`${d.event}: same layout`);
    else {
      lines.push(`${d.event}:`);
      for (const c of d.changes) lines.push(`  ${c.kind}: ${c.text}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
