#!/bin/bash
# kill -9 in the middle of an apply, again and again, with every backend:
# after each, what "cgfw list" shows must be what real traffic shows, and
# the next command must work.
#
# Two rulesets of the same table: A drops UDP to port 7001, B to 7002, each
# behind N rules that match nothing. Each round applies the other one and
# kills it after a random time between 0 and a bit more than an apply
# takes; then cgfw list (which finishes or rolls back what the kill left)
# says which one runs, and a datagram to each port from a process of the
# cgroup says which one the kernel enforces. With -b both, the nft table
# and the bpf programs must say the same.
#
#   CGFW_KILL_ROUNDS (100), CGFW_KILL_RULES (2000), CGFW_KILL_BACKENDS
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup kill

ROUNDS=${CGFW_KILL_ROUNDS:-100}
RULES=${CGFW_KILL_RULES:-2000}
big() {	# NAME PORT: RULES rules that match nothing, then "drop PORT"
	printf 'table cgroup %s {\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0; policy accept;\n' "$1" "$cg"
	seq 20000 $((20000 + RULES - 1)) | sed 's/.*/\t\tudp dport & counter accept/'
	printf '\t\tudp dport %s counter drop\n\t}\n}\n' "$2"
}
big t 7001 > "$work/A.nft"
big t 7002 > "$work/B.nft"

# what the listing says runs: "A", "B", "none", or "A B" (-b both: one
# word per backend's table, nft's first, as cgfw list orders them)
listed() {
	"$CGFW" list 2>/dev/null | awk '
		/^table cgroup / { n++; w[n] = "?" }
		/udp dport 7001 counter packets [0-9]+ bytes [0-9]+ drop/ { w[n] = "A" }
		/udp dport 7002 counter packets [0-9]+ bytes [0-9]+ drop/ { w[n] = "B" }
		END { if (!n) print "none"; else { for (i = 1; i <= n; i++)
			printf "%s%s", w[i], i < n ? " " : "\n" } }'
}

# what the kernel enforces: "A", "B", "both", "none"
enforced() {
	local a=0 b=0
	dropped 7001 && a=1
	dropped 7002 && b=1
	case $a$b in
	10) echo A ;; 01) echo B ;; 11) echo both ;; *) echo none ;;
	esac
}

backends=$(test_backends "${CGFW_KILL_BACKENDS:-}")
for be in $backends; do
	"$CGFW" flush
	if ! "$CGFW" apply -b "$be" "$work/A.nft" 2>"$work/err"; then
		not_ok "$be: the first apply" "$(cat "$work/err")"
		continue
	fi
	# how long an apply takes here: the kills land from 0 to 1.3 times it
	start=$(date +%s%N)
	"$CGFW" apply -b "$be" "$work/B.nft"
	ms=$((($(date +%s%N) - start) / 1000000))
	cur=B bad=0 killed_mid=0 why=
	for ((r = 0; r < ROUNDS; r++)); do
		[ $cur = A ] && next=B || next=A
		"$CGFW" apply -b "$be" "$work/$next.nft" 2>/dev/null &
		pid=$!
		sleep "$(awk -v m="$ms" -v s="$RANDOM" 'BEGIN { printf "%.3f", m * 1.3 * s / 32768 / 1000 }')"
		kill -9 $pid 2>/dev/null && killed_mid=$((killed_mid + 1))
		wait $pid 2>/dev/null
		l=$(listed)
		e=$(enforced)
		if [ "$be" = both ]; then
			[ "$l" = "$e $e" ] || { bad=$((bad + 1)); why="round $r: listed '$l', enforced '$e'"; }
		else
			[ "$l" = "$e" ] || { bad=$((bad + 1)); why="round $r: listed '$l', enforced '$e'"; }
		fi
		case $e in A | B) cur=$e ;; esac
	done
	if [ $bad -eq 0 ]; then
		ok "$be: $ROUNDS applies of $RULES rules killed at random ($killed_mid of them before they ended): what cgfw list showed ran, every time"
	else
		not_ok "$be: cgfw list agrees with the traffic after a kill -9" \
			"$bad of $ROUNDS rounds disagreed; the last: $why"
	fi
	check "$be: after the kills, an apply works" "$CGFW" apply -b "$be" "$work/A.nft"
	check "$be: and it is enforced as listed" test "$(listed) $(enforced)" = \
		"$([ "$be" = both ] && echo "A A A" || echo "A A")"
	check "$be: and delete works" "$CGFW" delete t
	check "$be: and nothing is left" test "$(listed)" = none
done
exit $fail
