import type { RecordEventFormat } from '../ring-buffer/trace-record.js';

/** The text of one event's format file with its system, as a trace.dat or tracefs holds it. */
export interface EventFormatText {
  system: string;
  text: string;
}

/** Turns a format file into the format type a consumer wants (e.g. the package's parseEventFormat). */
export type EventFormatParser<F extends RecordEventFormat> = (text: string, system: string) => F;

/** A format reduced to what record readers need, plus its text. */
export interface BasicEventFormat extends RecordEventFormat {
  text: string;
}

/** Reads `name:` and `ID:` of a format file; the default {@link EventFormatParser}. */
export function parseBasicEventFormat(text: string, system: string): BasicEventFormat {
  const name = /^name:\s*(\S+)/m.exec(text)?.[1] ?? '';
  const id = Number(/^ID:\s*(\d+)/m.exec(text)?.[1] ?? -1);
  return { system, name, id, text };
}

/**
 * Event id → format, parsed on first use (a trace.dat may carry thousands of formats and a
 * recording use a handful). Lookups by id go through a dense array.
 */
export class EventFormatTable<F extends RecordEventFormat = BasicEventFormat> {
  private readonly texts = new Map<number, EventFormatText>();
  private readonly byId: (F | null | undefined)[] = [];
  private readonly parse: EventFormatParser<F>;
  /** Formats that failed to parse, with the error (their records get `format` undefined). */
  readonly errors = new Map<number, unknown>();

  constructor(formats: Iterable<EventFormatText>, parse: EventFormatParser<F>) {
    this.parse = parse;
    for (const f of formats) {
      const m = /^ID:\s*(\d+)/m.exec(f.text);
      if (m) this.texts.set(Number(m[1]), f);
    }
  }

  /** Every id that has a format. */
  ids(): number[] {
    return [...this.texts.keys()].sort((a, b) => a - b);
  }

  /** The text of an event's format, or undefined. */
  text(id: number): EventFormatText | undefined {
    return this.texts.get(id);
  }

  /** The format of event `id` (parsed once), or undefined when unknown or unparsable. */
  get(id: number): F | undefined {
    const cached = this.byId[id];
    if (cached !== undefined) return cached ?? undefined;
    if (!Number.isInteger(id) || id < 0 || id > 0xffff) return undefined;
    const t = this.texts.get(id);
    let f: F | null = null;
    if (t) {
      try {
        f = this.parse(t.text, t.system);
      } catch (e) {
        this.errors.set(id, e);
      }
    }
    this.byId[id] = f;
    return f ?? undefined;
  }

  /** Finds a format by system and name (parses the candidates). */
  find(system: string | undefined, name: string): F | undefined {
    for (const [id, t] of this.texts) {
      if (system !== undefined && t.system !== system) continue;
      if (new RegExp(`^name:\\s*${name.replace(/[^\w]/g, '\\$&')}\\s*$`, 'm').test(t.text)) return this.get(id);
    }
    return undefined;
  }
}
