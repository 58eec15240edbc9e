#!/bin/bash
# In the guest (make vm-bench): the benchmark into /tmp/bench, then every
# file of the run on the console, each line prefixed "@@ ", between
# "@@@ FILE" and "@@@ end" (the guest cannot write the checkout; the host
# takes them from the console: bench/vm.sh).
#   bench/guest.sh BUILD [cgfw_bench options]
set -eu
BUILD=${1:-build}
shift || true
out=/tmp/bench
mkdir -p "$out"
export CGFW=$BUILD/cgfw
# the progress a line at a time (the console is a terminal, but the host
# reads it from a file)
"$BUILD/bench/cgfw_bench" --out "$out" "$@" 2>&1 | cat
status=${PIPESTATUS[0]}
for f in env.txt summary.csv raw.csv; do
	[ -f "$out/$f" ] || continue
	echo "@@@ $f"
	sed 's/^/@@ /' "$out/$f"
	echo "@@@ end"
done
# until the console has sent it all: the power-off that follows must not
# cut the last lines
/usr/bin/python3 -c 'import termios; termios.tcdrain(1)' 2>/dev/null || sleep 2
exit $status
