// The programs of the library: what the README says of each, and the maps that only hold the
// program's own bookkeeping (hidden from dashboards by publish metadata, since no convention can
// tell a map of start timestamps from a map of counts).

export interface LibraryProgram {
  /** File name of `programs/<name>.c` / `.o`, and the name to publish it under. */
  name: string;
  /** The README line. */
  summary: string;
  /** Internal state maps, hidden by metadata: map name → what it holds. */
  state: Readonly<Record<string, string>>;
}

export const libraryPrograms: readonly LibraryProgram[] = [
  {
    name: 'syscalls',
    summary: 'system calls counted by syscall id and by calling process (pid, command name)',
    state: {},
  },
  {
    name: 'execs',
    summary: 'execs with file names: one event per exec (pid, old pid, command name, file name) and a count per file name',
    state: {},
  },
  {
    name: 'runqlat',
    summary: 'run-queue latency: from wakeup (or preemption) to running on a CPU, as a log2 histogram in microseconds',
    state: { runnable_since_ns: 'when each runnable task became runnable, by pid' },
  },
  {
    name: 'biolatency',
    summary: 'block I/O latency per disk (log2 histogram, µs), request sizes per issuing command (log2 histogram, bytes), failed requests per disk',
    state: { issued_at_ns: 'when each request in flight was issued, by (disk, sector)' },
  },
  {
    name: 'ctxswitch',
    summary: 'context switches per process (the task leaving the CPU) and how many of them were preemptions',
    state: {},
  },
  {
    name: 'lifetimes',
    summary: 'forks per parent command name; task lifetimes from fork to exit (log2 histogram, ms) with one event per exit',
    state: { task_starts: 'fork time and parent pid of each live task seen forking' },
  },
  {
    name: 'irqtime',
    summary: 'time in hard IRQ handlers per IRQ (total ns) and in softirqs per vector (total ns, log2 histogram µs)',
    state: {},
  },
  {
    name: 'signals',
    summary: 'signals delivered, counted by signal number and receiving process (pid, command name)',
    state: {},
  },
  {
    name: 'oomkill',
    summary: 'OOM kills: one event per victim (pid, name, memory in kB, uid, oom_score_adj where the kernel says) and a count per victim name',
    state: {},
  },
  {
    name: 'tcpretrans',
    summary: 'TCP retransmits: one event per retransmitted segment (family, ports, addresses, state, error) and a count per remote port',
    state: {},
  },
];
