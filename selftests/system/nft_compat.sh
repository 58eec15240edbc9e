#!/bin/bash
# What Debian's nft 1.0.6, which predates the cgroup family, does while
# cgroup-family tables exist. The kernel series keeps the family out of
# requests for all families and sends its events to a group of their own
# (docs/nft-cgroup.rst): nft 1.0.6 lists, saves, monitors and flushes the
# rest of the ruleset as if the family's tables were not there, and does
# not crash on them (it did when they were in its dumps: it read past the
# end of its per-family protocol table). The patched nft (make nft) sees
# them: selftests/nft_family.sh. Runs where the kernel has the family
# (make check's guest); skips here.
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
not() { ! "$@"; }

cat > "$work/t.nft" <<EOF
table cgroup t {
	set s { type inet_service; elements = { 5099 } }
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport @s counter drop
	}
}
EOF
# another with a match on the IPv4 header
sed -e 's/udp dport @s/ip daddr 127.0.0.1 udp dport @s/' \
	-e 's/^table cgroup t /table cgroup t4 /' "$work/t.nft" > "$work/t4.nft"

# nft monitor, from before cgfw's tables to after them: it does not
# receive the family's events
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
check "cgfw applies a native table with an IPv4 header match" \
	"$CGFW" apply -b nft-native "$work/t4.nft"
check "and one without" "$CGFW" apply -b nft-native "$work/t.nft"
check "nft makes a table of its own" nft add table inet mine
check "nft monitor reports it, after cgfw's changes" seen 'add table inet mine'
check "nft monitor received none of the cgroup tables' events" \
	not grep -q 'unknown' "$work/mon"
check "nft monitor did not crash" kill -0 "$mon"
kill "$mon" 2>/dev/null
wait "$mon" 2>/dev/null

check "nft list ruleset shows the ruleset without the cgroup tables, and does not crash" \
	bash -c "nft list ruleset > '$work/out' && grep -q '^table inet mine' '$work/out' &&
		 ! grep -q 'unknown\|cgroup' '$work/out'"
check "nft list tables does not show them" \
	bash -c "[ \"\$(nft list tables)\" = 'table inet mine' ]"
check "nft -j list ruleset gives JSON without them" \
	bash -c "nft -j list ruleset | python3 -c '
import json, sys
d = json.load(sys.stdin)[\"nftables\"]
t = [o[\"table\"][\"family\"] for o in d if \"table\" in o]
assert t == [\"inet\"], t'"
check "what nft list ruleset saved loads again (nftables.conf)" \
	bash -c "nft -c -f '$work/out'"
if sends; then not_ok "the cgroup tables drop"; else ok "the cgroup tables drop"; fi

# nftables.service's start, reload and stop: nft flush ruleset
check "nft flush ruleset removes nft's own table" \
	bash -c "nft flush ruleset && [ -z \"\$(nft list tables)\" ]"
if sends; then
	not_ok "and passes the cgroup tables by: they still drop"
else
	ok "and passes the cgroup tables by: they still drop"
fi
check "cgfw still lists them" bash -c "'$CGFW' list t && '$CGFW' list t4"
check "and cgfw delete removes them" bash -c "'$CGFW' delete t && '$CGFW' delete t4"
check "then nothing drops" sends
exit $fail
