// bpf-runner: a small line protocol over the bpf() syscall, for comparing the VM with the
// kernel (programs through BPF_PROG_TEST_RUN, map operations through BPF_MAP_*). Built with gcc
// at test time by kernel-runner.ts. Each command is one line on stdin; each answer one line.
//
//   prog <prog_type> <repeat> <insns hex> <data hex|-> <maps: type:key:value:entries[=hex],...|-> [<btf hex>:<insn offsets>]
//     -> ok <retval> <duration ns> <data_out hex|-> <array map 0 values hex|-> ...
//     -> err <errno> <first verifier log line>
//     (an lddw with src 1 or 2 names map <imm> of the list; the runner puts its fd there;
//      the optional last word is program BTF and the subprogram starts of its func_info,
//      comma-separated: the kernel wants them for callbacks such as bpf_loop's)
//   map <type> <key size> <value size> <max entries> <flags>   -> fd <n> | err <errno>
//   update <fd> <key hex> <value hex> <flags>                   -> ret <r>
//   lookup <fd> <key hex> <value size>                          -> ret <r> <value hex|->
//   delete <fd> <key hex>                                       -> ret <r>
//   next <fd> <key hex|-> <key size>                            -> ret <r> <key hex|->
//   close <fd>                                                  -> ret 0
//   attach <tracepoint id> <syscalls> <insns hex> <maps|->
//     loads a tracepoint program, attaches it to the tracepoint (through a perf event of this
//     process; the kernel still runs a tracepoint's programs for every task that hits it), makes
//     <syscalls> getppid() calls, and reads the kernel's own run statistics (BPF_ENABLE_STATS
//     while attached; the node's sysctl is not touched)
//     -> ok <run count> <run time ns> <getppid's syscall number> <u64 value of that u32 key in map 0|->
//     -> err <errno> <what failed, or the first verifier log line>
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr *attr) { return syscall(__NR_bpf, cmd, attr, sizeof(*attr)); }

static size_t unhex(const char *s, uint8_t *out, size_t cap) {
  if (strcmp(s, "-") == 0) return 0;
  size_t n = 0;
  while (s[0] && s[1] && n < cap) {
    unsigned v;
    sscanf(s, "%2x", &v);
    out[n++] = (uint8_t)v;
    s += 2;
  }
  return n;
}

static void puthex(const uint8_t *b, size_t n) {
  if (n == 0) { fputs("-", stdout); return; }
  for (size_t i = 0; i < n; i++) printf("%02x", b[i]);
}

static int map_create(int type, int key, int value, int entries, int flags) {
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_type = type;
  a.key_size = key;
  a.value_size = value;
  a.max_entries = entries;
  a.map_flags = flags;
  int fd = (int)sys_bpf(BPF_MAP_CREATE, &a);
  return fd < 0 ? -errno : fd;
}

static int map_op(int cmd, int fd, const void *key, void *value, uint64_t flags) {
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_fd = fd;
  a.key = (uint64_t)(uintptr_t)key;
  if (cmd == BPF_MAP_GET_NEXT_KEY) a.next_key = (uint64_t)(uintptr_t)value;
  else a.value = (uint64_t)(uintptr_t)value;
  a.flags = flags;
  return sys_bpf(cmd, &a) < 0 ? -errno : 0;
}

static uint8_t insns[1 << 20], data[1 << 16], out[1 << 16], buf[1 << 20], buf2[1 << 20];
static char line[1 << 22], logbuf[1 << 16];

static int fds[16], vsize[16], ents[16], nmaps;

// Creates the maps of a "type:key:value:entries[=hex],..." list; 0, or -errno after an "err" line.
static int make_maps(char *maps) {
  nmaps = 0;
  if (maps && strcmp(maps, "-") != 0) {
    for (char *m = strtok(maps, ","); m; m = strtok(NULL, ",")) {
      int t, k, v, e;
      sscanf(m, "%d:%d:%d:%d", &t, &k, &v, &e);
      fds[nmaps] = map_create(t, k, v, e, 0);
      if (fds[nmaps] < 0) {
        int err = fds[nmaps];
        printf("err %d map create\n", -err);
        for (int i = 0; i < nmaps; i++) close(fds[i]);
        return err;
      }
      char *init = strchr(m, '=');
      if (init) {
        // initial value of key 0 (an array map), hex
        static uint8_t value[1 << 20];
        uint32_t zero = 0;
        memset(value, 0, (size_t)v);
        unhex(init + 1, value, sizeof(value));
        map_op(BPF_MAP_UPDATE_ELEM, fds[nmaps], &zero, value, 0);
      }
      vsize[nmaps] = v; ents[nmaps] = e;
      nmaps++;
    }
  }
  return 0;
}

// Puts the map fds into the lddw map references and loads the program; its fd, or -1 after an
// "err" line (the maps are closed then).
static uint8_t btf[1 << 16];
static size_t btflen;
static struct bpf_func_info finfo[64];
static int nfinfo;

// "<btf hex>:<start>,<start>,..." (or "-" / absent): loads the BTF; its fd, 0 without, -1 after an "err" line.
static int load_btf(char *word) {
  btflen = 0;
  nfinfo = 0;
  if (!word || strcmp(word, "-") == 0) return 0;
  char *colon = strchr(word, ':');
  if (!colon) { printf("err 22 btf word without ':'\n"); return -1; }
  *colon = 0;
  btflen = unhex(word, btf, sizeof(btf));
  for (char *s = strtok(colon + 1, ","); s && nfinfo < 64; s = strtok(NULL, ",")) {
    finfo[nfinfo].insn_off = (uint32_t)atoi(s);
    finfo[nfinfo].type_id = (uint32_t)(3 + nfinfo);
    nfinfo++;
  }
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.btf = (uint64_t)(uintptr_t)btf;
  a.btf_size = (uint32_t)btflen;
  int fd = (int)sys_bpf(BPF_BTF_LOAD, &a);
  if (fd < 0) { printf("err %d btf load\n", errno); return -1; }
  return fd;
}

static int load_prog(int type, size_t ilen, int btf_fd) {
  struct bpf_insn *p = (struct bpf_insn *)insns;
  size_t n = ilen / 8;
  for (size_t i = 0; i + 1 < n; i++) {
    if (p[i].code == (BPF_LD | BPF_IMM | BPF_DW) && (p[i].src_reg == 1 || p[i].src_reg == 2)) {
      p[i].imm = fds[p[i].imm];
      i++;
    }
  }
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.prog_type = type;
  a.insns = (uint64_t)(uintptr_t)insns;
  a.insn_cnt = n;
  a.license = (uint64_t)(uintptr_t)"GPL";
  if (btf_fd > 0) {
    a.prog_btf_fd = (uint32_t)btf_fd;
    a.func_info_rec_size = sizeof(struct bpf_func_info);
    a.func_info = (uint64_t)(uintptr_t)finfo;
    a.func_info_cnt = (uint32_t)nfinfo;
  }
  logbuf[0] = 0;
  int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
  if (fd < 0) {
    // again with the verifier log, to say why
    a.log_buf = (uint64_t)(uintptr_t)logbuf;
    a.log_size = sizeof(logbuf);
    a.log_level = 1;
    fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
  }
  if (fd < 0) {
    int e = errno;
    // the last non-empty line of the log says why
    char *last = logbuf, *s = logbuf;
    while ((s = strchr(s, '\n')) && s[1]) { if (s[1] != '\n') last = s + 1; s++; }
    char *nl = strchr(last, '\n');
    if (nl) *nl = 0;
    printf("err %d %s\n", e, last);
    for (int i = 0; i < nmaps; i++) close(fds[i]);
    return -1;
  }
  return fd;
}

static void run_prog(char *args) {
  int type = atoi(strtok(args, " "));
  int repeat = atoi(strtok(NULL, " "));
  size_t ilen = unhex(strtok(NULL, " "), insns, sizeof(insns));
  size_t dlen = unhex(strtok(NULL, " "), data, sizeof(data));
  char *maps = strtok(NULL, " \n");
  char *btfword = strtok(NULL, " \n");
  if (make_maps(maps) < 0) return;
  int btf_fd = load_btf(btfword);
  if (btf_fd < 0) {
    for (int i = 0; i < nmaps; i++) close(fds[i]);
    return;
  }
  int fd = load_prog(type, ilen, btf_fd);
  if (btf_fd > 0) close(btf_fd);
  if (fd < 0) return;
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.test.prog_fd = fd;
  a.test.data_in = (uint64_t)(uintptr_t)data;
  a.test.data_size_in = dlen;
  a.test.data_out = (uint64_t)(uintptr_t)out;
  a.test.data_size_out = sizeof(out);
  a.test.repeat = repeat;
  if (sys_bpf(BPF_PROG_TEST_RUN, &a) < 0) {
    printf("err %d test run\n", errno);
  } else {
    printf("ok %u %u ", a.test.retval, a.test.duration);
    puthex(out, a.test.data_size_out < sizeof(out) ? a.test.data_size_out : 0);
    for (int i = 0; i < nmaps; i++) {
      putchar(' ');
      size_t total = 0;
      for (uint32_t k = 0; k < (uint32_t)ents[i] && total + vsize[i] <= sizeof(buf); k++) {
        if (map_op(BPF_MAP_LOOKUP_ELEM, fds[i], &k, buf + total, 0) != 0) break;
        total += vsize[i];
      }
      puthex(buf, total);
    }
    putchar('\n');
  }
  close(fd);
  for (int i = 0; i < nmaps; i++) close(fds[i]);
}

static void attach_prog(char *args) {
  long id = atol(strtok(args, " "));
  long calls = atol(strtok(NULL, " "));
  size_t ilen = unhex(strtok(NULL, " "), insns, sizeof(insns));
  if (make_maps(strtok(NULL, " \n")) < 0) return;
  int fd = load_prog(BPF_PROG_TYPE_TRACEPOINT, ilen, 0);
  if (fd < 0) return;
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.enable_stats.type = BPF_STATS_RUN_TIME;
  int stats = (int)sys_bpf(BPF_ENABLE_STATS, &a);
  struct perf_event_attr pa;
  memset(&pa, 0, sizeof(pa));
  pa.type = PERF_TYPE_TRACEPOINT;
  pa.size = sizeof(pa);
  pa.config = (uint64_t)id;
  pa.sample_period = 1;
  pa.wakeup_events = 1;
  // a perf event of this process on any CPU; its program runs for every task's events
  int pfd = stats < 0 ? -1 : (int)syscall(__NR_perf_event_open, &pa, 0, -1, -1, 0);
  const char *failed = stats < 0 ? "enable stats" : pfd < 0 ? "perf_event_open" : NULL;
  if (!failed && ioctl(pfd, PERF_EVENT_IOC_SET_BPF, fd) < 0) failed = "attach";
  if (!failed && ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0) failed = "enable";
  if (failed) {
    printf("err %d %s\n", errno, failed);
  } else {
    for (long i = 0; i < calls; i++) syscall(SYS_getppid);
    ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
    struct bpf_prog_info info;
    memset(&info, 0, sizeof(info));
    memset(&a, 0, sizeof(a));
    a.info.bpf_fd = fd;
    a.info.info_len = sizeof(info);
    a.info.info = (uint64_t)(uintptr_t)&info;
    if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0) {
      printf("err %d prog info\n", errno);
    } else {
      printf("ok %llu %llu ", (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns);
      printf("%d ", (int)SYS_getppid);
      uint32_t key = (uint32_t)SYS_getppid;
      uint64_t value = 0;
      if (nmaps > 0 && map_op(BPF_MAP_LOOKUP_ELEM, fds[0], &key, &value, 0) == 0) printf("%llu\n", (unsigned long long)value);
      else puts("-");
    }
  }
  if (pfd >= 0) close(pfd);
  if (stats >= 0) close(stats);
  close(fd);
  for (int i = 0; i < nmaps; i++) close(fds[i]);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  while (fgets(line, sizeof(line), stdin)) {
    char *cmd = strtok(line, " \n");
    if (!cmd) continue;
    char *rest = cmd + strlen(cmd) + 1;
    if (strcmp(cmd, "prog") == 0) {
      run_prog(rest);
    } else if (strcmp(cmd, "attach") == 0) {
      attach_prog(rest);
    } else if (strcmp(cmd, "map") == 0) {
      int t = atoi(strtok(rest, " ")), k = atoi(strtok(NULL, " ")), v = atoi(strtok(NULL, " "));
      int e = atoi(strtok(NULL, " ")), f = atoi(strtok(NULL, " \n"));
      int fd = map_create(t, k, v, e, f);
      if (fd < 0) printf("err %d\n", -fd); else printf("fd %d\n", fd);
    } else if (strcmp(cmd, "update") == 0) {
      int fd = atoi(strtok(rest, " "));
      unhex(strtok(NULL, " "), buf, sizeof(buf));
      unhex(strtok(NULL, " "), buf2, sizeof(buf2));
      uint64_t f = strtoull(strtok(NULL, " \n"), NULL, 10);
      printf("ret %d\n", map_op(BPF_MAP_UPDATE_ELEM, fd, buf, buf2, f));
    } else if (strcmp(cmd, "lookup") == 0) {
      int fd = atoi(strtok(rest, " "));
      unhex(strtok(NULL, " "), buf, sizeof(buf));
      int vs = atoi(strtok(NULL, " \n"));
      int r = map_op(BPF_MAP_LOOKUP_ELEM, fd, buf, buf2, 0);
      printf("ret %d ", r);
      puthex(buf2, r == 0 ? vs : 0);
      putchar('\n');
    } else if (strcmp(cmd, "delete") == 0) {
      int fd = atoi(strtok(rest, " "));
      unhex(strtok(NULL, " \n"), buf, sizeof(buf));
      printf("ret %d\n", map_op(BPF_MAP_DELETE_ELEM, fd, buf, NULL, 0));
    } else if (strcmp(cmd, "next") == 0) {
      int fd = atoi(strtok(rest, " "));
      char *k = strtok(NULL, " ");
      int ks = atoi(strtok(NULL, " \n"));
      size_t kl = unhex(k, buf, sizeof(buf));
      int r = map_op(BPF_MAP_GET_NEXT_KEY, fd, kl ? buf : NULL, buf2, 0);
      printf("ret %d ", r);
      puthex(buf2, r == 0 ? ks : 0);
      putchar('\n');
    } else if (strcmp(cmd, "close") == 0) {
      close(atoi(strtok(rest, " \n")));
      printf("ret 0\n");
    } else {
      printf("err 22 unknown command %s\n", cmd);
    }
  }
  return 0;
}
