#!/bin/bash
# make check: the tests on this machine's kernel, then the same tests and
# the kernel series' selftest inside the patched 6.12 kernel under QEMU
# (built once, then cached: tools/vm/build-kernel.sh). Ends with one line:
#   N passed, N failed, N skipped
# CGFW_NO_VM=1 leaves the guest out (counted as one skip).
set -u
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
P=0 F=0 S=0

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

echo "##### on this machine: $(uname -r)"
"$top/tools/run-tests.sh" "$BUILD" | tee "$out"
add_counts "the tests on this machine"

echo "##### under AddressSanitizer and UndefinedBehaviorSanitizer"
"$top/tools/sanitize.sh" "$BUILD" | tee "$out"
add_counts "the sanitizer stage"

echo "##### fuzzing"
"$top/tools/fuzz.sh" "$BUILD" | tee "$out"
add_counts "the fuzzing stage"

if [ -n "${CGFW_NO_VM:-}" ]; then
	echo "ok - the patched kernel under QEMU # SKIP CGFW_NO_VM is set"
	S=$((S + 1))
else
	echo "##### in the patched 6.12 kernel, under QEMU"
	start=$SECONDS
	if ! kernel=$("$top/tools/vm/build-kernel.sh"); then
		echo "not ok - the patched kernel did not build"
		F=$((F + 1))
	else
		"$top/tools/vm/run.sh" -t 3600 -k "$kernel" \
			tools/vm/guest-tests.sh "$BUILD" | tee "$out"
		add_counts "the guest"
		echo "(kernel and guest: $((SECONDS - start)) s)"
	fi
fi
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]
