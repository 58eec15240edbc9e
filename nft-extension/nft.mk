# nft with the cgroup family (docs/nft-cgroup.rst): libnftnl 1.2.4 and
# nftables 1.0.6 with the patches in nft-extension/, built and staged in
# $(BUILD)/nft by nft-extension/build.sh. Included by the Makefile.
#
#   make nft             $(BUILD)/nft/sbin/nft, $(BUILD)/nft/lib/libnftables.so.1
#   make install-nft     both (and the header, the .pc) in $(NFT_PREFIX)/lib/
#                        cgfw-nft, the command linked as $(NFT_PREFIX)/sbin/nft
#   make uninstall-nft   removes them
#   make nft-check       nftables' own suites for the family and a regression
#                        subset, in the patched kernel (make check runs them)
#   make nft-check-full  the same with every .t of cgroup/, inet/, any/ and
#                        the whole tests/shell and tests/monitor suites
#
# The upstream tarballs come from $(NFT_SOURCES) if set (see build.sh).

NFT_DEB_PKGS := autoconf automake libtool bison flex libgmp-dev libedit-dev \
	libjansson-dev pkg-config patch python3
DEB_PKGS += $(NFT_DEB_PKGS)

NFT_PREFIX ?= /usr/local
NFT_BIN := $(BUILD)/nft/sbin/nft
export NFT_SOURCES

.PHONY: nft nft-build install-nft uninstall-nft nft-check nft-check-full

nft: deps
	$(Q)$(MAKE) --no-print-directory nft-build

# without deps: for the targets that ran deps already
nft-build:
	$(Q)nft-extension/build.sh $(BUILD)

# make check (tools/check.sh) and vm-check build it too; without the
# upstream sources (build.sh: exit status 3) its tests skip and say why
vm-check: nft-build-if-sources

.PHONY: nft-build-if-sources
nft-build-if-sources:
	$(Q)nft-extension/build.sh $(BUILD) || [ $$? -eq 3 ]

# nft and its library go to a directory of their own, $(NFT_DIR), with the
# tree build.sh staged (sbin/, lib/, include/): nft finds its library there
# through its RUNPATH ($ORIGIN/../lib; ld.so takes $ORIGIN from the
# binary's real path), and no other program does, so Debian's
# libnftables.so.1 stays the one every other program loads. The command
# is a link, $(NFT_PREFIX)/sbin/nft, ahead of /usr/sbin/nft in root's
# PATH. uninstall-nft removes both, the link only if it is this one.
NFT_DIR = $(NFT_PREFIX)/lib/cgfw-nft
NFT_LINK = $(DESTDIR)$(NFT_PREFIX)/sbin/nft

install-nft: nft-build
	install -d $(DESTDIR)$(NFT_DIR)/sbin $(DESTDIR)$(NFT_DIR)/lib/pkgconfig \
		$(DESTDIR)$(NFT_DIR)/include/nftables $(DESTDIR)$(NFT_PREFIX)/sbin
	install -m 755 $(BUILD)/nft/sbin/nft $(DESTDIR)$(NFT_DIR)/sbin/nft
	cp -P $(BUILD)/nft/lib/libnftables.so* $(DESTDIR)$(NFT_DIR)/lib/
	sed 's|^prefix=.*|prefix=$(NFT_DIR)|' \
		$(BUILD)/nft/lib/pkgconfig/libnftables.pc \
		> $(DESTDIR)$(NFT_DIR)/lib/pkgconfig/libnftables.pc
	install -m 644 $(BUILD)/nft/include/nftables/libnftables.h \
		$(DESTDIR)$(NFT_DIR)/include/nftables/
	ln -sfn ../lib/cgfw-nft/sbin/nft $(NFT_LINK)

uninstall-nft:
	if [ "$$(readlink $(NFT_LINK))" = ../lib/cgfw-nft/sbin/nft ]; then \
		rm -f $(NFT_LINK); fi
	rm -rf $(DESTDIR)$(NFT_DIR)

nft-check: deps vm-deps
	$(Q)$(MAKE) --no-print-directory nft-build
	$(Q)tools/vm/run.sh -t 3600 nft-extension/run-suites.sh $(BUILD)

nft-check-full: deps vm-deps
	$(Q)$(MAKE) --no-print-directory nft-build
	$(Q)tools/vm/run.sh -t 7200 nft-extension/run-suites.sh -f $(BUILD)
