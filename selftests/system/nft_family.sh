#!/bin/bash
# The cgroup family with nft itself (nft-extension/, make nft): a ruleset
# installed by the patched `nft -f`, not by cgfw, filters real traffic of
# a process in the cgroup as its rules say; `nft list ruleset` and
# `nft -j list ruleset` of every ruleset of docs/examples and of the
# selftests load back to the same ruleset, rules and bytecode; nft lists
# a native table made by cgfw with the rules and counters cgfw shows.
# Runs where the kernel has the family (make check's guest); skips here.
set -u
. "$(dirname "$0")/../lib/lib.sh"
NFT=$(realpath "${NFT:-build/nft/sbin/nft}" 2>/dev/null)
TRAFFIC=$(realpath "${CGFW_TRAFFIC:-build/cgfw-traffic}" 2>/dev/null)
top=$(pwd)
ns_setup nftfam

if [ ! -x "$NFT" ]; then
	why=$(head -1 "$top/build/nft.missing" 2>/dev/null)
	echo "ok 1 nft with the cgroup family # SKIP nft is not built (make nft)${why:+: $why}"
	exit 0
fi
if ! "$NFT" add table cgroup probe 2>/dev/null; then
	echo "ok 1 nft with the cgroup family # SKIP this kernel has no cgroup family"
	exit 0
fi
"$NFT" delete table cgroup probe

# --- real traffic through a ruleset that nft installed ----------------------
sed "s|\"web.slice\"|\"$cg\"|" "$top/docs/examples/web.nft" > "$work/web.nft"
traffic() {	# traffic [-c CGROUP] ARGS: exit status 0 passed, 1 EPERM, 2 none
	"$TRAFFIC" "$@" >/dev/null 2>&1
}
servers=()
serve() { "$TRAFFIC" "$@" >/dev/null 2>&1 & servers+=($!); }
trap 'kill "${servers[@]}" 2>/dev/null; rm -rf "$work"
	find "$root/$cg" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
	rmdir "$root/$cg"' EXIT
serve serve tcp 127.0.0.1 80
serve serve udp 127.0.0.1 5353
serve -c "$root/$cg" serve tcp 127.0.0.1 22
sleep 0.5

check "nft -f installs docs/examples/web.nft" "$NFT" -f "$work/web.nft"
check "nft list ruleset shows it, with the cgroup's path" \
	bash -c "'$NFT' list ruleset | grep -qF 'type filter hook egress cgroup \"$cg\" priority filter; policy drop;'"
check "egress: the cgroup's TCP to port 80 passes (tcp dport { 80, 443 } accept)" \
	traffic -c "$root/$cg" tcp 127.0.0.1 80
traffic -c "$root/$cg" udp 127.0.0.1 5353
st=$?
if [ $st -eq 1 ]; then
	ok "egress: the cgroup's UDP to port 5353 is dropped by the policy (EPERM)"
else
	not_ok "egress: the cgroup's UDP to port 5353 is dropped by the policy (EPERM)" "status $st"
fi
check "egress: the same UDP from outside the cgroup passes" \
	traffic udp 127.0.0.1 5353
traffic tcp 127.0.0.1 22
st=$?
if [ $st -eq 2 ]; then
	ok "ingress: a connection to the cgroup's port 22 gets no answer (tcp dport 22 drop)"
else
	not_ok "ingress: a connection to the cgroup's port 22 gets no answer (tcp dport 22 drop)" "status $st"
fi
check "the counters count those packets" \
	bash -c "'$NFT' list ruleset | grep -q 'tcp dport { 80, 443 } counter packets [1-9]' &&
		 '$NFT' list ruleset | grep -q 'tcp dport 22 counter packets [1-9]'"
check "nft -j list ruleset names the family and the cgroup" \
	bash -c "'$NFT' -j list ruleset | python3 -c '
import json, sys
d = json.load(sys.stdin)[\"nftables\"]
c = [o[\"chain\"] for o in d if \"chain\" in o]
assert all(x[\"family\"] == \"cgroup\" and x[\"cgroup\"] == \"$cg\" for x in c), c'"
check "nft flush ruleset removes it, and the traffic passes" \
	bash -c "'$NFT' flush ruleset && [ -z \"\$('$NFT' list ruleset)\" ] &&
		 '$TRAFFIC' -c '$root/$cg' udp 127.0.0.1 5353 >/dev/null"

# --- round trip: text and JSON, same rules and bytecode -----------------------
# docs/examples, and the rulesets of the selftests (cgfw_selftest.c) with
# their cgroup and numbers filled in
mkdir "$work/rt"
for f in "$top"/docs/examples/*.nft; do
	sed "s|cgroup \"[^\"]*\"|cgroup \"$cg\"|" "$f" > "$work/rt/$(basename "$f")"
done
python3 - "$top/selftests/system/cgfw_selftest.c" "$work/rt" "$cg" <<'EOF'
import re, sys
src, out, cg = sys.argv[1:]
text = open(src).read()
lits = re.findall(r'(?:apply\(|rules\[\] =)\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', text)
for i, lit in enumerate(lits):
    s = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', lit))
    s = bytes(s, "utf-8").decode("unicode_escape")
    s = s.replace("%s", cg).replace("%d", "10")
    open("%s/selftest-%02d.nft" % (out, i), "w").write(s)
EOF
bytecode() {	# the rules as the kernel has them, without the handles that
	# end each rule's first line (its own, and the one it follows: a JSON
	# load numbers anonymous sets and rules in another order); sorted, for
	# a hash set's elements come in another order after each load
	"$NFT" --debug=netlink list ruleset 2>&1 | sed -E 's/( [0-9]+)+$//' | sort
}
same_text() {	# same_text LOAD_OPTS DUMP: loads DUMP, compares with $text, $code
	printf '%s\n' "$2" > "$work/dump" &&	# nft -j -f - opens /dev/stdin
	"$NFT" flush ruleset &&
	"$NFT" $1 -f "$work/dump" &&
	[ "$("$NFT" list ruleset)" = "$text" ] &&
	[ "$(bytecode)" = "$code" ]
}
for f in "$work"/rt/*.nft; do
	name=$(basename "$f")
	"$NFT" flush ruleset
	# the cgroups below ours that the ruleset names
	grep -o "cgroup \"$cg/[^\"]*\"" "$f" | cut -d'"' -f2 |
		while read -r sub; do mkdir -p "$root/$sub"; done
	if ! out=$("$NFT" -f "$f" 2>&1); then
		not_ok "round trip $name: it loads" "$out"
		continue
	fi
	text=$("$NFT" list ruleset)
	json=$("$NFT" -j list ruleset)
	code=$(bytecode)
	check "round trip $name: nft list ruleset loads back to the same rules and bytecode" \
		same_text "" "$text"
	check "round trip $name: nft -j list ruleset loads back to the same" \
		same_text -j "$json"
	check "round trip $name: and lists the same JSON (handles aside)" \
		bash -c '[ "$("$0" -j list ruleset | sed -E "$2")" = "$(sed -E "$2" <<< "$1")" ]' \
		"$NFT" "$json" 's/"handle": [0-9]+/"handle": 0/g'
done
"$NFT" flush ruleset

# --- cgfw and nft agree ----------------------------------------------------
rules_of() {	# the rule lines of a listing, headers and comments aside
	grep -vE '^[[:space:]]*(table|chain|type|set|map|elements|flags|comment|#|\}|$)' |
		sed -E 's/^[[:space:]]+//' | sort
}
agree() {
	diff <("$CGFW" list web | rules_of) <("$NFT" list table cgroup web | rules_of)
}
check "cgfw apply -b nft-native installs web.nft" \
	"$CGFW" apply -b nft-native "$work/web.nft"
traffic -c "$root/$cg" tcp 127.0.0.1 80
traffic -c "$root/$cg" udp 127.0.0.1 5353
traffic tcp 127.0.0.1 22
check "nft list shows cgfw's native table with cgfw's rules and counters" agree
check "and the same chains, hooks and cgroup" \
	bash -c "'$NFT' list table cgroup web | grep -qF 'type filter hook egress cgroup \"$cg\" priority filter; policy drop;' &&
		 '$NFT' list table cgroup web | grep -qF 'type filter hook ingress cgroup \"$cg\" priority filter; policy accept;'"
check "cgfw flush removes it" "$CGFW" flush
exit $fail
