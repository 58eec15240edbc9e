#!/bin/bash
# The cgfw command as a user drives it: status, check, compile, list -j,
# help and exit statuses. Runs in its own network and mount namespace.
set -u
. "$(dirname "$0")/lib.sh"
ns_setup cli

check() {	# check NAME COMMAND...: the command must succeed
	local name=$1; shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n $name"
	else
		fail=1
		echo "not ok $n $name"
		printf '%s\n' "$out" | sed 's/^/# /' | head -20
	fi
}

sed "s|web.slice|$cg|" \
	docs/examples/web.nft > "$work/web.nft"

check "status names the cgroup2 mount and the nft features" \
	bash -c "'$CGFW' status | grep -q '^cgroup2 mount: *$root\$' &&
		 '$CGFW' status | grep -q '^nft socket cgroupv2: *yes\$'"
check "status -j is JSON" \
	bash -c "'$CGFW' status -j | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"nf_tables\"] is True'"
check "check compiles and applies nothing" \
	bash -c "'$CGFW' check '$work/web.nft' && [ -z \"\$(nft list tables)\" ]"
check "check reads standard input" \
	bash -c "'$CGFW' check - < '$work/web.nft'"
check "compile shows each rule's source line and bytecode" \
	bash -c "cd '$work' && '$CGFW' compile web.nft | grep -q '^# web.nft:[0-9]*: tcp dport { 80, 443 } counter accept\$' &&
		 '$CGFW' compile -b nft '$work/web.nft' | grep -q 'payload load 2b @ transport header + 2 => reg 1'"
check "apply, then list shows the cgroup family and the hook" \
	bash -c "'$CGFW' apply '$work/web.nft' && '$CGFW' list | grep -q '^table cgroup web {' &&
		 '$CGFW' list web | grep -qF 'type filter hook egress cgroup \"$root/$cg\" priority 0; policy drop;'"
check "list hides the emulation's own chains" \
	bash -c "! '$CGFW' list | grep -q cgfw_hook_"
check "list -j is JSON with chains, rules and counters" \
	bash -c "'$CGFW' list -j | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d[\"tables\"][0]
assert t[\"family\"] == \"cgroup\" and t[\"name\"] == \"web\"
c = {c[\"name\"]: c for c in t[\"chains\"]}
assert c[\"egress\"][\"hook\"] == \"egress\" and c[\"egress\"][\"policy\"] == \"drop\"
assert c[\"egress\"][\"rules\"][0][\"counter\"][\"packets\"] == 0
assert t[\"sets\"][0][\"name\"] == \"resolvers\"'"
check "list of a table cgfw did not install fails" \
	bash -c "! '$CGFW' list nope 2>/dev/null"
check "help exits 0 and names every command" \
	bash -c "'$CGFW' help | grep -q 'cgfw apply' && '$CGFW' help | grep -q 'cgfw status'"
check "no command is bad usage (exit 2)" \
	bash -c "'$CGFW' >/dev/null 2>&1; [ \$? -eq 2 ]"
check "flush leaves nothing of cgfw" \
	bash -c "'$CGFW' flush && [ -z \"\$(nft list tables)\" ] && [ -z \"\$('$CGFW' list -j | grep -o web)\" ]"
exit $fail
