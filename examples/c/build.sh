#!/bin/sh
# Rebuilds the example objects. The objects are committed so that nothing at run time needs clang.
# Built with clang 14 (Ubuntu 14.0.0); -g emits .BTF and .BTF.ext with the CO-RE relocations.
set -eu
cd "$(dirname "$0")"
for src in syscount execsnoop runqlat biolatency switchcomm forkcomm; do
	clang -O2 -g -target bpf -c "$src.c" -o "$src.o"
done
