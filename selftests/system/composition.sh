#!/bin/bash
# Tables of different backends on one cgroup (docs/cgfw.8.rst,
# *Composition*): a bpf allowlist and an nft table with ct state and log,
# each applied with its own backend. A packet must pass both; they run in
# the documented order (the emulated target's chains, then the CGROUP_SKB
# programs, then the native family's chains), which the counters show: a
# table later in the order does not count what an earlier one dropped.
# Egress and ingress, real UDP datagrams. On the host the nft table is
# the emulated target's; in make check's guest, the native family's too.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup comp

nft_targets=nft-emulated
if "$CGFW" status | grep -q '^nft cgroup family (native): *yes$'; then
	nft_targets="nft-emulated nft-native"
fi
TRAFFIC=$(realpath "${CGFW_TRAFFIC:-build/cgfw-traffic}" 2>/dev/null)

# sent from a process of the cgroup: 0 sent, else dropped (EPERM)
sent() { bash -c 'echo $$ > "$0/cgroup.procs" && echo x > /dev/udp/127.0.0.1/$1' \
	"$root/$cg" "$1" 2>/dev/null; }
# the counter of the rule on port $3 in table $1, chain $2
count() {
	"$CGFW" list "$1" | awk -v c="chain $2 {" -v p="dport $3 " '
		index($0, c) { in_c = 1 } in_c && /^\t}/ { in_c = 0 }
		in_c && index($0, p) { match($0, /counter packets [0-9]+/);
			print substr($0, RSTART + 16, RLENGTH - 16); exit }'
}
expect_count() {	# expect_count TABLE CHAIN PORT N
	local got
	got=$(count "$1" "$2" "$3")
	[ "$got" = "$4" ] || { echo "# $1 $2 port $3: $got packets, expected $4"; false; }
}

# ran_first DIR ALLOW_PORT AUDIT_PORT: the table that runs first at DIR
# counted the other's dropped port, the later one never saw its own. The
# emulated target's inet hooks come before the CGROUP_SKB point, the
# native family's chains after its programs.
ran_first() {
	local first=allow fp=$3 later=audit lp=$2
	if [ "$be" = nft-emulated ]; then
		first=audit fp=$2 later=allow lp=$3
	fi
	check "$be: $1: the $first table ran first: it saw $fp, the $later table never saw $lp" \
		bash -c "$(declare -f count expect_count); CGFW='$CGFW'
			 expect_count $first $1 $fp 1 && expect_count $later $1 $lp 0"
}

# the allowlist, compiled to CGROUP_SKB programs: port 7001 is not on it
cat > "$work/allow.nft" <<EOF
table cgroup allow {
	chain egress {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 7001 counter drop
		udp dport 7002 counter
		udp dport 7003 counter
	}
	chain ingress {
		type filter hook ingress cgroup "$cg" priority 0; policy accept;
		udp dport 7101 counter drop
		udp dport 7102 counter
		udp dport 7103 counter
	}
}
EOF
# what a user keeps in nf_tables: ct state and log, on another port (ct
# at egress: at the CGROUP_SKB ingress point conntrack is already gone)
cat > "$work/audit.nft" <<EOF
table cgroup audit {
	chain egress {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 7001 counter
		ct state new udp dport 7002 counter log prefix "cgfw-audit " drop
		udp dport 7003 counter
	}
	chain ingress {
		type filter hook ingress cgroup "$cg" priority 0; policy accept;
		udp dport 7101 counter
		udp dport 7102 counter drop
		udp dport 7103 counter
	}
}
EOF

for be in $nft_targets; do
	check "$be: the bpf allowlist applies with -b bpf" \
		"$CGFW" apply -b bpf "$work/allow.nft"
	check "$be: the audit table applies with -b $be beside it" \
		"$CGFW" apply -b "$be" "$work/audit.nft"
	check "$be: both listed, each with its backend" \
		bash -c "'$CGFW' list | grep -q '^table cgroup allow {.*backend bpf' &&
			 '$CGFW' list | grep -q '^table cgroup audit {.*backend $be'"

	# egress: a datagram of each port
	if sent 7001; then not_ok "$be: egress: the allowlist drops 7001"; else ok "$be: egress: the allowlist drops 7001"; fi
	if sent 7002; then not_ok "$be: egress: the audit table drops 7002 (ct state new)"; else ok "$be: egress: the audit table drops 7002 (ct state new)"; fi
	check "$be: egress: 7003 passes both" sent 7003
	check "$be: egress: the allowlist counted 7001 and 7003" \
		bash -c "$(declare -f count expect_count); CGFW='$CGFW'
			 expect_count allow egress 7001 1 && expect_count allow egress 7003 1"
	check "$be: egress: the audit table counted 7002 and 7003" \
		bash -c "$(declare -f count expect_count); CGFW='$CGFW'
			 expect_count audit egress 7002 1 && expect_count audit egress 7003 1"
	ran_first egress 7001 7002

	# ingress: a datagram from outside the cgroup to a socket of it,
	# which echoes it (cgfw-traffic exits 2 when no echo comes)
	if [ ! -x "$TRAFFIC" ]; then
		ok "$be: ingress # SKIP cgfw-traffic is not built"
	else
		srv=()
		for p in 7101 7102 7103; do
			"$TRAFFIC" -c "$root/$cg" serve udp 127.0.0.1 "$p" >/dev/null 2>&1 &
			srv+=($!)
		done
		sleep 0.3
		for p in 7101 7102 7103; do
			"$TRAFFIC" udp 127.0.0.1 "$p" >/dev/null 2>&1
			echo $? > "$work/rc$p"
		done
		kill "${srv[@]}" 2>/dev/null
		wait "${srv[@]}" 2>/dev/null
		check "$be: ingress: the allowlist keeps 7101 from the cgroup's socket" \
			grep -qx 2 "$work/rc7101"
		check "$be: ingress: the audit table keeps 7102 from it" \
			grep -qx 2 "$work/rc7102"
		check "$be: ingress: 7103 arrives, and its echo" \
			grep -qx 0 "$work/rc7103"
		check "$be: ingress: the allowlist and the audit table counted 7103" \
			bash -c "$(declare -f count expect_count); CGFW='$CGFW'
				 expect_count allow ingress 7103 1 && expect_count audit ingress 7103 1"
		ran_first ingress 7101 7102
	fi

	check "$be: the audit table deleted, 7002 passes" \
		bash -c "'$CGFW' delete audit && bash -c 'echo \$\$ > \"\$0/cgroup.procs\" && echo x > /dev/udp/127.0.0.1/7002' '$root/$cg'"
	if sent 7001; then
		not_ok "$be: and the allowlist still drops 7001"
	else
		ok "$be: and the allowlist still drops 7001"
	fi
	"$CGFW" flush
done
exit $fail
