/** What rendering a record may need from outside the record itself. */
export interface RenderEnv {
  /** Byte order of the record; default true (little-endian). */
  littleEndian?: boolean;
  /** The kernel's `sizeof(long)`; default: what the format shows, else 8. */
  longSize?: 4 | 8;
  /** Kernel symbol containing `address` (from kallsyms), for `%pS`/`%ps` and function fields. */
  lookupSymbol?(address: bigint): { name: string; offset: number } | undefined;
  /** The string a `const char *` field points to (tracefs `printk_formats`), for `%s` of a pointer. */
  lookupPrintkFormat?(address: bigint): string | undefined;
  /**
   * `trace-cmd` (default): also apply the event handlers trace-cmd 3.1.6 uses instead of the print fmt
   * (`sched_switch`, `sched_wakeup`, `hrtimer_*`, ...). `print-fmt`: evaluate the kernel's print fmt
   * only (flags then come from the kernel's own tables, as in the tracefs `trace` file).
   */
  handlers?: 'trace-cmd' | 'print-fmt';
}
