#!/bin/bash
# make bench: the bpf backend's rule scaling (BPF_PROG_TEST_RUN, load) and
# live egress packets per second, bpf against the emulated nft target.
# Method and results: docs/benchmarks.rst. Not part of make check.
set -eu
BUILD=${1:-build}
export CGFW=$BUILD/cgfw
out=${BENCH_OUT:-$BUILD/bench}
mkdir -p "$out"
{
	echo "# $(date -u +%FT%TZ) $(uname -r) $(git rev-parse --short HEAD 2>/dev/null)"
	echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs"
	echo "# bpf_jit_enable=$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null)"
} | tee "$out/env.txt"
"$BUILD/bench/cgfw_bench" rules ${BENCH_RULES:-1 8 32 128 512 2048} | tee "$out/rules.csv"
"$BUILD/bench/cgfw_bench" pps ${BENCH_ROUNDS:-5} | tee "$out/pps.csv"
