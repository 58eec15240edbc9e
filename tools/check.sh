#!/bin/bash
# make check: the tests on this machine's kernel, then the same tests and
# the kernel series' selftest inside the patched 6.12 kernel under QEMU.
# The guest kernel (tools/vm/build-kernel.sh: cached, else built in a few
# minutes) is built at a lower priority while the host's stages run, which
# leave the cores idle while their tests wait on packets and processes.
# Prints each stage's wall time, then the total, and ends with one line:
#   N passed, N failed, N skipped
# CGFW_NO_VM=1 leaves the guest out (counted as one skip).
set -u
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp)
klog=$(mktemp)
kpid=
trap 'rm -f "$out" "$klog"; [ -n "$kpid" ] && kill "$kpid" 2>/dev/null' EXIT
P=0 F=0 S=0
times=()
t_start=$SECONDS

add_counts() {
	local p f s
	if read -r p _ f _ s _ < <(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1) &&
	   [ -n "$p" ]; then
		P=$((P + p)) F=$((F + f)) S=$((S + ${s:-0}))
	else
		echo "  not ok - $1 gave no count"
		F=$((F + 1))
	fi
}

# stage NAME COMMAND...: run it, keep its output for the count, time it
stage() {
	local name=$1 t0=$SECONDS
	shift
	echo "##### $name"
	"$@" | tee "$out"
	add_counts "$name"
	times+=("$(printf '%5d s  %s' $((SECONDS - t0)) "$name")")
	echo "(#### $name: $((SECONDS - t0)) s)"
}

if [ -z "${CGFW_NO_VM:-}" ]; then
	k0=$SECONDS
	nice -n 10 "$top/tools/vm/build-kernel.sh" > "$klog.image" 2> "$klog" &
	kpid=$!
fi

echo "##### build"
t0=$SECONDS
if ! make -C "$top" --no-print-directory BUILD="$BUILD" all \
	nft-build-if-sources; then
	echo "not ok - the build"
	F=$((F + 1))
fi
times+=("$(printf '%5d s  %s' $((SECONDS - t0)) build)")

stage "on this machine: $(uname -r)" "$top/tools/run-tests.sh" "$BUILD"
stage "under AddressSanitizer and UndefinedBehaviorSanitizer" \
	"$top/tools/sanitize.sh" "$BUILD"
stage "fuzzing" "$top/tools/fuzz.sh" "$BUILD"

if [ -n "${CGFW_NO_VM:-}" ]; then
	echo "ok - the patched kernel under QEMU # SKIP CGFW_NO_VM is set"
	S=$((S + 1))
else
	echo "##### the patched 6.12 kernel"
	t0=$SECONDS
	wait "$kpid"
	rc=$? kpid=
	sed 's/^/  /' "$klog"
	kernel=$(cat "$klog.image")
	rm -f "$klog.image"
	times+=("$(printf '%5d s  %s' $((SECONDS - t0)) \
		"the guest kernel (waited for; $((SECONDS - k0)) s since it started)")")
	if [ "$rc" -ne 0 ] || [ ! -f "$kernel" ]; then
		echo "not ok - the patched kernel did not build"
		F=$((F + 1))
	else
		stage "in the patched 6.12 kernel, under QEMU" \
			"$top/tools/vm/run.sh" -t 4500 -k "$kernel" \
			tools/vm/guest-tests.sh "$BUILD"
		stage "cgfw.service under systemd as PID 1, in the guest" \
			"$top/tools/vm/run.sh" -s -t 900 -k "$kernel" \
			selftests/system/unit.sh "$BUILD"
	fi
fi
echo "##### time per stage"
printf '%s\n' "${times[@]}"
printf '%5d s  in all (%d min)\n' $((SECONDS - t_start)) $(((SECONDS - t_start) / 60))
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]
