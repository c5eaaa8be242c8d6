import { describe, expect, it } from 'vitest';
import { target618 } from '../test/support/formats.js';
import { CompileAbort } from './errors.js';
import { type ProviderResolver, resolveAttachPoint } from './probes.js';
import { noTarget } from './target.js';

const at = (text: string) => ({ text, span: { start: 0, end: text.length } });
const resolve = (text: string, target = target618(), providers?: ProviderResolver) =>
  resolveAttachPoint(at(text), target, providers).map((r) => (r.kind === 'tracepoint' ? `${r.system}/${r.event} ${r.name}` : `${JSON.stringify(r.probe)} ${r.name}`));

describe('resolveAttachPoint', () => {
  it.each([
    ['BEGIN', ['{"kind":"begin"} BEGIN']],
    ['END', ['{"kind":"end"} END']],
    ['interval:s:1', ['{"kind":"interval","periodNs":1000000000} interval:s:1']],
    ['i:ms:100', ['{"kind":"interval","periodNs":100000000} interval:ms:100']],
    ['interval:hz:4', ['{"kind":"interval","periodNs":250000000} interval:hz:4']],
    ['interval:500us', ['{"kind":"interval","periodNs":500000} interval:500us']],
    ['tracepoint:sched:sched_switch', ['sched/sched_switch tracepoint:sched:sched_switch']],
    ['t:raw_syscalls:sys_enter', ['raw_syscalls/sys_enter tracepoint:raw_syscalls:sys_enter']],
    ['t:sched:sched_*', ['sched/sched_process_exec tracepoint:sched:sched_process_exec', 'sched/sched_process_fork tracepoint:sched:sched_process_fork', 'sched/sched_switch tracepoint:sched:sched_switch', 'sched/sched_wakeup tracepoint:sched:sched_wakeup']],
    ['t:*:sched_sw?tch', ['sched/sched_switch tracepoint:sched:sched_switch']],
  ])('%s', (text, want) => {
    expect(resolve(text)).toEqual(want);
  });

  it('without a kernel a named tracepoint still resolves; a wildcard cannot', () => {
    expect(resolve('t:sched:sched_switch', noTarget)).toEqual(['sched/sched_switch tracepoint:sched:sched_switch']);
    expect(() => resolve('t:sched:*', noTarget)).toThrow(/wildcards need the kernel's list of events/);
  });

  it.each([
    ['tracepoint:sched', 'syntax', 'probe tracepoint:sched: a tracepoint is written tracepoint:SYSTEM:EVENT'],
    ['t:nope:*', 'not-found', 'probe t:nope:*: matches no event of linux 6.18 fixture'],
    ['uprobe:/bin/bash:readline', 'unsupported', 'probe uprobe:/bin/bash:readline: uprobe probes are not supported here'],
    ['profile:hz:99', 'unsupported', 'probe profile:hz:99: profile probes are not supported here'],
    ['tracepont:a:b', 'syntax', "probe tracepont:a:b: unknown probe type 'tracepont'"],
    ['interval:x:1', 'syntax', 'probe interval:x:1: an interval is written interval:UNIT:N (UNIT s, ms, us, ns or hz; N > 0)'],
  ])('%s fails (%s)', (text, code, message) => {
    let err: unknown;
    try {
      resolve(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CompileAbort);
    expect((err as CompileAbort).code).toBe(code);
    expect((err as CompileAbort).message).toBe(message);
  });

  it('an unknown probe type suggests the close ones', () => {
    expect(() => resolve('tracepont:a:b')).toThrow(CompileAbort);
    try {
      resolve('tracepont:a:b');
    } catch (e) {
      expect((e as CompileAbort).hint).toBe('probes here are tracepoint:SYSTEM:EVENT (t:), BEGIN, END and interval:s:N; did you mean tracepoint?');
    }
  });

  it('a provider probe resolves through the resolver, to the tracepoint that implements it', () => {
    const providers: ProviderResolver = (p) =>
      p.provider === 'proc' && p.name === 'exec' ? { system: 'sched', event: 'sched_process_exec', args: { filename: 'str(args.filename)', pid: 'args.pid' }, via: 'proc@1.0.0' } : { error: `provider ${p.provider} has no probe ${p.name}` };
    expect(resolve('proc:::exec', target618(), providers)).toEqual(['sched/sched_process_exec proc:::exec']);
    expect(() => resolve('proc:::nope', target618(), providers)).toThrow('probe proc:::nope: provider proc has no probe nope');
  });
});
