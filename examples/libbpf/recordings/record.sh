#!/bin/sh
# Records the corpus' test recording on this machine (root, tracefs at /sys/kernel/tracing,
# trace-cmd 3.1.6) the way library/recordings/record.sh does: a private tracefs instance with its
# events enabled through tracefs, then `trace-cmd extract` of the instance into a trace.dat
# (/proc/kallsyms hidden so the file stays small). Only the workload's processes are traced:
# `set_event_pid` holds the workload shell's pid and `options/event-fork` adds its children, so the
# raw syscalls of the rest of the machine stay out.
#
#   sh examples/libbpf/recordings/record.sh      writes libbpf-tools.dat beside this script
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tracefs=/sys/kernel/tracing
inst=probeyard-libbpf-corpus
dir=$tracefs/instances/$inst
mkdir "$dir"
trap 'rmdir "$dir" 2>/dev/null || true' EXIT
echo 0 > "$dir/tracing_on"
echo 1 > "$dir/options/event-fork"
for e in raw_syscalls/sys_enter raw_syscalls/sys_exit sched/sched_process_exec sched/sched_process_exit \
	syscalls/sys_enter_openat syscalls/sys_exit_openat; do
	echo 1 > "$dir/events/$e/enable"
done
# The workload: execs (some of them of short-lived children), opens that succeed and one that
# fails (ENOENT), a process that exits with status 3.
DIR=$dir sh -c '
	echo $$ > "$DIR/set_event_pid"
	echo 1 > "$DIR/tracing_on"
	for i in 1 2 3; do /bin/true; done
	ls / > /dev/null
	cat /etc/hostname /etc/os-release > /dev/null
	cat /nonexistent-probeyard 2> /dev/null || true
	sh -c "exit 3" || true
	echo 0 > "$DIR/tracing_on"
'
unshare -m sh -c "mount --bind /dev/null /proc/kallsyms && trace-cmd extract -B $inst -o '$here/libbpf-tools.dat'" > /dev/null 2>&1
rmdir "$dir" 2>/dev/null || true
trap - EXIT
echo "libbpf-tools.dat: $(wc -c < "$here/libbpf-tools.dat") bytes"
