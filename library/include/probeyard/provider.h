/* Provider probes in C (issue 19): a program attaches to a stable probe such as proc:::fork instead
 * of a tracepoint, and reads the probe's typed arguments by name. Self-contained (no libbpf header
 * needed); include it after your own vmlinux.h / bpf_helpers.h stand-in, or alone.
 *
 * The convention, in three parts (docs/PROVIDERS-C.md says it at length):
 *
 * 1. The section names the probe: PY_PROBE(proc, fork) is SEC("provider/proc/fork").
 *
 * 2. The program's context is the probe's *arguments record*, struct trace_event_raw_<provider>__<probe>
 *    (PY_ARGS(proc, fork)), marked preserve_access_index. Its layout is fixed by the probe's
 *    declared arguments, in their order, not by any kernel:
 *      - the 8-byte common header of every trace record (common_type, common_flags,
 *        common_preempt_count, common_pid: copied from the event the probe fired on);
 *      - an `int` argument is a signed 64-bit integer (PY_INT: long long), 8-byte aligned;
 *      - a `string` argument is a __data_loc string (PY_STRING: a u32 `__data_loc_<name>`, low 16
 *        bits the offset of the NUL-terminated text from the record start, high 16 bits its
 *        length with the NUL), as the kernel's own __data_loc fields; PY_STR(args, name) is the
 *        address of the text, to copy with bpf_probe_read_kernel_str.
 *
 * 3. clang turns every `args->name` (and `args->__data_loc_name`) into a CO-RE field relocation:
 *    a `.BTF.ext` record (BPF_CORE_FIELD_BYTE_OFFSET) of the instruction, whose access string
 *    walks struct trace_event_raw_proc__fork to the member by index, and the member's name is in
 *    `.BTF`. Probeyard reads them exactly as it reads a tracepoint program's (packages/formats
 *    tracepointFieldAccesses): the field is named, not numbered. For each kernel, packages/compat
 *    resolves the probe through the provider's implementations (proc@1.0.0's "__data_loc
 *    parent_comm" on 6.18, "inline parent_comm" before), synthesizes the arguments record's
 *    format (providerArgsFormat) and relocates the program's reads against it by name, then
 *    verifies it with that format as the context; the runtime builds that record for each event
 *    by evaluating the implementation's argument expressions over the raw record. A provider
 *    version that adds or reorders arguments moves fields: the reads follow them by name.
 *
 * Declare the record of a probe of your own provider the same way, arguments in the order its
 * definition lists them (an int where it says int, a string where it says string):
 *
 *     PY_ARGS(net, rx) { PY_COMMON; PY_INT(len); PY_STRING(dev); } PY_RECORD;
 *
 * Below: the records of the library's providers (the JSON files of library/providers, version 1.0.0). */
#ifndef PROBEYARD_PROVIDER_H
#define PROBEYARD_PROVIDER_H

#define PY_PROBE(provider, probe) __attribute__((section("provider/" #provider "/" #probe), used))
#define PY_ARGS(provider, probe) struct trace_event_raw_##provider##__##probe
#define PY_RECORD __attribute__((preserve_access_index))
#define PY_COMMON                          \
	unsigned short common_type;        \
	unsigned char common_flags;        \
	unsigned char common_preempt_count; \
	int common_pid
#define PY_INT(name) long long name
#define PY_STRING(name) unsigned int __data_loc_##name
/* the address of a string argument's text, and its length with the NUL */
#define PY_STR(args, name) ((const char *)(args) + ((args)->__data_loc_##name & 0xffff))
#define PY_STR_LEN(args, name) ((args)->__data_loc_##name >> 16)

/* proc@1: processes */
PY_ARGS(proc, exec) { PY_COMMON; PY_INT(pid); PY_INT(old_pid); PY_STRING(filename); } PY_RECORD;
PY_ARGS(proc, fork) { PY_COMMON; PY_INT(parent_pid); PY_STRING(parent_comm); PY_INT(child_pid); PY_STRING(child_comm); } PY_RECORD;
PY_ARGS(proc, exit) { PY_COMMON; PY_INT(pid); PY_STRING(comm); PY_INT(prio); } PY_RECORD;

/* io@1: block I/O requests */
PY_ARGS(io, start) { PY_COMMON; PY_INT(dev); PY_INT(sector); PY_INT(bytes); } PY_RECORD;
PY_ARGS(io, done) { PY_COMMON; PY_INT(dev); PY_INT(sector); PY_INT(bytes); PY_INT(error); } PY_RECORD;

/* sched@1: the scheduler */
PY_ARGS(sched, switch) { PY_COMMON; PY_INT(prev_pid); PY_STRING(prev_comm); PY_INT(prev_prio); PY_INT(prev_state); PY_INT(next_pid); PY_STRING(next_comm); PY_INT(next_prio); } PY_RECORD;
PY_ARGS(sched, wakeup) { PY_COMMON; PY_INT(pid); PY_STRING(comm); PY_INT(prio); PY_INT(target_cpu); } PY_RECORD;

/* syscall@1: system call entry */
PY_ARGS(syscall, entry) { PY_COMMON; PY_INT(id); PY_INT(arg0); PY_INT(arg1); PY_INT(arg2); PY_INT(arg3); PY_INT(arg4); PY_INT(arg5); } PY_RECORD;

#endif
