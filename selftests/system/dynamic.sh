#!/bin/bash
# Sets the rules add to and delete from (add @s { ip daddr }, delete @s
# { ip daddr }), with every backend this kernel has: the same datagrams
# meet the same verdicts, the listing shows what was added, a full set
# ends the adding rule as nft does, and what the bpf backend cannot do
# (a timeout, a meter) is refused at the rule.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup dynamic

cat > "$work/dyn.nft" <<EOT
table cgroup dyn {
	set seen {
		type ipv4_addr
		flags dynamic
		size 2
	}
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		ip daddr @seen udp dport 12 drop
		udp dport 11 add @seen { ip daddr } counter
		udp dport 13 delete @seen { ip daddr }
	}
}
EOT
# each destination's outcome, "p" or "d"
sends() {	# sends ADDR:PORT...
	local a out=""
	for a; do
		if bash -c 'echo $$ > "$0/cgroup.procs" && echo x > "/dev/udp/${1%:*}/${1#*:}"' \
			"$root/$cg" "$a" 2>/dev/null; then
			out="${out}p"
		else
			out="${out}d"
		fi
	done
	echo "$out"
}
elems() { "$CGFW" list -j dyn | python3 -c '
import json, sys
d = json.load(sys.stdin)["nftables"]
print(" ".join(sorted(e for o in d if "set" in o for e in o["set"].get("elem", []))))'; }

backends="nft-emulated bpf"
"$CGFW" status | grep -q '^nft cgroup family (native): *yes$' && backends="$backends nft-native"
for b in $backends; do
	check "$b: a table whose rules add to a set applies" \
		"$CGFW" apply -b "$b" "$work/dyn.nft"
	r=$(sends 127.0.0.1:12 127.0.0.1:11 127.0.0.1:12 127.0.0.2:12)
	check "$b: not in it, added, then in it; another address not ($r)" test "$r" = ppdp
	check "$b: the listing has the address added" test "$(elems)" = 127.0.0.1
	r=$(sends 127.0.0.2:11 127.0.0.3:11 127.0.0.3:12)
	check "$b: a third address does not fit a set of size 2: the adding rule ends there ($r)" \
		test "$r" = ppp
	check "$b: ... the set holds the first two" \
		test "$(elems)" = "127.0.0.1 127.0.0.2"
	check "$b: ... and the counter after the add counted those two only" \
		bash -c "'$CGFW' list dyn | grep -q 'add @seen { ip daddr } counter packets 2 '"
	r=$(sends 127.0.0.1:13 127.0.0.1:12)
	check "$b: deleted from it, it passes again ($r)" test "$r" = pp
	check "$b: and the listing has it no more" test "$(elems)" = 127.0.0.2
	"$CGFW" delete dyn
done
sed 's/flags dynamic/flags dynamic, timeout/' "$work/dyn.nft" > "$work/timeout.nft"
check "bpf: a set with timeouts is refused, with what to use" \
	bash -c "! '$CGFW' apply -b bpf '$work/timeout.nft' 2> '$work/timeout.err' &&
		 grep -q 'the bpf backend cannot do set .seen. (timeouts.*; use the nft backend' '$work/timeout.err'"
sed 's/udp dport 11 add @seen { ip daddr } counter/udp dport 11 update @seen { ip daddr limit rate 1\/second }/' "$work/dyn.nft" > "$work/meter.nft"
check "bpf: a meter is refused at its rule" \
	bash -c "! '$CGFW' apply -b bpf '$work/meter.nft' 2> '$work/meter.err' &&
		 grep -q 'meter.nft:10:[0-9-]*: Error: the bpf backend cannot do this: add @seen with a map, a timeout or statements (meters)' '$work/meter.err'"
"$CGFW" flush
exit $fail
