import { describe, expect, it } from 'vitest';
import { parseProgramSection } from './program-section.js';

describe('parseProgramSection', () => {
  it.each([
    ['tracepoint/sched/sched_switch', 'tracepoint', { kind: 'tracepoint', system: 'sched', event: 'sched_switch' }],
    ['tp/syscalls/sys_enter_openat', 'tracepoint', { kind: 'tracepoint', system: 'syscalls', event: 'sys_enter_openat' }],
    ['tracepoint/sched', 'tracepoint', { kind: 'named', target: 'sched' }],
    ['tracepoint', 'tracepoint', { kind: 'none' }],
    ['raw_tp/sched_switch', 'raw_tracepoint', { kind: 'raw-tracepoint', name: 'sched_switch' }],
    ['raw_tracepoint/sys_enter', 'raw_tracepoint', { kind: 'raw-tracepoint', name: 'sys_enter' }],
    ['raw_tp.w/bpf_test_finish', 'raw_tracepoint_writable', { kind: 'raw-tracepoint', name: 'bpf_test_finish' }],
    ['tp_btf/sched_switch', 'tracing', { kind: 'btf', target: 'sched_switch' }],
    ['fentry/do_unlinkat', 'tracing', { kind: 'btf', target: 'do_unlinkat' }],
    ['fexit/do_unlinkat', 'tracing', { kind: 'btf', target: 'do_unlinkat' }],
    ['fmod_ret/security_bpf', 'tracing', { kind: 'btf', target: 'security_bpf' }],
    ['lsm/file_open', 'lsm', { kind: 'btf', target: 'file_open' }],
    ['iter/task', 'tracing', { kind: 'btf', target: 'task' }],
    ['kprobe/do_nanosleep', 'kprobe', { kind: 'kprobe', function: 'do_nanosleep', offset: 0, retprobe: false }],
    ['kprobe/tcp_v4_connect+0x10', 'kprobe', { kind: 'kprobe', function: 'tcp_v4_connect', offset: 16, retprobe: false }],
    ['kretprobe/do_sys_openat2', 'kprobe', { kind: 'kprobe', function: 'do_sys_openat2', offset: 0, retprobe: true }],
    ['kprobe', 'kprobe', { kind: 'none' }],
    ['ksyscall/openat', 'kprobe', { kind: 'syscall', syscall: 'openat', retprobe: false }],
    ['kretsyscall/openat', 'kprobe', { kind: 'syscall', syscall: 'openat', retprobe: true }],
    ['uprobe//usr/lib/libc.so.6:malloc', 'kprobe', { kind: 'uprobe', binary: '/usr/lib/libc.so.6', function: 'malloc', offset: 0, retprobe: false }],
    ['uretprobe//bin/bash:readline+4', 'kprobe', { kind: 'uprobe', binary: '/bin/bash', function: 'readline', offset: 4, retprobe: true }],
    ['uprobe/./app:0x1234', 'kprobe', { kind: 'uprobe', binary: './app', function: '', offset: 0x1234, retprobe: false }],
    ['uprobe', 'kprobe', { kind: 'none' }],
    ['usdt/libc:setjmp', 'kprobe', { kind: 'named', target: 'libc:setjmp' }],
    ['kprobe.multi/tcp_*', 'kprobe', { kind: 'named', target: 'tcp_*' }],
    ['xdp', 'xdp', { kind: 'none' }],
    ['xdp/devmap', 'xdp', { kind: 'none' }],
    ['socket', 'socket_filter', { kind: 'none' }],
    ['perf_event', 'perf_event', { kind: 'none' }],
    ['tc', 'sched_cls', { kind: 'none' }],
    ['cgroup_skb/egress', 'cgroup_skb', { kind: 'none' }],
    ['cgroup/sock_create', 'cgroup_sock', { kind: 'named', target: 'sock_create' }],
    ['license', 'unspec', { kind: 'none' }],
    ['tracepointx/a/b', 'unspec', { kind: 'none' }],
  ])('%s → %s', (name, type, attach) => {
    const p = parseProgramSection(name);
    expect(p.type).toBe(type);
    expect(p.attach).toEqual(attach);
  });

  it.each([
    ['fentry.s/do_unlinkat', true, 'trace_fentry'],
    ['uprobe.s//bin/sh:main', true, undefined],
    ['fentry/do_unlinkat', false, 'trace_fentry'],
    ['xdp.frags', false, 'xdp'],
  ])('%s: sleepable %s, attach type %s', (name, sleepable, attachType) => {
    const p = parseProgramSection(name);
    expect(p.sleepable).toBe(sleepable);
    expect(p.expectedAttachType).toBe(attachType);
  });
});
