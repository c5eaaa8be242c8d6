// Loads programs into the running kernel's verifier (BPF_PROG_LOAD as BPF_PROG_TYPE_TRACEPOINT)
// through a small C helper compiled with gcc on first use: the reference for differential tests.
// Needs root (or CAP_BPF + CAP_PERFMON) and gcc.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { MapDef } from '../types.js';

/** What the kernel said about one program. */
export interface KernelVerdict {
  ok: boolean;
  /** `errno` of BPF_PROG_LOAD (0 when loaded; 13 EACCES, 22 EINVAL, 7 E2BIG … when refused). */
  errno: number;
  /** `verification time N usec` from the log, when printed. */
  verificationUsec: number | null;
  /** `processed N insns` from the log, when printed. */
  insnsProcessed: number | null;
  /** The last message line before the statistics (the reason of a refusal). */
  message: string;
  log: string;
}

const HELPER_SOURCE = String.raw`/* Loads one program into the running kernel as BPF_PROG_TYPE_TRACEPOINT and prints the verdict.
 * Used by the kernel differential tests and the fuzz:kernel script (compiled with gcc at run time).
 *
 * Input on stdin, one request per line, until EOF:
 *   [T<prog type> ] MAPS <type>,<key>,<value>,<entries>;...   (or MAPS - for none)  then a space and
 *   <hex bytes of the instructions>   (prog type default BPF_PROG_TYPE_TRACEPOINT)
 * 'lddw rX, map[fd:N]' (src_reg 1) refers to the N-th map of the MAPS list; its imm is replaced by
 * the map's real fd. For each request one line is printed:
 *   <ok 0|1> <errno> <verification usec or -1> <log with \n escaped as \\n>
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr) { return syscall(__NR_bpf, cmd, attr, sizeof(*attr)); }

/* Programs with subprograms (bpf-to-bpf calls, callbacks) get a minimal BTF: 'long' and, per
 * subprogram, a static FUNC 'fN' whose FUNC_PROTO takes five longs named 'a', plus one func_info record per
 * subprogram start (the kernel needs them for callbacks such as bpf_loop's). */
#define MAX_SUBPROGS 64
static unsigned char btf_buf[65536];
static int build_btf(const struct bpf_insn *insns, size_t count, struct bpf_func_info *info, int *ninfo) {
  unsigned starts[MAX_SUBPROGS];
  int n = 1;
  starts[0] = 0;
  for (size_t i = 0; i < count; i++) {
    int is_call = insns[i].code == (BPF_JMP | BPF_CALL) && insns[i].src_reg == BPF_PSEUDO_CALL;
    int is_func = insns[i].code == (BPF_LD | BPF_DW | BPF_IMM) && insns[i].src_reg == BPF_PSEUDO_FUNC;
    if (is_call || is_func) {
      long t = (long)i + insns[i].imm + 1;
      if (t < 0 || (size_t)t >= count) continue;
      int seen = 0;
      for (int k = 0; k < n; k++) seen |= starts[k] == (unsigned)t;
      if (!seen && n < MAX_SUBPROGS) starts[n++] = (unsigned)t;
    }
    if (insns[i].code == (BPF_LD | BPF_DW | BPF_IMM)) i++;
  }
  if (n == 1) return -1;
  for (int a = 1; a < n; a++) /* sort the starts */
    for (int b = a; b > 0 && starts[b - 1] > starts[b]; b--) { unsigned x = starts[b]; starts[b] = starts[b - 1]; starts[b - 1] = x; }
  char strs[1024];
  int slen = 0;
  strs[slen++] = 0;
  int long_name = slen;
  slen += sprintf(strs + slen, "long") + 1;
  int arg_name = slen; /* a FUNC's parameters need names */
  slen += sprintf(strs + slen, "a") + 1;
  int fname[MAX_SUBPROGS];
  for (int k = 0; k < n; k++) { fname[k] = slen; slen += sprintf(strs + slen, "f%d", k) + 1; }
  __u32 types[2048];
  int t = 0;
  /* [1] INT long: 8 bytes, signed, 64 bits */
  types[t++] = (__u32)long_name; types[t++] = 1u << 24; types[t++] = 8; types[t++] = (1u << 24) | 64;
  /* [2] FUNC_PROTO long (long, long, long, long, long) */
  types[t++] = 0; types[t++] = (13u << 24) | 5; types[t++] = 1;
  for (int k = 0; k < 5; k++) { types[t++] = (__u32)arg_name; types[t++] = 1; }
  /* [3..] FUNC fN, static, proto [2] */
  for (int k = 0; k < n; k++) {
    types[t++] = (__u32)fname[k]; types[t++] = 12u << 24; types[t++] = 2;
    info[k].insn_off = starts[k];
    info[k].type_id = (__u32)(3 + k);
  }
  *ninfo = n;
  struct btf_header h;
  memset(&h, 0, sizeof h);
  h.magic = 0xeB9F; h.version = 1; h.hdr_len = sizeof h;
  h.type_off = 0; h.type_len = (__u32)(t * 4); h.str_off = h.type_len; h.str_len = (__u32)slen;
  memcpy(btf_buf, &h, sizeof h);
  memcpy(btf_buf + sizeof h, types, (size_t)t * 4);
  memcpy(btf_buf + sizeof h + (size_t)t * 4, strs, (size_t)slen);
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.btf = (uint64_t)(uintptr_t)btf_buf;
  a.btf_size = (__u32)(sizeof h + (size_t)t * 4 + (size_t)slen);
  static char btf_log[4096];
  btf_log[0] = 0;
  a.btf_log_buf = (uint64_t)(uintptr_t)btf_log;
  a.btf_log_size = sizeof btf_log;
  a.btf_log_level = 1;
  int fd = (int)sys_bpf(BPF_BTF_LOAD, &a);
  if (fd < 0) fprintf(stderr, "btf load: errno %d: %s\n", errno, btf_log);
  return fd;
}

static char log_buf[1 << 22];
static char line[1 << 24];

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int main(void) {
  static struct bpf_insn insns[1000000 + 1];
  while (fgets(line, sizeof line, stdin)) {
    char *maps = strtok(line, " \n");
    unsigned prog_type = BPF_PROG_TYPE_TRACEPOINT;
    if (maps && maps[0] == 'T') {
      prog_type = (unsigned)strtoul(maps + 1, NULL, 10);
      maps = strtok(NULL, " \n");
    }
    char *hex = strtok(NULL, " \n");
    if (!maps || !hex) { printf("0 22 -1 bad request\n"); fflush(stdout); continue; }
    int fds[64];
    int nmaps = 0;
    if (strcmp(maps, "MAPS") == 0) { /* request format: MAPS <spec> <hex> */
      maps = hex;
      hex = strtok(NULL, " \n");
      if (!hex) { printf("0 22 -1 bad request\n"); fflush(stdout); continue; }
    }
    int map_err = 0;
    if (strcmp(maps, "-") != 0) {
      char *save = NULL;
      for (char *m = strtok_r(maps, ";", &save); m && nmaps < 64; m = strtok_r(NULL, ";", &save)) {
        unsigned type, key, value, entries;
        if (sscanf(m, "%u,%u,%u,%u", &type, &key, &value, &entries) != 4) { map_err = EINVAL; break; }
        union bpf_attr a;
        memset(&a, 0, sizeof a);
        a.map_type = type;
        a.key_size = key;
        a.value_size = value;
        a.max_entries = entries;
        int fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
        if (fd < 0) { map_err = errno; break; }
        fds[nmaps++] = fd;
      }
    }
    size_t n = strlen(hex) / 2;
    size_t count = n / 8;
    unsigned char *bytes = (unsigned char *)insns;
    for (size_t i = 0; i < count * 8; i++) bytes[i] = (unsigned char)(hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]));
    if (!map_err) {
      for (size_t i = 0; i + 1 < count; i++) {
        if (insns[i].code == (BPF_LD | BPF_DW | BPF_IMM) && (insns[i].src_reg == 1 || insns[i].src_reg == 2)) {
          if (insns[i].imm >= 0 && insns[i].imm < nmaps) insns[i].imm = fds[insns[i].imm];
          else insns[i].imm = 1 << 30;
          i++;
        }
      }
    }
    if (map_err) {
      printf("0 %d -1 map create failed\n", map_err);
    } else {
      union bpf_attr a;
      memset(&a, 0, sizeof a);
      a.prog_type = prog_type;
      a.insn_cnt = (uint32_t)count;
      a.insns = (uint64_t)(uintptr_t)insns;
      a.license = (uint64_t)(uintptr_t)"GPL";
      static struct bpf_func_info finfo[MAX_SUBPROGS];
      int nfinfo = 0;
      int btf_fd = build_btf(insns, count, finfo, &nfinfo);
      if (btf_fd >= 0) {
        a.prog_btf_fd = (__u32)btf_fd;
        a.func_info_rec_size = sizeof(struct bpf_func_info);
        a.func_info = (uint64_t)(uintptr_t)finfo;
        a.func_info_cnt = (__u32)nfinfo;
      }
      a.log_level = 1 | 4; /* BPF_LOG_LEVEL1 | BPF_LOG_STATS */
      a.log_size = sizeof log_buf;
      a.log_buf = (uint64_t)(uintptr_t)log_buf;
      log_buf[0] = 0;
      int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
      int err = fd < 0 ? errno : 0;
      if (err == ENOSPC) { /* log too small: retry with stats only */
        a.log_level = 4;
        log_buf[0] = 0;
        fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
        err = fd < 0 ? errno : 0;
      }
      long usec = -1;
      char *v = strstr(log_buf, "verification time ");
      if (v) usec = strtol(v + strlen("verification time "), NULL, 10);
      printf("%d %d %ld ", fd >= 0, err, usec);
      for (char *c = log_buf; *c; c++) {
        if (*c == '\n') fputs("\\n", stdout);
        else if (*c == '\\') fputs("\\\\", stdout);
        else putchar(*c);
      }
      putchar('\n');
      if (fd >= 0) close(fd);
      if (btf_fd >= 0) close(btf_fd);
    }
    for (int k = 0; k < nmaps; k++) close(fds[k]);
    fflush(stdout);
  }
  return 0;
}
`;

let compiled: string | null = null;

/**
 * The helper binary, built once per source text into the temporary directory (named by the
 * source's digest, so runs share it and no run leaves a directory behind); built aside and
 * renamed into place, so a concurrent run never executes a half-written file.
 */
function compileHelper(): string {
  if (compiled) return compiled;
  const digest = createHash('sha256').update(HELPER_SOURCE).digest('hex').slice(0, 12);
  const binary = join(tmpdir(), `probeyard-bpf-load-${digest}`);
  if (!existsSync(binary)) {
    const dir = mkdtempSync(join(tmpdir(), 'probeyard-bpf-load-build-'));
    try {
      writeFileSync(join(dir, 'bpf-load.c'), HELPER_SOURCE);
      execFileSync('gcc', ['-O2', '-o', join(dir, 'bpf-load'), join(dir, 'bpf-load.c')], { stdio: 'pipe' });
      renameSync(join(dir, 'bpf-load'), binary);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  compiled = binary;
  return compiled;
}

const hexOf = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** A persistent helper process; `load` requests are answered in order. */
export class KernelLoader {
  private readonly pending: ((line: string) => void)[] = [];

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => this.pending.shift()?.(line));
  }

  /** Starts the helper, or returns why the kernel cannot be used here. */
  static async open(): Promise<KernelLoader | { unavailable: string }> {
    if (process.platform !== 'linux') return { unavailable: `not linux (${process.platform})` };
    if (process.getuid?.() !== 0) return { unavailable: 'not root: BPF_PROG_LOAD of tracepoint programs needs root' };
    let path: string;
    try {
      path = compileHelper();
    } catch (e) {
      return { unavailable: `cannot compile the bpf() helper with gcc: ${(e as Error).message.split('\n')[0]}` };
    }
    const loader = new KernelLoader(spawn(path, [], { stdio: 'pipe' }));
    const probe = await loader.load(new Uint8Array([0xb7, 0, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0]), []);
    if (!probe.ok) {
      loader.close();
      return { unavailable: `bpf() refused a trivial program: errno ${probe.errno} ${probe.message}` };
    }
    return loader;
  }

  /**
   * Loads one program; maps are created fresh for it (lddw map[fd:N] = the N-th map). `progType`
   * is the `enum bpf_prog_type` (default 5, BPF_PROG_TYPE_TRACEPOINT; 6 is BPF_PROG_TYPE_XDP).
   */
  load(bytes: Uint8Array, maps: readonly MapDef[], progType = 5): Promise<KernelVerdict> {
    const spec = maps.length === 0 ? '-' : maps.map((m) => `${m.type},${m.keySize},${m.valueSize},${m.maxEntries}`).join(';');
    return new Promise((resolve) => {
      this.pending.push((line) => resolve(parseAnswer(line)));
      this.child.stdin.write(`T${progType} ${spec} ${hexOf(bytes)}\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}

function parseAnswer(line: string): KernelVerdict {
  const m = /^(\d) (\d+) (-?\d+) ?(.*)$/.exec(line);
  if (!m) return { ok: false, errno: -1, verificationUsec: null, insnsProcessed: null, message: `bad answer: ${line}`, log: line };
  const log = m[4]!.replace(/\\(n|\\)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
  const lines = log.split('\n').filter((l) => l !== '');
  const stats = /^(verification time|stack depth|processed \d+ insns|max_states|mark_read)/;
  const body = lines.filter((l) => !stats.test(l));
  const usec = Number(m[3]);
  const processed = /processed (\d+) insns/.exec(log);
  return {
    ok: m[1] === '1',
    errno: Number(m[2]),
    verificationUsec: usec >= 0 ? usec : null,
    insnsProcessed: processed ? Number(processed[1]) : null,
    message: body[body.length - 1] ?? '',
    log,
  };
}
