#!/bin/bash
# Sets the rules add to and delete from (add @s { ip daddr }, delete @s
# { ip daddr }), with every backend this kernel has: the same datagrams
# meet the same verdicts, the listing shows what was added, a full set
# ends the adding rule as nft does; meters (a limit, a quota, a counter
# per element) meet the same datagrams as nft's; timeouts, declared and
# added; what the bpf backend cannot do is refused at the rule.
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
elems() { "$CGFW" list -j "${1:-dyn}" | python3 -c '
import json, sys
d = json.load(sys.stdin)["nftables"]
print(" ".join(sorted(e for o in d if "set" in o for e in o["set"].get("elem", []))))'; }

backends="nft-emulated bpf"
"$CGFW" status | grep -q '^nft cgroup family (native): *yes$' && backends="$backends nft-native"
# make check's guest: the native family and bpf (the host ran the others)
backends=${CGFW_DYN_BACKENDS:-$backends}
for b in $backends; do
	check "$b: a table whose rules add to a set applies" \
		"$CGFW" apply -b "$b" "$work/dyn.nft"
	r=$(send_each 127.0.0.1:12 127.0.0.1:11 127.0.0.1:12 127.0.0.2:12)
	check "$b: not in it, added, then in it; another address not ($r)" test "$r" = ppdp
	check "$b: the listing has the address added" test "$(elems)" = 127.0.0.1
	r=$(send_each 127.0.0.2:11 127.0.0.3:11 127.0.0.3:12)
	check "$b: a third address does not fit a set of size 2: the adding rule ends there ($r)" \
		test "$r" = ppp
	check "$b: ... the set holds the first two" \
		test "$(elems)" = "127.0.0.1 127.0.0.2"
	check "$b: ... and the counter after the add counted those two only" \
		bash -c "'$CGFW' list dyn | grep -q 'add @seen { ip daddr } counter packets 2 '"
	r=$(send_each 127.0.0.1:13 127.0.0.1:12)
	check "$b: deleted from it, it passes again ($r)" test "$r" = pp
	check "$b: and the listing has it no more" test "$(elems)" = 127.0.0.2
	"$CGFW" delete dyn
done
# timeouts: declared elements expire, rules add with a timeout; an update
# gives one that expires its timeout again, an add leaves it (nft_dynset's
# NFT_DYNSET_OP_UPDATE and _ADD); expired elements match no more and are
# listed no more; the listing has nft's "timeout" and "expires". The short
# timeouts are T s, which a slow guest still applies and sends within; the
# listing is checked on elements of an hour or two.
T=10
cat > "$work/tmo.nft" <<EOT
table cgroup tmo {
	set ban {
		type ipv4_addr
		flags timeout
		timeout 1h
		elements = { 127.0.0.1, 127.0.0.2 timeout ${T}s, 127.0.0.3 timeout ${T}s,
			     127.0.0.4 timeout ${T}s, 127.0.0.8 timeout 2h }
	}
	set seen {
		type ipv4_addr
		size 16
		flags dynamic, timeout
	}
	set lim {
		type ipv4_addr
		flags dynamic, timeout
	}
	set q {
		type ipv4_addr
		flags dynamic, timeout
	}
	map tv {
		type ipv4_addr : verdict
		flags timeout
		elements = { 127.0.0.1 timeout 1h : drop, 127.0.0.2 timeout ${T}s : drop }
	}
	map tm {
		type ipv4_addr : mark
		flags timeout
		elements = { 127.0.0.3 timeout ${T}s : 0x5, 127.0.0.4 : 0x5 }
	}
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 38 ip daddr vmap @tv
		udp dport 39 meta mark set ip daddr map @tm
		udp dport 39 meta mark 5 drop
		udp dport 41 update @lim { ip daddr timeout ${T}s limit rate 1/minute burst 2 packets } accept
		udp dport 41 drop
		udp dport 43 add @q { ip daddr timeout ${T}s quota over 60 bytes } drop
		udp dport 31 update @ban { ip daddr timeout 1h }
		udp dport 32 add @ban { ip daddr timeout 1h }
		udp dport 33 add @seen { ip daddr timeout ${T}s }
		udp dport 37 add @seen { ip daddr timeout 1h }
		udp dport 34 ip daddr @seen drop
		udp dport 35 ip daddr != @ban drop
		udp dport 30 ip daddr @ban drop
	}
}
EOT
# the elements of set $1 of table tmo, each "ADDR[ timeout S][ expires]"
times() { "$CGFW" list -j tmo | python3 -c '
import json, sys
for o in json.load(sys.stdin)["nftables"]:
    if o.get("set", {}).get("name") != sys.argv[1]:
        continue
    out = []
    for e in o["set"].get("elem", []):
        if isinstance(e, dict):
            e = e["elem"]
            v = e["val"] + (" timeout %d" % e["timeout"] if "timeout" in e else "")
            e = v + (" expires" if "expires" in e else "")
        out.append(e)
    print(", ".join(sorted(out)))' "$1"; }
for b in $backends; do
	check "$b: a table with timeouts applies" "$CGFW" apply -b "$b" "$work/tmo.nft"
	r=$(send_each 127.0.0.1:30 127.0.0.2:30 127.0.0.5:30 127.0.0.3:31 127.0.0.4:32 127.0.0.6:33 127.0.0.6:34 127.0.0.9:37)
	check "$b: elements with timeouts match until they expire; added with one too ($r)" \
		test "$r" = ddppppdp
	r=$(send_each 127.0.0.1:41 127.0.0.1:41 127.0.0.1:41 127.0.0.1:43 127.0.0.1:43 127.0.0.1:43)
	check "$b: meters with a timeout: a limit of burst 2, a quota over 60 bytes ($r)" \
		test "$r" = ppdppd
	r=$(send_each 127.0.0.1:38 127.0.0.2:38 127.0.0.5:38 127.0.0.3:39 127.0.0.4:39 127.0.0.5:39)
	check "$b: a verdict map and a map with timeouts ($r)" test "$r" = ddpddp
	t0=$SECONDS
	l=$(times ban)
	check "$b: the listing has each element's timeout when it is not the set's, and when it expires ($l)" \
		bash -c "[[ '$l' == '127.0.0.1 expires, '*'127.0.0.8 timeout 7200 expires' ]]"
	check "$b: ... and the set's timeout" \
		bash -c "'$CGFW' list tmo | grep -q '^		timeout 1h$'"
	l=$(times seen)
	check "$b: ... and what a rule added ($l)" \
		bash -c "[[ '$l' == *'127.0.0.9 timeout 3600 expires' ]]"
	sleep $((T + 1 - (SECONDS - t0)))
	r=$(send_each 127.0.0.1:30 127.0.0.2:30 127.0.0.3:30 127.0.0.4:30 127.0.0.6:34 127.0.0.2:35 127.0.0.1:35)
	check "$b: $((T + 1)) s on, expired elements match no more: an update gave 127.0.0.3 an hour, an add left 127.0.0.4 ($r)" \
		test "$r" = dpdppdp
	check "$b: the expired are listed no more ($(times ban); $(times seen))" \
		test "$(times ban); $(times seen)" = "127.0.0.1 expires, 127.0.0.3 timeout $T expires, 127.0.0.8 timeout 7200 expires; 127.0.0.9 timeout 3600 expires"
	r=$(send_each 127.0.0.1:41 127.0.0.1:43)
	check "$b: a meter's expired element is made again, with the statement's first state ($r)" \
		test "$r" = pp
	r=$(send_each 127.0.0.1:38 127.0.0.2:38 127.0.0.3:39 127.0.0.4:39)
	check "$b: the maps' expired elements give no verdict and no data ($r)" \
		test "$r" = dppd
	check "$b: ... and listed with its timeout ($(times lim))" \
		test "$(times lim)" = "127.0.0.1 timeout $T expires"
	r=$(send_each 127.0.0.2:32 127.0.0.2:30)
	check "$b: an add of an expired element adds it again ($r)" test "$r" = pd
	echo "add element cgroup tmo ban { 127.0.0.7 timeout ${T}s }" > "$work/tmo-add.nft"
	check "$b: cgfw update adds an element with a timeout" \
		"$CGFW" update "$work/tmo-add.nft"
	r=$(send_each 127.0.0.7:30)
	check "$b: ... which matches ($r) and is listed with it" \
		bash -c "[ '$r' = d ] && '$CGFW' list tmo | grep -q '127.0.0.7 timeout ${T}s expires [0-9]*s'"
	"$CGFW" delete tmo
done
# a set full of expired elements takes new ones once they are collected:
# nf_tables collects its own, cgfw daemon the bpf backend's
mkdir -p "$work/rules"
cat > "$work/rules/full.nft" <<EOT
table cgroup full {
	set f {
		type ipv4_addr
		size 2
		flags dynamic, timeout
		timeout 2s
	}
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 36 add @f { ip daddr }
		udp dport 37 ip daddr @f drop
	}
}
EOT
for b in $backends; do
	"$CGFW" daemon -b "$b" -d "$work/rules" 2> "$work/daemon.log" &
	dpid=$!
	check "$b: the daemon applies a set of 2 with timeouts of 2 s" \
		wait_until 30 bash -c "'$CGFW' list full >/dev/null 2>&1"
	t0=$SECONDS
	r=$(send_each 127.0.0.1:36 127.0.0.2:36 127.0.0.3:36 127.0.0.3:37)
	check "$b: two addresses fill it, a third is not added ($r)" test "$r" = pppp
	sleep $((10 - (SECONDS - t0)))
	r=$(send_each 127.0.0.3:36 127.0.0.3:37 127.0.0.1:37)
	check "$b: 10 s on, the expired have gone and it is added ($r)" test "$r" = pdp
	kill -TERM $dpid
	wait $dpid
	"$CGFW" delete full
done
"$CGFW" apply -b bpf "$work/tmo.nft"
echo 'add element cgroup tmo q { 127.0.0.5 }' > "$work/tmo-q.nft"
check "bpf: cgfw update does not add to a meter with timeouts (its elements hold their rule's quota)" \
	bash -c "! '$CGFW' update '$work/tmo-q.nft' 2> '$work/tmo-q.err' &&
		 grep -q \"set 'q' of table 'tmo' is a meter\" '$work/tmo-q.err'"
"$CGFW" delete tmo
check "bpf: compile -o refuses declared elements that expire (a fill command cannot say from when)" \
	bash -c "! '$CGFW' compile -b bpf -o '$work/tmo.o' '$work/tmo.nft' 2> '$work/tmo-o.err' &&
		 grep -q \"set 'ban' of table 'tmo' has elements that expire\" '$work/tmo-o.err' && [ ! -e '$work/tmo.o' ]"
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
	r=$(send_each 127.0.0.1:21 127.0.0.1:21 127.0.0.1:21 127.0.0.2:21 127.0.0.2:21 127.0.0.2:21 127.0.0.1:21)
	check "$b: a limit of burst 2 per address: 2 pass each, then the drop rule ($r)" \
		test "$r" = ppdppdd
	r=$(send_each 127.0.0.1:22 127.0.0.1:22 127.0.0.1:22 127.0.0.2:22)
	check "$b: a quota over 60 bytes per address: the third datagram of 30 bytes is past it ($r)" \
		test "$r" = ppdp
	r=$(send_each 127.0.0.3:23 127.0.0.3:23)
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
