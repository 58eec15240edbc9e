#!/bin/bash
# Named stateful objects (counter, quota, limit declared in a table and
# used by name; names of 2, 4 and 8 characters, which nft sends without
# their NUL): with each backend this kernel has, real datagrams
# meet them as nft says, "cgfw list" (text and JSON) shows their live
# values, a re-apply makes them again, and delete takes them away; the
# same with the bpf backend, which refuses the other kinds (ct helper ...)
# at the declaration, with what to use instead.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup objects

cat > "$work/obj.nft" <<EOT
table cgroup objs {
	counter c1 { }
	counter cu { packets 5 bytes 100 }
	quota qota { over 100 bytes }
	limit limit8ch { rate 1/minute burst 2 packets }
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 10 counter name "c1"
		udp dport 9 quota name "qota" drop
		udp dport 11 limit name "limit8ch" accept
		udp dport 11 drop
	}
}
EOT
# ours, each datagram 30 bytes at the IP layer ("x\n")
sends() {	# sends PORT N: the outcome of N datagrams, "p" or "d" each
	local i out=""
	for i in $(seq "$2"); do
		if dropped "$1"; then out="${out}d"; else out="${out}p"; fi
	done
	echo "$out"
}
json() { "$CGFW" list -j objs | python3 -c "
import json, sys
d = json.load(sys.stdin)['nftables']
o = {k: v for x in d for k, v in x.items()
     if k in ('counter', 'quota', 'limit') and v['name'] != 'cu'}
$1"; }

backends="nft-emulated bpf"
"$CGFW" status | grep -q '^nft cgroup family (native): *yes$' && backends="$backends nft-native"
for b in $backends; do
	check "$b: a table with a counter, a quota and a limit applies" \
		"$CGFW" apply -b "$b" "$work/obj.nft"
	q=$(sends 9 6)
	check "$b: quota over 100 bytes: 3 datagrams of 30 bytes pass, the rest is dropped ($q)" \
		test "$q" = pppddd
	l=$(sends 11 4)
	check "$b: limit of burst 2: 2 datagrams pass, then the drop rule ($l)" \
		test "$l" = ppdd
	sends 10 3 > /dev/null
	check "$b: list shows the counter's packets" \
		bash -c "'$CGFW' list objs | grep -A1 'counter c1 {' | grep -q 'packets 3 bytes 90'"
	check "$b: and a counter no rule uses, as declared" \
		bash -c "'$CGFW' list objs | grep -A1 'counter cu {' | grep -q 'packets 5 bytes 100'"
	check "$b: and the quota used up" \
		bash -c "'$CGFW' list objs | grep -A1 'quota qota {' | grep -q 'over 100 bytes used'"
	check "$b: list -j has them as nft -j writes them" \
		json "assert o['counter']['name'] == 'c1' and o['counter']['packets'] == 3
assert o['quota']['bytes'] == 100 and o['quota']['inv'] and o['quota']['used'] >= 90
assert o['limit']['rate'] == 1 and o['limit']['per'] == 'minute' and o['limit']['burst'] == 2"
	[ "$b" != bpf ] &&	# programs have no handles
	check "$b: list -a shows a handle on every object, chain and rule" \
		bash -c "[ \$('$CGFW' list -a objs | grep -c '# handle [1-9]') -eq 9 ] &&
			 [ \$('$CGFW' list objs | grep -c '# handle') -eq 0 ]"
	if [ "$b" = nft-emulated ]; then
		check "$b: ... the kernel's own (nft -a)" \
			bash -c "h=\$('$CGFW' list -a objs | sed -n 's/.*quota name \"qota\" drop # handle \\([0-9]*\\)\$/\\1/p') &&
				 nft -a list chain inet cgfw_objs out | grep -q \"quota name \\\"qota\\\" drop # handle \$h\\\$\""
	fi
	check "$b: applied again, they start again (the quota passes again)" \
		bash -c "'$CGFW' apply -b '$b' '$work/obj.nft' && '$CGFW' list objs | grep -A1 'counter c1 {' | grep -q 'packets 0 bytes 0'"
	q=$(sends 9 1)
	check "$b: ... a datagram under the new quota passes ($q)" test "$q" = p
	check "$b: delete takes the objects with the table" \
		bash -c "'$CGFW' delete objs && ! '$CGFW' list objs 2>/dev/null &&
			 { [ $b != nft-emulated ] || ! nft list table inet cgfw_objs 2>/dev/null; }"
done
cat > "$work/helper.nft" <<EOT
table cgroup h {
	counter c0 { }
	ct helper ftp-std {
		type "ftp" protocol tcp
	}
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
	}
}
EOT
check "bpf: a ct helper object refused at its declaration (after a counter), with what to use instead" \
	bash -c "! '$CGFW' apply -b bpf '$work/helper.nft' 2> '$work/bpf.err' &&
		 grep -q 'helper.nft:3:2-3: Error: the bpf backend cannot do this: named ct helper objects' '$work/bpf.err' &&
		 grep -q 'use the nft backend (-b nft)' '$work/bpf.err'"
cat > "$work/omap.nft" <<EOT
table cgroup m {
	counter c1 { }
	map cm {
		type ipv4_addr : counter
		elements = { 127.0.0.1 : "c1" }
	}
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		counter name ip daddr map @cm
	}
}
EOT
check "a map to named objects is refused, with what to write instead, and nothing changes" \
	bash -c "! '$CGFW' apply -b nft '$work/omap.nft' 2> '$work/omap.err' &&
		 grep -q \"map 'cm' of table 'm' maps to named objects, which cgfw does not carry yet\" '$work/omap.err' &&
		 ! '$CGFW' list m 2>/dev/null"
check "auto: takes them" \
	bash -c "'$CGFW' apply '$work/obj.nft' && '$CGFW' list objs | grep -q 'counter c1 {' && '$CGFW' delete objs"
"$CGFW" flush
exit $fail
