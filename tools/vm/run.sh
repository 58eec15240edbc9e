#!/bin/bash
# Boot the cgfw guest kernel under QEMU (TCG: KVM is not usable on these
# machines) with the host's root read-only over 9p, run one shell command
# in it from this directory, stream its output, and exit with its status.
#   tools/vm/run.sh [-s] [-i SHIFT] [-t SECONDS] [-k BZIMAGE] COMMAND...
# -s: systemd is PID 1 (tools/vm/init starts it), the command a service.
# -i: the guest's clock counts its instructions, 2^SHIFT ns each (QEMU's
#     -icount): timings in the guest become instruction counts, which the
#     host's load does not change (one vCPU runs at a time then: slower).
# -g: QEMU's gdb stub on localhost:1234, and the kernel at its linked
#     address (nokaslr), for gdb with the build's vmlinux
#     (bench/hooktrace.sh).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
timeout=600
kernel=
systemd=
icount=()
gdb=()
nokaslr=
usage="usage: $0 [-s] [-g] [-i SHIFT] [-t SECONDS] [-k BZIMAGE] COMMAND..."
while getopts "sgi:t:k:" o; do
	case $o in
	s) systemd=" cgfw.systemd=1" ;;
	g) gdb=(-gdb tcp:127.0.0.1:1234) nokaslr=" nokaslr" ;;
	i) icount=(-icount "shift=$OPTARG,align=off,sleep=off") ;;
	t) timeout=$OPTARG ;;
	k) kernel=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
[ -n "$kernel" ] || kernel=$("$top/tools/vm/build-kernel.sh") || exit 1

# the command, in a file the guest reads through the shared root
run=$(mktemp -d /var/lib/cgfw-vm.XXXXXX 2>/dev/null || mktemp -d "$top/.vm.XXXXXX")
trap 'rm -rf "$run"' EXIT
printf '%s\n' "$*" > "$run/cmd"
out=$run/console

# The root is read-only and the guest caches it (cache=loose): nothing it
# reads may change while it runs (make check's other stages build into
# BUILD-san and BUILD-fuzz; do not rebuild BUILD under make vm-check).
# Without a cache every read, of each binary and library a test runs
# too, was a 9p request that QEMU's main thread served, and the guest's
# groups took 1.7 times as long (the cli group alone: 271 s, 162 s).
# One host thread runs both vCPUs in turn (thread=single): with a thread
# per vCPU (MTTCG), a vCPU sometimes ran the int3 of a static key that
# another had just patched, after the patch was over, and the guest
# oopsed (twice in about ten boots of 6.12 on these 2 busy cores, at
# boot and in nft_do_chain); -icount implies it.
timeout --foreground "$timeout" qemu-system-x86_64 \
	-accel tcg,thread=single -cpu max -smp 2 -m 2G -nographic -no-reboot \
	"${icount[@]}" "${gdb[@]}" \
	-kernel "$kernel" \
	-append "console=ttyS0 root=host0 rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro init=$top/tools/vm/init panic=-1 quiet loglevel=1 cgfw.cmd=$run/cmd cgfw.dir=$PWD$systemd$nokaslr" \
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=root,mount_tag=host0 \
	-nic none < /dev/null 2>&1 | stdbuf -oL tr -d '\r' | tee "$out" |
	grep --line-buffered -v '^cgfw-vm-exit: '
status=$(sed -n 's/^cgfw-vm-exit: \([0-9]*\)$/\1/p' "$out" | tail -1)
if [ -z "$status" ]; then
	echo "vm: the guest gave no exit status (timeout ${timeout}s, or it did not boot)" >&2
	exit 1
fi
exit "$status"
