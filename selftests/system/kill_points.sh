#!/bin/bash
# kill -9 at every step of an apply, with every backend: strace kills
# cgfw as it enters its K-th call of each system call that changes what
# is installed (bpf, mkdir, rename, rmdir, unlink, the netlink sends), for
# every K the apply makes. After each kill, cgfw list (which finishes or
# rolls back what the kill left) must succeed and show what real traffic
# shows, and the ruleset must be in effect whole or not at all: its two
# tables, on every backend of the apply, from the same file. Then the
# same for an apply that binds a second cgroup, which is removed before
# the next command (that command finishes the apply or, as the apply
# would have, rolls it back: it never stops there), and for "cgfw delete
# t1" and "cgfw flush": each table is there on every backend, or gone,
# and a flush is done whole or not at all.
#
# Two versions of one ruleset of two tables: A drops UDP to 7001 (table
# t1) and 7003 (t2), B to 7002 and 7004. A named set and a counter in t1
# give the bpf backend maps to make and pin.
#
#   CGFW_KILL_BACKENDS
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup killpt

if ! command -v strace >/dev/null; then
	ok "kill at every step # SKIP strace is not installed (make deps)"
	exit 0
fi
version() {	# NAME PORT1 PORT2
	cat <<-EOF
	table cgroup t1 {
		set s { type ipv4_addr; elements = { 127.0.0.1 } }
		chain out {
			type filter hook egress cgroup "$cg" priority 0; policy accept;
			ip daddr @s udp dport $2 counter drop
		}
	}
	table cgroup t2 {
		chain out {
			type filter hook egress cgroup "$cg" priority 0; policy accept;
			udp dport $3 drop
		}
	}
	EOF
}
version A 7001 7003 > "$work/A.nft"
version B 7002 7004 > "$work/B.nft"
# B, with t2 bound to a second cgroup too (one the test removes)
y="$cg-y"
trap 'rmdir "$root/$y" 2>/dev/null; rm -rf "$work"; rmdir "$root/$cg"' EXIT
sed "/^table cgroup t2 {/a\\
	chain out_y {\\
		type filter hook egress cgroup \"$y\" priority 0; policy accept;\\
		udp dport 7004 drop\\
	}" "$work/B.nft" > "$work/BY.nft"

# what the kernel enforces: "A", "B", "none", or the ports dropped
enforced() {
	local p d=
	for p in 7001 7002 7003 7004; do
		dropped $p && d="$d$p "
	done
	case $d in
	"7001 7003 ") echo A ;; "7002 7004 ") echo B ;; "") echo none ;;
	*) echo "mixed: ${d% }" ;;
	esac
}

# what cgfw list says runs: one word per table listed, in its order
listed() {
	"$CGFW" list 2>/dev/null | awk '
		/^table cgroup / { n++; w[n] = "?" }
		/dport (7001|7003) .*drop/ { w[n] = "A" }
		/dport (7002|7004) .*drop/ { w[n] = "B" }
		END { if (!n) print "none"; else { for (i = 1; i <= n; i++)
			printf "%s%s", w[i], i < n ? " " : "\n" } }'
}

# after a delete or flush of A: each table listed on every backend ($1)
# and dropping its port, or on none and dropping nothing
whole_or_gone() {
	local t port n d per=$1 out=
	"$CGFW" list > "$work/list" 2>"$work/err" ||
		{ echo "cgfw list failed: $(head -1 "$work/err")"; return 1; }
	for t in t1:7001 t2:7003; do
		port=${t#*:} t=${t%:*}
		n=$(grep -c "^table cgroup $t " "$work/list")
		dropped "$port" && d=dropped || d=passed
		case $n:$d in
		"$per":dropped | 0:passed) ;;
		*) out="$out$t listed $n times, its port $d; " ;;
		esac
	done
	echo "$out"
	[ -z "$out" ]
}

calls="bpf,mkdir,rename,rmdir,unlink,sendto,sendmsg"
# each K of each call a command makes (traced once, whole): "CALL K"
points() {
	strace -qq -o "$work/trace" -e trace=$calls "$@" >/dev/null
	grep -oE '^[a-z]+\(' "$work/trace" | tr -d '(' | sort | uniq -c |
		while read -r count call; do
			seq "$count" | sed "s/^/$call /"
		done
}
killed_at() {	# CALL K COMMAND...: run it, killed as it enters call K
	local call=$1 k=$2; shift 2
	(strace -qq -o /dev/null -e trace="$call" \
		-e inject="$call":signal=SIGKILL:when="$k" "$@"; :) \
		>/dev/null 2>&1
}

backends=$(test_backends "${CGFW_KILL_BACKENDS:-}")
for be in $backends; do
	"$CGFW" flush
	if ! "$CGFW" apply -b "$be" "$work/A.nft" 2>"$work/err"; then
		not_ok "$be: the first apply" "$(cat "$work/err")"
		continue
	fi
	tables=2
	[ "$be" = both ] && tables=4
	points "$CGFW" apply -b "$be" "$work/B.nft" > "$work/points"
	cur=B points=0 bad=0 why=
	while read -r call k; do
		[ $cur = A ] && next=B || next=A
		killed_at "$call" "$k" "$CGFW" apply -b "$be" "$work/$next.nft"
		points=$((points + 1))
		if ! "$CGFW" list >/dev/null 2>"$work/err"; then
			bad=$((bad + 1))
			why="killed at $call #$k: cgfw list failed: $(head -1 "$work/err")"
			continue
		fi
		l=$(listed)
		e=$(enforced)
		want=$(printf "$e %.0s" $(seq $tables))
		if [ "$l " != "$want" ]; then
			bad=$((bad + 1))
			why="killed at $call #$k of the apply of $next: listed '$l', enforced '$e'"
		fi
		case $e in A | B) cur=$e ;; esac
	done < "$work/points"
	if [ $bad -eq 0 ] && [ $points -gt 0 ]; then
		ok "$be: killed at each of the $points calls of an apply that change what runs: the ruleset whole or not at all, as cgfw list showed, every time"
	else
		not_ok "$be: killed at each call of an apply, cgfw list and the traffic agree, whole" \
			"$bad of $points kill points disagreed; the last: $why"
	fi
	check "$be: after the kills, an apply works" "$CGFW" apply -b "$be" "$work/A.nft"
	# killed at each bpf() call of an apply that binds $y too (at each
	# call, with nft alone), and $y removed before the next command
	mkdir "$root/$y"
	points "$CGFW" apply -b "$be" "$work/BY.nft" |
		grep "^$([[ $be = nft-* ]] || echo 'bpf ')" > "$work/points"
	"$CGFW" apply -b "$be" "$work/A.nft"
	points=0 bad=0 why=
	while read -r call k; do
		killed_at "$call" "$k" "$CGFW" apply -b "$be" "$work/BY.nft"
		rmdir "$root/$y"
		points=$((points + 1))
		if ! "$CGFW" list >/dev/null 2>"$work/err"; then
			bad=$((bad + 1))
			why="killed at $call #$k: cgfw list failed: $(grep -v warning: "$work/err" | head -1)"
		elif l=$(listed) e=$(enforced) &&
		     [ "$l " != "$(printf "$e %.0s" $(seq $tables))" ]; then
			bad=$((bad + 1))
			why="killed at $call #$k: listed '$l', enforced '$e'"
		fi
		mkdir "$root/$y"
		"$CGFW" apply -b "$be" "$work/A.nft"
	done < "$work/points"
	rmdir "$root/$y"
	if [ $bad -eq 0 ] && [ $points -gt 0 ]; then
		ok "$be: killed at each of $points calls of an apply, a cgroup of it then removed: the next command went on, the ruleset whole or not at all, as listed"
	else
		not_ok "$be: killed in an apply, a cgroup of it then removed, the next command goes on" \
			"$bad of $points kill points went wrong; the last: $why"
	fi
	# delete t1, then flush, killed at each step: each table whole
	# (listed on every backend, its port dropped) or gone (neither)
	for cmd in "delete t1" flush; do
		# shellcheck disable=SC2086
		points "$CGFW" $cmd > "$work/points"
		"$CGFW" apply -b "$be" "$work/A.nft"
		points=0 bad=0 why=
		while read -r call k; do
			# shellcheck disable=SC2086
			killed_at "$call" "$k" "$CGFW" $cmd
			points=$((points + 1))
			if ! w=$(whole_or_gone $((tables / 2))); then
				bad=$((bad + 1))
				why="killed at $call #$k of $cmd: $w"
			elif [ "$cmd" = flush ] && l=$(listed) &&
			     [ "$l" != none ] &&
			     [ "$l " != "$(printf "A %.0s" $(seq $tables))" ]; then
				bad=$((bad + 1))
				why="killed at $call #$k of flush: a part of it done: listed '$l'"
			fi
			"$CGFW" apply -b "$be" "$work/A.nft"
		done < "$work/points"
		if [ $bad -eq 0 ] && [ $points -gt 0 ]; then
			ok "$be: $cmd killed at each of its $points calls: each table whole or gone$([ "$cmd" = flush ] && echo ', all or none'), as cgfw list showed, every time"
		else
			not_ok "$be: $cmd killed at each call, each table whole or gone" \
				"$bad of $points kill points disagreed; the last: $why"
		fi
	done
	check "$be: and it is enforced as listed" test "$(listed) $(enforced)" = \
		"$(printf "A %.0s" $(seq $tables))A"
	check "$be: nothing of the killed applies is left in bpffs" \
		test -z "$(find /sys/fs/bpf/cgfw -name '_*' 2>/dev/null)"
	check "$be: and flush works" "$CGFW" flush
	check "$be: and nothing is left" test "$(listed)" = none
done
exit $fail
