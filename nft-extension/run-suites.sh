#!/bin/bash
# nftables' own test suites (tests/py, shell, monitor of the patched source
# tree in BUILD/nft-build) with the nft and libnftables of BUILD/nft, in
# this kernel. One TAP line per .t file and per shell test case.
#   nft-extension/run-suites.sh [-f] BUILD
# Without -f: the cgroup family's own cases and a regression subset of the
# inet ones (the lists below), what `make check` runs in the guest. With -f
# (make nft-check-full): every .t file of the cgroup, inet and any
# directories and the whole tests/shell suite.
# Needs root and a kernel with the cgroup family, else it skips.
set -u
full=
[ "${1:-}" = -f ] && { full=1; shift; }
BUILD=$(realpath "${1:-build}")
NFT=$BUILD/nft/sbin/nft
LIB=$BUILD/nft/lib/libnftables.so.1
SRC=$BUILD/nft-build/nftables-1.0.6
n=0 fail=0

# the regression subsets: inet .t files and shell cases that exercise what
# the patches touch (families, chains and their hooks, listing, JSON,
# monitor, sets and maps, flush) and run in the guest in a few minutes.
# Not any/limit.t: 1.0.6 expects `limit rate 1023000 mbytes/second` to
# load, and 6.12 (like the host's 6.18) refuses rates whose nanosecond
# product overflows (nft_limit.c: -EOVERFLOW), with or without the
# series; the full run (-f) keeps it, and those are its 4 errors.
PY_INET="inet/meta.t inet/tcp.t inet/udp.t inet/ip.t inet/sets.t inet/map.t
	inet/ct.t inet/icmpX.t inet/reject.t any/counter.t any/log.t
	any/quota.t ip/ip.t ip6/ip6.t netdev/fwd.t"
SHELL_SUBSET="chains/0001jumps_0 chains/0016delete_handle_0 chains/0021prio_0
	chains/0025prio_arp_1 chains/0026prio_netdev_1 chains/0030create_0
	chains/0031priority_variable_0 chains/0035policy_variable_0
	listing/0001ruleset_0 listing/0003table_0 listing/0005ruleset_ip_0
	listing/0007ruleset_inet_0 listing/0008ruleset_arp_0
	listing/0009ruleset_bridge_0 listing/0010sets_0
	listing/0021ruleset_json_terse_0 json/0001set_statements_0
	json/0002table_map_0 json/netdev maps/0009vmap_0 maps/typeof_maps_0
	sets/0001named_interval_0 sets/0015rulesetflush_0
	sets/0028delete_handle_0 transactions/0001table_0
	transactions/0010chain_0 transactions/0020rule_0 transactions/0030set_0
	nft-f/0001define_slash_0 nft-f/0021list_ruleset_0
	nft-f/0024priority_0 nft-f/0029split_file_0
	flowtable/0001flowtable_0 netns/0001nft-f_0"

ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n $1"; shift;
	   [ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/# /' | tail -30; }
skip_all() { echo "ok 1 nftables' test suites # SKIP $*"; exit 0; }

[ -x "$NFT" ] && [ -d "$SRC/tests" ] ||
	skip_all "nft is not built (make nft)$(sed -n '1s/^/: /p' "$BUILD/nft.missing" 2>/dev/null)"

# libnftnl's own test of the chain attribute: needs no kernel
if out=$("$BUILD/nft-build/libnftnl-1.2.4/tests/nft-chain-test" 2>&1); then
	ok "libnftnl tests/nft-chain-test (NFTNL_CHAIN_CGROUP_ID)"
else
	not_ok "libnftnl tests/nft-chain-test (NFTNL_CHAIN_CGROUP_ID)" "$out"
fi
skip_all() { echo "ok $((n + 1)) nftables' test suites # SKIP $*"; exit $fail; }
[ "$(id -u)" = 0 ] || skip_all "needs root"
command -v python3 >/dev/null || skip_all "python3 is missing"
if ! unshare -n "$NFT" add table cgroup probe 2>/dev/null; then
	skip_all "this kernel has no cgroup family (kernel-patches/)"
fi
mnt=$(findmnt -n -t cgroup2 -o TARGET | head -1)
[ -n "$mnt" ] || skip_all "cgroup v2 is not mounted"

# the suites write next to their files: a copy of the tree's tests
work=$(mktemp -d)
cleanup() {
	unshare -n true	# nothing to flush outside: the suites use netns
	rmdir "$mnt"/nft-test-py 2>/dev/null
	find "$mnt/nft-test" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
cp -a "$SRC/tests" "$SRC/py" "$work/"
# the monitor suite waits 0.5 s for nft monitor to start and to print;
# under QEMU's emulation that is too short
sed -i 's/^\(\s*\)sleep 0\.5$/\1sleep 2/' "$work/tests/monitor/run-tests.sh"
mkdir -p "$mnt/nft-test-py"

# tests/py: a .t file passes when nft-test.py reports no error
py_files="cgroup/cgroup.t"
if [ -n "$full" ]; then
	py_files+=" $(cd "$work/tests/py" && ls inet/*.t any/*.t)"
else
	py_files+=" $PY_INET"
fi
start=$SECONDS
for t in $py_files; do
	json=
	[ "${t%%/*}" = cgroup ] && json=-j
	out=$(cd "$work" && timeout 900 python3 tests/py/nft-test.py -l "$LIB" \
		$json "$t" 2>&1)
	sum=$(printf '%s\n' "$out" | grep -E "^$t: [0-9]+ unit tests" | tail -1)
	err=$(sed -n 's/.* \([0-9]*\) error.*/\1/p' <<< "$sum")
	if [ -n "$sum" ] && [ "$err" = 0 ]; then
		ok "tests/py $t${json:+ (and JSON)}: ${sum#*: }"
	else
		not_ok "tests/py $t${json:+ (and JSON)}: ${sum#*: }" \
			"$(printf '%s\n' "$out" | grep -E 'ERROR|WARNING|rror' | head -20)"
	fi
done
echo "# tests/py: $((SECONDS - start)) s"

# tests/shell: the family's own cases, then the others
start=$SECONDS
cases=$(cd "$work/tests/shell" && find testcases/cgroup -type f -executable | sort)
if [ -n "$full" ]; then
	cases+=" $(cd "$work/tests/shell" && find testcases -type f -executable |
		grep -v '^testcases/cgroup/' | sort)"
else
	for c in $SHELL_SUBSET; do
		[ -x "$work/tests/shell/testcases/$c" ] && cases+=" testcases/$c"
	done
fi
for c in $cases; do
	out=$(cd "$work/tests/shell" && NFT=$NFT timeout 900 ./run-tests.sh "$c" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -q '\[OK\]' <<< "$out"; then
		ok "tests/shell $c"
	else
		not_ok "tests/shell $c" "$(grep -v '^I: \[EXECUTING\]' <<< "$out" | tail -25)"
	fi
done
echo "# tests/shell: $((SECONDS - start)) s"

# tests/monitor: nft monitor's output, text and JSON, and nft -e
start=$SECONDS
mkdir -p "$mnt/nft-test/m"
mon="testcases/cgroup.t"
[ -n "$full" ] && mon=$(cd "$work/tests/monitor" && ls testcases/*.t)
for t in $mon; do
	for j in "" -j; do
		out=$(cd "$work/tests/monitor" &&
		      NFT=$NFT timeout 900 unshare -n ./run-tests.sh $j "$t" 2>&1)
		if [ $? -eq 0 ]; then
			ok "tests/monitor $t${j:+ (JSON)}"
		else
			not_ok "tests/monitor $t${j:+ (JSON)}" "$(tail -25 <<< "$out")"
		fi
	done
done
echo "# tests/monitor: $((SECONDS - start)) s"
exit $fail
