import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** `BPF_PROG_TYPE_*` values used to run programs in the kernel. */
export const KernelProgType = { socketFilter: 1, xdp: 6 } as const;

export interface KernelMapSpec {
  type: number;
  keySize: number;
  valueSize: number;
  maxEntries: number;
  /** Value of key 0 before the run (array maps). */
  initialValue?: Uint8Array;
}

export type KernelRunResult =
  | { ok: true; retval: number; durationNs: number; dataOut: Uint8Array; mapValues: Uint8Array[] }
  | { ok: false; errno: number; log: string };

const hex = (b: Uint8Array) => (b.length === 0 ? '-' : Buffer.from(b).toString('hex'));
const mapList = (maps: KernelMapSpec[] | undefined) =>
  maps?.length ? maps.map((m) => `${m.type}:${m.keySize}:${m.valueSize}:${m.maxEntries}${m.initialValue ? `=${hex(m.initialValue)}` : ''}`).join(',') : '-';
/**
 * The program BTF the kernel wants for programs with callbacks (bpf_loop's `BPF_PSEUDO_FUNC`
 * loads) or BPF-to-BPF calls: one static FUNC `fN` of type `long (long, long, long, long, long)`
 * per subprogram, and the subprogram starts for `func_info`. Undefined for a single function.
 */
export function funcInfo(insns: Uint8Array): { btf: Uint8Array; starts: number[] } | undefined {
  const view = new DataView(insns.buffer, insns.byteOffset, insns.byteLength);
  const n = insns.length / 8;
  const starts = new Set<number>([0]);
  for (let i = 0; i < n; i++) {
    const op = insns[i * 8] as number;
    const src = (insns[i * 8 + 1] as number) >> 4;
    if ((op === 0x85 && src === 1) || (op === 0x18 && src === 4)) {
      const t = i + view.getInt32(i * 8 + 4, true) + 1;
      if (t >= 0 && t < n) starts.add(t);
    }
    if (op === 0x18) i++;
  }
  if (starts.size === 1) return undefined;
  const sorted = [...starts].sort((a, b) => a - b);
  const names = ['', 'long', 'a', ...sorted.map((_, k) => `f${k}`)];
  const nameOff: number[] = [];
  let strLen = 0;
  for (const s of names) {
    nameOff.push(strLen);
    strLen += s.length + 1;
  }
  const types: number[] = [
    // [1] INT long: 8 bytes, signed, 64 bits
    nameOff[1] as number, 1 << 24, 8, (1 << 24) | 64,
    // [2] FUNC_PROTO long (long a, long a, long a, long a, long a)
    0, (13 << 24) | 5, 1,
    ...Array.from({ length: 5 }, () => [nameOff[2] as number, 1]).flat(),
    // [3..] FUNC fK, static, of [2]
    ...sorted.flatMap((_, k) => [nameOff[3 + k] as number, 12 << 24, 2]),
  ];
  const btf = new Uint8Array(24 + types.length * 4 + strLen);
  const out = new DataView(btf.buffer);
  out.setUint16(0, 0xeb9f, true);
  out.setUint8(2, 1);
  out.setUint32(4, 24, true); // hdr_len
  out.setUint32(8, 0, true); // type_off
  out.setUint32(12, types.length * 4, true); // type_len
  out.setUint32(16, types.length * 4, true); // str_off
  out.setUint32(20, strLen, true); // str_len
  for (let i = 0; i < types.length; i++) out.setUint32(24 + i * 4, (types[i] as number) >>> 0, true);
  btf.set(new TextEncoder().encode(names.map((s) => `${s}\0`).join('')), 24 + types.length * 4);
  return { btf, starts: sorted };
}

const unhex = (s: string | undefined) => (s === undefined || s === '-' ? new Uint8Array(0) : new Uint8Array(Buffer.from(s, 'hex')));

/**
 * The kernel as a reference: programs through `BPF_PROG_TEST_RUN`, map operations through
 * `BPF_MAP_*`, via a small C helper (bpf-runner.c, built with gcc on first use). Needs root.
 */
export class KernelRunner {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: ((line: string) => void)[] = [];

  private constructor(binary: string) {
    this.child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    createInterface({ input: this.child.stdout }).on('line', (line) => this.waiting.shift()?.(line));
  }

  /** Starts a runner, or says why the kernel cannot be used here. */
  static open(): KernelRunner | { unavailable: string } {
    if (typeof process.getuid === 'function' && process.getuid() !== 0) return { unavailable: 'not root (bpf() needs CAP_BPF)' };
    // beside this file when run from source; in src/node/ when run from dist/node/
    const source = [new URL('./bpf-runner.c', import.meta.url), new URL('../../src/node/bpf-runner.c', import.meta.url)]
      .map((u) => fileURLToPath(u))
      .find((p) => existsSync(p));
    if (source === undefined) return { unavailable: 'bpf-runner.c not found beside kernel-runner' };
    const digest = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
    const binary = join(tmpdir(), `probeyard-bpf-runner-${digest}`);
    if (!existsSync(binary)) {
      // Built aside and renamed into place: a concurrent first run never executes a half-written file.
      const building = `${binary}.${process.pid}.tmp`;
      try {
        execFileSync('gcc', ['-O2', '-o', building, source], { stdio: 'pipe' });
        renameSync(building, binary);
      } catch (e) {
        rmSync(building, { force: true });
        return { unavailable: `gcc could not build bpf-runner: ${(e as Error).message.split('\n')[0]}` };
      }
    }
    const runner = new KernelRunner(binary);
    try {
      // probe: load and run a two-instruction XDP program
      const probe = execFileSync(binary, [], { input: 'prog 6 1 b7000000070000009500000000000000 00000000000000000000000000000000 -\n' })
        .toString()
        .trim();
      if (!probe.startsWith('ok 7 ')) {
        runner.close();
        return { unavailable: `the kernel refused a trivial BPF program: ${probe}` };
      }
    } catch (e) {
      runner.close();
      return { unavailable: `bpf-runner failed: ${(e as Error).message.split('\n')[0]}` };
    }
    return runner;
  }

  private request(line: string): Promise<string> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.stdin.write(`${line}\n`);
    });
  }

  /** Loads and test-runs a program; lddw src 1/2 with imm = i names `maps[i]` (created fresh). */
  async runProgram(options: {
    progType: number;
    insns: Uint8Array;
    data?: Uint8Array;
    repeat?: number;
    maps?: KernelMapSpec[];
  }): Promise<KernelRunResult> {
    const fi = funcInfo(options.insns);
    const line = await this.request(
      `prog ${options.progType} ${options.repeat ?? 1} ${hex(options.insns)} ${hex(options.data ?? new Uint8Array(0))} ${mapList(options.maps)}${fi ? ` ${hex(fi.btf)}:${fi.starts.join(',')}` : ''}`,
    );
    const parts = line.split(' ');
    if (parts[0] !== 'ok') return { ok: false, errno: Number(parts[1]), log: parts.slice(2).join(' ') };
    return {
      ok: true,
      retval: Number(parts[1]),
      durationNs: Number(parts[2]),
      dataOut: unhex(parts[3]),
      mapValues: parts.slice(4).map(unhex),
    };
  }

  /**
   * Loads a tracepoint program, attaches it to tracepoint `tracepointId` (its tracefs `id`; the
   * kernel runs it for every task's events, not only the runner's), makes `syscalls` getppid()
   * calls and returns the kernel's run
   * statistics for the program (`run_cnt`, `run_time_ns` of `bpf_prog_info`, counted while the
   * runner holds `BPF_ENABLE_STATS`), getppid's syscall number on this machine, and the u64
   * value of that (u32) key in map 0 when there is one. Maps as in {@link runProgram}.
   */
  async attachTracepoint(options: { tracepointId: number; syscalls: number; insns: Uint8Array; maps?: KernelMapSpec[] }): Promise<
    { ok: true; runs: number; runTimeNs: number; getppid: number; map0Value: bigint | undefined } | { ok: false; errno: number; log: string }
  > {
    const line = await this.request(`attach ${options.tracepointId} ${options.syscalls} ${hex(options.insns)} ${mapList(options.maps)}`);
    const parts = line.split(' ');
    if (parts[0] !== 'ok') return { ok: false, errno: Number(parts[1]), log: parts.slice(2).join(' ') };
    const value = parts[4];
    return { ok: true, runs: Number(parts[1]), runTimeNs: Number(parts[2]), getppid: Number(parts[3]), map0Value: value === '-' || value === undefined ? undefined : BigInt(value) };
  }

  async mapCreate(spec: KernelMapSpec, flags = 0): Promise<number> {
    const [kind, n] = (await this.request(`map ${spec.type} ${spec.keySize} ${spec.valueSize} ${spec.maxEntries} ${flags}`)).split(' ');
    return kind === 'fd' ? Number(n) : -Number(n);
  }

  async mapUpdate(fd: number, key: Uint8Array, value: Uint8Array, flags = 0): Promise<number> {
    return Number((await this.request(`update ${fd} ${hex(key)} ${hex(value)} ${flags}`)).split(' ')[1]);
  }

  async mapLookup(fd: number, key: Uint8Array, valueSize: number): Promise<Uint8Array | number> {
    const [, r, v] = (await this.request(`lookup ${fd} ${hex(key)} ${valueSize}`)).split(' ');
    return Number(r) === 0 ? unhex(v) : Number(r);
  }

  async mapDelete(fd: number, key: Uint8Array): Promise<number> {
    return Number((await this.request(`delete ${fd} ${hex(key)}`)).split(' ')[1]);
  }

  async mapNextKey(fd: number, key: Uint8Array | undefined, keySize: number): Promise<Uint8Array | number> {
    const [, r, k] = (await this.request(`next ${fd} ${key ? hex(key) : '-'} ${keySize}`)).split(' ');
    return Number(r) === 0 ? unhex(k) : Number(r);
  }

  async closeFd(fd: number): Promise<void> {
    await this.request(`close ${fd}`);
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}
