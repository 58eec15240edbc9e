#!/bin/bash
# In the guest: the project's tests (tools/run-tests.sh), then the kernel's
# log, which must hold no warning, lockdep report, KASAN report or oops,
# and (in the debug kernel, which has kmemleak) no leak.
# The last line is run-tests.sh's count with the log check added.
#   tools/vm/guest-tests.sh BUILD [1|2]
# make check runs the groups in two guests at once, one per core (QEMU's
# TCG runs a guest on one host thread): part 1 the groups of GUEST_PART1,
# about half of the emulated time; part 2 the others. Without a part,
# every group in one guest (make vm-check).
BUILD=${1:-build}
part=${2:-}
GUEST_PART1="selftests nft operations daemon kernel compat"
case $part in
"") ;;
1) export CGFW_TESTS=$GUEST_PART1 ;;
2) ;;
*) echo "usage: $0 BUILD [1|2]" >&2; exit 2 ;;
esac
# the kill and concurrency tests ran with the other backends on the host;
# here the native family, whose kernel this is (and fewer rounds: every
# instruction is emulated)
export CGFW_KILL_BACKENDS=nft-native CGFW_KILL_ROUNDS=${CGFW_KILL_ROUNDS:-20}
export CGFW_CONC_BACKENDS="nft-native both"
export CGFW_DAEMON_RESTARTS=${CGFW_DAEMON_RESTARTS:-5}
# the selftests' emulated-target variant and most of the differential's
# random rulesets ran on the host; here the native family, the bpf
# programs under 6.12's verifier, and both (a third of the guest's time
# went to them)
export CGFW_SELFTEST_NOT=${CGFW_SELFTEST_NOT-nft-emulated}
export DIFF_RULESETS=${DIFF_RULESETS:-50}
export CGFW_DYN_BACKENDS=${CGFW_DYN_BACKENDS:-"bpf nft-native"}
# the unit tests (no root, no kernel) and the library's layering and
# installation check ran on the host and use no kernel: not again here
# (they took 7 of the guest's 40 minutes); nor the read-back's comparison
# of nft's batch with the dumps, cgfw's userspace against itself over
# 1,400 compiles (more than ten minutes emulated): every compile of the
# groups here reads the batch under this kernel; nor the language
# yardstick, 1,000 commands over nftables' tests/py (465 s emulated; with
# the native family it took 308 of 337 rules, 29 refused at the rule:
# docs/status.rst)
export CGFW_NOT_TESTS=${CGFW_NOT_TESTS-unit lint readback yardstick}
echo "=== not repeated here (run on the host: no kernel, or cgfw's userspace against itself): $CGFW_NOT_TESTS"
case $part in
1) echo "=== part 1 of the groups: $GUEST_PART1" ;;
2) echo "=== part 2 of the groups: all but $GUEST_PART1"
   CGFW_NOT_TESTS+=" $GUEST_PART1" ;;
esac
tools/run-tests.sh "$BUILD" | tee /tmp/guest-tests.out
read -r p _ f _ s _ <<< "$(tail -1 /tmp/guest-tests.out)"
echo "=== the guest's skips"
# each must be one the guest is known to have (tools/vm/guest-skips): any
# other is most often an option that the guest's config lacks
unexpected=$(grep -E '^  ok [0-9]+ .*# SKIP' /tmp/guest-tests.out |
	sed 's/.*# SKIP *//' | sort -u |
	grep -vE -f <(grep -vE '^(#|$)' tools/vm/guest-skips))
if [ -n "$unexpected" ]; then
	echo "  not ok 1 every skip in the guest is one it is known to have"
	echo "$unexpected" | sed 's/^/    unexpected: /'
	echo "    (a kernel option missing from kernel-patches/config? docs/guest-kernel.rst)"
	f=$((f + 1))
else
	echo "  ok 1 every skip in the guest is one it is known to have ($s skips)"
	p=$((p + 1))
fi
echo "=== kernel log"
bad=$(dmesg | grep -E 'WARNING:|BUG:|KASAN|Oops|general protection|possible (recursive|circular) locking|suspicious RCU usage|refcount_t:|UBSAN' | head -20)
if [ -n "$bad" ]; then
	echo "  not ok 2 the kernel log is clean"
	echo "$bad" | sed 's/^/    /'
	f=$((f + 1))
else
	echo "  ok 2 the kernel log is clean ($(uname -r))"
	p=$((p + 1))
fi
if mount -t debugfs none /sys/kernel/debug 2>/dev/null &&
   [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak; sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	leaks=$(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)
	if [ "$leaks" -gt 0 ]; then
		echo "  not ok 3 kmemleak: $leaks unreferenced objects"
		head -40 /sys/kernel/debug/kmemleak | sed 's/^/    /'
		f=$((f + 1))
	else
		echo "  ok 3 kmemleak finds no leak"
		p=$((p + 1))
	fi
fi
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
