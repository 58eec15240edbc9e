#!/bin/bash
# make demo: the example policy (docs/examples/web.nft) on a throwaway
# cgroup, in a throwaway network namespace, with real traffic from a process
# inside the cgroup and one outside it. Cleans up after itself, also when
# interrupted.
set -u
BUILD=${1:-build}
CGFW=$(realpath "$BUILD/cgfw")
TRAFFIC=$(realpath "$BUILD/cgfw-traffic")

if [ "$(id -u)" != 0 ]; then
	echo "make demo: needs root (a network namespace, a cgroup)" >&2
	exit 1
fi
root=$(findmnt -n -t cgroup2 -o TARGET | head -1)
if [ -z "$root" ]; then
	echo "make demo: cgroup v2 is not mounted; mount -t cgroup2 none /sys/fs/cgroup" >&2
	exit 1
fi

ns=cgfw-demo-$$
cg=cgfw-demo-$$/web.slice
work=$(mktemp -d)
cleanup() {
	trap - EXIT INT TERM
	# every process in the namespace: the servers and anything left over
	ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rmdir "$root/$cg" "$root/${cg%/*}" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'echo; echo "interrupted: cleaning up"; exit 130' INT TERM

# nsenter, not "ip netns exec": that remounts /sys and so hides the
# cgroup2 mount below /sys/fs/cgroup
in_ns() { nsenter --net="/run/netns/$ns" "$@"; }

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }

say "1. A throwaway network namespace ($ns) and cgroup ($root/$cg)"
ip netns add "$ns"
in_ns ip link set lo up
in_ns sysctl -qw net.ipv4.ping_group_range="0 2147483647"	# ping sockets
# the two resolvers and a web server, as local addresses
for a in 192.0.2.53 198.51.100.53 203.0.113.10; do
	in_ns ip addr add "$a/32" dev lo
done
mkdir -p "$root/$cg"
echo "   resolvers 192.0.2.53, 198.51.100.53; server 203.0.113.10"

say "2. Servers, outside the cgroup (and sshd-like port 22 inside it)"
serve() { nsenter --net="/run/netns/$ns" "$TRAFFIC" "$@" & }
serve serve udp 192.0.2.53 53
serve serve udp 198.51.100.53 53
serve serve udp 203.0.113.10 53
serve serve tcp 203.0.113.10 443
serve serve tcp 203.0.113.10 80
serve serve tcp 203.0.113.10 8080
# a listener created by a process in the cgroup: its ingress is filtered
serve -c "$root/$cg" serve tcp 127.0.0.1 22
serve serve tcp 127.0.0.1 2222
sleep 0.3

say "3. The policy (docs/examples/web.nft, bound to $cg)"
sed "s|\"web.slice\"|\"$cg\"|" docs/examples/web.nft > "$work/web.nft"
grep -v '^#' "$work/web.nft" | sed '/^$/d; s/^/   /'
in_ns "$CGFW" apply ${DEMO_BACKEND:+-b "$DEMO_BACKEND"} "$work/web.nft" || exit 1
backend=$(in_ns "$CGFW" list -j web | grep -o '"backend":"[^"]*"' | cut -d'"' -f4)
echo "   applied: cgfw apply${DEMO_BACKEND:+ -b $DEMO_BACKEND} (backend $backend; DEMO_BACKEND=nft|bpf|both picks one)"

say "4. Traffic"
printf '   %-22s %-28s %s\n' "from" "to" "verdict"
probe() {	# probe WHO DESC ARGS...
	local who=$1 desc=$2; shift 2
	local cgopt=()
	[ "$who" = "web.slice" ] && cgopt=(-c "$root/$cg")
	printf '   %-22s %-28s %s\n' "$who" "$desc" \
		"$(in_ns "$TRAFFIC" "${cgopt[@]}" "$@")"
}
probe web.slice "udp 192.0.2.53:53 (dns)" udp 192.0.2.53 53
probe web.slice "udp 198.51.100.53:53 (dns)" udp 198.51.100.53 53
probe web.slice "udp 203.0.113.10:53" udp 203.0.113.10 53
probe web.slice "tcp 203.0.113.10:443" tcp 203.0.113.10 443
probe web.slice "tcp 203.0.113.10:80" tcp 203.0.113.10 80
probe web.slice "tcp 203.0.113.10:8080" tcp 203.0.113.10 8080
probe web.slice "ping 203.0.113.10" ping 203.0.113.10
probe outside "udp 203.0.113.10:53" udp 203.0.113.10 53
probe outside "tcp 203.0.113.10:8080" tcp 203.0.113.10 8080
probe outside "tcp web.slice's :22" tcp 127.0.0.1 22
probe outside "tcp outside's :2222" tcp 127.0.0.1 2222

say "5. What is installed, with the counters (cgfw list web)"
in_ns "$CGFW" list web | sed 's/^/   /'

if [ "$backend" = bpf ]; then
	say "6. What the kernel has: the programs on the cgroup, and cgfw's pins"
	bpftool cgroup show "$root/$cg" | sed 's/^/   /'
	ls /sys/fs/bpf/cgfw/web | sed 's/^/   /'
	say "7. The egress program's first rule, as compiled (cgfw compile -b bpf)"
	"$CGFW" compile -b bpf "$work/web.nft" |
		sed -n '/rule at .*:21/,/; chain/p' | head -30 | sed 's/^/   /'
else
	say "6. The same table as nft sees it (nft list table inet cgfw_web)"
	in_ns nft list table inet cgfw_web | sed 's/^/   /'
fi

say "Done: cleaning up the namespace and the cgroup."
