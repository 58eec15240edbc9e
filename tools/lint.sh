#!/bin/bash
# make lint, and the checks of it that run in make check (--test, TAP):
#
#  1. the library's files depend on no file that depends on them: from
#     the symbols each object of the static archive defines and uses, the
#     file-level graph must have no cycle (tsort finds one if there is);
#  2. every global symbol of the static archive starts with cgfw_, so a
#     program that links it meets no clash;
#  3. nothing in the repository points outside it (the first design brief,
#     the material beside the checkout), the vendored-sources fallback
#     and the ClassBench lists that tools read when they are there aside;
#  4. make install DESTDIR=... installs a library that a program of its
#     own builds against (pkg-config) and runs with;
#  5. (make lint only) checkpatch --strict on the kernel series, and on
#     the userspace C with what does not apply to userspace left out.
#
#   tools/lint.sh [BUILD] [--test]
set -u
BUILD=${1:-build}
TEST=${2:-}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n $1"; shift; printf '# %s\n' "$@"; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. dependency order
if [ ! -f "$BUILD/libcgfw.a" ]; then
	skip "the library's files depend on none that depends on them" "no $BUILD/libcgfw.a (make first)"
else
	objs=$(find "$BUILD/userspace/lib" -name '*.o' | sort)
	for o in $objs; do
		f=${o#"$BUILD"/}
		nm --defined-only -g "$o" | awk -v f="${f%.o}.c" 'NF==3 {print $3, f}'
	done > "$work/defs"
	for o in $objs; do
		f=${o#"$BUILD"/}
		nm -u "$o" | awk -v f="${f%.o}.c" '{print $NF, f}'
	done > "$work/uses"
	# "user definer" for every symbol a file uses from another file
	join <(sort "$work/uses") <(sort "$work/defs") |
		awk '$2 != $3 {print $2, $3}' | sort -u > "$work/edges"
	if tsort "$work/edges" > /dev/null 2> "$work/loop"; then
		ok "the library's $(echo "$objs" | wc -l) files depend on none that depends on them ($(wc -l < "$work/edges") edges, from the symbols of the built objects)"
	else
		not_ok "the library's files depend on none that depends on them" \
			"$(sed 's/^tsort: //' "$work/loop")"
	fi

	# 2. symbol prefixes
	bad=$(nm -g --defined-only "$BUILD/libcgfw.a" | awk 'NF==3 {print $3}' |
		grep -v '^cgfw_' | sort -u | tr '\n' ' ')
	if [ -z "$bad" ]; then
		ok "every global symbol of libcgfw.a starts with cgfw_"
	else
		not_ok "every global symbol of libcgfw.a starts with cgfw_" "$bad"
	fi
fi

# 3. the repository stands alone
# (the pattern written so that it does not match itself)
out=$(git grep -n 'DESIGN[.]md\|[.][.][/]shared' -- . 2>/dev/null |
	grep -v 'vendor\|shared/classbench' || true)
if [ -z "$out" ]; then
	ok "nothing in the repository points outside it"
else
	not_ok "nothing in the repository points outside it" "$out"
fi

# 4. installed, a program builds against it
if [ ! -f "$BUILD/libcgfw.a" ]; then
	skip "make install gives a library a program builds against" "nothing built"
elif ! make --no-print-directory -s install BUILD="$BUILD" \
		DESTDIR="$work/root" PREFIX=/usr > "$work/install.log" 2>&1; then
	not_ok "make install DESTDIR=... works" "$(tail -5 "$work/install.log")"
else
	cat > "$work/prog.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cgfw/cgfw.h>

int main(void)
{
	struct cgfw_ruleset *rs = NULL;
	struct cgfw_ctx *ctx;
	const char *bad = "table ip t { }\n";

	if (cgfw_ctx__new(&ctx, NULL))
		return 1;
	/* bad input is an error with its place, and nothing else happens */
	if (!cgfw_ruleset__compile(ctx, "x.nft", bad, strlen(bad), NULL,
				   &rs) || errno != EINVAL ||
	    !strstr(cgfw_ctx__error(ctx), "x.nft:1:7"))
		return 2;
	printf("libcgfw %s\n", cgfw_version());
	cgfw_ctx__free(ctx);
	return 0;
}
EOF
	export PKG_CONFIG_SYSROOT_DIR="$work/root"
	export PKG_CONFIG_PATH="$work/root/usr/lib/pkgconfig"
	if ! cc -o "$work/prog" "$work/prog.c" $(pkg-config --cflags libcgfw) \
		$(pkg-config --libs libcgfw) > "$work/cc.log" 2>&1; then
		not_ok "a program builds against the installed header and libcgfw.pc" \
			"$(cat "$work/cc.log")"
	elif ! out=$(LD_LIBRARY_PATH="$work/root/usr/lib" "$work/prog" 2>&1) ||
	     [ "$out" != "libcgfw $(sed -n 's/^#define CGFW_VERSION "\(.*\)"/\1/p' userspace/include/cgfw/cgfw.h)" ]; then
		not_ok "a program built against the installed libcgfw runs" "$out"
	elif ! ldd "$work/root/usr/sbin/cgfw" | grep -q 'libcgfw.so.0' ||
	     ! LD_LIBRARY_PATH="$work/root/usr/lib" "$work/root/usr/sbin/cgfw" --version |
		grep -q "^cgfw $(sed -n 's/^#define CGFW_VERSION "\(.*\)"/\1/p' userspace/include/cgfw/cgfw.h)"; then
		not_ok "the installed cgfw links the shared library" \
			"$(ldd "$work/root/usr/sbin/cgfw")"
	else
		ok "make install DESTDIR=... installs cgfw (linking libcgfw.so.0), the header, libcgfw.pc and the man page; a program builds against them and runs"
	fi
	if [ "$(stat -c %a "$work/root/etc/cgfw" 2>/dev/null)" = 700 ] &&
	   [ -f "$work/root/etc/cgfw/web.nft.example" ] &&
	   [ -z "$(find "$work/root/etc/cgfw" -name '*.nft')" ]; then
		ok "make install makes /etc/cgfw root's alone, with an example the daemon does not read"
	else
		not_ok "make install makes /etc/cgfw root's alone, with an example the daemon does not read" \
			"$(ls -la "$work/root/etc/cgfw" 2>&1)"
	fi
	# the administrator's rules stay; with PURGE=1 nothing else does
	echo 'table cgroup mine { }' > "$work/root/etc/cgfw/mine.nft"
	make --no-print-directory -s uninstall BUILD="$BUILD" \
		DESTDIR="$work/root" PREFIX=/usr PURGE=1 > "$work/un.log" 2>&1
	left=$(cd "$work/root" && find . -type f)
	if [ "$left" = ./etc/cgfw/mine.nft ]; then
		ok "make uninstall PURGE=1 removes what make install put there, and leaves the administrator's rules"
	else
		not_ok "make uninstall PURGE=1 removes what make install put there, and leaves the administrator's rules" \
			"left: $left" "$(cat "$work/un.log")"
	fi
fi

# 4b. the patched nft installs apart from Debian's library, and goes away
if [ ! -x "$BUILD/nft/sbin/nft" ]; then
	skip "make install-nft keeps Debian's libnftables the one other programs load" \
		"the patched nft is not built ($BUILD/nft; make nft)"
else
	nroot=$work/nftroot
	mkdir -p "$nroot"
	make --no-print-directory -s install-nft BUILD="$BUILD" \
		DESTDIR="$nroot" > "$work/nft-install.log" 2>&1
	lib=$(LD_DEBUG=libs "$nroot/usr/local/sbin/nft" --version 2>&1 |
	      sed -n 's/.*calling init: \(.*libnftables.so.1\)$/\1/p')
	shadow=$(find "$nroot/usr/local/lib" -maxdepth 1 -name 'libnftables*')
	if [ -z "$shadow" ] && [[ "$lib" == "$nroot/usr/local/lib/cgfw-nft/"* ]]; then
		ok "make install-nft: nft loads its own library from lib/cgfw-nft, and nothing is put where ld.so looks for every program"
	else
		not_ok "make install-nft: nft loads its own library from lib/cgfw-nft, and nothing is put where ld.so looks for every program" \
			"nft loaded: $lib" "in lib/: $shadow" "$(tail -5 "$work/nft-install.log")"
	fi
	make --no-print-directory -s uninstall-nft BUILD="$BUILD" \
		DESTDIR="$nroot" > "$work/nft-un.log" 2>&1
	left=$(cd "$nroot" && find . -type f -o -type l)
	# another nft in its place is not ours to remove
	echo '#!/bin/sh' > "$nroot/usr/local/sbin/nft"
	make --no-print-directory -s uninstall-nft BUILD="$BUILD" \
		DESTDIR="$nroot" >> "$work/nft-un.log" 2>&1
	if [ -z "$left" ] && [ -f "$nroot/usr/local/sbin/nft" ]; then
		ok "make uninstall-nft removes what install-nft put there, and leaves another nft alone"
	else
		not_ok "make uninstall-nft removes what install-nft put there, and leaves another nft alone" \
			"left: $left" "$(cat "$work/nft-un.log")"
	fi
fi

if [ "$TEST" = --test ]; then
	exit $fail
fi

# 5. checkpatch
cp=$BUILD/checkpatch/scripts/checkpatch.pl
if [ ! -x "$cp" ]; then
	mkdir -p "$BUILD/checkpatch"
	tar -xJf /usr/src/linux-source-6.12.tar.xz -C "$BUILD/checkpatch" \
		--strip-components=1 linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch 2>/dev/null
fi
if [ ! -x "$cp" ]; then
	skip "checkpatch" "no /usr/src/linux-source-6.12.tar.xz (make deps)"
else
	# in a kernel tree (what make kernel unpacked): errors fail; the
	# warnings and checks left are explained in the commit messages
	src=$(ls -d /var/cache/cgfw-kernel/src-*/ 2>/dev/null | head -1)
	if [ -z "$src" ]; then
		skip "checkpatch --strict: the kernel series" "no kernel tree unpacked (make kernel)"
	else
		out=$(cd "$src" && for p in $(cat "$top/kernel-patches/series"); do
			perl scripts/checkpatch.pl --strict -q --terse \
				"$top/kernel-patches/$p"; done 2>&1 | grep ERROR || true)
		if [ -z "$out" ]; then
			ok "checkpatch --strict: the kernel series has no errors"
		else
			not_ok "checkpatch --strict: the kernel series" "$out"
		fi
	fi
	# what is kernel-only: kernel types, kernel helpers, the SPDX form of
	# .h files, libbpf's own names and the anonymous size_t :0 of options
	ignore=PREFER_KERNEL_TYPES,CAMELCASE,LONG_LINE_STRING,SSCANF_TO_KSTRTO
	ignore=$ignore,STRCPY,BIT_MACRO,PREFER_FALLTHROUGH,EMBEDDED_FUNCTION_NAME
	ignore=$ignore,MACRO_ARG_REUSE,MACRO_ARG_PRECEDENCE,SPDX_LICENSE_TAG
	ignore=$ignore,PREFER_DEFINED_ATTRIBUTE_MACRO,NEW_TYPEDEFS,SPACING
	ignore=$ignore,FILE_PATH_CHANGES,COMMIT_MESSAGE,LINE_SPACING
	out=$("$cp" --no-tree --strict -f --terse --ignore "$ignore" \
		$(git ls-files 'userspace/*.[ch]') 2>&1 |
		grep -E 'ERROR|WARNING' || true)
	if [ -z "$out" ]; then
		ok "checkpatch --strict: userspace has no errors or warnings (kernel-only checks left out)"
	else
		not_ok "checkpatch --strict: userspace" "$out"
	fi
fi
exit $fail
