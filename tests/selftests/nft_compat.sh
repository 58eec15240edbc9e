#!/bin/bash
# What Debian's nft 1.0.6, which predates the cgroup family, does while
# cgroup-family tables exist: it must not crash, and it must not remove
# them (kernel-patches/: requests for all families leave the family out).
# Runs where the kernel has the family (make check's guest); skips here.
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
check "nft monitor received the cgroup table's events" \
	grep -q 'table unknown t$' "$work/mon"
check "nft monitor did not crash on them" kill -0 "$mon"
kill "$mon" 2>/dev/null
wait "$mon" 2>/dev/null
check "nft list ruleset does not crash, and shows nft's tables only" \
	bash -c "nft list ruleset > '$work/out' && grep -q '^table inet mine' '$work/out' &&
		 ! grep -q '^table .* t ' '$work/out'"
check "nft list tables does not crash" \
	bash -c "nft list tables | grep -qx 'table inet mine'"
check "nft -j list ruleset does not crash" \
	bash -c "nft -j list ruleset | python3 -c 'import json, sys; json.load(sys.stdin)'"
if sends; then not_ok "the cgroup table drops"; else ok "the cgroup table drops"; fi
check "nft flush ruleset removes nft's tables" \
	bash -c "nft flush ruleset && [ -z \"\$(nft list tables)\" ]"
if sends; then
	not_ok "the cgroup table survives nft flush ruleset and still drops"
else
	ok "the cgroup table survives nft flush ruleset and still drops"
fi
check "its counter counted both" \
	bash -c "'$CGFW' list t | grep -q 'udp dport @s counter packets 2 '"
check "cgfw flush removes it" \
	bash -c "'$CGFW' flush && ! '$CGFW' list t"
if sends; then ok "then nothing drops"; else not_ok "then nothing drops"; fi
exit $fail
