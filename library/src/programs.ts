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
];
