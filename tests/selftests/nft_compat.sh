#!/bin/bash
# What Debian's nft 1.0.6, which predates the cgroup family, does while
# cgroup-family tables exist. The kernel series includes the family in
# requests for all families, as for every family (docs/nft-cgroup.rst):
# nft 1.0.6 then lists the family's tables as of family "unknown", crashes
# on their rules that match IPv4 or IPv6 header fields (it reads past the
# end of its per-family protocol table), and `nft flush ruleset` removes
# them. The patched nft (make nft) does none of that: selftests/
# nft_family.sh. Runs where the kernel has the family (make check's
# guest); skips here.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup compat

if ! "$CGFW" status | grep -q '^nft cgroup family (native): *yes$'; then
	echo "ok 1 nft 1.0.6 next to cgroup-family tables # SKIP this kernel has no cgroup family"
	exit 0
fi

# one datagram from a process of our cgroup: fails (EPERM) if dropped
send='echo $$ > "$0/cgroup.procs" && echo x > /dev/udp/127.0.0.1/5099'
sends() { bash -c "$send" "$root/$cg" 2>/dev/null; }

cat > "$work/t.nft" <<EOF
table cgroup t {
	set s { type inet_service; elements = { 5099 } }
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport @s counter drop
	}
}
EOF
# the same with a match on the IPv4 header
sed 's/udp dport @s/ip daddr 127.0.0.1 udp dport @s/' "$work/t.nft" > "$work/t4.nft"

# nft monitor, from before cgfw's table to after it: it receives the
# family's events (and prints them as of family "unknown")
nft monitor > "$work/mon" 2>&1 &
mon=$!
seen() {	# a line of the monitor's output, within 10 s
	for _ in $(seq 100); do
		grep -q "$1" "$work/mon" && return 0
		sleep 0.1
	done
	return 1
}
subscribed() {	# events made until the monitor shows one
	for _ in $(seq 50); do
		nft add table inet probe && nft delete table inet probe
		seen 'add table inet probe' && return 0
	done
	return 1
}
check "nft monitor listens" subscribed
check "cgfw applies a native table" "$CGFW" apply -b nft-native "$work/t.nft"
check "nft makes a table of its own" nft add table inet mine
check "nft monitor reports it, after cgfw's changes" seen 'add table inet mine'
check "nft monitor received the cgroup table's events, as of family unknown" \
	grep -q 'table unknown t$' "$work/mon"
check "nft monitor did not crash on them (no IP header match in the rule)" \
	kill -0 "$mon"
kill "$mon" 2>/dev/null
wait "$mon" 2>/dev/null
check "nft list ruleset shows the cgroup table, as of family unknown, hook unknown" \
	bash -c "nft list ruleset > '$work/out' && grep -q '^table inet mine' '$work/out' &&
		 grep -q '^table unknown t ' '$work/out' &&
		 grep -q 'type filter hook unknown priority 0; policy accept;' '$work/out' &&
		 grep -q 'udp dport @s counter packets 0 bytes 0 drop' '$work/out'"
check "nft list tables shows it" \
	bash -c "nft list tables | grep -qx 'table unknown t'"
check "nft -j list ruleset gives JSON" \
	bash -c "nft -j list ruleset | python3 -c 'import json, sys; json.load(sys.stdin)'"
if sends; then not_ok "the cgroup table drops"; else ok "the cgroup table drops"; fi

# a rule with an IPv4 header match: nft 1.0.6 crashes on listing it
check "cgfw applies a native table with an IPv4 header match" \
	"$CGFW" apply -b nft-native "$work/t4.nft"
nft list ruleset > /dev/null 2>&1
st=$?
if [ $st -eq 139 ]; then
	ok "nft list ruleset crashes on it (SIGSEGV), as docs/nft-cgroup.rst says"
else
	not_ok "nft list ruleset crashes on it (SIGSEGV), as docs/nft-cgroup.rst says" \
		"exit status $st: nft 1.0.6 changed? update docs/nft-cgroup.rst"
fi
check "nft list table inet mine does not (it dumps that table only)" \
	bash -c "nft list table inet mine | grep -q '^table inet mine'"

check "nft flush ruleset removes every table, the cgroup table too" \
	bash -c "nft flush ruleset && [ -z \"\$(nft list tables)\" ]"
if sends; then
	ok "then nothing drops"
else
	not_ok "then nothing drops"
fi
check "and cgfw finds no table of its own" \
	bash -c "! '$CGFW' list t 2>/dev/null"
exit $fail
