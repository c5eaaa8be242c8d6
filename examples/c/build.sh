#!/bin/sh
# Rebuilds the example objects. The objects are committed so that nothing at run time needs clang.
# Built with clang 14 (Ubuntu 14.0.0); -g emits .BTF and .BTF.ext with the CO-RE relocations.
set -eu
cd "$(dirname "$0")"
# (these six were built in /work/main/examples/c, whose path their debug info holds)
for src in syscount execsnoop runqlat biolatency switchcomm forkcomm; do
	clang -O2 -g -target bpf -c "$src.c" -o "$src.o"
done
# the later ones map the build folder to . in their debug info, so any checkout rebuilds them byte
# for byte; forkprov and ioprov attach to provider probes, with the arguments records of the
# library's providers (library/include/probeyard/provider.h, docs/PROVIDERS-C.md)
for src in iodone forkprov ioprov; do
	clang -O2 -g -target bpf -fdebug-prefix-map="$PWD"=. -I ../../library/include -c "$src.c" -o "$src.o"
done
