# nft with the cgroup family (docs/nft-cgroup.rst): libnftnl 1.2.4 and
# nftables 1.0.6 with the patches in nft-extension/, built and staged in
# $(BUILD)/nft by nft-extension/build.sh. Included by the Makefile.
#
#   make nft             $(BUILD)/nft/sbin/nft, $(BUILD)/nft/lib/libnftables.so.1
#   make install-nft     both (and the header, the .pc) under $(NFT_PREFIX)
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

.PHONY: nft nft-build install-nft nft-check nft-check-full

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

install-nft: nft
	install -d $(DESTDIR)$(NFT_PREFIX)/sbin $(DESTDIR)$(NFT_PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(NFT_PREFIX)/include/nftables
	install -m 755 $(BUILD)/nft/sbin/nft $(DESTDIR)$(NFT_PREFIX)/sbin/nft
	cp -P $(BUILD)/nft/lib/libnftables.so* $(DESTDIR)$(NFT_PREFIX)/lib/
	install -m 644 $(BUILD)/nft/lib/pkgconfig/libnftables.pc \
		$(DESTDIR)$(NFT_PREFIX)/lib/pkgconfig/
	install -m 644 $(BUILD)/nft/include/nftables/libnftables.h \
		$(DESTDIR)$(NFT_PREFIX)/include/nftables/
	@if [ -z "$(DESTDIR)" ]; then ldconfig; fi

nft-check: deps vm-deps
	$(Q)$(MAKE) --no-print-directory nft-build
	$(Q)tools/vm/run.sh -t 3600 nft-extension/run-suites.sh $(BUILD)

nft-check-full: deps vm-deps
	$(Q)$(MAKE) --no-print-directory nft-build
	$(Q)tools/vm/run.sh -t 7200 nft-extension/run-suites.sh -f $(BUILD)
