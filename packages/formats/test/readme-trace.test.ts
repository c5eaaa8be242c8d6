// The "Trace records" usage example of README.md, run as written on a fixture.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { parseEventFormat } from '../src/event-format/event-format.js';
import { openTraceDat } from '../src/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = /<!-- trace-example -->\n```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

it('the README trace example runs and says what its comments say', () => {
  expect(example.split('\n').filter((l) => l !== '').length).toBeLessThanOrEqual(10);
  const bytes = new Uint8Array(readFileSync(new URL('./fixtures/trace-dat/small_v7_zstd.dat', import.meta.url)));
  const logged: string[] = [];
  const console = { log: (s: string) => logged.push(s) };
  const run = new Function('bytes', 'openTraceDat', 'parseEventFormat', 'console', `${example}; return reader;`);
  const reader = run(bytes, openTraceDat, parseEventFormat, console);
  expect(reader.dat.version).toBe(7);
  expect(reader.dat.compression.name).toBe('zstd');
  expect(logged).toEqual(['560 switches; cpu 1 starts at 410220741983 ns']);
});
