#!/bin/bash
# A set of 100,000 addresses (a blocklist) with every backend this kernel
# has: it applies, a packet to an address in it is dropped and one to an
# address out of it is not, one more element is added in place (the
# programs and the table stay: same generation), and the listing counts
# them all. (1,000,000 elements: docs/benchmarks.rst.)
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup large

N=${CGFW_LARGE_SET:-100000}
python3 - "$N" "$cg" > "$work/big.nft" <<'PY'
import sys
n, cg = int(sys.argv[1]), sys.argv[2]
print("table cgroup big {")
print("\tset blk {\n\t\ttype ipv4_addr\n\t\telements = {")
# 10.0.0.0 + 3i: 127.0.0.2 is in it only as the last one, below
print(",\n".join("\t\t\t10.%d.%d.%d" % ((3 * i) >> 16 & 255,
      (3 * i) >> 8 & 255, 3 * i & 255) for i in range(n - 1)) +
      ",\n\t\t\t127.0.0.2")
print("\t\t}\n\t}")
print("\tchain out {")
print('\t\ttype filter hook egress cgroup "%s" priority 0; policy accept;' % cg)
print("\t\tip daddr @blk counter drop")
print("\t}")
print("}")
PY
# one datagram from a process of our cgroup: fails (EPERM) if dropped
not() { ! "$@"; }
send() { bash -c 'echo $$ > "$0/cgroup.procs" && echo x > /dev/udp/$1/9' "$root/$cg" "$1" 2>/dev/null; }
elems() { "$CGFW" list -j big | python3 -c '
import json, sys
d = json.load(sys.stdin)["nftables"]
print(sum(len(o["set"].get("elem", [])) for o in d if "set" in o))'; }
gen() { "$CGFW" list -j big | python3 -c '
import json, sys
d = json.load(sys.stdin)["nftables"]
print([o["table"]["cgfw"]["generation"] for o in d if "table" in o][0])'; }

backends="nft-emulated bpf"
"$CGFW" status | grep -q '^nft cgroup family (native): *yes$' && backends="$backends nft-native"
for b in $backends; do
	check "$b: a set of $N addresses applies" "$CGFW" apply -b "$b" "$work/big.nft"
	check "$b: a packet to an address in it is dropped" not send 127.0.0.2
	check "$b: a packet to one out of it is not" send 127.0.0.3
	g=$(gen)
	echo 'add element cgroup big blk { 127.0.0.3 }' > "$work/add.nft"
	check "$b: one more element, in place" "$CGFW" update "$work/add.nft"
	check "$b: and it applies at once" not send 127.0.0.3
	check "$b: the table is the one applied (generation $g)" test "$(gen)" = "$g"
	check "$b: the listing has all $((N + 1)) elements" test "$(elems)" = $((N + 1))
done
"$CGFW" flush
exit $fail
