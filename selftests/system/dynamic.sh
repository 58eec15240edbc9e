#!/bin/bash
# Sets the rules add to and delete from (add @s { ip daddr }, delete @s
# { ip daddr }), with every backend this kernel has: the same datagrams
# meet the same verdicts, the listing shows what was added, a full set
# ends the adding rule as nft does; meters (a limit, a quota, a counter
# per element) meet the same datagrams as nft's; what the bpf backend
# cannot do (a timeout) is refused at the rule.
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
elems() { "$CGFW" list -j "${1:-dyn}" | python3 -c '
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
# meters: a state per element, made with it (nft's meters: a limit's
# bucket, a quota's bytes, a counter), each address its own
cat > "$work/meter.nft" <<EOT
table cgroup met {
	set q {
		type ipv4_addr
		flags dynamic
	}
	set c {
		type ipv4_addr
		flags dynamic
	}
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 21 meter per size 4 { ip daddr limit rate 1/minute burst 2 packets } accept
		udp dport 21 drop
		udp dport 22 update @q { ip daddr quota over 60 bytes } drop
		udp dport 23 update @c { ip daddr counter }
	}
}
EOT
for b in $backends; do
	check "$b: a table with meters applies" "$CGFW" apply -b "$b" "$work/meter.nft"
	r=$(sends 127.0.0.1:21 127.0.0.1:21 127.0.0.1:21 127.0.0.2:21 127.0.0.2:21 127.0.0.2:21 127.0.0.1:21)
	check "$b: a limit of burst 2 per address: 2 pass each, then the drop rule ($r)" \
		test "$r" = ppdppdd
	r=$(sends 127.0.0.1:22 127.0.0.1:22 127.0.0.1:22 127.0.0.2:22)
	check "$b: a quota over 60 bytes per address: the third datagram of 30 bytes is past it ($r)" \
		test "$r" = ppdp
	r=$(sends 127.0.0.3:23 127.0.0.3:23)
	check "$b: the named meters list their addresses ($(elems met))" \
		test "$(elems met)" = "127.0.0.1 127.0.0.2 127.0.0.3"
	"$CGFW" delete met
done
sed 's/udp dport 22 update @q { ip daddr quota over 60 bytes } drop/&\n\t\tudp dport 24 update @q { ip daddr quota over 90 bytes } drop/' \
	"$work/meter.nft" > "$work/meter2.nft"
check "bpf: a set that two rules meter with different statements is refused at the second" \
	bash -c "! '$CGFW' apply -b bpf '$work/meter2.nft' 2> '$work/meter2.err' &&
		 grep -q 'meter2.nft:15:[0-9-]*: Error: the bpf backend cannot do this: set q is a meter of another statement' '$work/meter2.err'"
# what nft does with a meter's elements that bpf does not: a lookup runs
# the element's statement, elements of the set's own have none
sed 's/udp dport 23 update @c { ip daddr counter }/&\n\t\tip daddr @q drop/' \
	"$work/meter.nft" > "$work/meter3.nft"
check "bpf: a lookup in a metered set is refused at its rule" \
	bash -c "! '$CGFW' apply -b bpf '$work/meter3.nft' 2> '$work/meter3.err' &&
		 grep -q 'meter3.nft:16:[0-9-]*: Error: the bpf backend cannot do this: a lookup in set q, which a rule meters' '$work/meter3.err'"
sed 's/flags dynamic$/&\n\t\telements = { 127.0.0.9 }/' "$work/meter.nft" > "$work/meter4.nft"
check "bpf: a meter of a set with elements of its own is refused at its rule" \
	bash -c "! '$CGFW' apply -b bpf '$work/meter4.nft' 2> '$work/meter4.err' &&
		 grep -q 'Error: the bpf backend cannot do this: a meter of set q, which has elements of its own' '$work/meter4.err'"
"$CGFW" flush
exit $fail
