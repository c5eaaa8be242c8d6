// The "BPF objects" usage example of README.md, run as written.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { formatBtfType, readBpfObject, tracepointFieldAccesses } from '../src/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = /<!-- objects-example -->\n```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

it('the README example runs and says what its comments say', () => {
  expect(example.split('\n').filter((l) => l !== '').length).toBeLessThanOrEqual(10);
  const bytes = new Uint8Array(readFileSync(new URL('./fixtures/objects/sched_trace.o', import.meta.url)));
  const logged: string[] = [];
  const console = { log: (s: string) => logged.push(s) };
  // The example as a function of its free variables (TypeScript's `!` stripped for plain JS).
  const run = new Function('bytes', 'readBpfObject', 'formatBtfType', 'tracepointFieldAccesses', 'console', `${example.replaceAll('!', '')}; return spec;`);
  const spec = run(bytes, readBpfObject, formatBtfType, tracepointFieldAccesses, console);
  const prog = spec.program('on_switch');
  expect(prog.attach).toEqual({ kind: 'tracepoint', system: 'sched', event: 'sched_switch' });
  expect(prog.instructions.length).toBe(728);
  expect(spec.map('last_switch').maxEntries).toBe(128);
  expect(formatBtfType(spec.btf, spec.map('last_switch').valueTypeId)).toMatch(/^struct switch_event \{[\s\S]*\};$/);
  expect(logged[0]).toBe('sched_switch.prev_pid byte-offset at tracepoint/sched/sched_switch#1');
});
