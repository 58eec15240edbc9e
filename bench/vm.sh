#!/bin/bash
# make vm-bench: the benchmark in the guest kernels under QEMU, one boot at
# a time (never two guests at once), the CSVs taken from the console into
# OUT/KERNEL/, then the plots.
#   bench/vm.sh BUILD OUT [cgfw_bench options]
# The patched kernel runs the whole plan (VM_BENCH_ARGS, else a plan sized
# for TCG); the unpatched kernel (make kernel-unpatched), where it is
# built (tools/vm/build-kernel.sh unpatched: a few minutes with the
# patched kernel's ccache; VM_BENCH_NO_UNPATCHED=1 skips it), runs the hook
# group: "none" there against "none" in the patched
# kernel is what the series' static key costs when nothing is bound.
# A boot with systemd as PID 1 (tools/vm/run.sh -s) measures systemd's
# own firewall (VM_BENCH_NO_SYSTEMD=1 skips it).
# VM_BENCH_KEY_BOOTS=N more boots of each, alternating, with the hook
# group's cheapest rows only: the spread between boots.
# VM_BENCH_ICOUNT=SHIFT: the guest's clock counts its instructions
# (tools/vm/run.sh -i): "ns" are then guest instructions times 2^SHIFT,
# the same from run to run whatever the host's load.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-$BUILD/bench/vm}
shift 2 || shift $#
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
args=("$@")
# what needs the patched kernel, and the peers to compare it with in the
# same run; the host's run has every other path
[ ${#args[@]} -gt 0 ] || args=(--rounds 3 --secs 0.5 --rules 1,10,100,1000
	--sets 1,100,10000 --cgroups 1,10,100 --update 100000
	--paths prog-empty,bpf,nft-native,nft-emulated,both,nft-socket,nft-socket-vmap,systemd)

# one boot: KERNEL-IMAGE NAME [-s] cgfw_bench-options...
boot() {
	local image=$1 name=$2 dir=$OUT/$2 sd=
	shift 2
	[ "${1:-}" != -s ] || { sd=-s; shift; }
	mkdir -p "$dir"
	echo "vm-bench: $name ($image${sd:+, systemd as PID 1}): cgfw_bench $*" >&2
	"$top/tools/vm/run.sh" $sd ${VM_BENCH_ICOUNT:+-i "$VM_BENCH_ICOUNT"} \
		-t "${VM_BENCH_TIMEOUT:-14400}" -k "$image" \
		bench/guest.sh "$BUILD" "$@" > "$dir/console.log" 2>&1 &
	local pid=$!
	# the progress lines, as they come
	tail -n +1 -f "$dir/console.log" --pid=$pid 2>/dev/null |
		grep --line-buffered -E '^bench|^vm:|cgfw-vm:' >&2 || true
	wait $pid || { echo "vm-bench: $name: the guest failed (console: $dir/console.log)" >&2; return 1; }
	awk -v dir="$dir" '
		/^@@@ end$/ { f = ""; next }
		/^@@@ / { f = dir "/" substr($0, 5); printf "" > f; next }
		f != "" && /^@@ / { print substr($0, 4) > f; next }
		f != "" && /^@@$/ { print "" > f }' "$dir/console.log"
	[ -s "$dir/summary.csv" ] || { echo "vm-bench: $name: no results" >&2; return 1; }
	[ -z "${VM_BENCH_ICOUNT:-}" ] ||
		echo "icount: shift=$VM_BENCH_ICOUNT (a guest instruction is 2^$VM_BENCH_ICOUNT ns of the guest's clock)" >> "$dir/env.txt"
}

patched=$("$top/tools/vm/build-kernel.sh")
unpatched=
if [ -z "${VM_BENCH_NO_UNPATCHED:-}" ]; then
	unpatched=$("$top/tools/vm/build-kernel.sh" unpatched) || {
		echo "vm-bench: the unpatched kernel did not build: the static key rows are not measured" >&2
		unpatched=; }
fi
boot "$patched" patched "${args[@]}"
# systemd itself (IPAddressDeny= on real units), with systemd as PID 1,
# next to its re-creation and the bpf backend
[ -n "${VM_BENCH_NO_SYSTEMD:-}" ] || boot "$patched" systemd -s "${args[@]}" \
	--groups hook,sets,cgroups,update --paths prog-empty,bpf,systemd,systemd-unit
[ -z "$unpatched" ] || boot "$unpatched" unpatched "${args[@]}" --groups hook
key=(--groups hook --paths prog-empty,nft-emulated --rounds 5)
for i in $(seq 1 "${VM_BENCH_KEY_BOOTS:-0}"); do
	boot "$patched" "key-patched-$i" "${key[@]}"
	[ -z "$unpatched" ] || boot "$unpatched" "key-unpatched-$i" "${key[@]}"
done
for d in "$OUT"/*/; do
	[ -f "$d/summary.csv" ] && "$top/bench/plot.sh" "$d" || true
done
