#!/bin/bash
# Check the kernel series: scripts/checkpatch.pl --strict on each patch
# (the remaining warnings are justified in the commit messages), each
# patch building on its own (the directories the series touches, with the
# cgroup family on once it exists), and the whole series with
# CONFIG_NF_TABLES_CGROUP=n. Uses a git tree of the tarball in the kernel
# cache and ccache, like build-kernel.sh.
#   tools/vm/kernel-lint.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${CGFW_KERNEL_CACHE:-/var/cache/cgfw-kernel}
tarball=/usr/src/linux-source-6.12.tar.xz
src=$cache/lint
export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
G=(git -C "$src" -c user.name=lint -c user.email=lint@invalid)

if [ ! -d "$src/.git" ]; then
	echo "lint: unpacking $tarball" >&2
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	echo "/build-*/" > "$src/.git-exclude"
	"${G[@]}" init -q
	cp "$src/.git-exclude" "$src/.git/info/exclude"
	"${G[@]}" add -f -A . >/dev/null
	"${G[@]}" commit -q -m base
fi
"${G[@]}" reset -q --hard
"${G[@]}" clean -q -fdx -e build-lint
"${G[@]}" checkout -q "$("${G[@]}" rev-list --max-parents=0 HEAD)"

configure() {	# $1: the value of CONFIG_NF_TABLES_CGROUP
	local out=$src/build-lint
	# unchecked: before the series the tree has no NF_TABLES_CGROUP
	"$top/tools/vm/kconfig.sh" -n "$src" "$out" \
		"$top/kernel-patches/config" 2>/dev/null
	sed -i "s/^CONFIG_NF_TABLES_CGROUP=.*/CONFIG_NF_TABLES_CGROUP=$1/" \
		"$out/.config"
	make -C "$src" O="$out" -s olddefconfig
}

build() {	# the directories the series touches; a warning fails too
	local log
	log=$(make -C "$src" O="$src/build-lint" -s -j"$(nproc)" \
		CC="ccache gcc" kernel/cgroup/ net/core/ net/ipv4/ net/ipv6/ \
		net/netfilter/ 2>&1) || { echo "$log" | tail -20; return 1; }
	if echo "$log" | grep -q 'warning:'; then
		echo "$log" | grep -A3 'warning:' | head -20
		return 1
	fi
}

fail=0
configure y
n=0
for p in $(cat "$top/kernel-patches/series"); do
	n=$((n + 1))
	"${G[@]}" am -q --keep-cr "$top/kernel-patches/$p"
	echo "=== $p"
	if out=$(cd "$src" && perl scripts/checkpatch.pl --strict -q \
		 "$top/kernel-patches/$p" 2>&1); then :; fi
	echo "$out" | grep -E '^(ERROR|WARNING|CHECK)' | sort | uniq -c | \
		sed 's/^/  checkpatch: /' || true
	if echo "$out" | grep -q '^ERROR'; then
		echo "not ok $n checkpatch errors in $p"; fail=1
	fi
	make -C "$src" O="$src/build-lint" -s olddefconfig
	if build; then
		echo "ok $n $p builds"
	else
		echo "not ok $n $p does not build"; fail=1
	fi
done
echo "=== CONFIG_NF_TABLES_CGROUP=n"
configure n
if grep -q '^CONFIG_NETFILTER_CGROUP=y' "$src/build-lint/.config"; then
	echo "not ok NETFILTER_CGROUP is on without the family"; fail=1
elif build; then
	echo "ok the series builds with CONFIG_NF_TABLES_CGROUP=n"
else
	echo "not ok the series does not build with CONFIG_NF_TABLES_CGROUP=n"
	fail=1
fi
exit $fail
