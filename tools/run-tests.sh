#!/bin/bash
# Run every test program and script, each printing TAP ("ok N name",
# "not ok N name", "ok N name # SKIP reason"), and end with one line:
#   N passed, N failed, N skipped
# Exit status: 0 when nothing failed.
set -u
BUILD=${1:-build}
export CGFW=${CGFW:-$BUILD/cgfw}
export CGFW_TRAFFIC=${CGFW_TRAFFIC:-$BUILD/cgfw-traffic}

passed=0 failed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_one() {
	local name=$1; shift
	local p=0 f=0 s=0 rc
	echo "=== $name"
	"$@" >"$log" 2>&1
	rc=$?
	# the test's own TAP lines, plus every failure's context
	grep -E '^(not ok|ok) |^# .*(Expected|SKIP|failed|FAIL|timeout)' "$log" | sed 's/^/  /'
	s=$(grep -cE '^ok [0-9]+ .*# SKIP' "$log")
	p=$(( $(grep -cE '^ok [0-9]+ ' "$log") - s ))
	f=$(grep -cE '^not ok [0-9]+ ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && [ "$rc" -ne 4 ]; then
		echo "  not ok - $name exited with status $rc"
		sed 's/^/    /' "$log" | tail -20
		f=$((f + 1))
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

run_one "rewrite (no root)" "$BUILD/tests/test_rewrite"
run_one "golden bytecode" tools/golden.sh "$BUILD"
run_one "bad input" selftests/bad_input.sh
run_one "selftests" "$BUILD/tests/cgfw_selftest"
# bpf against nft on live traffic: 140 x 100 gives over 10,000 pairs after
# the rulesets nft itself refuses; DIFF_RULESETS=N DIFF_SEED=S for more
run_one "differential" "$BUILD/tests/difftest" -s "${DIFF_SEED:-1}" \
	-r "${DIFF_RULESETS:-140}" -p 100
run_one "crafted packets (bpf)" "$BUILD/tests/testrun"
run_one "cli" selftests/cli.sh
# the kernel series' own selftest: skips where the kernel lacks the family
run_one "kernel: nf_tables cgroup family" "$BUILD/tests/nft_cgroup_skb"
run_one "nft 1.0.6 next to the cgroup family" selftests/nft_compat.sh
# nft with the cgroup family (nft-extension/, make nft): real traffic,
# round trips, cgfw and nft agreeing; then nftables' own test suites
run_one "nft with the cgroup family" selftests/nft_family.sh
run_one "nftables' test suites with the cgroup family" \
	nft-extension/run-suites.sh "$BUILD"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
