import { describe, expect, it } from 'vitest';
import { formatOutputEvent, traceSeconds } from './events.js';

describe('outputs as lines', () => {
  it.each([
    ['538357281500', '538.357282'],
    ['538357281499', '538.357281'],
    ['999', '0.000001'],
    ['0', '0.000000'],
  ])('%s ns is %s s, rounded as trace-cmd report rounds', (ns, text) => {
    expect(traceSeconds(ns)).toBe(text);
  });

  it.each([
    [{ timeNs: '538357281500', cpu: 1, source: 'perf' as const, map: 'events', data: { pid: 14627, comm: 'true', filename: '/bin/true' } }, '538.357282 cpu 1 perf events: { .pid = 14627, .comm = true, .filename = /bin/true }\n'],
    [{ timeNs: '1000', cpu: 0, source: 'ringbuf' as const, map: 'rb', data: { hex: '2939' } }, '0.000001 cpu 0 ringbuf rb: 2939\n'],
    [{ timeNs: '2000', cpu: 3, source: 'printk' as const, text: 'exec pid 1' }, '0.000002 cpu 3 printk: exec pid 1\n'],
  ])('%j', (event, line) => {
    expect(formatOutputEvent(event)).toBe(line);
  });
});
