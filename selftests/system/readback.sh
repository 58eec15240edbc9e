#!/bin/bash
# The compile's read-back from nft's batch (front/capture.c) against the
# dumps it stands for (CGFW_READBACK_DUMP=1): the same bytecode, sets and
# elements for every golden file and for every other rule of nftables'
# own tests/py (any, inet, ip, ip6; rules without named sets) that
# compiles at a cgroup hook; the same verdict of the bpf backend (its
# programs list an anonymous set's elements in the order they come, which
# a dump does not keep). And that the batch is what was read: a compile
# that takes it dumps no rule and no element, one that cannot (an element
# deleted in the same file) dumps them.
#   BUILD/nft-build/nftables-*/tests/py: made by `make nft` (make check)
set -u
. "$(dirname "$0")/../lib/lib.sh"
ns_setup readback
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(dirname "$CGFW")

compile() {	# compile BACKEND FILE [dump]
	if [ -n "${3:-}" ]; then
		CGFW_READBACK_DUMP=1 "$CGFW" compile -b "$1" "$2" 2>&1
	else
		"$CGFW" compile -b "$1" "$2" 2>&1
	fi
}

same() {	# same NAME FILE: both read-backs give the same
	local a d ra rd diffs=
	for b in nft bpf; do
		a=$(compile $b "$2"); ra=$?
		d=$(compile $b "$2" dump); rd=$?
		if [ $ra != $rd ] || { [ $b = nft ] && [ "$a" != "$d" ]; }; then
			diffs="$diffs $b"
			printf '# %s, %s: exit %s, %s with the dumps\n' \
				"$1" $b $ra $rd
			[ $b = nft ] && diff <(echo "$d") <(echo "$a") |
				head -10 | sed 's/^/# /'
		fi
	done
	[ -z "$diffs" ]
}

for f in "$top"/selftests/golden/*.nft; do
	name=$(basename "$f")
	if (cd "$top/selftests/golden" && same "$name" "$name"); then
		ok "golden $name: the batch reads as the dumps"
	else
		not_ok "golden $name: the batch reads as the dumps"
	fi
done

py=$(ls -d "$build"/nft-build/nftables-*/tests/py 2>/dev/null | head -1)
if [ -z "$py" ]; then
	ok "nftables' tests/py # SKIP not unpacked ($build/nft-build: make nft, or make check, unpacks it)"
else
	python3 - "$py" "$work" <<'PY'
import glob, sys
py, work = sys.argv[1:]
rules = []
for fam in ("any", "inet", "ip", "ip6"):
    for f in sorted(glob.glob(f"{py}/{fam}/*.t")):
        for line in open(f):
            line = line.rstrip("\n")
            if not line or line[0] in "#:*!?-%" or ";ok" not in line:
                continue
            r = line.split(";ok")[0].strip()
            if r and "@" not in r and r not in rules:
                rules.append(r)
for i, r in enumerate(rules[::2]):
    with open(f"{work}/py{i:04d}.nft", "w") as o:
        o.write('table cgroup t {\n\tchain c {\n\t\ttype filter hook '
                'egress cgroup "/" priority 0;\n\t\t%s\n\t}\n}\n' % r)
PY
	total=0 compiled=0 differ=0
	for f in "$work"/py*.nft; do
		total=$((total + 1))
		"$CGFW" compile -b nft "$f" > /dev/null 2>&1 &&
			compiled=$((compiled + 1))
		if ! same "$(sed -n 4p "$f" | tr -d '\t')" "$f"; then
			differ=$((differ + 1))
		fi
	done
	if [ $differ = 0 ] && [ $compiled -gt 0 ]; then
		ok "nftables' tests/py: $compiled of $total rules compile, each reads as the dumps"
	else
		not_ok "nftables' tests/py: $differ of $total rules read otherwise than the dumps ($compiled compile)"
	fi
fi

# what is dumped: GETRULE (0xa07) and GETSETELEM (0xa0d) requests of the
# compile's child (nft's own requests for its cache are neither)
dumps() {	# dumps FILE [dump]: the rule and element dump requests
	local env=
	[ -n "${2:-}" ] && env=CGFW_READBACK_DUMP=1
	env $env strace -f -qq -e trace=sendto -o "$work/strace" \
		"$CGFW" compile -b nft "$1" > /dev/null 2>&1 || return 1
	grep -c 'nlmsg_type=0xa0[7d][ ,]' "$work/strace"
}
if ! command -v strace > /dev/null; then
	ok "what the compile dumps # SKIP no strace (make deps installs it)"
else
	cat > "$work/adds.nft" <<'EOF'
table cgroup t {
	set s { type inet_service; elements = { 1, 2, 3 } }
	chain c {
		type filter hook egress cgroup "/" priority 0;
		tcp dport @s drop
		udp dport { 53, 123 } accept
	}
}
EOF
	{ cat "$work/adds.nft"; echo 'delete element cgroup t s { 2 }'; } \
		> "$work/deletes.nft"
	check "a compile that only adds dumps no rule, no element" \
		test "$(dumps "$work/adds.nft")" = 0
	check "with the dumps asked for, it dumps them" \
		test "$(dumps "$work/adds.nft" dump)" -gt 0
	check "an element deleted in the file: the sets are dumped" \
		test "$(dumps "$work/deletes.nft")" -gt 0
fi
# The compile's child stopped and continued all the time (a freezer, a
# debugger, ^Z): nft's sendmsg() is taken once and waits for its answer
# through the stops, so the batch is read once: as many rules as written.
python3 - > "$work/many.nft" <<'PY'
print('table cgroup t {\n\tchain c {\n\t\ttype filter hook egress cgroup "/" priority 0;')
for i in range(20000):
    print("\t\tip daddr 10.%d.%d.1 tcp dport %d accept" % (i >> 8 & 255, i & 255, i % 60000 + 1))
print("\t}\n}")
PY
rules_seen=
for round in 1 2 3; do
	"$CGFW" compile -b nft "$work/many.nft" > "$work/many.out" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		for c in $(pgrep -P $pid); do
			kill -STOP "$c" 2>/dev/null; kill -CONT "$c" 2>/dev/null
		done
		sleep 0.002
	done
	wait $pid
	rules_seen="$rules_seen $?:$(grep -c '^# .*many.nft:' "$work/many.out")"
done
check "a compile stopped and continued every 2 ms reads each rule once (3 rounds: exit:rules$rules_seen)" \
	test "$rules_seen" = " 0:20000 0:20000 0:20000"
exit $fail
