#!/bin/bash
# Golden bytecode tests, in the style of nftables' tests/py payload files:
# for every userspace/tests/golden/NAME.nft, "cgfw compile" must print
# exactly NAME.nft.payload. DUMPGEN=y rewrites the payload files instead.
# Compiling needs a network namespace, hence root; without it, skip.
set -u
BUILD=${1:-build}
CGFW=${CGFW:-$BUILD/cgfw}
dir=userspace/tests/golden
n=0
for f in "$dir"/*.nft; do
	n=$((n + 1))
	name=$(basename "$f" .nft)
	if [ "$(id -u)" != 0 ]; then
		echo "ok $n golden.$name # SKIP compiling needs root (a network namespace)"
		continue
	fi
	if [ "${DUMPGEN:-}" = y ]; then
		(cd "$dir" && "$OLDPWD/$CGFW" compile "$name.nft") > "$f.payload"
		echo "ok $n golden.$name # SKIP regenerated $f.payload"
		continue
	fi
	out=$(mktemp)
	if (cd "$dir" && "$OLDPWD/$CGFW" compile "$name.nft") >"$out" 2>&1 &&
	   diff -u "$f.payload" "$out" >"$out.diff"; then
		echo "ok $n golden.$name"
	else
		echo "not ok $n golden.$name"
		sed 's/^/# /' "$out.diff" "$out" | head -40
	fi
	rm -f "$out" "$out.diff"
done
