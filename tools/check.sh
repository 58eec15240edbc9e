#!/bin/bash
# make check: the tests on this machine's kernel, then the same tests and
# the kernel series' selftest inside the patched 6.12 kernel under QEMU.
#
# Two lanes, one per core. QEMU's TCG runs a guest on one host thread, so
# a guest leaves the other core to the host's stages:
#   lane 1: the host's tests, the sanitizers, the fuzzers; then guest work
#   lane 2: waits for the guest kernel; then guest work
# The guest work is a queue, longest first: the guest's groups in two
# halves (tools/vm/guest-tests.sh BUILD 1|2), then the systemd boot; each
# lane takes the next item when it is free. The guest kernel (cached, else
# built in a few minutes: tools/vm/build-kernel.sh) builds at a lower
# priority while the project builds and the host's tests run.
# Each stage's output is printed whole when it ends (a line says when it
# starts, and one when each of its groups does); stopped by a signal, the
# output so far of each stage still running. Then each stage's wall time,
# the total, and one line:
#   N passed, N failed, N skipped
# CGFW_NO_VM=1 leaves the guest out (counted as one skip).
set -u
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
t_start=$SECONDS

# every process this script started, on the way out: each stopped
# before its children are looked for, so that none starts another
kill_tree() {
	local c
	kill -STOP "$1" 2>/dev/null
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill -TERM "$1" 2>/dev/null
	kill -CONT "$1" 2>/dev/null
}
on_signal() {
	local c l
	trap - EXIT INT TERM
	for c in $(pgrep -P $$); do kill_tree "$c"; done
	for l in "$work"/log.*; do
		[ -f "$l.name" ] || continue
		echo "##### stopped: $(head -1 "$l.name")"
		tail -40 "$l"
	done
	rm -rf "$work"
	exit "$1"
}
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'rm -rf "$work"' EXIT

# print under a lock: the lanes' blocks never interleave
say() {
	{ flock 9; cat; } 9> "$work/print.lock"
}

# each group's first line as it starts ("=== group"), with the time:
# what a run stopped from outside has done
progress() {
	local line
	while IFS= read -r line; do
		[[ $line == "=== "* ]] &&
			echo "  ($1: ${line#=== }, at +$((SECONDS - t_start)) s)" | say
	done
}

# stage NAME COMMAND...: run it, count its TAP summary, print its output
# and time; the counts and times go to files (the lanes are subshells).
# A command that fails without a failed test (a guest stopped after its
# tests' count, before the kernel log's check) is a failure.
stage() {
	local name=$1 t0=$SECONDS log rc
	shift
	log=$(mktemp "$work/log.XXXXXX")
	echo "$name" > "$log.name"
	echo "$name" >> "$work/started"
	echo "##### $name: started at +$((t0 - t_start)) s" | say
	"$@" 2>&1 | tee "$log" | progress "$name"
	rc=${PIPESTATUS[0]}
	local p f s dt=$((SECONDS - t0))
	if read -r p _ f _ s _ < <(grep -E '^[0-9]+ passed, [0-9]+ failed' \
			"$log" | tail -1) && [ -n "$p" ]; then
		:
	else
		echo "  not ok - $name gave no count" >> "$log"
		p=0 f=1 s=0
	fi
	if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		echo "  not ok - $name exited with status $rc" >> "$log"
		f=1
	fi
	echo "$p ${f:-0} ${s:-0}" >> "$work/counts"
	echo "$name" >> "$work/ended"
	printf '%5d s  %s (from +%d s)\n' "$dt" "$name" \
		$((t0 - t_start)) >> "$work/times"
	{
		echo "##### $name"
		cat "$log"
		echo "(#### $name: $dt s)"
	} | say
	rm -f "$log" "$log.name"
}

# the guest kernel: built in the background, waited for by the guest work
kernel_wait() {
	while [ ! -f "$work/kernel.rc" ]; do sleep 2; done
	[ "$(cat "$work/kernel.rc")" = 0 ] && [ -f "$(cat "$work/kernel.image")" ]
}

# the next item of the guest's queue, or nothing
pop() {
	(
		flock 9
		head -1 "$work/queue"
		sed -i 1d "$work/queue"
	) 9> "$work/queue.lock"
}

guest_item() {
	local kernel part
	if ! kernel_wait; then
		# one failure for the kernel, whichever lane sees it first
		( flock 9
		  [ -f "$work/kernel.failed" ] && exit
		  touch "$work/kernel.failed"
		  { echo "##### the patched 6.12 kernel"
		    sed 's/^/  /' "$work/kernel.log"
		    echo "not ok - the patched kernel did not build"; } | say
		  echo "0 1 0" >> "$work/counts"
		) 9> "$work/kernel.lock"
		echo "  # not run: $1 (no kernel)" | say
		return
	fi
	kernel=$(cat "$work/kernel.image")
	case $1 in
	guest1|guest2)
		part=${1#guest}
		stage "in the patched 6.12 kernel, under QEMU: part $part of the groups" \
			"$top/tools/vm/run.sh" -t 3000 -k "$kernel" \
			tools/vm/guest-tests.sh "$BUILD" "$part" ;;
	systemd)
		stage "cgfw.service under systemd as PID 1, in the guest" \
			"$top/tools/vm/run.sh" -s -t 900 -k "$kernel" \
			selftests/system/unit.sh "$BUILD" ;;
	esac
}

guest_lane() {
	local item
	[ -n "${CGFW_NO_VM:-}" ] && return
	while item=$(pop) && [ -n "$item" ]; do
		guest_item "$item"
	done
}

if [ -z "${CGFW_NO_VM:-}" ]; then
	printf '%s\n' guest1 guest2 systemd > "$work/queue"
	(
		k0=$SECONDS
		nice -n 10 "$top/tools/vm/build-kernel.sh" \
			> "$work/kernel.image" 2> "$work/kernel.log"
		rc=$?
		printf '%5d s  %s\n' $((SECONDS - k0)) \
			"the guest kernel, cached or built (from +$((k0 - t_start)) s)" \
			>> "$work/times"
		echo "$rc" > "$work/kernel.rc.new" &&
			mv "$work/kernel.rc.new" "$work/kernel.rc"
	) &
fi

echo "##### build"
t0=$SECONDS
if ! make -C "$top" --no-print-directory BUILD="$BUILD" all \
	nft-build-if-sources; then
	echo "not ok - the build"
	echo "0 1 0" >> "$work/counts"
fi
printf '%5d s  build\n' $((SECONDS - t0)) >> "$work/times"

(
	stage "on this machine: $(uname -r)" "$top/tools/run-tests.sh" "$BUILD"
	stage "under AddressSanitizer and UndefinedBehaviorSanitizer" \
		"$top/tools/sanitize.sh" "$BUILD"
	stage "fuzzing" "$top/tools/fuzz.sh" "$BUILD"
	guest_lane
) &
lane1=$!
guest_lane &
lane2=$!
wait "$lane1" "$lane2"
wait

P=0 F=0 S=0
while read -r p f s; do
	P=$((P + p)) F=$((F + f)) S=$((S + s))
done < <(cat "$work/counts" 2>/dev/null)
# a stage that started and left no count (its file could not be written)
lost=$(( $(cat "$work/started" 2>/dev/null | wc -l) -
	 $(cat "$work/ended" 2>/dev/null | wc -l) ))
if [ "$lost" -ne 0 ]; then
	echo "not ok - $lost stages left no count"
	F=$((F + 1))
fi
if [ -n "${CGFW_NO_VM:-}" ]; then
	echo "ok - the patched kernel under QEMU # SKIP CGFW_NO_VM is set"
	S=$((S + 1))
fi
echo "##### time per stage (two lanes: the stages overlap)"
cat "$work/times"
printf '%5d s  in all (%d min)\n' $((SECONDS - t_start)) $(((SECONDS - t_start) / 60))
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]
