#!/bin/bash
# make bench: bench/cgfw_bench (every path and group, interleaved in one
# run), then the plots. Method and results: docs/benchmarks.rst. Not part
# of make check.
#   bench/run.sh BUILD [cgfw_bench options: --quick, --groups, ...]
# BENCH_OUT=DIR writes there instead of BUILD/bench.
set -eu
BUILD=${1:-build}
shift || true
export CGFW=$BUILD/cgfw
out=${BENCH_OUT:-$BUILD/bench}
mkdir -p "$out"
"$BUILD/bench/cgfw_bench" --out "$out" "$@"
bench/plot.sh "$out"
