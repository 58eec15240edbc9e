#!/bin/bash
# In the guest: the project's tests (tools/run-tests.sh), then the kernel's
# log, which must hold no warning, lockdep report, KASAN report or oops.
# The last line is run-tests.sh's count with the log check added.
#   tools/vm/guest-tests.sh BUILD
BUILD=${1:-build}
tools/run-tests.sh "$BUILD" | tee /tmp/guest-tests.out
read -r p _ f _ s _ < <(tail -1 /tmp/guest-tests.out)
echo "=== kernel log"
bad=$(dmesg | grep -E 'WARNING:|BUG:|KASAN|Oops|general protection|possible (recursive|circular) locking|suspicious RCU usage|refcount_t:|UBSAN' | head -20)
if [ -n "$bad" ]; then
	echo "  not ok 1 the kernel log is clean"
	echo "$bad" | sed 's/^/    /'
	f=$((f + 1))
else
	echo "  ok 1 the kernel log is clean ($(uname -r))"
	p=$((p + 1))
fi
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
