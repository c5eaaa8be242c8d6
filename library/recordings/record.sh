#!/bin/sh
# Records the library's test recordings on this machine (root, tracefs at /sys/kernel/tracing,
# trace-cmd 3.1.6): each in a private tracefs instance (the top-level buffer and other instances
# are untouched), its events enabled through tracefs, a small workload run, then
# `trace-cmd extract` of the instance (which removes it) into a trace.dat: file version 7, zstd.
# /proc/kallsyms is hidden from trace-cmd (a private mount namespace) so that the files stay
# small: the runtime never needs kernel symbols. See README.md for what each recording holds.
#
#   sh library/recordings/record.sh [procs|io|oom|tcp-retransmit]...   (default: all four)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tracefs=/sys/kernel/tracing

# record NAME WORKLOAD EVENT... -- runs WORKLOAD with the EVENTs enabled, writes NAME.dat
record() {
	name=$1; workload=$2; shift 2
	inst=probeyard-library-$name
	dir=$tracefs/instances/$inst
	mkdir "$dir"
	trap 'rmdir "$dir" 2>/dev/null || true' EXIT
	echo 0 > "$dir/tracing_on"
	for e in "$@"; do echo 1 > "$dir/events/$e/enable"; done
	echo 1 > "$dir/tracing_on"
	"$workload"
	echo 0 > "$dir/tracing_on"
	unshare -m sh -c "mount --bind /dev/null /proc/kallsyms && trace-cmd extract -B $inst -o '$here/$name.dat'" > /dev/null 2>&1
	rmdir "$dir" 2>/dev/null || true
	trap - EXIT
	echo "$name.dat: $(wc -c < "$here/$name.dat") bytes"
}

# Processes: short-lived children, execs, a SIGTERM, five SIGUSR1 to a handler, their syscalls.
workload_procs() {
	for i in 1 2 3 4 5; do /bin/true; done
	ls / > /dev/null
	cat /etc/hostname > /dev/null
	sleep 0.2 &
	sh -c 'sleep 0.05'
	sleep 30 & kill -TERM $!
	perl -e '$SIG{USR1} = sub { $n++ }; kill USR1 => $$ for 1 .. 5; exit($n == 5 ? 0 : 1)'
	wait
}

# Block I/O of known sizes with O_DIRECT on the root disk (4 KiB, 64 KiB, 1 MiB writes, 16 KiB
# reads), and the interrupts and softirqs that come with it.
workload_io() {
	f=/var/tmp/probeyard-library-io.$$
	dd if=/dev/zero of="$f" bs=4k count=16 oflag=direct status=none
	dd if=/dev/zero of="$f" bs=64k count=4 oflag=direct conv=notrunc status=none
	dd if=/dev/zero of="$f" bs=1M count=2 oflag=direct conv=notrunc status=none
	dd if="$f" of=/dev/null bs=16k count=8 iflag=direct status=none
	rm -f "$f"
	sync
}

# One OOM kill, confined to a memory cgroup (v1) of 32 MiB: a perl that wants 256 MiB.
workload_oom() {
	cg=/sys/fs/cgroup/memory/probeyard-library-oom
	mkdir "$cg"
	echo $((32 * 1024 * 1024)) > "$cg/memory.limit_in_bytes"
	sh -c "echo \$\$ > $cg/cgroup.procs && exec perl -e '\$x = q(x) x (256 * 1024 * 1024)'" || true
	sleep 0.2
	rmdir "$cg"
}

# TCP SYN retransmits in a private network namespace: a listener with an accept backlog of 0 that
# never accepts; the kernel drops the SYNs of the clients after the first, which retransmit
# them after 1 s and 3 s.
workload_tcp_retransmit() {
	unshare -n sh -c 'ip link set lo up && python3 -c "
import socket, time
srv = socket.socket()
srv.bind((\"127.0.0.1\", 8080))
srv.listen(0)
clients = []
for i in range(4):
    c = socket.socket()
    c.setblocking(False)
    try:
        c.connect((\"127.0.0.1\", 8080))
    except BlockingIOError:
        pass
    clients.append(c)
time.sleep(3.5)
"'
}

for what in ${@:-procs io oom tcp-retransmit}; do
	case $what in
	procs) record procs workload_procs sched/sched_process_fork sched/sched_process_exec sched/sched_process_exit \
		sched/sched_switch sched/sched_wakeup sched/sched_wakeup_new signal/signal_deliver raw_syscalls/sys_enter ;;
	io) record io workload_io block/block_rq_issue block/block_rq_complete irq/irq_handler_entry irq/irq_handler_exit \
		irq/softirq_entry irq/softirq_exit ;;
	oom) record oom workload_oom oom/mark_victim sched/sched_process_exit signal/signal_deliver ;;
	tcp-retransmit) record tcp-retransmit workload_tcp_retransmit tcp/tcp_retransmit_skb ;;
	*) echo "record.sh: unknown recording '$what'" >&2; exit 2 ;;
	esac
done
