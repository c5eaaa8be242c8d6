#!/bin/sh
# Rebuilds the library's objects from their sources. The objects are committed so that nothing at
# run time needs clang. Built with clang 14 (Ubuntu 14.0.0); -g emits .BTF and .BTF.ext with the
# CO-RE relocations Probeyard resolves per kernel. Run from anywhere: `sh library/build.sh`.
set -eu
cd "$(dirname "$0")/programs"
for src in *.c; do
	clang -O2 -g -target bpf -fdebug-prefix-map="$PWD"=. -c "$src" -o "${src%.c}.o"
done
