#!/bin/bash
# Fuzzing cgfw's input paths with libFuzzer (clang): the rewrite, the bpf
# description's parser, and the whole compile path (libnftables in its
# child process). The library is built with ASan, UBSan and coverage in
# BUILD-fuzz; the seeds are the rule files of docs/examples and
# selftests/golden. Every input in selftests/fuzz/regress/TARGET is run first: the
# crashes the fuzzers ever found. TAP, and a count line.
#   tools/fuzz.sh BUILD            fixed numbers of runs (make check)
#   FUZZ_SECONDS=N tools/fuzz.sh   N seconds per target (make fuzz)
set -u
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
FZ=$BUILD-fuzz
n=0 p=0 f=0 s=0
ok() { n=$((n + 1)) p=$((p + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)) f=$((f + 1)); echo "not ok $n $1"; shift; printf '# %s\n' "$@"; }
skip() { n=$((n + 1)) s=$((s + 1)); echo "ok $n $1 # SKIP $2"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! command -v clang > /dev/null; then
	skip "fuzzing" "no clang (make deps installs it)"
	echo "$p passed, $f failed, $s skipped"
	exit 0
fi
flags="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all"
if ! make --no-print-directory -s -j"$(nproc)" BUILD="$FZ" CC=clang \
	CFLAGS="$flags -fsanitize=fuzzer-no-link" "$FZ/libcgfw.a" \
	> "$work/build.log" 2>&1; then
	not_ok "the fuzzing build" "$(tail -20 "$work/build.log")"
	echo "$p passed, $f failed, $s skipped"
	exit 1
fi
pkgs="libnftables libnftnl libmnl libbpf libelf"
export ASAN_OPTIONS=detect_leaks=1:detect_odr_violation=0
export UBSAN_OPTIONS=print_stacktrace=1
export LSAN_OPTIONS=suppressions=$top/selftests/sanitizers/lsan.supp:print_suppressions=0
mkdir -p "$work/seeds"
cp docs/examples/*.nft selftests/golden/*.nft "$work/seeds/"

# target, runs in make check, needs root
for t in "rewrite 50000 no" "desc 50000 no" "compile 400 yes"; do
	set -- $t
	bin=$FZ/fuzz_$1
	if ! clang $flags -fsanitize=fuzzer -Iuserspace/include \
		-Iuserspace/lib -D_GNU_SOURCE $(pkg-config --cflags $pkgs) \
		"selftests/fuzz/fuzz_$1.c" "$FZ/libcgfw.a" \
		$(pkg-config --libs $pkgs) -o "$bin" > "$work/cc.log" 2>&1; then
		not_ok "fuzz_$1 builds" "$(tail -20 "$work/cc.log")"
		continue
	fi
	if [ "$3" = yes ] && [ "$(id -u)" != 0 ]; then
		skip "fuzz_$1" "needs root (the shadow network namespace)"
		continue
	fi
	reg=(selftests/fuzz/regress/$1/*)
	if [ -e "${reg[0]}" ]; then
		if "$bin" "${reg[@]}" > "$work/reg.log" 2>&1; then
			ok "fuzz_$1: the ${#reg[@]} inputs it ever crashed on do not crash it"
		else
			not_ok "fuzz_$1: the inputs it ever crashed on" \
				"$(grep -E 'ERROR|SUMMARY|Running' "$work/reg.log" | tail -10)"
		fi
	fi
	mkdir -p "$work/corpus-$1" "$work/art-$1"
	if [ -n "${FUZZ_SECONDS:-}" ]; then
		lim="-max_total_time=$FUZZ_SECONDS"
	else
		lim="-runs=$2"
	fi
	seeds=$work/seeds
	[ "$1" = desc ] && seeds=
	start=$SECONDS
	if "$bin" $lim -seed=1 -max_len=4096 \
		-artifact_prefix="$work/art-$1/" "$work/corpus-$1" $seeds \
		> "$work/$1.log" 2>&1; then
		ok "fuzz_$1: $(grep -o 'Done [0-9]* runs' "$work/$1.log" | cut -d' ' -f2) runs, no crash, no leak, no undefined behaviour ($((SECONDS - start)) s)"
	else
		for a in "$work/art-$1"/*; do
			[ -e "$a" ] && cp "$a" "$BUILD/" 2>/dev/null
		done
		not_ok "fuzz_$1: found a crash (kept in $BUILD/; add it to selftests/fuzz/regress/$1/ once fixed)" \
			"$(grep -E 'ERROR|SUMMARY|#[0-9]+ in ' "$work/$1.log" | head -12)"
	fi
done
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
