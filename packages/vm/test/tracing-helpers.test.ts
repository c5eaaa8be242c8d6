import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createEventRuntime,
  createMap,
  Errno,
  type HelperEnvironment,
  loadAssembly,
  loadProgramOrThrow,
  MapType,
  type QueueStackMap,
  RunStatus,
  snapshotMap,
  STACK_REGION,
  Vm,
  type VmTier,
} from '../src/index.js';
import { expectedResults, queueStackCase, queueStackProgram, resultBytes } from './queue-stack-program.js';

// The helpers of tracing-helpers.ts on both tiers: every result and every error path, the bytes
// they write (or zero), and the faults of bad pointer arguments.

const TIERS: VmTier[] = ['interpreter', 'compiled'];
const TS = 0x1234_89abcdefn;
const err = (e: number) => BigInt.asUintN(64, BigInt(-e));

interface Setup {
  environment?: HelperEnvironment;
  pid?: number;
  cpu?: number;
}

function run(tier: VmTier, source: string, setup: Setup = {}) {
  const { vm, maps, programs } = loadAssembly(source, { tier, environment: setup.environment });
  const program = [...programs.values()][0]!;
  expect(vm.tierOf(program)).toBe(tier);
  vm.cpu = setup.cpu ?? 1;
  vm.timeLo = Number(TS & 0xffffffffn) | 0;
  vm.timeHi = Number(TS >> 32n);
  vm.pid = setup.pid ?? 4242;
  const status = vm.run(program, new Uint8Array(16));
  const stack = vm.regionBytes[STACK_REGION] as Uint8Array;
  /** `n` bytes of frame 0 from r10 - `below`. */
  const frame = (below: number, n: number) => [...stack.subarray(4096 - below, 4096 - below + n)];
  return { vm, maps, status, r0: vm.r0, fault: vm.fault?.message, frame };
}

describe.each(TIERS)('tracing helpers (%s)', (tier) => {
  describe('clocks, ids and the cookie', () => {
    const jiffies = (hz: bigint) => ((1n << 32n) - 300n * hz) + (TS * hz) / 1_000_000_000n;
    it.each<[string, string, Setup, bigint]>([
      ['ktime_get_coarse_ns = the record timestamp', 'call bpf_ktime_get_coarse_ns', {}, TS],
      ['ktime_get_tai_ns without an offset = the record timestamp', 'call bpf_ktime_get_tai_ns', {}, TS],
      ['ktime_get_tai_ns + taiOffsetNs', 'call bpf_ktime_get_tai_ns', { environment: { taiOffsetNs: 37_000_000_000 } }, TS + 37_000_000_000n],
      ['ktime_get_tai_ns wraps at 2^64', 'call bpf_ktime_get_tai_ns', { environment: { taiOffsetNs: -TS - 1n } }, (1n << 64n) - 1n],
      ['jiffies64 at HZ 250 (INITIAL_JIFFIES + ts × HZ / 1e9)', 'call bpf_jiffies64', {}, jiffies(250n)],
      ['jiffies64 at HZ 1000', 'call bpf_jiffies64', { environment: { hz: 1000 } }, jiffies(1000n)],
      ['jiffies64 with an invalid hz falls back to 250', 'call bpf_jiffies64', { environment: { hz: 0 } }, jiffies(250n)],
      ['get_attach_cookie without a cookie = 0', 'r1 = r1\ncall bpf_get_attach_cookie', {}, 0n],
      ['get_attach_cookie (number)', 'call bpf_get_attach_cookie', { environment: { attachCookie: 7 } }, 7n],
      ['get_attach_cookie (64-bit bigint)', 'call bpf_get_attach_cookie', { environment: { attachCookie: 0xfedc_ba98_7654_3210n } }, 0xfedc_ba98_7654_3210n],
      ['get_current_cgroup_id unknown = 0', 'call bpf_get_current_cgroup_id', {}, 0n],
      ['get_current_cgroup_id from cgroupIdOf', 'call bpf_get_current_cgroup_id', { environment: { cgroupIdOf: (pid) => (pid === 4242 ? 8_888 : undefined) } }, 8888n],
      ['get_current_cgroup_id of another pid = 0', 'call bpf_get_current_cgroup_id', { pid: 7, environment: { cgroupIdOf: (pid) => (pid === 4242 ? 8_888 : undefined) } }, 0n],
      ['get_current_cgroup_id (bigint)', 'call bpf_get_current_cgroup_id', { environment: { cgroupIdOf: () => (1n << 63n) + 5n } }, (1n << 63n) + 5n],
      ['get_current_task: a token per pid', 'call bpf_get_current_task', {}, 0xffff8880_00000000n + 4242n * 0x2000n],
      ['get_current_task of pid 0 is not NULL', 'call bpf_get_current_task', { pid: 0 }, 0xffff8880_00000000n],
      ['get_current_task of pid 4194304 (PID_MAX_LIMIT)', 'call bpf_get_current_task', { pid: 4194304 }, 0xffff8880_00000000n + 4194304n * 0x2000n],
    ])('%s', (_what, call, setup, expected) => {
      const r = run(tier, `${call}\nexit`, setup);
      expect(r.status).toBe(RunStatus.ok);
      expect(r.r0).toBe(expected);
    });

    it('the current task is not a pointer: probe_read through it gives -EFAULT and zeroes', () => {
      const r = run(
        tier,
        `*(u64 *)(r10 - 8) = -1
         call bpf_get_current_task
         r3 = r0
         r1 = r10
         r1 += -8
         r2 = 8
         call bpf_probe_read_kernel
         exit`,
      );
      expect(r.r0).toBe(err(Errno.EFAULT));
      expect(r.frame(8, 8)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    });
  });

  describe('cgroup helpers: no cgroup in a record', () => {
    const underCgroup = (idx: string) => `.map cg cgroup_array key=4 value=4 entries=2
      r1 = cg ll
      r2 = ${idx}
      call bpf_current_task_under_cgroup
      exit`;
    it.each<[string, string, Setup, bigint]>([
      ['current_task_under_cgroup of an empty slot: -EAGAIN (the kernel answer)', underCgroup('1'), {}, err(Errno.EAGAIN)],
      ['current_task_under_cgroup past the array: -E2BIG', underCgroup('2'), {}, err(Errno.E2BIG)],
      ['current_task_under_cgroup: taskUnderCgroup says yes', underCgroup('0'), { environment: { taskUnderCgroup: (pid, idx) => pid === 4242 && idx === 0 } }, 1n],
      ['current_task_under_cgroup: taskUnderCgroup says no', underCgroup('0'), { pid: 7, environment: { taskUnderCgroup: (pid, idx) => pid === 4242 && idx === 0 } }, 0n],
      ['get_current_ancestor_cgroup_id: 0 (no cgroup known)', 'r1 = 1\ncall bpf_get_current_ancestor_cgroup_id', {}, 0n],
      ['get_current_task_btf: the get_current_task token', 'call bpf_get_current_task_btf', {}, 0xffff8880_00000000n + 4242n * 0x2000n],
    ])('%s', (_what, source, setup, expected) => {
      const r = run(tier, source.includes('exit') ? source : `${source}\nexit`, setup);
      expect(r.status).toBe(RunStatus.ok);
      expect(r.r0).toBe(expected);
    });

    it('current_task_under_cgroup on another map type faults', () => {
      const r = run(tier, '.map h hash key=4 value=4 entries=2\nr1 = h ll\nr2 = 0\ncall bpf_current_task_under_cgroup\nexit');
      expect(r.status).toBe(RunStatus.fault);
      expect(r.fault).toContain('bpf_current_task_under_cgroup: r1 is not a cgroup array');
    });
  });

  describe('failed probe reads are counted as kernel or user memory', () => {
    it.each<[string, number, number]>([
      ['bpf_probe_read_kernel', 1, 0],
      ['bpf_probe_read_kernel_str', 1, 0],
      ['bpf_probe_read', 1, 0],
      ['bpf_probe_read_str', 1, 0],
      ['bpf_probe_read_user', 0, 1],
      ['bpf_probe_read_user_str', 0, 1],
    ])('%s of an address outside the VM', (helper, kernel, user) => {
      const r = run(tier, `call bpf_get_current_task\nr3 = r0\nr1 = r10\nr1 += -8\nr2 = 8\ncall ${helper}\nexit`);
      expect(r.r0).toBe(err(Errno.EFAULT));
      expect([r.vm.kernelReadsFailed, r.vm.userReadsFailed]).toEqual([kernel, user]);
    });

    it('a read of the record is not counted', () => {
      const r = run(tier, 'r3 = r1\nr1 = r10\nr1 += -8\nr2 = 8\ncall bpf_probe_read_kernel\nexit');
      expect(r.r0).toBe(0n);
      expect([r.vm.kernelReadsFailed, r.vm.userReadsFailed]).toEqual([0, 0]);
    });

    it('an event runtime counts them per program', () => {
      const { programs } = loadAssembly('call bpf_get_current_task\nr3 = r0\nr1 = r10\nr1 += -8\nr2 = 8\ncall bpf_probe_read_kernel\nexit', { tier });
      const bytes = [...programs.values()][0]!.bytes;
      const runtime = createEventRuntime((vm) => loadProgramOrThrow(bytes, vm.loadOptions('reads')), { tier });
      for (let i = 0; i < 3; i++) runtime.runEvent({ cpu: 0, timestamp: i, data: new Uint8Array(8) });
      expect(runtime.counters.kernelReadsFailed).toBe(3);
      expect(runtime.counters.userReadsFailed).toBe(0);
    });
  });

  describe('send_signal and send_signal_thread', () => {
    it.each<[string, string, number, number | undefined, bigint, string[]]>([
      ['no sendSignal: -EPERM', 'r1 = 9\ncall bpf_send_signal', 4242, undefined, err(Errno.EPERM), []],
      ['an invalid signal: -EINVAL', 'r1 = 65\ncall bpf_send_signal', 4242, 0, err(Errno.EINVAL), []],
      ['signal 64 is valid', 'r1 = 64\ncall bpf_send_signal', 4242, 0, 0n, ['4242 64 process']],
      ['signal 0 is valid', 'r1 = 0\ncall bpf_send_signal_thread', 4242, 0, 0n, ['4242 0 thread']],
      ['the thread form', 'r1 = 15\ncall bpf_send_signal_thread', 4242, 0, 0n, ['4242 15 thread']],
      ["the delegate's errno", 'r1 = 9\ncall bpf_send_signal', 4242, -3, err(3), ['4242 9 process']],
      ['sig is a u32: high bits are dropped', 'r1 = 0x100000009 ll\ncall bpf_send_signal', 4242, 0, 0n, ['4242 9 process']],
      ['the idle task (pid 0): -EPERM first', 'r1 = 65\ncall bpf_send_signal', 0, 0, err(Errno.EPERM), []],
      ['init (tgid 1): -EPERM first', 'r1 = 65\ncall bpf_send_signal_thread', 1, 0, err(Errno.EPERM), []],
      ['a thread of init (tgid 1): -EPERM', 'r1 = 9\ncall bpf_send_signal', 17, 0, err(Errno.EPERM), []],
    ])('%s', (_what, call, pid, answer, expected, calls) => {
      const seen: string[] = [];
      const environment: HelperEnvironment = { tgidOf: (p) => (p === 17 ? 1 : undefined) };
      if (answer !== undefined) {
        environment.sendSignal = (p, sig, thread) => {
          seen.push(`${p} ${sig} ${thread ? 'thread' : 'process'}`);
          return answer;
        };
      }
      const r = run(tier, `${call}\nexit`, { pid, environment });
      expect(r.status).toBe(RunStatus.ok);
      expect(r.r0).toBe(expected);
      expect(seen).toEqual(calls);
    });
  });

  describe('get_ns_current_pid_tgid', () => {
    const call = (dev: string, ino: string, size: number) => `
      *(u64 *)(r10 - 16) = -1
      *(u64 *)(r10 - 8) = -1
      r1 = ${dev} ll
      r2 = ${ino} ll
      r3 = r10
      r3 += -16
      r4 = ${size}
      call bpf_get_ns_current_pid_tgid
      exit`;
    const ns = { dev: 4, ino: 4026531836n };
    const environment: HelperEnvironment = { pidNamespace: ns, tgidOf: () => 4200 };
    const ff = [255, 255, 255, 255, 255, 255, 255, 255];
    it.each<[string, string, HelperEnvironment, bigint, number[]]>([
      ['the namespace: pid and tgid, 0', call('4', '4026531836', 8), environment, 0n, [0x92, 0x10, 0, 0, 0x68, 0x10, 0, 0, ...ff]],
      ['size 12: -EINVAL, 12 bytes zeroed', call('4', '4026531836', 12), environment, err(Errno.EINVAL), [...new Array(12).fill(0), 255, 255, 255, 255]],
      ['dev beyond 32 bits: -EINVAL', call('0x100000004', '4026531836', 8), environment, err(Errno.EINVAL), [...new Array(8).fill(0), ...ff]],
      ['another inode: -EINVAL (ns_match fails)', call('4', '4026531837', 8), environment, err(Errno.EINVAL), [...new Array(8).fill(0), ...ff]],
      ['another dev: -EINVAL', call('5', '4026531836', 8), environment, err(Errno.EINVAL), [...new Array(8).fill(0), ...ff]],
      ['no pid namespace known: -ENOENT', call('4', '4026531836', 8), {}, err(Errno.ENOENT), [...new Array(8).fill(0), ...ff]],
    ])('%s', (_what, source, env, expected, bytes) => {
      const r = run(tier, source, { environment: env });
      expect(r.status).toBe(RunStatus.ok);
      expect(r.r0).toBe(expected);
      expect(r.frame(16, 16)).toEqual(bytes);
    });

    it('nsdata outside memory faults', () => {
      const r = run(tier, 'r1 = 4\nr2 = 4026531836 ll\nr3 = r10\nr3 += -4\nr4 = 8\ncall bpf_get_ns_current_pid_tgid\nexit', { environment });
      expect(r.status).toBe(RunStatus.fault);
      expect(r.fault).toMatch(/^helper fault: bpf_get_ns_current_pid_tgid nsdata \(r3\): 8 bytes are not inside one memory region at pc 6/);
    });
  });

  describe('get_stack and get_stackid: no call chain in a record', () => {
    const getStack = (size: number, flags: string) => `
      *(u64 *)(r10 - 48) = -1
      *(u64 *)(r10 - 40) = -1
      *(u64 *)(r10 - 32) = -1
      *(u64 *)(r10 - 24) = -1
      *(u64 *)(r10 - 16) = -1
      *(u64 *)(r10 - 8) = -1
      r2 = r10
      r2 += -48
      r3 = ${size}
      r4 = ${flags} ll
      call bpf_get_stack
      exit`;
    it.each<[string, string, bigint, number]>([
      ['kernel stack: -EFAULT, buffer zeroed', getStack(48, '0'), err(Errno.EFAULT), 48],
      ['user stack, skip 3: -EFAULT', getStack(40, '0x103'), err(Errno.EFAULT), 40],
      ['user build ids, 32 bytes a frame: -EFAULT', getStack(32, '0x900'), err(Errno.EFAULT), 32],
      ['build ids of a kernel stack: -EINVAL', getStack(32, '0x800'), err(Errno.EINVAL), 32],
      ['a size not a multiple of 8: -EINVAL', getStack(12, '0'), err(Errno.EINVAL), 12],
      ['build ids, size not a multiple of 32: -EINVAL', getStack(40, '0x900'), err(Errno.EINVAL), 40],
      ['unknown flag (BPF_F_FAST_STACK_CMP is get_stackid\'s): -EINVAL', getStack(16, '0x200'), err(Errno.EINVAL), 16],
      ['flags above 32 bits: -EINVAL', getStack(16, '0x100000000'), err(Errno.EINVAL), 16],
    ])('%s', (_what, source, expected, zeroed) => {
      const r = run(tier, source);
      expect(r.status).toBe(RunStatus.ok);
      expect(r.r0).toBe(expected);
      expect(r.frame(48, 48)).toEqual([...new Array(zeroed).fill(0), ...new Array(48 - zeroed).fill(255)]);
    });

    it('size 0 with a NULL buffer: -EFAULT, nothing written', () => {
      const r = run(tier, 'r2 = 0\nr3 = 0\nr4 = 0\ncall bpf_get_stack\nexit');
      expect(r.status).toBe(RunStatus.ok);
      expect(r.r0).toBe(err(Errno.EFAULT));
    });

    it('a buffer that leaves the stack faults', () => {
      const r = run(tier, 'r2 = r10\nr2 += -8\nr3 = 16\nr4 = 0\ncall bpf_get_stack\nexit');
      expect(r.status).toBe(RunStatus.fault);
      expect(r.fault).toMatch(/^helper fault: bpf_get_stack buffer \(r2\): 16 bytes are not inside one memory region at pc 4/);
    });

    const getStackid = (flags: string) => `.map stacks stack_trace key=4 value=1016 entries=1024
      r2 = stacks ll
      r3 = ${flags} ll
      call bpf_get_stackid
      exit`;
    it.each<[string, string, bigint]>([
      ['flags 0: -EFAULT', '0', err(Errno.EFAULT)],
      ['every known flag (skip, user, fast cmp, reuse): -EFAULT', '0x7ff', err(Errno.EFAULT)],
      ['BPF_F_USER_BUILD_ID is not get_stackid\'s: -EINVAL', '0x800', err(Errno.EINVAL)],
      ['flags above 32 bits: -EINVAL', '0x100000000', err(Errno.EINVAL)],
    ])('get_stackid, %s', (_what, flags, expected) => {
      const r = run(tier, getStackid(flags));
      expect(r.status).toBe(RunStatus.ok);
      expect(r.r0).toBe(expected);
      expect([...(r.maps.get('stacks')?.keys() ?? [])]).toEqual([]);
    });

    it('get_stackid on a map that is not a stack trace map faults', () => {
      const r = run(tier, '.map h hash key=4 value=8 entries=4\nr2 = h ll\nr3 = 0\ncall bpf_get_stackid\nexit');
      expect(r.status).toBe(RunStatus.fault);
      expect(r.fault).toMatch(/^helper fault: bpf_get_stackid: r2 is not a stack trace map at pc 3/);
    });
  });

  describe('perf_event_read and perf_event_read_value: no counters in the VM', () => {
    const read = (flags: string) => `.map perf perf_event_array key=4 value=4 entries=4
      r1 = perf ll
      r2 = ${flags} ll
      call bpf_perf_event_read
      exit`;
    it.each<[string, string, number, bigint]>([
      ['index 0: -ENOENT', '0', 1, err(Errno.ENOENT)],
      ['index 3: -ENOENT', '3', 1, err(Errno.ENOENT)],
      ['index 4, past the array: -E2BIG', '4', 1, err(Errno.E2BIG)],
      ['BPF_F_CURRENT_CPU on CPU 1: -ENOENT', '0xffffffff', 1, err(Errno.ENOENT)],
      ['BPF_F_CURRENT_CPU on CPU 7: -E2BIG', '0xffffffff', 7, err(Errno.E2BIG)],
      ['flags beyond the index: -EINVAL', '0x100000000', 1, err(Errno.EINVAL)],
    ])('perf_event_read, %s', (_what, flags, cpu, expected) => {
      const r = run(tier, read(flags), { cpu });
      expect(r.status).toBe(RunStatus.ok);
      expect(r.r0).toBe(expected);
    });

    const readValue = (flags: string, size: number) => `.map perf perf_event_array key=4 value=4 entries=4
      *(u64 *)(r10 - 32) = -1
      *(u64 *)(r10 - 24) = -1
      *(u64 *)(r10 - 16) = -1
      *(u64 *)(r10 - 8) = -1
      r1 = perf ll
      r2 = ${flags} ll
      r3 = r10
      r3 += -32
      r4 = ${size}
      call bpf_perf_event_read_value
      exit`;
    it.each<[string, string, number, bigint, number]>([
      ['size 24, index 1: -ENOENT, zeroed', '1', 24, err(Errno.ENOENT), 24],
      ['size 24, past the array: -E2BIG, zeroed', '9', 24, err(Errno.E2BIG), 24],
      ['size 24, bad flags: -EINVAL, zeroed', '0x100000000', 24, err(Errno.EINVAL), 24],
      ['size 16: -EINVAL, zeroed', '1', 16, err(Errno.EINVAL), 16],
      ['size 32: -EINVAL, zeroed', '1', 32, err(Errno.EINVAL), 32],
    ])('perf_event_read_value, %s', (_what, flags, size, expected, zeroed) => {
      const r = run(tier, readValue(flags, size));
      expect(r.status).toBe(RunStatus.ok);
      expect(r.r0).toBe(expected);
      expect(r.frame(32, 32)).toEqual([...new Array(zeroed).fill(0), ...new Array(32 - zeroed).fill(255)]);
    });

    it('a buffer outside memory faults', () => {
      const r = run(tier, '.map perf perf_event_array key=4 value=4 entries=4\nr1 = perf ll\nr2 = 0\nr3 = 0\nr4 = 24\ncall bpf_perf_event_read_value\nexit');
      expect(r.status).toBe(RunStatus.fault);
      expect(r.fault).toMatch(/^helper fault: bpf_perf_event_read_value buffer \(r3\): 24 bytes are not inside one memory region at pc 5/);
    });

    it('perf_event_read on a map that is not a perf event array faults', () => {
      const r = run(tier, '.map a array key=4 value=8 entries=4\nr1 = a ll\nr2 = 0\ncall bpf_perf_event_read\nexit');
      expect(r.status).toBe(RunStatus.fault);
      expect(r.fault).toMatch(/^helper fault: bpf_perf_event_read: r1 is not a perf event array at pc 3/);
    });
  });

  describe('queue and stack maps', () => {
    it('random push/pop/peek sequences give the kernel model\'s r0s and values', () => {
      const cases = fc.sample(queueStackCase, { numRuns: 150, seed: 20261130 });
      for (const c of cases) {
        const maps = [
          createMap({ name: 'results', type: MapType.array, keySize: 4, valueSize: resultBytes(c), maxEntries: 1 }),
          createMap({ name: 'q', type: c.type, keySize: 0, valueSize: c.valueSize, maxEntries: c.maxEntries }),
        ];
        const vm = new Vm({ tier, maps });
        const program = loadProgramOrThrow(queueStackProgram(c), vm.loadOptions('seq'));
        expect(vm.tierOf(program)).toBe(tier);
        expect(vm.run(program, new Uint8Array(16))).toBe(RunStatus.ok);
        expect([c, maps[0]?.lookup(new Uint8Array(4))]).toEqual([c, expectedResults(c)]);
      }
    });

    it('a queue hands out the oldest value, a stack the newest; snapshots list them in pop order', () => {
      for (const [type, order] of [['queue', [1, 2, 3]], ['stack', [3, 2, 1]]] as const) {
        const r = run(
          tier,
          `.map m ${type} key=0 value=8 entries=3
           r6 = 1
         push:
           *(u64 *)(r10 - 8) = r6
           r1 = m ll
           r2 = r10
           r2 += -8
           r3 = 0
           call bpf_map_push_elem
           r6 += 1
           if r6 < 4 goto push
           r1 = m ll
           r2 = r10
           r2 += -8
           call bpf_map_peek_elem
           r0 = *(u64 *)(r10 - 8)
           exit`,
        );
        expect(r.status).toBe(RunStatus.ok);
        expect(r.r0).toBe(BigInt(order[0]));
        const snap = snapshotMap(r.maps.get('m')!, { key: { kind: 'int', size: 4 }, value: { kind: 'int', size: 8 } });
        expect(snap).toMatchObject({ type, keySize: 0, valueSize: 8, maxEntries: 3 });
        expect(snap.entries.map((e) => e.typedValues?.[0])).toEqual(order.map(BigInt));
        expect(snap.entries.every((e) => e.key.length === 0 && e.typedKey === undefined)).toBe(true);
      }
    });

    it.each([
      ['push', 'r3 = 0\ncall bpf_map_push_elem', 'bpf_map_push_elem value'],
      ['pop', 'call bpf_map_pop_elem', 'bpf_map_pop_elem value'],
      ['peek', 'call bpf_map_peek_elem', 'bpf_map_peek_elem value'],
    ])('%s with a value pointer that leaves the stack faults', (_what, call, name) => {
      const r = run(tier, `.map q queue key=0 value=16 entries=2\nr1 = q ll\nr2 = r10\nr2 += -8\n${call}\nexit`);
      expect(r.status).toBe(RunStatus.fault);
      expect(r.fault).toMatch(new RegExp(`^helper fault: ${name} \\(r2\\): 16 bytes are not inside one memory region at pc \\d`));
    });

    it('push on a map that is not a queue or stack faults', () => {
      const r = run(tier, '.map h hash key=4 value=8 entries=4\nr1 = h ll\nr2 = r10\nr2 += -8\nr3 = 0\ncall bpf_map_push_elem\nexit');
      expect(r.status).toBe(RunStatus.fault);
      expect(r.fault).toMatch(/^helper fault: bpf_map_push_elem: r1 is not a queue or stack map at pc 5/);
    });
  });
});

describe('helpers the VM provides', () => {
  // the verifier accepts calls to the helpers of its prototype table; each must run here
  const protos = new URL('../../verifier/src/helper-protos.ts', import.meta.url);
  it.skipIf(!existsSync(protos))('include every helper a tracepoint program may call (packages/verifier helper-protos.ts)', () => {
    const ids = [...readFileSync(protos, 'utf8').matchAll(/\bid: (\d+),/g)].map((m) => Number(m[1]));
    expect(ids.length).toBeGreaterThan(30); // the regex found the table
    const vm = new Vm();
    expect(ids.filter((id) => vm.helperTable[id] === undefined)).toEqual([]);
  });

  it('an event runtime passes the attach cookie and the clocks through its VM options', () => {
    const { programs } = loadAssembly('call bpf_get_attach_cookie\nexit');
    const bytes = [...programs.values()][0]!.bytes;
    const runtime = createEventRuntime((vm) => loadProgramOrThrow(bytes, vm.loadOptions('cookie')), { environment: { attachCookie: 0xc00c1en } });
    expect(runtime.runEvent({ cpu: 0, timestamp: 5, data: new Uint8Array(8) })).toBe(RunStatus.ok);
    expect(runtime.vm.r0).toBe(0xc00c1en);
  });

  it('a queue map in user space: update pushes, lookup peeks, lookupAndDelete pops, delete and get_next_key -EINVAL', () => {
    const q = createMap({ name: 'q', type: MapType.queue, keySize: 0, valueSize: 4, maxEntries: 2 }) as QueueStackMap;
    const none = new Uint8Array(0);
    expect(q.update(none, Uint8Array.of(1, 0, 0, 0))).toBe(0);
    expect(q.update(none, Uint8Array.of(2, 0, 0, 0))).toBe(0);
    expect(q.update(none, Uint8Array.of(3, 0, 0, 0))).toBe(-Errno.E2BIG);
    expect(q.update(none, Uint8Array.of(3, 0, 0, 0), 2)).toBe(0);
    expect(q.lookup(none)).toEqual(Uint8Array.of(2, 0, 0, 0));
    expect(q.lookupAndDelete()).toEqual(Uint8Array.of(2, 0, 0, 0));
    expect(q.lookupAndDelete()).toEqual(Uint8Array.of(3, 0, 0, 0));
    expect(q.lookupAndDelete()).toBeUndefined();
    expect(q.delete(none)).toBe(-Errno.EINVAL);
    expect(q.getNextKey(undefined)).toBe(-Errno.EINVAL);
  });
});
