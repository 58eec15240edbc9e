#!/bin/bash
# make kernel: Debian's linux-source-6.12, the series in kernel-patches/,
# the config fragments, built with ccache in a cache directory outside the
# checkout. Rebuilt only when the tarball, the series or the config change.
#   tools/vm/build-kernel.sh [debug]    prints the bzImage's path
# CGFW_KERNEL_TREE=DIR builds that tree instead (a git tree to develop the
# series in), always running make.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${CGFW_KERNEL_CACHE:-/var/cache/cgfw-kernel}
tarball=/usr/src/linux-source-6.12.tar.xz
flavour=${1:-plain}

fragments=("$top/kernel-patches/config")
[ "$flavour" = debug ] && fragments+=("$top/kernel-patches/config-debug")
series=$(cat "$top/kernel-patches/series")
if [ "$flavour" = unpatched ]; then
	series=
	mkdir -p "$cache"
	grep -v '^CONFIG_NF_TABLES_CGROUP=' "$top/kernel-patches/config" \
		> "$cache/config-unpatched.tmp"
	fragments=("$cache/config-unpatched-$(sha256sum < \
		"$cache/config-unpatched.tmp" | cut -c1-16)")
	mv "$cache/config-unpatched.tmp" "${fragments[0]}"
fi

# what the build depends on, as one key
key=$( { stat -c '%s %Y' "$tarball"; echo "$series";
	 for p in $series; do
		cat "$top/kernel-patches/$p"; done;
	 cat "${fragments[@]}"; } | sha256sum | cut -c1-16)
src=${CGFW_KERNEL_TREE:-$cache/src-$key}
# The build directory is a subdirectory of the source tree: kbuild then
# names sources "../net/...", the same in every tree, so ccache hits across
# trees (a changed patch recompiles only what it changes).
out=$src/build-$flavour
image=$out/arch/x86/boot/bzImage
if [ -z "${CGFW_KERNEL_TREE:-}" ] && [ -f "$image" ]; then
	echo "$image"
	exit 0
fi

mkdir -p "$cache"
if [ ! -d "$src" ]; then
	echo "kernel: unpacking $tarball" >&2
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$tarball" -C "$src.tmp" --strip-components=1
	for p in $series; do
		echo "kernel: applying $p" >&2
		patch -d "$src.tmp" -p1 --quiet < "$top/kernel-patches/$p"
	done
	mv "$src.tmp" "$src"
fi

mkdir -p "$out"
make -C "$src" O="$out" -s x86_64_defconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
	"$src/kernel/configs/kvm_guest.config" "${fragments[@]}" >&2
make -C "$src" O="$out" -s olddefconfig >&2
for f in "${fragments[@]}"; do
	# a symbol the tree does not know (a patch missing) is an error
	grep -E '^CONFIG_[A-Z0-9_]+=[ym]' "$f" | while IFS== read -r sym val; do
		grep -qx "$sym=$val" "$out/.config" || {
			echo "kernel: $sym=$val from $f is not in the .config" >&2
			exit 1; }
	done
done
export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
echo "kernel: building in $out (about 40 minutes the first time)" >&2
make -C "$src" O="$out" -s -j"$(nproc)" CC="ccache gcc" bzImage >&2
echo "$image"
