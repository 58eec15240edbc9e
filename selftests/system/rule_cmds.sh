#!/bin/bash
# nft's rule commands through "cgfw update" on a table of the nft backend
# (add, insert and replace rule, by position or handle; delete rule by
# handle; flush chain), with real datagrams: each takes effect in place,
# a failed one changes nothing, the rules the update leaves alone keep
# their handles and counters, and the bpf backend refuses them with what
# to do instead.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup rule_cmds

cat > "$work/t.nft" <<EOT
table cgroup rc {
	set deny { type inet_service; elements = { 9301 } }
	counter c1 { }
	chain out {
		type filter hook egress cgroup "$cg" priority 0; policy accept;
		udp dport 9300 counter drop
		udp dport @deny drop
	}
	chain deep {
		udp dport 9309 drop
	}
}
EOT
# the handle of the rule whose listing ends in $1 (cgfw list -a)
handle() { "$CGFW" list -a rc | sed -n "s/.*$1 # handle \([0-9]*\)\$/\1/p"; }
upd() { printf '%s\n' "$@" > "$work/u.nft"; "$CGFW" update "$work/u.nft"; }
# refused TEXT PATTERN: cgfw update of TEXT fails, saying PATTERN, and
# every table lists as it did
refused() {
	local before
	before=$("$CGFW" list -a)
	printf '%s\n' "$1" > "$work/u.nft"
	! "$CGFW" update "$work/u.nft" 2> "$work/u.err" &&
		grep -q "$2" "$work/u.err" &&
		[ "$("$CGFW" list -a)" = "$before" ] ||
		{ cat "$work/u.err"; false; }
}
verdicts() {	# the outcome of a datagram to each port, "p" or "d"
	local p out=""
	for p in "$@"; do
		if dropped "$p"; then out="${out}d"; else out="${out}p"; fi
	done
	echo "$out"
}

backends="nft-emulated"
"$CGFW" status | grep -q '^nft cgroup family (native): *yes$' && backends="$backends nft-native"
for b in $backends; do
	check "$b: the table applies" "$CGFW" apply -b "$b" "$work/t.nft"
	v=$(verdicts 9300 9301 9302 9303 9309)
	check "$b: as applied, 9300 and 9301 dropped ($v)" test "$v" = ddppp
	h1=$(handle 'udp dport 9300 counter packets [0-9]* bytes [0-9]* drop')
	h2=$(handle 'udp dport @deny drop')
	check "$b: add rule: appended, with a set and an anonymous set" \
		upd "add rule cgroup rc out udp dport { 9302, 9304 } drop" \
		    "add rule cgroup rc out udp dport 9303 counter name \"c1\" drop"
	v=$(verdicts 9300 9301 9302 9303 9304 9305)
	check "$b: ... 9302, 9303 and 9304 now dropped ($v)" test "$v" = dddddp
	check "$b: ... the rules left alone keep their handles and counters" \
		bash -c "[ \"\$('$CGFW' list -a rc | grep -c '# handle $h1\$')\" = 1 ] &&
			 '$CGFW' list -a rc | grep -q 'udp dport 9300 counter packets 2 bytes 60 drop # handle $h1\$' &&
			 '$CGFW' list -a rc | grep -q 'udp dport @deny drop # handle $h2\$'"
	check "$b: ... the named counter counts" \
		bash -c "'$CGFW' list rc | grep -A1 'counter c1 {' | grep -q 'packets 1 '"
	check "$b: insert rule at the start: accept 9300 before its drop" \
		upd "insert rule cgroup rc out udp dport 9300 accept"
	v=$(verdicts 9300)
	check "$b: ... 9300 passes ($v)" test "$v" = p
	check "$b: replace rule by handle: the @deny rule becomes a jump" \
		upd "replace rule cgroup rc out handle $h2 jump deep"
	v=$(verdicts 9301 9309)
	check "$b: ... 9301 passes, 9309 is dropped in the chain jumped to ($v)" \
		test "$v" = pd
	check "$b: ... cgfw list shows the rule as written, with its handle" \
		bash -c "'$CGFW' list -a rc | grep -q 'jump deep # handle $h2\$'"
	check "$b: insert rule by position: before the handle given" \
		upd "insert rule cgroup rc out position $h2 udp dport 9309 accept"
	v=$(verdicts 9309)
	check "$b: ... 9309 passes now ($v)" test "$v" = p
	check "$b: add rule by position: after the handle given" \
		upd "add rule cgroup rc out position $h1 udp dport 9305 drop"
	check "$b: ... listed right after it" \
		bash -c "'$CGFW' list -a rc | grep -A1 '# handle $h1\$' | grep -q 'udp dport 9305 drop'"
	check "$b: delete rule by handle" upd "delete rule cgroup rc out handle $h1"
	v=$(verdicts 9300 9305)
	check "$b: ... 9300 still passes, 9305 dropped ($v)" test "$v" = pd
	check "$b: a command that fails changes nothing: the good one before it stays out" \
		refused "add rule cgroup rc out udp dport 9306 drop
delete rule cgroup rc out handle 999999" \
		'u.nft:2:1-6: Error: the kernel refused the deletion of the rule with that handle: No such file or directory'
	v=$(verdicts 9306)
	check "$b: ... 9306 passes ($v)" test "$v" = p
	check "$b: nft's own error, at its place in the file" \
		refused "
add rule cgroup rc out udp dport 70000 drop" 'u.nft:2:[0-9-]*: Error: .*range'
	check "$b: a chain the table does not have, at its place" \
		refused "flush chain cgroup rc nosuch" \
		"u.nft:1:1-5: Error: table 'rc' has no chain 'nosuch'"
	check "$b: delete without a handle says how" \
		refused "delete rule cgroup rc out" \
		"u.nft:1:1-6: Error: 'delete rule' needs the rule's handle"
	check "$b: flush chain, and an add in the same update" \
		upd "flush chain cgroup rc out" "add rule cgroup rc out udp dport 9307 drop"
	v=$(verdicts 9300 9301 9302 9307)
	check "$b: ... only the new rule is left ($v)" test "$v" = pppd
	check "$b: ... and listed" \
		bash -c "[ \"\$('$CGFW' list rc | grep -c 'udp dport')\" = 2 ]"
	check "$b: delete takes the table" "$CGFW" delete rc
done
sed 's/table cgroup rc/table cgroup rb/' "$work/t.nft" > "$work/tb.nft"
check "bpf: the table applies (as rb), and rc with nft-emulated" \
	bash -c "'$CGFW' apply -b bpf '$work/tb.nft' && '$CGFW' apply -b nft-emulated '$work/t.nft'"
check "bpf: rule commands are refused, with what to do, and nothing changes" \
	refused "add rule cgroup rb out udp dport 9302 drop" \
	"u.nft:1:1-3: Error: table 'rb' is held by the bpf backend, whose rules are compiled into its programs: change the table's file and run 'cgfw apply' again"
check "an element for bpf's table and a rule that fails on nft's: nothing changes in either" \
	refused "add element cgroup rb deny { 9308 }
delete rule cgroup rc out handle 999999" \
	'u.nft:2:1-6: Error: the kernel refused the deletion of the rule with that handle'
v=$(verdicts 9308)
check "... a datagram to 9308 passes: the element was taken out of bpf's map again ($v)" \
	test "$v" = p
check "a table cgfw did not install, at its place" \
	refused "add rule cgroup nosuch out udp dport 1 drop" \
	"u.nft:1:1-3: Error: cgfw installed no table 'nosuch'"
check "a rule command without its chain, at its place" \
	refused "flush chain cgroup rc" \
	"u.nft:1:22: Error: expected a chain name after table 'rc'"
if "$CGFW" status | grep -q '^nft cgroup family (native): *yes$'; then
	sed 's/table cgroup rc/table cgroup rn/' "$work/t.nft" > "$work/tn.nft"
	"$CGFW" delete rb
	check "nft-native: a third table, rn" "$CGFW" apply -b nft-native "$work/tn.nft"
	check "tables of the two nft targets in one update: refused, as they cannot change together" \
		refused "add rule cgroup rc out udp dport 9302 drop
add rule cgroup rn out udp dport 9302 drop" \
		"u.nft:[12]:1-3: Error: table 'r[cn]' is held by nft-[a-z]* and table 'r[cn]' by nft-[a-z]*, which cannot change in one transaction: update them in two files"
fi
"$CGFW" flush
exit $fail
