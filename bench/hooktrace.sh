#!/bin/bash
# Where the instructions of a packet's hook go: for each SETUP, the guest
# kernel boots with QEMU's gdb stub (tools/vm/run.sh -g), a process of a
# cgroup sends IPv4 UDP datagrams with SETUP bound to its egress, and gdb
# single-steps one call of the hook's entry to its return, counting each
# instruction to the function it ran in (bench/hooktrace.py). Exact and
# independent of the host's load, like -icount, but per function; the
# entry is the hook's function after the inline test at the call site.
#   bench/hooktrace.sh BUILD [SETUP...]
# SETUPs: prog (an empty CGROUP_SKB program), native (cgfw apply -b
# nft-native of an empty chain), native-nocounters (the same chain made
# by the patched nft, without counters). A few minutes each (a boot).
#   bench/hooktrace.sh --guest SETUP BUILD    (in the guest)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" = --guest ]; then
	setup=$2 BUILD=$3
	cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	mkdir -p "$cg/hooktrace"
	case $setup in
	prog)	# BPF_PROG_LOAD "r0 = 1; exit", BPF_PROG_ATTACH egress
		python3 - "$cg/hooktrace" <<'PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
insns = ctypes.create_string_buffer(bytes.fromhex("b700000001000000" "9500000000000000"))
lic = ctypes.create_string_buffer(b"GPL")
attr = ctypes.create_string_buffer(struct.pack("IIQQIIQII16sII", 8, 2,
    ctypes.addressof(insns), ctypes.addressof(lic), 0, 0, 0, 0, 0, b"", 0, 1), 128)
fd = libc.syscall(321, 5, attr, 128)
cg = os.open(sys.argv[1], os.O_RDONLY)
at = ctypes.create_string_buffer(struct.pack("IIII", cg, fd, 1, 2), 128)
if fd < 0 or libc.syscall(321, 8, at, 128):
    sys.exit("hooktrace: cannot load or attach: %s" % os.strerror(ctypes.get_errno()))
PY
		;;
	native)
		printf 'table cgroup hooktrace {\n\tchain out {\n\t\ttype filter hook egress cgroup "%s" priority 0; policy accept;\n\t}\n}\n' \
			"$cg/hooktrace" > /tmp/hooktrace.nft
		"$BUILD/cgfw" apply -b nft-native /tmp/hooktrace.nft ;;
	native-nocounters)
		LD_LIBRARY_PATH=$BUILD/nft/lib "$BUILD/nft/sbin/nft" \
			"add table cgroup hooktrace; add chain cgroup hooktrace out { type filter hook egress cgroup \"$cg/hooktrace\" priority 0; }" ;;
	*)	echo "hooktrace: no setup $setup" >&2; exit 2 ;;
	esac
	echo $$ > "$cg/hooktrace/cgroup.procs"
	echo "hooktrace: ready"
	exec python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    s.sendto(b"x", ("127.0.0.1", 9))'
fi

BUILD=${1:?usage: $0 BUILD [SETUP...]}
shift
[ $# -gt 0 ] || set -- prog native native-nocounters
image=$("$top/tools/vm/build-kernel.sh")
vmlinux=${image%/arch/x86/boot/bzImage}/vmlinux
for setup in "$@"; do
	case $setup in
	prog) fn=__cgroup_bpf_run_filter_skb ;;
	*) fn=__nf_cgroup_run_hooks ;;
	esac
	log=$(mktemp)
	setsid "$top/tools/vm/run.sh" -g -t 900 -k "$image" \
		bench/hooktrace.sh --guest "$setup" "$BUILD" > "$log" 2>&1 &
	for _ in $(seq 300); do
		grep -q '^hooktrace: ready' "$log" && break
		grep -q 'cgfw-vm-exit\|reboot: Power down' "$log" && break
		sleep 1
	done
	if grep -q '^hooktrace: ready' "$log"; then
		echo "== $setup ($fn)"
		HOOKTRACE_FN=$fn gdb -q -batch -ex "file $vmlinux" \
			-x "$top/bench/hooktrace.py" 2>&1 | sed -n 's/^hooktrace: //p'
	else
		echo "== $setup: the guest did not get ready"; cat "$log"
	fi
	kill -- -$! 2>/dev/null || true
	wait $! 2>/dev/null || true
	rm -f "$log"
done
