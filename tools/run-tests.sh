#!/bin/bash
# Run every test program and script, each printing TAP ("ok N name",
# "not ok N name", "ok N name # SKIP reason"), and end with one line:
#   N passed, N failed, N skipped
# Exit status: 0 when nothing failed.
set -u
BUILD=${1:-build}
export CGFW=${CGFW:-$BUILD/cgfw}
export CGFW_TRAFFIC=${CGFW_TRAFFIC:-$BUILD/cgfw-traffic}
# an nft that lists every family: the kernel series keeps the cgroup
# family out of what Debian's nft asks for (docs/nft-cgroup.rst), so tests
# that look for tables left behind use the patched one where it is built
if [ -z "${NFT_ALL:-}" ] && [ -x "$BUILD/nft/sbin/nft" ]; then
	NFT_ALL=$(realpath "$BUILD/nft/sbin/nft")
fi
export NFT_ALL=${NFT_ALL:-nft}

passed=0 failed=0 skipped=0
times=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# CGFW_TESTS="unit golden ...": only the groups named; CGFW_NOT_TESTS:
# not these (the guest leaves out what does not use the kernel)
run_one() {
	local group=$1 name=$2; shift 2
	if [ -n "${CGFW_TESTS:-}" ] && [[ " $CGFW_TESTS " != *" $group "* ]]; then
		return
	fi
	if [[ " ${CGFW_NOT_TESTS:-} " == *" $group "* ]]; then
		return
	fi
	local p=0 f=0 s=0 rc t0=$SECONDS
	echo "=== $name"
	"$@" >"$log" 2>&1
	rc=$?
	times+=("$((SECONDS - t0)) s  $name")
	# the test's own TAP lines, plus every failure's context: the
	# diagnostics that follow it (up to 20 lines), and the harness's
	awk '/^(not ok|ok) / { show = /^not ok/ ? 20 : 0; print; next }
	     /^# / && (show-- > 0 || /Expected|SKIP|failed|FAIL|timeout/)' \
		"$log" | sed 's/^/  /'
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

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one unit "unit: $(basename "$t") (no root)" "$t"
done
run_one lint "the library's layers and installation" tools/lint.sh "$BUILD" --test
run_one golden "golden bytecode" selftests/golden.sh "$BUILD"
run_one bad "bad input" selftests/system/bad_input.sh
run_one selftests "selftests" "$BUILD/tests/cgfw_selftest"
# bpf against nft on live traffic: 140 x 100 gives over 10,000 pairs after
# the rulesets nft itself refuses; DIFF_RULESETS=N DIFF_SEED=S for more.
# Then DIFF_LISTS access lists of DIFF_LIST_RULES rules (the classifier's
# shape), DIFF_LIST_PACKETS packets each at their rules' boundaries. Then
# ClassBench's own lists (CGFW_CLASSBENCH, which make sets) with
# DIFF_TRACE_PACKETS packets of their traces.
run_one differential "differential" "$BUILD/tests/difftest" -s "${DIFF_SEED:-1}" \
	-r "${DIFF_RULESETS:-140}" -p 100 -L "${DIFF_LIST_RULES:-1000}" \
	-l "${DIFF_LISTS:-1}" -P "${DIFF_LIST_PACKETS:-3000}" \
	${CGFW_CLASSBENCH:+-C "$CGFW_CLASSBENCH"} -T "${DIFF_TRACE_PACKETS:-2000}"
run_one crafted "crafted packets (bpf)" "$BUILD/tests/testrun"
run_one cli "cli" selftests/system/cli.sh
run_one large "large sets" selftests/system/large_sets.sh
run_one objects "named stateful objects" selftests/system/objects.sh
run_one rule-cmds "rule commands through cgfw update" selftests/system/rule_cmds.sh
run_one dynamic "sets the rules add to" selftests/system/dynamic.sh
run_one concat "sets of intervals of concatenations" selftests/system/concat.sh
run_one exthdr "extension headers and TCP options on real connections" \
	selftests/system/exthdr.sh
run_one meta "the clock, the socket and numgen on real datagrams" \
	selftests/system/meta_keys.sh
run_one ct "ct at egress on the bpf backend, against nft, and its keeper" selftests/system/ct.sh
run_one log "log with the bpf backend, to the kernel log" selftests/system/log.sh
run_one readback "the read-back from nft's batch against the dumps" selftests/system/readback.sh
run_one yardstick "nftables' tests/py rules at a cgroup hook, each backend" \
	selftests/system/yardstick.sh
run_one kill "kill -9 in the middle of an apply" selftests/system/kill_apply.sh
run_one kill-steps "kill -9 at every step of an apply" selftests/system/kill_points.sh
run_one concurrency "commands at the same time" selftests/system/concurrency.sh
run_one daemon "cgfw daemon: tables that follow their cgroups" selftests/system/daemon.sh
run_one operations "operations: editors, nft flush, other users, long names" \
	selftests/system/operations.sh
run_one composition "tables of different backends on one cgroup" \
	selftests/system/composition.sh
# the kernel series' own selftest: skips where the kernel lacks the family
run_one kernel "kernel: nf_tables cgroup family" "$BUILD/tests/nft_cgroup_skb"
run_one compat "nft 1.0.6 next to the cgroup family" selftests/system/nft_compat.sh
# nft with the cgroup family (nft-extension/, make nft): real traffic,
# round trips, cgfw and nft agreeing; then nftables' own test suites
run_one nft "nft with the cgroup family" selftests/system/nft_family.sh
run_one nft "nftables' test suites with the cgroup family" \
	nft-extension/run-suites.sh "$BUILD"

echo "=== time per group"
printf '  %s\n' "${times[@]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
