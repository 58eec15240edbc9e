#!/bin/bash
# cgfw commands at the same time, with every backend: they wait for each
# other (one lock per network namespace and bpffs), and afterwards what
# cgfw list shows is what real traffic shows.
#
#  - 2 and 8 applies of the same table, each dropping its own port: one of
#    them is what runs, and exactly its port is dropped;
#  - 8 applies of 8 tables: all 8 run;
#  - an apply against an update of the same table's set, and against a
#    delete of it: the result is one of the orders, and listed as it runs.
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup conc

table() {	# NAME PORT [SET-ELEMENT]
	printf 'table cgroup %s {\n\tset s { type inet_service; elements = { %s } }\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0; policy accept;\n\t\tudp dport %s counter drop\n\t\tudp dport @s counter drop\n\t}\n}\n' \
		"$1" "${3:-7999}" "$cg" "$2"
}

# errors of the commands run in the background: waiting is no error
errors() { grep -v '^cgfw: waiting for another cgfw command' "$work/err" 2>/dev/null; }

# the ports the listing's rules drop, sorted, one line (set elements too)
listed_ports() {
	"$CGFW" list 2>/dev/null | grep -oE 'udp dport [0-9]+ counter packets [0-9]+ bytes [0-9]+ drop|elements = \{ [0-9, ]+ \}' |
		grep -oE '[0-9]{4}' | sort -un | tr '\n' ' '
}

# the ports out of @ that traffic finds dropped
enforced_ports() {
	local p out=
	for p in "$@"; do
		dropped "$p" && out="$out$p "
	done
	echo "$out"
}

backends=$(test_backends "${CGFW_CONC_BACKENDS:-}")
for be in $backends; do
	"$CGFW" flush
	for m in 2 8; do
		for i in $(seq $m); do
			table t $((7100 + i)) > "$work/t$i.nft"
		done
		for i in $(seq $m); do
			"$CGFW" apply -b "$be" "$work/t$i.nft" 2>>"$work/err" &
		done
		wait
		ports=$(seq -s ' ' 7101 $((7100 + m)))
		l=$(listed_ports)
		e=$(enforced_ports $ports 7999)
		# one of them runs: its port and the set's element
		if [ -n "$(errors)" ]; then
			not_ok "$be: $m applies of one table at once all succeed" "$(errors)"
		elif [ "$l" = "$e" ] && [ "$(wc -w <<<"$e")" = 2 ]; then
			ok "$be: $m applies of one table at once: one runs ($e), and it is the one listed"
		else
			not_ok "$be: $m applies of one table at once" "listed: $l" "enforced: $e"
		fi
		rm -f "$work/err"
	done
	"$CGFW" flush

	for i in $(seq 8); do
		table "t$i" $((7200 + i)) $((7300 + i)) > "$work/m$i.nft"
		"$CGFW" apply -b "$be" "$work/m$i.nft" 2>>"$work/err" &
	done
	wait
	ports="$(seq -s ' ' 7201 7208) $(seq -s ' ' 7301 7308)"
	l=$(listed_ports)
	e=$(enforced_ports $ports)
	if [ -z "$(errors)" ] && [ "$l" = "$e" ] && [ "$(wc -w <<<"$e")" = 16 ]; then
		ok "$be: 8 tables applied at once all run, as listed"
	else
		not_ok "$be: 8 tables applied at once" "listed: $l" "enforced: $e" "$(errors)"
	fi
	rm -f "$work/err"
	"$CGFW" flush

	# an apply (set element 7401) against an update (adds 7402)
	table t 7400 7401 > "$work/u.nft"
	"$CGFW" apply -b "$be" "$work/u.nft"
	echo 'add element cgroup t s { 7402 }' > "$work/add.nft"
	"$CGFW" apply -b "$be" "$work/u.nft" &
	"$CGFW" update "$work/add.nft" 2>"$work/err" &
	wait
	l=$(listed_ports)
	e=$(enforced_ports 7400 7401 7402)
	if [ "$l" = "$e" ]; then
		ok "$be: an apply and an update at once: the set as listed is the set enforced ($e)"
	else
		not_ok "$be: an apply and an update at once" "listed: $l" "enforced: $e" "$(errors)"
	fi

	# an apply against a delete
	"$CGFW" apply -b "$be" "$work/u.nft" 2>/dev/null &
	"$CGFW" delete t 2>/dev/null &
	wait
	l=$(listed_ports)
	e=$(enforced_ports 7400 7401)
	if [ "$l" = "$e" ]; then
		ok "$be: an apply and a delete at once: ${e:-nothing} enforced, as listed"
	else
		not_ok "$be: an apply and a delete at once" "listed: $l" "enforced: $e"
	fi
	"$CGFW" flush
done
exit $fail
