#!/bin/bash
# make nft: libnftnl 1.2.4 and nftables 1.0.6 (what Debian bookworm ships)
# with the patches in nft-extension/libnftnl and nft-extension/nftables,
# built in BUILD/nft-build and staged in BUILD/nft: sbin/nft, lib/
# libnftables.so.1 (libnftnl linked in statically), include/, lib/pkgconfig.
# The nft binary finds its library through RUNPATH $ORIGIN/../lib, so the
# staged tree runs where it is and after `make install-nft` (/usr/local).
# The system's nft and libraries are not touched.
#   nft-extension/build.sh [BUILD]
#
# The upstream tarballs are looked for in $NFT_SOURCES, then in
# ../shared/vendor next to the checkout, then fetched with
# `apt-get source --download-only` (needs deb-src lines); their sha256 is
# checked before they are unpacked. Nothing is rebuilt when the tarballs,
# the patches and this script are unchanged.
set -euo pipefail
# a make above us (make install-nft DESTDIR=...) must not reach the
# upstream builds: their own make install would stage into its DESTDIR
unset DESTDIR MAKEFLAGS MFLAGS MAKELEVEL
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
ext=$top/nft-extension
work=$BUILD/nft-build
out=$BUILD/nft
jobs=${NFT_JOBS:-$(nproc)}

# name, version, sha256 of the upstream tarball (git archive of the tag)
LIBNFTNL=(libnftnl 1.2.4 cbc74a8ca610dd686599d941cb83b087c70142bfb55d672671ce9df817e9474f)
NFTABLES=(nftables 1.0.6 546ce2df260a94dc05f023b55479236027c24a3f92912790a615bb29b0e8336e)

log() { echo "nft: $*" >&2; }
die() { echo "nft: $*" >&2; exit $((${NFT_MISSING:-0} ? 3 : 1)); }

# Without the sources: exit status 3, and the reason in BUILD/nft.missing
# for the tests that then skip (make check goes on without nft).
need_tarballs() {
	mkdir -p "$BUILD"
	echo "$1" > "$BUILD/nft.missing"
	NFT_MISSING=1 die "$1
  the build needs the upstream sources of libnftnl ${LIBNFTNL[1]} and nftables ${NFTABLES[1]}:
    ${LIBNFTNL[0]}-${LIBNFTNL[1]}.tar.xz  sha256 ${LIBNFTNL[2]}
    ${NFTABLES[0]}-${NFTABLES[1]}.tar.xz  sha256 ${NFTABLES[2]}
  put both in a directory and run: make nft NFT_SOURCES=/that/directory
  (or add deb-src lines for bookworm to the apt sources, for apt-get source)"
}

# what the build depends on, as one key
key=$( { echo "${LIBNFTNL[*]} ${NFTABLES[*]}";
	 cat "$ext/build.sh" "$ext"/libnftnl/*.patch "$ext"/nftables/*.patch; } |
	sha256sum | cut -c1-16)
if [ -x "$out/sbin/nft" ] && [ "$(cat "$out/.key" 2>/dev/null)" = "$key" ]; then
	exit 0
fi

# Sets $tarball for package $1 version $2 sha256 $3, or returns 1.
find_tarball() {
	local name=$1 version=$2 sum=$3 dir f
	for dir in ${NFT_SOURCES:+"$NFT_SOURCES"} "$top/../shared/vendor"; do
		f=$dir/$name-$version.tar.xz
		[ -f "$f" ] || continue
		if ! echo "$sum  $f" | sha256sum -c --quiet - >/dev/null 2>&1; then
			need_tarballs "$f: wrong sha256 (want $sum)"
		fi
		tarball=$f
		return 0
	done
	return 1
}

# Debian's source package: the orig tarball is the upstream release, its
# sha256 is the one in the .dsc that apt verified against the archive's
# signed index; checked again here before unpacking.
apt_tarball() {
	local name=$1 version=$2 dsc f sum
	mkdir -p "$work/apt"
	f=$(ls "$work/apt/${name}_$version".orig.tar.* 2>/dev/null | head -1)
	if [ -z "$f" ]; then
		command -v apt-get >/dev/null || return 1
		log "fetching the source package $name with apt-get source"
		(cd "$work/apt" && apt-get source -qq --download-only "$name" >&2) ||
			return 1
		f=$(ls "$work/apt/${name}_$version".orig.tar.* 2>/dev/null | head -1)
		[ -n "$f" ] || return 1
	fi
	dsc=$(ls "$work/apt/${name}_$version"-*.dsc | head -1)
	sum=$(awk -v f="$(basename "$f")" '/^Checksums-Sha256:/ { s = 1; next }
		/^[^ ]/ { s = 0 } s && $3 == f { print $1 }' "$dsc")
	[ -n "$sum" ] || need_tarballs "$dsc lists no sha256 for $(basename "$f")"
	echo "$sum  $f" | sha256sum -c --quiet - >/dev/null 2>&1 ||
		need_tarballs "$f: wrong sha256 (want $sum from $dsc)"
	tarball=$f
}

# unpack $1 (tarball) for package $2-$3 into $work/$2-$3, patched
unpack() {
	local tarball=$1 dir=$work/$2-$3 p
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	tar -xf "$tarball" -C "$dir.tmp" --strip-components=1
	for p in "$ext/$2"/*.patch; do
		patch -d "$dir.tmp" -p1 --batch --forward --quiet < "$p" ||
			die "$(basename "$p") does not apply to $(basename "$tarball")"
	done
	mv "$dir.tmp" "$dir"
}

mkdir -p "$work"
for pkg in LIBNFTNL NFTABLES; do
	declare -n P=$pkg
	tarball=
	find_tarball "${P[@]}" || apt_tarball "${P[0]}" "${P[1]}" ||
		need_tarballs "${P[0]}-${P[1]}.tar.xz not found in \$NFT_SOURCES (${NFT_SOURCES:-unset}) nor in $top/../shared/vendor, and apt-get source ${P[0]} did not give it"
	log "${P[0]} ${P[1]} from $tarball"
	unpack "$tarball" "${P[0]}" "${P[1]}"
	unset -n P
done

start=$SECONDS
q() {	# run quietly, show the log on failure
	local logf=$work/build.log
	"$@" >>"$logf" 2>&1 || { tail -40 "$logf" >&2; die "failed: $*"; }
}
: > "$work/build.log"

log "building libnftnl (static, for libnftables)"
cd "$work/libnftnl-${LIBNFTNL[1]}"
q autoreconf -fi
q ./configure --prefix="$work/libnftnl-inst" --enable-static \
	--disable-shared --with-pic
q make -j"$jobs"
q make install
q make -j"$jobs" -C tests nft-chain-test

log "building nftables"
cd "$work/nftables-${NFTABLES[1]}"
q autoreconf -fi
# RUNPATH $ORIGIN/../lib: sbin/nft finds lib/libnftables.so.1 of its tree
q env PKG_CONFIG_PATH="$work/libnftnl-inst/lib/pkgconfig" ./configure \
	--prefix=/usr/local --sysconfdir=/etc --disable-man-doc --with-json \
	--with-cli=editline --disable-python \
	LDFLAGS='-Wl,-rpath,\$$ORIGIN/../lib'
q make -j"$jobs"
rm -rf "$work/stage"
q make install DESTDIR="$work/stage"

rm -rf "$out"
mkdir -p "$out"
cp -a "$work/stage/usr/local/sbin" "$work/stage/usr/local/lib" \
	"$work/stage/usr/local/include" "$out/"
rm -f "$out"/lib/*.la
sed -i "s|^prefix=.*|prefix=/usr/local|" "$out/lib/pkgconfig/libnftables.pc"
"$out/sbin/nft" --version >/dev/null || die "the built nft does not run"
echo "$key" > "$out/.key"
rm -f "$BUILD/nft.missing"
log "built $out/sbin/nft ($("$out/sbin/nft" --version)) in $((SECONDS - start)) s"
