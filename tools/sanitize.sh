#!/bin/bash
# make check's sanitizer stage: cgfw built with AddressSanitizer and
# UndefinedBehaviorSanitizer (in BUILD-san), and the unit, golden,
# bad-input, selftest, command-line, large-set, named-object, meter,
# meta-key, log and kill-at-every-step
# tests run with it (the last: the recovery after a kill at each step).
# Any report from cgfw's own code fails: ASan and UBSan stop the process,
# and LeakSanitizer makes it exit non-zero at the end; the leaks of the
# libraries cgfw calls are suppressed by selftests/sanitizers/lsan.supp, each
# entry explained there.
# Prints TAP and the run-tests.sh count line.
#   tools/sanitize.sh BUILD
set -u
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
SAN=$BUILD-san
san_flags="-fsanitize=address,undefined -fno-sanitize-recover=all"
mkdir -p "$SAN"
if ! make --no-print-directory -s -j"$(nproc)" BUILD="$SAN" \
	CFLAGS="-O1 -g -fno-omit-frame-pointer $san_flags" \
	LDFLAGS="$san_flags" all > "$SAN/make.log" 2>&1; then
	echo "not ok 1 the sanitizer build"
	sed "s/^/# /" "$SAN/make.log" | tail -20
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86:detect_odr_violation=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=87
export LSAN_OPTIONS=suppressions=$top/selftests/sanitizers/lsan.supp:print_suppressions=0
CGFW_TESTS="unit golden bad selftests crafted cli large objects dynamic concat meta log kill-steps" exec tools/run-tests.sh "$SAN"
