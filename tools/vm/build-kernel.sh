#!/bin/bash
# make kernel: Debian's linux-source-6.12, the series in kernel-patches/,
# a small config made for the guest (kernel-patches/config over
# allnoconfig: tools/vm/kconfig.sh, docs/guest-kernel.rst), built with
# ccache in a cache directory outside the checkout. Rebuilt only when the
# tarball, the series or the config change.
#   tools/vm/build-kernel.sh [plain|debug|unpatched]   prints the bzImage
# plain: the guest of make check; debug: with kernel-patches/config-debug
# (lockdep, KASAN, kmemleak); unpatched: without the series (make
# vm-bench's baseline). CGFW_KERNEL_TREE=DIR builds that tree instead (a
# git tree to develop the series in), always running make.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${CGFW_KERNEL_CACHE:-/var/cache/cgfw-kernel}
tarball=/usr/src/linux-source-6.12.tar.xz
flavour=${1:-plain}

mkdir -p "$cache"
fragments=("$top/kernel-patches/config")
series=$(cat "$top/kernel-patches/series")
case $flavour in
plain) ;;
debug) fragments+=("$top/kernel-patches/config-debug") ;;
unpatched)
	series=
	grep -v '^CONFIG_NF_TABLES_CGROUP=' "$top/kernel-patches/config" \
		> "$cache/config-unpatched.tmp"
	fragments=("$cache/config-unpatched-$(sha256sum < \
		"$cache/config-unpatched.tmp" | cut -c1-16)")
	mv "$cache/config-unpatched.tmp" "${fragments[0]}" ;;
*) echo "usage: $0 [plain|debug|unpatched]" >&2; exit 2 ;;
esac

# the source tree is keyed by the tarball and the series, its build
# directory by the config: a new config reuses the unpacked tree
srckey=$( { stat -c '%s %Y' "$tarball"; echo "$series";
	    for p in $series; do cat "$top/kernel-patches/$p"; done; } |
	 sha256sum | cut -c1-16)
cfgkey=$(cat "$top/tools/vm/kconfig.sh" "${fragments[@]}" | sha256sum |
	 cut -c1-12)
src=${CGFW_KERNEL_TREE:-$cache/src-$srckey}
# The build directory is a subdirectory of the source tree: kbuild then
# names sources "../net/...", the same in every tree, so ccache hits across
# trees (a changed patch recompiles only what it changes).
out=$src/build-$flavour-$cfgkey
image=$out/arch/x86/boot/bzImage
if [ -z "${CGFW_KERNEL_TREE:-}" ] && [ -f "$image" ]; then
	echo "$image"
	exit 0
fi

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
# this flavour's builds of older configs are not used again
for old in "$src/build-$flavour"-*; do
	[ "$old" = "$out" ] || rm -rf "$old"
done

"$top/tools/vm/kconfig.sh" "$src" "$out" "${fragments[@]}"
export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
echo "kernel: building $flavour in $out ($(grep -c '=y$' "$out/.config") options)" >&2
start=$SECONDS
make -C "$src" O="$out" -s -j"$(nproc)" CC="ccache gcc" bzImage >&2
echo "kernel: built in $((SECONDS - start)) s" >&2
echo "$image"
