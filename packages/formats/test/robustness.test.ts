// Hostile and broken inputs: mutated real format texts, print fmts, records and tarballs. Every
// outcome is a value or a FormatError with a code (and a line for text); never another exception,
// never a hang.
import fc from 'fast-check';
import { gzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { FormatError, type FormatErrorCode } from '../src/errors.js';
import { type EventFormat, parseEventFormat } from '../src/event-format/event-format.js';
import { formatRecord, formatRecordRaw, formatRecordWith } from '../src/print-fmt/format-record.js';
import { parsePrintFmt } from '../src/print-fmt/parse-print-fmt.js';
import { readEventsTarball } from '../src/profile/event-format-set.js';
import { fixtureText } from './support/fixtures.js';
import { hostilePrintFmts } from './support/hostile-inputs.js';
import { writeTar } from './support/write-tar.js';

const texts = [
  fixtureText('linux-6.18', 'sched/sched_switch'),
  fixtureText('linux-6.18', 'block/block_rq_issue'),
  fixtureText('linux-6.18', 'ipi/ipi_send_cpumask'),
  fixtureText('linux-6.18', 'dma/dma_map_sg'),
  fixtureText('linux-6.18', 'ftrace/kernel_stack'),
  fixtureText('android-3.4.0', 'sched/sched_switch'),
  fixtureText('android-5.10.43', 'tcp/tcp_probe'),
  fixtureText('linux-6.18', 'raw_syscalls/sys_enter'),
  fixtureText('linux-6.18', 'raw_syscalls/sys_exit'),
  fixtureText('linux-6.18', 'syscalls/sys_enter_openat'),
  fixtureText('linux-6.18', 'sched/sched_wakeup'),
];
const codes: FormatErrorCode[] = ['truncated', 'malformed', 'out-of-range', 'unsupported', 'not-found'];

/** A mutation of a text: cut, flip, splice a hostile token, or duplicate a line. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), char: fc.constantFrom('\0', '"', '(', ')', '{', ';', ':', '[', ']', '\n', '\t', '%', '\\', 'x', '9', '-', ' ') }),
  fc.record({
    kind: fc.constant('splice' as const),
    at: fc.nat(),
    text: fc.constantFrom('99999999999999999999', '4294967295', '1048576', '-1', 'offset:1048575;', 'size:0;', '[', 'signed:2;', '__data_loc ', '__rel_loc ', '((((((((', '%*.*s', '%999999999d', '{', 'print fmt: "', '\nfield:int x;\toffset:0;\tsize:8;\n'),
  }),
  fc.record({ kind: fc.constant('dup' as const), at: fc.nat() }),
);

function mutate(text: string, ms: readonly { kind: string; at: number; char?: string; text?: string }[]): string {
  let t = text;
  for (const m of ms) {
    const at = t.length === 0 ? 0 : m.at % (t.length + 1);
    if (m.kind === 'cut') t = t.slice(0, at);
    else if (m.kind === 'flip') t = t.slice(0, at) + m.char! + t.slice(at + 1);
    else if (m.kind === 'splice') t = t.slice(0, at) + m.text! + t.slice(at);
    else {
      const lines = t.split('\n');
      const k = m.at % lines.length;
      lines.splice(k, 0, lines[k]!);
      t = lines.join('\n');
    }
  }
  return t;
}

function expectFormatError(e: unknown, lineCount?: number): void {
  if (!(e instanceof FormatError)) throw e;
  expect(codes).toContain(e.code);
  if (lineCount !== undefined) {
    expect(e.line).toBeGreaterThanOrEqual(1);
    expect(e.line).toBeLessThanOrEqual(lineCount + 1);
  }
}

describe('robustness', () => {
  it('mutated format files parse or throw a FormatError with code and line; rendering never throws', () => {
    fc.assert(
      fc.property(fc.constantFrom(...texts), fc.array(mutation, { minLength: 1, maxLength: 4 }), fc.uint8Array({ maxLength: 200 }), (text, ms, bytes) => {
        const mutated = mutate(text, ms);
        let format: EventFormat;
        try {
          format = parseEventFormat(mutated, { system: 'sched' });
        } catch (e) {
          expectFormatError(e, mutated.split('\n').length);
          return;
        }
        expect(typeof formatRecord(format, bytes)).toBe('string');
        expect(typeof formatRecord(format, bytes, { handlers: 'print-fmt', longSize: 4 })).toBe('string');
        expect(typeof formatRecordRaw(format, bytes)).toBe('string');
      }),
      { numRuns: 1500 },
    );
  });

  it('real formats render random record bytes of any length without throwing', () => {
    const formats = texts.map((t) => parseEventFormat(t, { system: 'sched' }));
    fc.assert(
      fc.property(fc.constantFrom(...formats), fc.uint8Array({ maxLength: 300 }), (format, bytes) => {
        expect(typeof formatRecord(format, bytes)).toBe('string');
        expect(typeof formatRecord(format, bytes, { handlers: 'print-fmt' })).toBe('string');
        expect(typeof formatRecordRaw(format, bytes)).toBe('string');
      }),
      { numRuns: 1000 },
    );
  });

  it('random text as a print fmt parses or throws a malformed FormatError', () => {
    const alphabet = fc.constantFrom(...'"%dsx(){}[],;:?+-*/&|^!~<>=.REC->abc_0123456789\\\' \n\t'.split(''));
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 120 }).map((a) => a.join('')), (text) => {
        try {
          parsePrintFmt(text);
        } catch (e) {
          expectFormatError(e, text.split('\n').length);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('hostile nesting and long inputs parse or throw a FormatError', () => {
    // each one finishes (no runaway recursion, no stack overflow); how quickly is a figure of bench/print-fmt.ts
    for (const text of hostilePrintFmts) {
      try {
        parsePrintFmt(text);
      } catch (e) {
        expectFormatError(e);
      }
    }
  });

  it('mutated tarballs give a profile or a FormatError', async () => {
    const tar = writeTar(texts.slice(0, 3).map((t, k) => ({ path: `events/s/e${k}/format`, text: t.replace(/^name: \w+/, `name: e${k}`) })));
    const gz = gzipSync(tar);
    const good = await readEventsTarball(gz);
    expect(good.formats.size).toBe(3);
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(fc.tuple(fc.nat(), fc.nat(255)), { minLength: 1, maxLength: 8 }), fc.option(fc.nat()), async (zip, flips, cut) => {
        const bytes = (zip ? gz : tar).slice();
        for (const [at, value] of flips) bytes[at % bytes.length] = value;
        const input = cut === null ? bytes : bytes.subarray(0, cut % (bytes.length + 1));
        try {
          const set = await readEventsTarball(input);
          for (const e of set.errors) expectFormatError(e.error);
        } catch (e) {
          expectFormatError(e);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('parse(format(fields)) gives back the fields (round trip)', () => {
    const fieldArb = fc.record({
      name: fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/),
      type: fc.constantFrom('int', 'unsigned int', 'u64', 'char', 'pid_t', 'unsigned long', 'const char *', 'void *'),
      array: fc.option(fc.oneof(fc.nat(64).map(String), fc.constantFrom('TASK_COMM_LEN', 'sizeof(struct sockaddr_in6)', '32 + 1', ''))),
      dynamic: fc.constantFrom(undefined, 'data_loc', 'rel_loc'),
      byteOffset: fc.nat(4096),
      size: fc.nat(512),
      signed: fc.option(fc.boolean()),
    });
    fc.assert(
      fc.property(fc.uniqueArray(fieldArb, { selector: (f) => f.name, maxLength: 12 }), fc.nat(65535), (fields, id) => {
        const lines = fields.map((f) => {
          const decl = f.dynamic
            ? `__${f.dynamic} ${f.type.replace(' *', '')}[] ${f.name}`
            : `${f.type} ${f.name}${f.array === null ? '' : `[${f.array}]`}`;
          const size = f.dynamic ? 4 : f.size;
          return `\tfield:${decl};\toffset:${f.byteOffset};\tsize:${size};${f.signed === null ? '' : `\tsigned:${f.signed ? 1 : 0};`}`;
        });
        const text = `name: ev\nID: ${id}\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n${lines.join('\n')}\n\nprint fmt: "x"\n`;
        const format = parseEventFormat(text);
        expect(format.id).toBe(id);
        expect(format.fields.map((f) => f.name)).toEqual(fields.map((f) => f.name));
        format.fields.forEach((f, k) => {
          const g = fields[k]!;
          expect(f.byteOffset).toBe(g.byteOffset);
          expect(f.size).toBe(g.dynamic ? 4 : g.size);
          expect(f.signed).toBe(g.signed ?? undefined);
          expect(f.dynamic).toBe(g.dynamic);
          if (!g.dynamic) {
            expect(f.type).toBe(g.type);
            expect(f.array?.lengthText).toBe(g.array ?? undefined);
          }
        });
      }),
      { numRuns: 300 },
    );
  });
});

describe('compiled print fmt against the tree-walking reference', () => {
  it('gives the same text for random records of the fixture formats', () => {
    const formats = texts.map((t) => parseEventFormat(t, { system: 'x' }));
    fc.assert(
      fc.property(fc.constantFrom(...formats), fc.uint8Array({ minLength: 0, maxLength: 300 }), fc.constantFrom<4 | 8>(4, 8), fc.boolean(), (format, bytes, longSize, littleEndian) => {
        const env = { handlers: 'print-fmt' as const, longSize, littleEndian };
        expect(formatRecordWith(format, bytes, env, false)).toBe(formatRecordWith(format, bytes, env, true));
      }),
      { numRuns: 3000 },
    );
  });
});
