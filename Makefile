# cgfw: nftables rules for a cgroup. One entry point; see README.rst.
#
#   make deps     install the Debian packages the build and tests use
#   make          build libcgfw, the cgfw command and the tests
#   make check    all tests, here and in the patched kernel under QEMU;
#                 ends with "N passed, N failed, N skipped"
#   make demo     a policy on a throwaway cgroup, with real traffic
#   make bench    benchmarks (not part of check)
#   make kernel   the 6.12 guest kernel (cached outside the checkout)
#   make vm-check the tests inside it, under QEMU (check runs them too)
#   make vm-check-debug  the same in the lockdep + KASAN kernel
#   make vm-bench the benchmarks inside it (the native family too)
#   make nft      nft and libnftables with the cgroup family, in build/nft
#                 (nft-extension/nft.mk: install-nft, nft-check, nft-check-full)

SHELL := /bin/bash
BUILD ?= build
CC ?= gcc
V ?= 0

PKGS := libnftables libnftnl libmnl libbpf libelf
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes \
	-Wstrict-prototypes -Wformat=2 -Wno-format-nonliteral
ALL_CFLAGS = -std=gnu11 $(WARN) -D_GNU_SOURCE -Iuserspace/include \
	$(PKG_CFLAGS) $(CFLAGS) -MMD -MP

ifeq ($(V),0)
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2)
else
Q :=
msg = @true
endif

# Debian packages: what the build, the tests and the demo use.
DEB_PKGS := gcc make pkg-config libnftnl-dev libmnl-dev libnftables-dev \
	nftables libbpf-dev libelf-dev bpftool iproute2 linux-source-6.12 \
	xz-utils python3 python3-docutils util-linux procps coreutils

LIB_SRCS := $(wildcard userspace/lib/*.c userspace/lib/bpf/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB_A := $(BUILD)/libcgfw.a
LIB_SO := $(BUILD)/libcgfw.so.0
CGFW := $(BUILD)/cgfw
TRAFFIC := $(BUILD)/cgfw-traffic

KSRC_TAR := /usr/src/linux-source-6.12.tar.xz
KSFT := $(BUILD)/ksft
KSFT_H := $(KSFT)/kselftest_harness.h
# what the test programs and the benchmark share
PROBE_H := selftests/netprobe.h selftests/cgfwcmd.h

TEST_PROGS := $(BUILD)/tests/test_rewrite $(BUILD)/tests/cgfw_selftest \
	$(BUILD)/tests/difftest $(BUILD)/tests/testrun \
	$(BUILD)/tests/nft_cgroup_skb

.PHONY: all deps check check-run demo demo-run bench bench-run kernel vm-check \
	vm-check-debug vm-bench vm-deps \
	clean docs lint

all: $(CGFW) $(LIB_SO) $(TRAFFIC) $(TEST_PROGS) docs

deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing" $$missing; \
		if [ "$$(id -u)" != 0 ]; then \
			echo "make deps: run as root to install them" >&2; exit 1; fi; \
		apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			$$missing >/dev/null || exit 1; \
	fi

# The public targets install what is missing, then build in a fresh make
# so that pkg-config sees the packages just installed.
check: deps vm-deps
	$(Q)$(MAKE) --no-print-directory check-run

demo: deps
	$(Q)$(MAKE) --no-print-directory demo-run

check-run: all
	$(Q)tools/check.sh $(BUILD)

demo-run: $(CGFW) $(TRAFFIC)
	$(Q)tools/demo.sh $(BUILD)

bench: deps
	$(Q)$(MAKE) --no-print-directory bench-run

# Not part of check: timings are compared within one run (docs/benchmarks.rst).
bench-run: $(CGFW) $(BUILD)/bench/cgfw_bench
	$(Q)bench/run.sh $(BUILD)

$(BUILD)/bench/cgfw_bench: bench/cgfw_bench.c $(PROBE_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(PKG_LIBS)

# The guest kernel and the VM: not part of check yet (docs/status.rst).
VM_DEB_PKGS := flex bison bc libssl-dev cpio ccache qemu-system-x86 \
	xz-utils linux-source-6.12

vm-deps:
	@missing=$$(for p in $(VM_DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "make vm-deps: installing" $$missing; \
		apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			$$missing >/dev/null || exit 1; \
	fi

# Debian's 6.12 with kernel-patches/ (the series is empty so far), cached
# outside the checkout in /var/cache/cgfw-kernel.
kernel: vm-deps
	$(Q)tools/vm/build-kernel.sh

# The project's tests and the series' selftest inside that kernel, under
# QEMU (TCG); make check runs them too, after the tests on this machine.
vm-check: deps vm-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/vm/run.sh -t 3600 tools/vm/guest-tests.sh $(BUILD)

# The same in the kernel built with lockdep and KASAN (kernel-patches/
# config-debug): not part of check, its first build takes about an hour.
vm-check-debug: deps vm-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/vm/run.sh -t 5400 -k "$$(tools/vm/build-kernel.sh debug)" \
		tools/vm/guest-tests.sh $(BUILD)

# The benchmarks inside the patched kernel, where the native family is one
# more configuration; results printed (the guest cannot write the checkout).
vm-bench: deps vm-deps
	$(Q)$(MAKE) --no-print-directory $(CGFW) $(BUILD)/bench/cgfw_bench
	$(Q)tools/vm/run.sh -t 3600 BENCH_OUT=/tmp/bench BENCH_RULES='"1 2048"' \
		bench/run.sh $(BUILD)

$(BUILD)/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Iselftests -fPIC -fvisibility=hidden -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS) userspace/lib/libcgfw.map
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libcgfw.so.0 \
		-Wl,--version-script=userspace/lib/libcgfw.map \
		-o $@ $(LIB_OBJS) $(PKG_LIBS)

$(CGFW): $(BUILD)/userspace/cli/main.o $(LIB_A)
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $^ $(PKG_LIBS)

$(TRAFFIC): $(BUILD)/tools/traffic.o
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $^

# kselftest_harness.h comes from the kernel source package, not from the tree.
$(KSFT_H):
	$(call msg,EXTRACT,$(KSFT))
	@mkdir -p $(KSFT)
	$(Q)tar -xJf $(KSRC_TAR) -C $(KSFT) --strip-components=4 \
		linux-source-6.12/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.12/tools/testing/selftests/kselftest.h

TEST_CFLAGS = $(ALL_CFLAGS) -I$(KSFT) -Iuserspace/lib -Iselftests -Wno-unused-parameter \
	-Wno-missing-prototypes -Wno-shadow -Wno-format-truncation -Wno-sign-compare

$(BUILD)/tests/test_rewrite: userspace/tests/test_rewrite.c $(LIB_A) $(KSFT_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(LIB_A) $(PKG_LIBS)

$(BUILD)/tests/cgfw_selftest: selftests/cgfw_selftest.c $(PROBE_H) $(KSFT_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $<

$(BUILD)/tests/difftest: selftests/difftest.c $(PROBE_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -Wno-unused-result -o $@ $<

# The kernel series' selftest, built from the patch that adds it to the
# kernel tree (tools/patch-file.sh): one source, no copy.
KSELFTEST := tools/testing/selftests/net/netfilter/nft_cgroup_skb.c
KPATCHES := kernel-patches/series $(wildcard kernel-patches/*.patch)
MNL_CFLAGS = $(shell pkg-config --cflags libmnl 2>/dev/null)
MNL_LIBS = $(shell pkg-config --libs libmnl 2>/dev/null)

$(KSFT)/net/netfilter/nft_cgroup_skb.c: $(KPATCHES) tools/patch-file.sh
	$(call msg,EXTRACT,$@)
	@mkdir -p $(dir $@)
	$(Q)tools/patch-file.sh $(KSELFTEST) > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/nft_cgroup_skb: $(KSFT)/net/netfilter/nft_cgroup_skb.c $(KSFT_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -Wall -Werror $(MNL_CFLAGS) -o $@ $< $(MNL_LIBS)

$(BUILD)/tests/testrun: selftests/testrun.c $(PROBE_H) $(KSFT_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(PKG_LIBS)

# Man page: rendered from its rst source when docutils is there.
docs: $(BUILD)/docs/cgfw.8

$(BUILD)/docs/cgfw.8: docs/cgfw.8.rst
	$(call msg,RST2MAN,$@)
	@mkdir -p $(dir $@)
	$(Q)if command -v rst2man >/dev/null; then rst2man --halt=warning $< $@; \
	else echo "rst2man missing (python3-docutils): man page not built" >&2; fi

lint:
	$(Q)tools/check-headers.sh

clean:
	rm -rf $(BUILD)

# ---- nft with the cgroup family: nft-extension/nft.mk ----------------------
include nft-extension/nft.mk
# ---- end of nft-extension ------------------------------------------------

-include $(LIB_OBJS:.o=.d) $(BUILD)/userspace/cli/main.d $(BUILD)/tools/traffic.d
