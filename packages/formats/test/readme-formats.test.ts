// The "Event formats" usage example of README.md, run as written on fixtures.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'fflate';
import { expect, it } from 'vitest';
import { findField, formatRecord, formatRecordRaw, parseEventFormat, readEventsTarball, readFieldNumber } from '../src/index.js';
import { buildRecord } from './support/build-record.js';
import { fixtureText } from './support/fixtures.js';
import { writeTar } from './support/write-tar.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = /<!-- formats-example -->\n```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

it('the README formats example runs and says what its comments say', async () => {
  expect(example.split('\n').filter((l) => l !== '').length).toBeLessThanOrEqual(10);
  const text = fixtureText('linux-6.18', 'sched/sched_switch');
  const record = buildRecord(parseEventFormat(text), { prev_comm: 'bash', prev_pid: 4242, prev_prio: 120, prev_state: 1, next_comm: 'swapper/0', next_pid: 0, next_prio: 120 });
  const tgzBytes = gzipSync(writeTar([
    { path: 'events/sched/sched_switch/format', text },
    { path: 'events/sched/sched_wakeup/format', text: fixtureText('linux-6.18', 'sched/sched_wakeup') },
  ]));
  const logged: string[] = [];
  const console = { log: (s: string) => logged.push(s) };
  const results: unknown[] = [];
  // Each `expr; // comment` line's value is collected to check the comments.
  const body = example.replace(/^(findField|readFieldNumber|formatRecord|formatRecordRaw)(.*?); \/\/.*$/gm, 'results.push($1$2);');
  const run = new Function('text', 'record', 'tgzBytes', 'console', 'results', 'parseEventFormat', 'findField', 'readFieldNumber', 'formatRecord', 'formatRecordRaw', 'readEventsTarball',
    `return (async () => { ${body} })();`);
  await run(text, record, tgzBytes, console, results, parseEventFormat, findField, readFieldNumber, formatRecord, formatRecordRaw, readEventsTarball);
  expect(results[0]).toMatchObject({ type: 'pid_t', byteOffset: 56, size: 4, signed: true });
  expect(results[1]).toBe(4242);
  expect(results[2]).toBe('bash:4242 [120] S ==> swapper/0:0 [120]');
  expect(results[3]).toBe('prev_comm=bash prev_pid=4242 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120');
  expect(results[4]).toBe(' prev_comm=bash prev_pid=4242 prev_prio=120 prev_state=1 next_comm=swapper/0 next_pid=0 next_prio=120');
  expect(logged).toEqual(['2 formats, 0 errors']);
});
