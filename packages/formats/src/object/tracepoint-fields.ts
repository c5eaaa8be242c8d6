import type { ObjectCoreRelocation, ObjectSpec } from './object-spec.js';

/** Kinds of CO-RE field relocations as the tracepoint manifest names them. */
export type TracepointFieldKind = 'byte-offset' | 'byte-size' | 'exists' | 'signed' | 'lshift-u64' | 'rshift-u64';

const kindByRelocation: Record<string, TracepointFieldKind> = {
  'field-byte-offset': 'byte-offset',
  'field-byte-size': 'byte-size',
  'field-exists': 'exists',
  'field-signed': 'signed',
  'field-lshift-u64': 'lshift-u64',
  'field-rshift-u64': 'rshift-u64',
};

/** One field access of a program on a tracepoint record, from a CO-RE relocation. */
export interface TracepointFieldAccess {
  /**
   * From the struct name `trace_event_raw_<event>` (flavor suffix `___x` removed); for
   * `syscall_trace_enter`/`syscall_trace_exit`, the program's attach event.
   */
  event: string;
  /** The flavor suffix without `___` ('' when none): `old` for `trace_event_raw_x___old`. */
  flavor: string;
  /**
   * The field as the tracefs format file names it: `prev_pid`; `common_pid` for `ent.pid`;
   * `filename` for a `__data_loc_filename` member.
   */
  field: string;
  /** The BTF member path inside the record struct (`ent.pid`, `__data_loc_filename`, `prev_comm[3]`). */
  memberPath: string;
  /** True when the member is `__data_loc_<field>` (a u32 locator, not the payload). */
  dataLoc: boolean;
  kind: TracepointFieldKind;
  /** Program-relative instruction index, and its program and section. */
  insnIndex: number;
  program: string;
  section: string;
  /** What the object was built against (the local BTF): offset and size of the load, signedness. */
  byteOffset: number;
  byteSize: number;
  signed: boolean;
  /** The event of the program's own `tracepoint/<system>/<event>` section, if it is one. */
  attach: { system: string; event: string } | undefined;
  relocation: ObjectCoreRelocation;
  /** For `syscall_trace_enter.args[i]`: i (the field is {@link syscallArgField}(i)). */
  syscallArg?: number;
}

const RECORD_PREFIX = 'trace_event_raw_';

/**
 * The kernel's own structs of the `syscalls/sys_enter_*` and `sys_exit_*` records
 * (kernel/trace/trace_syscalls.c), which libbpf-tools read them through:
 * `struct syscall_trace_enter { struct trace_entry ent; int nr; unsigned long args[]; }` and
 * `struct syscall_trace_exit { struct trace_entry ent; int nr; long ret; }`. Each syscall's format
 * names its arguments (`dfd`, `filename`, ...) after `__syscall_nr`; `args[i]` is the i-th of them.
 */
const SYSCALL_STRUCTS = new Set(['syscall_trace_enter', 'syscall_trace_exit']);

/** `args[2]`: the field name a `syscall_trace_enter.args[i]` access is given (no format field has brackets). */
export function syscallArgField(index: number): string {
  return `args[${index}]`;
}

/** The argument index of a {@link syscallArgField} name, or undefined. */
export function parseSyscallArgField(field: string): number | undefined {
  const m = /^args\[(\d+)\]$/.exec(field);
  return m ? Number(m[1]) : undefined;
}

/** Splits `trace_event_raw_<event>[___<flavor>]`; undefined for other names. */
export function parseTraceEventStructName(name: string): { event: string; flavor: string } | undefined {
  if (!name.startsWith(RECORD_PREFIX)) return undefined;
  const rest = name.slice(RECORD_PREFIX.length);
  const cut = rest.indexOf('___');
  const event = cut < 0 ? rest : rest.slice(0, cut);
  if (event === '') return undefined;
  return { event, flavor: cut < 0 ? '' : rest.slice(cut + 3) };
}

/**
 * Every CO-RE field relocation of `spec` against a `struct trace_event_raw_<event>`, as
 * `{ event, field, kind, insnIndex, section }` and more — the manifest of what the object reads
 * from tracepoint records. Relocations that could not be resolved are skipped (they carry
 * their `error` in `spec.coreRelocations`).
 */
export function tracepointFieldAccesses(spec: ObjectSpec): TracepointFieldAccess[] {
  const out: TracepointFieldAccess[] = [];
  const btf = spec.btf;
  if (btf === undefined) return out;
  for (const c of spec.coreRelocations) {
    const a = c.access;
    const kind = kindByRelocation[c.record.kindName];
    if (a === undefined || kind === undefined) continue;
    const program = spec.program(c.program);
    const att = program?.attach;
    const members = a.steps.filter((s) => s.kind === 'member');
    const first = members[0];
    if (first === undefined) continue;
    const cut = a.rootName.indexOf('___');
    const syscallStruct = SYSCALL_STRUCTS.has(cut < 0 ? a.rootName : a.rootName.slice(0, cut));
    // a syscall struct is the record of whichever syscalls/ event the program attaches to
    const parsed = syscallStruct
      ? att?.kind === 'tracepoint'
        ? { event: att.event, flavor: cut < 0 ? '' : a.rootName.slice(cut + 3) }
        : undefined
      : parseTraceEventStructName(a.rootName);
    if (parsed === undefined) continue;
    let field = first.name;
    let dataLoc = false;
    let syscallArg: number | undefined;
    // The common fields live in `struct trace_entry ent`: ent.pid is the format file's common_pid.
    const firstType = btf.type(btf.resolve(first.typeId));
    const isEntry = firstType.kind === 'struct' && (firstType.name === 'trace_entry' || firstType.name.startsWith('trace_entry___'));
    if (isEntry && members[1] !== undefined) {
      field = `common_${members[1].name}`;
    } else if (syscallStruct && field === 'nr') {
      field = '__syscall_nr';
    } else if (syscallStruct && field === 'args') {
      const index = a.steps[a.steps.indexOf(first) + 1];
      // `&ctx->args` without an element names no argument: leave it to the verifier's report
      if (index === undefined || index.kind !== 'array') continue;
      syscallArg = index.index;
      field = syscallArgField(index.index);
    } else if (field.startsWith('__data_loc_')) {
      field = field.slice('__data_loc_'.length);
      dataLoc = true;
    }
    out.push({
      event: parsed.event,
      flavor: parsed.flavor,
      field,
      memberPath: a.fieldPath,
      dataLoc,
      kind,
      insnIndex: c.insnIndex,
      program: c.program,
      section: c.section,
      byteOffset: a.byteOffset ?? 0,
      byteSize: a.byteSize ?? 0,
      signed: a.signed ?? false,
      attach: att?.kind === 'tracepoint' ? { system: att.system, event: att.event } : undefined,
      relocation: c,
      ...(syscallArg === undefined ? {} : { syscallArg }),
    });
  }
  return out;
}

/** `event sched_switch, field prev_pid, kind byte-offset` — how a manifest line reads. */
export function formatTracepointFieldAccess(a: TracepointFieldAccess): string {
  return `event ${a.event}, field ${a.field}, kind ${a.kind}`;
}
