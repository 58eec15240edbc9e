# Sourced by the shell tests: TAP helpers, and a private network and mount
# namespace with a work directory and a cgroup of the test's own.
#   ns_setup NAME   re-runs the script in new namespaces (as root) and sets
#                   CGFW, work, root (the cgroup2 mount), cg (our cgroup)
CGFW=$(realpath "${CGFW:-build/cgfw}")
n=0 fail=0

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n $1"; shift; printf '# %s\n' "$@"; }

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

# wait_until SECONDS COMMAND...: 0 as soon as the command succeeds, 1 if
# it has not within SECONDS
wait_until() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# send_each ADDR:PORT...: a datagram from a process of our cgroup to each
# (IPv4 or IPv6); prints "p" for each that went out, "d" for each dropped
send_each() {
	local a out=""
	for a; do
		if bash -c 'echo $$ > "$0/cgroup.procs" && echo x > "/dev/udp/${1%:*}/${1##*:}"' \
			"$root/$cg" "$a" 2>/dev/null; then
			out="${out}p"
		else
			out="${out}d"
		fi
	done
	echo "$out"
}

# 0 if a datagram from a process of our cgroup to 127.0.0.1:PORT is
# dropped (the send fails with EPERM), 1 if it goes out
dropped() {
	! bash -c 'echo $$ > "$0/cgroup.procs" && echo x > /dev/udp/127.0.0.1/$1' \
		"$root/$cg" "$1" 2>/dev/null
}

# The backends to test: $1 if it is not empty, else every one this kernel
# has (the native family's where it has the kernel series)
test_backends() {
	if [ -n "${1:-}" ]; then
		echo "$1"
	elif "$CGFW" status | grep -q '^nft cgroup family (native): *yes$'; then
		echo "nft-emulated nft-native bpf both"
	else
		echo "nft-emulated bpf both"
	fi
}

ns_setup() {
	if [ "$(id -u)" != 0 ]; then
		echo "ok 1 $1 # SKIP needs root (network namespace, cgroups)"
		exit 0
	fi
	if [ -z "${CGFW_IN_NS:-}" ]; then
		CGFW_IN_NS=1 exec unshare -n -m "$0"
	fi
	umask 022	# files the tests write are root's alone to change
	mount --make-rprivate /
	# a bpffs of our own: the bpf tables are per bpffs
	mount -t bpf bpf /sys/fs/bpf
	# and cgfw's /run/cgfw (its locks; one daemon at a time): another
	# test suite or a cgfw of the machine's is not this test's
	mkdir -p /run/cgfw
	mount -t tmpfs -o mode=0700 cgfw-test /run/cgfw
	ip link set lo up
	work=$(mktemp -d)
	chmod 755 "$work"	# readable by unprivileged cases too
	root=$(findmnt -n -t cgroup2 -o TARGET | head -1)
	cg="cgfw-$1-$$"
	mkdir "$root/$cg"
	trap 'rm -rf "$work"; rmdir "$root/$cg"' EXIT
}
