// Loads programs into the running kernel's verifier (BPF_PROG_LOAD as BPF_PROG_TYPE_TRACEPOINT)
// through a small C helper compiled with gcc on first use: the reference for differential tests.
// Needs root (or CAP_BPF + CAP_PERFMON) and gcc.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
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
 *   MAPS <type>,<key>,<value>,<entries>;...   (or MAPS - for none)  then a space and
 *   <hex bytes of the instructions>
 * 'lddw rX, map[fd:N]' (src_reg 1) refers to the N-th map of the MAPS list; its imm is replaced by
 * the map's real fd. For each request one line is printed:
 *   <ok 0|1> <errno> <verification usec or -1> <log with \n escaped as \\n>
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr) { return syscall(__NR_bpf, cmd, attr, sizeof(*attr)); }

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
      a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
      a.insn_cnt = (uint32_t)count;
      a.insns = (uint64_t)(uintptr_t)insns;
      a.license = (uint64_t)(uintptr_t)"GPL";
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
    }
    for (int k = 0; k < nmaps; k++) close(fds[k]);
    fflush(stdout);
  }
  return 0;
}
`;

let compiled: string | null = null;

function compileHelper(): string {
  if (compiled) return compiled;
  const dir = mkdtempSync(join(tmpdir(), 'probeyard-bpf-load-'));
  writeFileSync(join(dir, 'bpf-load.c'), HELPER_SOURCE);
  execFileSync('gcc', ['-O2', '-o', join(dir, 'bpf-load'), join(dir, 'bpf-load.c')], { stdio: 'pipe' });
  compiled = join(dir, 'bpf-load');
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

  /** Loads one program; maps are created fresh for it (lddw map[fd:N] = the N-th map). */
  load(bytes: Uint8Array, maps: readonly MapDef[]): Promise<KernelVerdict> {
    const spec = maps.length === 0 ? '-' : maps.map((m) => `${m.type},${m.keySize},${m.valueSize},${m.maxEntries}`).join(';');
    return new Promise((resolve) => {
      this.pending.push((line) => resolve(parseAnswer(line)));
      this.child.stdin.write(`${spec} ${hexOf(bytes)}\n`);
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
