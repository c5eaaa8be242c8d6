import { describe, expect, it } from 'vitest';
import { buildRecord, type FieldInput } from '../../test/support/build-record.js';
import { fixtureFormat } from '../../test/support/fixtures.js';
import { parseEventFormat } from '../event-format/event-format.js';
import { formatRecord, formatRecordRaw } from './format-record.js';
import { formatInteger, parsePrintfFormat } from './printf.js';
import type { RenderEnv } from './render-env.js';

const switchValues = { prev_comm: 'bash', prev_pid: 1, prev_prio: 120, prev_state: 0x80, next_comm: 'swapper/0', next_pid: 0, next_prio: 120 };
const kernelSymbols: RenderEnv['lookupSymbol'] = (a) => {
  if (a >= 0xffffffff81100000n && a < 0xffffffff81100100n) return { name: 'smp_call_function_many_cond', offset: Number(a - 0xffffffff81100000n) };
  if (a === 0xffffffff81000010n) return { name: 'do_syscall_64', offset: 0 };
  return undefined;
};

function render(kernel: string, event: string, values: Record<string, FieldInput>, env: RenderEnv = {}): { text: string; raw: string } {
  const f = fixtureFormat(kernel, event);
  const r = buildRecord(f, values);
  return { text: formatRecord(f, r, env), raw: formatRecordRaw(f, r, env) };
}

describe('formatRecord', () => {
  it.each([
    // [state, trace-cmd handler (fixed SDTtZXxW table), the kernel's own print fmt]
    [0x0, 'R', 'R'],
    [0x1, 'S', 'S'],
    [0x3, 'S|D', 'S|D'],
    [0x10, 'Z', 'X'],
    [0x20, 'X', 'Z'],
    [0x80, 'W', 'I'],
    [0x100, 'R', 'R+'],
  ])('sched_switch prev_state %s: trace-cmd prints %s, the 6.18 print fmt says %s', (state, traceCmd, kernel) => {
    const v = { ...switchValues, prev_state: state };
    expect(render('linux-6.18', 'sched/sched_switch', v).text).toBe(`bash:1 [120] ${traceCmd} ==> swapper/0:0 [120]`);
    expect(render('linux-6.18', 'sched/sched_switch', v, { handlers: 'print-fmt' }).text).toBe(
      `prev_comm=bash prev_pid=1 prev_prio=120 prev_state=${kernel} ==> next_comm=swapper/0 next_pid=0 next_prio=120`,
    );
  });

  it("decodes a 3.4 kernel's sched_switch with its own flag table and 4-byte long", () => {
    expect(render('android-3.4.0', 'sched/sched_switch', { ...switchValues, prev_state: 0x280 }, { handlers: 'print-fmt' }).text).toBe(
      'prev_comm=bash prev_pid=1 prev_prio=120 prev_state=W+ ==> next_comm=swapper/0 next_pid=0 next_prio=120',
    );
  });

  it.each<[string, string, Record<string, FieldInput>, RenderEnv, string]>([
    ['linux-6.18', 'sched/sched_wakeup', { comm: 'rcu_preempt', pid: 15, prio: 120, target_cpu: 1 }, {}, 'rcu_preempt:15 [120] CPU:001'],
    ['linux-6.18', 'sched/sched_wakeup', { comm: 'rcu_preempt', pid: 15, prio: 120, target_cpu: 1 }, { handlers: 'print-fmt' }, 'comm=rcu_preempt pid=15 prio=120 target_cpu=001'],
    ['linux-6.18', 'sched/sched_process_fork', { parent_comm: 'bash', parent_pid: 10, child_comm: 'ls', child_pid: 11 }, {}, 'comm=bash pid=10 child_comm=ls child_pid=11'],
    ['linux-6.18', 'syscalls/sys_enter_openat', { __syscall_nr: 257, dfd: 0xffffff9c, filename: 0x7feb0c32dbd6n, flags: 0x80000, mode: 0 }, {},
      'dfd: 0xffffff9c, filename: 0x7feb0c32dbd6, flags: 0x00080000, mode: 0x00000000'],
    ['linux-6.18', 'raw_syscalls/sys_enter', { id: 257, args: [0xffffffffffffff9cn, 0x7feb0c32dbd6n, 0x80000, 0, 8, 1] }, {}, 'NR 257 (ffffffffffffff9c, 7feb0c32dbd6, 80000, 0, 8, 1)'],
    ['linux-6.18', 'raw_syscalls/sys_exit', { id: 0, ret: -11 }, {}, 'NR 0 = -11'],
    // dev major/minor arithmetic, __get_str of an empty data_loc, and an ioprio class table whose
    // names the kernel left as enum identifiers: never guessed, printed as hex.
    ['linux-6.18', 'block/block_rq_issue', { dev: (8 << 20) | 16, sector: 123456n, nr_sector: 8, bytes: 4096, ioprio: (2 << 13) | 4, rwbs: 'WS', comm: 'kworker/0:1', cmd: '' }, {},
      '8,16 WS 4096 () 123456 + 8 0x2,0,4 [kworker/0:1]'],
    ['linux-6.18', 'irq/irq_handler_entry', { irq: 24, name: 'eth0' }, {}, 'irq=24 name=eth0'],
    ['linux-6.18', 'ipi/ipi_send_cpumask', { cpumask: new Uint8Array([3, 0, 0, 0, 1, 0, 0, 0]), callsite: 0xffffffff81100010n, callback: 0 }, { lookupSymbol: kernelSymbols },
      'cpumask=00000001,00000003 callsite=smp_call_function_many_cond+0x10 callback=0x0'],
    ['linux-6.18', 'ftrace/kernel_stack', { size: 8, caller: [0xffffffff81000010n, 0xffffffff81000020n, 0, 0, 0, 0, 0, 0] }, { lookupSymbol: kernelSymbols },
      '\t=> do_syscall_64\n\t=> 0xffffffff81000020\n\t=> 0x0\n\t=> 0x0\n\t=> 0x0\n\t=> 0x0\n\t=> 0x0\n\t=> 0x0\n'],
    ['linux-6.18', 'timer/hrtimer_start', { hrtimer: 0xffff888627d1c6f8n, function: 0xffffffff81100000n, expires: 2659948000000n, softexpires: 2659948000000n, mode: 1, was_armed: 1 }, { lookupSymbol: kernelSymbols },
      'hrtimer=0xffff888627d1c6f8 function=smp_call_function_many_cond/0x0 expires=2659948000000 softexpires=2659948000000'],
    ['linux-6.18', 'timer/hrtimer_start', { hrtimer: 0xffff888627d1c6f8n, function: 0xffffffff81234560n, expires: 5n, softexpires: 6n, mode: 1, was_armed: 0 }, {},
      'hrtimer=0xffff888627d1c6f8 function=0xffffffff81234560 expires=5 softexpires=6'],
    ['linux-6.18', 'timer/hrtimer_start', { hrtimer: 0xffff888627d1c6f8n, function: 0xffffffff81100000n, expires: 5n, softexpires: 6n, mode: 1, was_armed: 0 }, { handlers: 'print-fmt', lookupSymbol: kernelSymbols },
      'hrtimer=0xffff888627d1c6f8 function=smp_call_function_many_cond expires=5 softexpires=6 mode=0x1 was_armed=0'],
    ['linux-6.18', 'timer/hrtimer_expire_entry', { hrtimer: 0xffff888627d1c6f8n, now: 2659944040721n, function: 0xffffffff81100000n }, { lookupSymbol: kernelSymbols },
      'hrtimer=0xffff888627d1c6f8 now=2659944040721 function=smp_call_function_many_cond/0x0'],
  ])('%s %s', (kernel, event, values, env, expected) => {
    expect(render(kernel, event, values, env).text).toBe(expected);
  });

  it('prints [FAILED TO PARSE] and the raw fields where trace-cmd cannot evaluate the print fmt (statement expressions)', () => {
    const { text, raw } = render('linux-6.18', 'dma/dma_map_sg', { device: 'nvme0', dir: 1, full_nents: 2, attrs: 0x20 });
    expect(raw).toBe(' device=nvme0 full_nents=2 full_ents=0 truncated=0 phys_addrs=ARRAY[] dma_addrs=ARRAY[] lengths=ARRAY[] dir=1 attrs=0x20');
    expect(text).toBe(`[FAILED TO PARSE]${raw}`);
  });

  it('gives a placeholder, never an exception, for a record shorter than its fixed fields', () => {
    const f = fixtureFormat('linux-6.18', 'sched/sched_switch');
    const r = buildRecord(f, switchValues).subarray(0, 30);
    expect(formatRecord(f, r)).toBe("[bad record: 30 bytes, shorter than the 64 bytes of the format's fixed fields]");
    expect(formatRecordRaw(f, r)).toMatch(/^ prev_comm=bash prev_pid=1 prev_prio=\[field 'prev_prio': 4 bytes at offset 28 are outside the record's 30 bytes\] prev_state=\[/);
  });

  it('gives a placeholder for a data_loc pointing past the record', () => {
    const f = fixtureFormat('linux-6.18', 'irq/irq_handler_entry');
    const r = buildRecord(f, { irq: 1, name: 'x' });
    new DataView(r.buffer).setUint32(12, (40 << 16) | 16, true);
    expect(formatRecord(f, r)).toBe("[bad record: data_loc of 'name' points at 40 bytes at offset 16, past the record's 18 bytes]");
    expect(formatRecordRaw(f, r)).toBe(" irq=1 name=[data_loc of 'name' points at 40 bytes at offset 16, past the record's 18 bytes]");
  });

  it('renders a rel_loc string (offset from the end of the field)', () => {
    const f = parseEventFormat(
      'name: t\nID: 9\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:__rel_loc char[] msg;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:int n;\toffset:12;\tsize:4;\tsigned:1;\n\nprint fmt: "msg=%s n=%d", __get_rel_str(msg), REC->n\n',
    );
    const r = buildRecord(f, { msg: 'hello', n: -3 });
    expect(new DataView(r.buffer).getUint32(8, true) & 0xffff).toBe(4); // 16 - (8 + 4)
    expect(formatRecord(f, r)).toBe('msg=hello n=-3');
  });

  it('evaluates __print_hex, __print_hex_str, __print_array, %*ph and %pM/%pI4 against the record', () => {
    const f = parseEventFormat(
      'name: t\nID: 9\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n' +
        '\tfield:__data_loc u8[] buf;\toffset:4;\tsize:4;\tsigned:0;\n\tfield:u8 mac[6];\toffset:8;\tsize:6;\tsigned:0;\n\tfield:u8 ip[4];\toffset:14;\tsize:4;\tsigned:0;\n\tfield:u32 vals[2];\toffset:20;\tsize:8;\tsigned:0;\n\n' +
        'print fmt: "%s|%s|%s|%*phD|%pM|%pI4|%s", __print_hex(__get_dynamic_array(buf), __get_dynamic_array_len(buf)), __print_hex_str(__get_dynamic_array(buf), 2), __print_array(__get_dynamic_array(buf), __get_dynamic_array_len(buf) / sizeof(u8), sizeof(u8)), 2, __get_dynamic_array(buf), REC->mac, REC->ip, __print_array(REC->vals, 2, 4)\n',
    );
    const r = buildRecord(f, { buf: new Uint8Array([0xde, 0xad, 0x01]), mac: new Uint8Array([0, 0x1b, 0x21, 0xaa, 0xbb, 0xcc]), ip: new Uint8Array([192, 168, 0, 1]), vals: [7, 0x10] });
    expect(formatRecord(f, r)).toBe('de ad 01|dead|{0xde,0xad,0x1}|de-ad|00:1b:21:aa:bb:cc|192.168.0.1|{0x7,0x10}');
  });

  it('prints a cpumask with %*pb and %*pbl', () => {
    const f = parseEventFormat(
      'name: t\nID: 9\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:__data_loc unsigned long[] mask;\toffset:4;\tsize:4;\tsigned:0;\n\n' +
        'print fmt: "%*pb|%*pbl|%s", 40, __get_dynamic_array(mask), 40, __get_dynamic_array(mask), __get_bitmask(mask)\n',
    );
    const r = buildRecord(f, { mask: new Uint8Array([0x0f, 0x01, 0, 0, 0x80, 0, 0, 0]) });
    expect(formatRecord(f, r)).toBe('80,0000010f|0-3,8,39|00000080,0000010f');
  });

  it('prints flags with leftover bits in hex and the zero entry for zero', () => {
    const f = parseEventFormat(
      'name: t\nID: 9\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:unsigned long flags;\toffset:8;\tsize:8;\tsigned:0;\n\n' +
        'print fmt: "%s", __print_flags(REC->flags, "|", { 0, "NONE" }, { 1, "A" }, { 6, "BC" })\n',
    );
    expect(formatRecord(f, buildRecord(f, { flags: 0 }))).toBe('NONE');
    expect(formatRecord(f, buildRecord(f, { flags: 7 }))).toBe('A|BC');
    expect(formatRecord(f, buildRecord(f, { flags: 0x13 }))).toBe('A|0x12');
  });

  it('looks up the string a const char * field points to for %s', () => {
    const f = parseEventFormat(
      'name: t\nID: 9\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:const char * name;\toffset:8;\tsize:8;\tsigned:0;\n\nprint fmt: "name=%s", REC->name\n',
    );
    const r = buildRecord(f, { name: 0xffffffff8281b7e5n });
    expect(formatRecord(f, r, { lookupPrintkFormat: (a) => (a === 0xffffffff8281b7e5n ? 'rcu_preempt' : undefined) })).toBe('name=rcu_preempt');
    expect(formatRecord(f, r)).toBe('name=ffffffff8281b7e5');
  });
});

describe('formatRecordRaw (trace-cmd report -R)', () => {
  it('uses the print fmt conversion of a plain REC->field (target_cpu=%03d)', () => {
    expect(render('linux-6.18', 'sched/sched_wakeup', { comm: 'rcu_preempt', pid: 15, prio: 120, target_cpu: 1 }).raw).toBe(
      ' comm=rcu_preempt pid=15 prio=120 target_cpu=001',
    );
  });

  it('prints pointers and longs in hex, signed 4-byte long as 0x%x, non-printable char arrays as ARRAY[..]', () => {
    expect(render('android-3.4.0', 'sched/sched_switch', { ...switchValues, prev_comm: new Uint8Array([1, 2, 0]), prev_state: 0x280 }).raw).toBe(
      ' prev_comm=ARRAY[01, 02, 00, 00, 00, 00, 00, 00, 00, 00, 00, 00, 00, 00, 00, 00] prev_pid=1 prev_prio=120 prev_state=0x280 next_comm=swapper/0 next_pid=0 next_prio=120',
    );
    expect(render('linux-6.18', 'syscalls/sys_enter_openat', { __syscall_nr: 257, dfd: 0xffffff9c, filename: 0x7feb0c32dbd6n, flags: 0x80000, mode: 0 }).raw).toBe(
      ' __syscall_nr=257 dfd=4294967196 filename=0x7feb0c32dbd6 flags=524288 mode=0',
    );
  });
});

describe('printf conversions', () => {
  it.each<[bigint, string, number, string, number | undefined, number | undefined, string]>([
    [-1n, 'd', 32, '', undefined, undefined, '-1'],
    [0xffffffffn, 'd', 32, '', undefined, undefined, '-1'],
    [-1n, 'u', 32, '', undefined, undefined, '4294967295'],
    [-1n, 'x', 64, '', undefined, undefined, 'ffffffffffffffff'],
    [255n, 'X', 32, '#', undefined, undefined, '0XFF'],
    [0n, 'x', 32, '#', undefined, undefined, '0'],
    [5n, 'd', 32, '0', 3, undefined, '005'],
    [-5n, 'd', 32, '0', 4, undefined, '-005'],
    [5n, 'd', 32, '-', 4, undefined, '5   '],
    [5n, 'd', 32, '+', undefined, undefined, '+5'],
    [5n, 'd', 32, '', 5, 3, '  005'],
    [0n, 'd', 32, '', undefined, 0, ''],
    [8n, 'o', 32, '#', undefined, undefined, '010'],
    [0x1ffn, 'x', 8, '', undefined, undefined, 'ff'],
    [300n, 'd', 16, '', undefined, undefined, '300'],
    [0xffffn, 'd', 16, '', undefined, undefined, '-1'],
  ])('%s %%%s (%i bits, flags "%s", width %s, precision %s) = "%s"', (value, conv, bits, flags, width, precision, expected) => {
    expect(formatInteger(value, conv, bits, flags, width, precision)).toBe(expected);
  });

  it('splits a format into text and conversions, kernel %p extensions included', () => {
    const segs = parsePrintfFormat('a=%-08lx %% %pS: %*phD %.*s %pISpc %q');
    expect(segs.map((s) => (typeof s === 'string' ? s : s.text))).toEqual(['a=', '%-08lx', ' % ', '%pS', ': ', '%*phD', ' ', '%.*s', ' ', '%pISpc', ' %q']);
  });
});
