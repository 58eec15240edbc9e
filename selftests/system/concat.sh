#!/bin/bash
# Sets of intervals of concatenations (type ipv4_addr . inet_service;
# flags interval: each element a box), with every backend this kernel
# has: the same datagrams meet the same verdicts and counters, named and
# anonymous, compared one by one and as a classifier's tree; the listing
# has the boxes as nft writes them; the bpf backend, which compiles them
# into its programs, refuses to change them in place and says what to do.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup concat

cat > "$work/named.nft" <<EOT
table cgroup cc {
	set allow {
		type ipv4_addr . inet_service
		flags interval
		elements = { 127.0.0.0/30 . 40050-40059, 127.0.0.9 . 40060,
			     127.0.1.1-127.0.1.3 . 40070-40071 }
	}
	set allow6 {
		type ipv6_addr . inet_service
		flags interval
		elements = { ::1 . 40050-40052, fd00::/127 . 40060 }
	}
	map verdicts {
		type ipv4_addr . inet_service : verdict
		flags interval
		elements = { 127.0.0.0/30 . 40080-40084 : drop,
			     127.0.0.9 . 40085 : accept, 127.0.0.8 . 40086 : jump j }
	}
	chain j {
		counter drop
	}
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 40050-40079 ip daddr . udp dport != @allow counter drop
		udp dport 40050-40079 ip6 daddr . udp dport != @allow6 counter drop
		udp dport 40080-40089 ip daddr . udp dport vmap @verdicts
		udp dport 40080-40089 meta mark set ip daddr . udp dport map { 127.0.0.0/30 . 40080-40088 : 0x7 }
		meta mark 7 counter drop
	}
}
EOT
# twenty rules of anonymous boxes in a row: a tree on the bpf backend
{
	echo 'table cgroup tree {'
	echo '	chain out {'
	echo "		type filter hook egress cgroup \"$cg\" priority 0; policy accept;"
	for i in $(seq 1 20); do
		echo "		ip daddr . udp dport { 127.0.$i.0/24 . $((40000 + i % 5))-$((40002 + i % 5)), 127.1.$i.1 . 41000 } counter drop"
	done
	echo '	}'
	echo '}'
} > "$work/tree.nft"
# one rule, a set of 300 boxes: a tree of its own on the bpf backend
{
	echo 'table cgroup big {'
	echo '	set b {'
	echo '		type ipv4_addr . inet_service'
	echo '		flags interval'
	echo -n '		elements = { '
	for i in $(seq 1 300); do
		echo -n "127.$((i / 200)).$((i % 200)).0/24 . $((40000 + i % 7))-$((40002 + i % 7)), "
	done
	echo '127.9.9.9 . 41000 }'
	echo '	}'
	echo '	chain out {'
	echo "		type filter hook egress cgroup \"$cg\" priority 0; policy accept;"
	echo '		ip daddr . udp dport @b counter drop'
	echo '	}'
	echo '}'
} > "$work/big.nft"

# the elements of set $2 of table $1, as listed, in order
elems() { "$CGFW" list "$1" | tr -d '\n\t' | grep -o "set $2 {[^}]*}" |
	sed 's/.*elements = { //; s/ }$//; s/, */\n/g' | sort | paste -sd '|'; }
counters() { "$CGFW" list "$1" | grep -o 'counter packets [0-9]*' | tr '\n' ' '; }

ip -6 addr add fd00::1/64 dev lo
ip -6 addr add fd00::2/64 dev lo
named=(127.0.0.1:40050 127.0.0.3:40059 127.0.0.4:40055 127.0.0.9:40060
       127.0.0.9:40061 127.0.1.2:40071 127.0.1.4:40070 127.0.0.2:40049
       ::1:40051 ::1:40053 fd00::1:40060 fd00::2:40060
       127.0.0.2:40081 127.0.0.9:40085 127.0.0.8:40086 127.0.0.9:40086
       127.0.0.2:40088 127.0.0.5:40088)
tree=(127.0.3.7:40003 127.0.3.7:40006 127.0.3.7:40002 127.1.3.1:41000
      127.1.3.2:41000 127.0.20.1:40000 127.0.20.1:40003 127.0.21.1:40001)
big=(127.0.1.9:40001 127.0.1.9:40004 127.0.7.1:40007 127.0.7.1:40009
     127.1.99.2:40001 127.1.99.2:40006 127.1.101.1:40006 127.9.9.9:41000
     127.9.9.8:41000 127.1.150.3:40003)
backends="nft-emulated bpf"
"$CGFW" status | grep -q '^nft cgroup family (native): *yes$' && backends="$backends nft-native"
for b in $backends; do
	check "$b: a named set of boxes applies" "$CGFW" apply -b "$b" "$work/named.nft"
	r=$(send_each "${named[@]}")
	check "$b: only the datagrams in a box pass; a verdict map's and a map's boxes ($r)" \
		test "$r" = ppdpdpdppdpddpdpdp
	v=${b//-/_}
	eval "named_$v=\$(counters cc)"
	check "$b: the listing has the boxes as nft writes them ($(elems cc allow); $(elems cc allow6))" \
		test "$(elems cc allow); $(elems cc allow6)" = "127.0.0.0/30 . 40050-40059|127.0.0.9 . 40060|127.0.1.1-127.0.1.3 . 40070-40071; ::1 . 40050-40052|fd00::/127 . 40060"
	"$CGFW" delete cc
	check "$b: twenty rules of boxes apply" "$CGFW" apply -b "$b" "$work/tree.nft"
	eval "tree_$v=\$(send_each \"\${tree[@]}\")"
	eval "treec_$v=\$(counters tree)"
	"$CGFW" delete tree
	check "$b: a set of 300 boxes applies" "$CGFW" apply -b "$b" "$work/big.nft"
	eval "big_$v=\$(send_each \"\${big[@]}\")"
	"$CGFW" delete big
done
for b in $backends; do
	[ "$b" = nft-emulated ] && continue
	v=${b//-/_}
	nv="named_$v" tv="tree_$v" tcv="treec_$v"
	check "$b: the named set's counters are nft-emulated's (${!nv})" \
		test "${!nv}" = "$named_nft_emulated"
	check "$b: the twenty rules' verdicts are nft-emulated's (${!tv})" \
		test "${!tv}" = "$tree_nft_emulated"
	check "$b: and their counters" test "${!tcv}" = "$treec_nft_emulated"
	bv="big_$v"
	check "$b: the set of 300 boxes' verdicts are nft-emulated's (${!bv})" \
		test "${!bv}" = "$big_nft_emulated"
done
check "bpf: the twenty rules are a classifier's tree" \
	bash -c "'$CGFW' compile -b bpf '$work/tree.nft' | grep -q 'rules at .*tree.nft:4-23: 20 rules, classifier'"
check "bpf: and so is the one rule with 300 boxes" \
	bash -c "'$CGFW' compile -b bpf '$work/big.nft' | grep -q 'rules at .*big.nft:9: 1 rules, classifier (302 leaves, 301 entries'"

# in place: nft's backends change the set, the bpf backend says to apply
echo 'add element cgroup cc allow { 127.0.0.20 . 40065-40066 }' > "$work/add.nft"
"$CGFW" apply -b nft-emulated "$work/named.nft"
check "nft-emulated: cgfw update adds a box" "$CGFW" update "$work/add.nft"
r=$(send_each 127.0.0.20:40066)
check "nft-emulated: ... which lets its datagrams pass ($r)" test "$r" = p
"$CGFW" delete cc
"$CGFW" apply -b bpf "$work/named.nft"
check "bpf: cgfw update of a set of boxes is refused, with what to do" \
	bash -c "! '$CGFW' update '$work/add.nft' 2> '$work/upd.err' &&
		 grep -q 'add.nft:1:[0-9-]*: Error: set .allow. of table .cc. holds intervals of concatenations, which the bpf backend compiles into its programs; apply the table again' '$work/upd.err'"
r=$(send_each 127.0.0.20:40066 127.0.0.1:40050)
check "bpf: ... and nothing changed ($r)" test "$r" = dp
"$CGFW" flush
exit $fail
