import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FormatError } from '../errors.js';
import { buildEventFormatSet, type EventFormatSet, type EventsTreeFile } from '../profile/event-format-set.js';

/**
 * A profile from an `events/` directory (a live tracefs `/sys/kernel/tracing/events` or a copy):
 * every `<system>/<event>/format`, `header_page` and `header_event`. Paths in the result are
 * relative to `dir`. Unreadable or unparsable files go to `errors`; throws {@link FormatError}
 * `not-found` when `dir` itself cannot be read.
 */
export async function readEventsTree(dir: string): Promise<EventFormatSet> {
  let systems: string[];
  try {
    systems = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  } catch (e) {
    throw new FormatError('not-found', `events tree ${dir}: ${(e as Error).message}`, { section: dir, cause: e });
  }
  const files: EventsTreeFile[] = [];
  const unreadable: { path: string; error: FormatError }[] = [];
  const tryRead = async (path: string, rel: string, required: boolean): Promise<void> => {
    try {
      files.push({ path: rel, text: await readFile(path, 'utf8') });
    } catch (e) {
      if (!required && (e as NodeJS.ErrnoException).code === 'ENOENT') return;
      unreadable.push({ path: rel, error: new FormatError('not-found', `${rel}: ${(e as Error).message}`, { section: rel, cause: e }) });
    }
  };
  await tryRead(join(dir, 'header_page'), 'header_page', false);
  await tryRead(join(dir, 'header_event'), 'header_event', false);
  for (const system of systems) {
    let events: string[];
    try {
      events = (await readdir(join(dir, system), { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    } catch {
      continue;
    }
    await Promise.all(events.map((event) => tryRead(join(dir, system, event, 'format'), `${system}/${event}/format`, false)));
  }
  const set = await buildEventFormatSet(files);
  set.errors.unshift(...unreadable);
  return set;
}
