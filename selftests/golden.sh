#!/bin/bash
# Golden bytecode tests, in the style of nftables' tests/py payload files:
# for every selftests/golden/NAME.nft, "cgfw compile" must print
# exactly NAME.nft.payload (nf_tables bytecode) and "cgfw compile -b bpf"
# exactly NAME.nft.bpf (the BPF programs; the cgroup's path and id, which
# differ from machine to machine, left out). DUMPGEN=y rewrites them.
# Compiling needs a network namespace, hence root; without it, skip.
set -u
BUILD=${1:-build}
CGFW=${CGFW:-$BUILD/cgfw}
dir=selftests/golden
n=0
# the output of one backend, made comparable
compile() {
	(cd "$dir" && "$OLDPWD/$CGFW" compile -b "$1" "$2") 2>&1 |
		sed -E 's/program for cgroup .* \(id [0-9]+\)/program for cgroup ./; s/(hook (egress|ingress) cgroup) "[^"]*"/\1 "."/'
}

for f in "$dir"/*.nft; do
	name=$(basename "$f" .nft)
	for b in nft bpf; do
		n=$((n + 1))
		golden=$f.payload
		[ $b = bpf ] && golden=$f.bpf
		if [ "$(id -u)" != 0 ]; then
			echo "ok $n golden.$name.$b # SKIP compiling needs root (a network namespace)"
			continue
		fi
		if [ "${DUMPGEN:-}" = y ]; then
			compile $b "$name.nft" > "$golden"
			echo "ok $n golden.$name.$b # SKIP regenerated $golden"
			continue
		fi
		out=$(mktemp)
		if compile $b "$name.nft" >"$out" &&
		   diff -u "$golden" "$out" >"$out.diff"; then
			echo "ok $n golden.$name.$b"
		else
			echo "not ok $n golden.$name.$b"
			sed 's/^/# /' "$out.diff" "$out" | head -40
		fi
		rm -f "$out" "$out.diff"
	done
done
