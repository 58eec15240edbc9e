# cgfw: nftables rules for a cgroup. One entry point; see README.rst.
#
#   make deps     install the Debian packages the build and tests use
#   make          build libcgfw, the cgfw command and the tests
#   make check    all tests, here and in the patched kernel under QEMU;
#                 ends with "N passed, N failed, N skipped"
#   make install  the command, libcgfw (shared and static), its header,
#                 libcgfw.pc and the man page (PREFIX, DESTDIR)
#   make lint     the library's dependency order, checkpatch on the series
#   make fuzz     the fuzzers for longer than check runs them (FUZZ_SECONDS)
#   make demo     a policy on a throwaway cgroup, with real traffic
#   make bench    benchmarks (not part of check)
#   make bench-classbench  ClassBench's own lists and traces on the bpf
#                 backend (CGFW_CLASSBENCH, CB_TRACE_ARGS)
#   make kernel   the 6.12 guest kernel (cached outside the checkout)
#   make vm-check the tests inside it, under QEMU (check runs them too)
#   make vm-check-debug  the same in the lockdep + KASAN kernel
#   make vm-bench the benchmarks inside it (the native family too), and
#                 in the same kernel without the series
#   make nft      nft and libnftables with the cgroup family, in build/nft
#                 (nft-extension/nft.mk: install-nft, nft-check, nft-check-full)

SHELL := /bin/bash
BUILD ?= build
CC ?= gcc
V ?= 0

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc

VERSION := $(shell sed -n 's/^\#define CGFW_VERSION "\(.*\)"/\1/p' \
	userspace/include/cgfw/cgfw.h)
SONAME := libcgfw.so.0

PKGS := libnftables libnftnl libmnl libbpf libelf
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# ClassBench's filter sets and traces, data for the tests and the
# benchmark that use them (they skip, saying so, where it is not there):
# the one place that names where they are kept beside the checkout
CGFW_CLASSBENCH ?= $(abspath ..)/shared/classbench
export CGFW_CLASSBENCH

CFLAGS ?= -O2 -g
LDFLAGS ?=
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
	xz-utils python3 python3-docutils util-linux procps coreutils \
	clang libclang-rt-14-dev iptables python3-matplotlib strace

LIB_SRCS := $(wildcard userspace/lib/*.c userspace/lib/*/*.c userspace/lib/*/*/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB_A := $(BUILD)/libcgfw.a
LIB_SO := $(BUILD)/libcgfw.so.$(VERSION)
CGFW := $(BUILD)/cgfw
CGFW_INSTALL := $(BUILD)/install/cgfw
TRAFFIC := $(BUILD)/cgfw-traffic

KSRC_TAR := /usr/src/linux-source-6.12.tar.xz
KSFT := $(BUILD)/ksft
KSFT_H := $(KSFT)/kselftest_harness.h
# what the test programs and the benchmark share
TEST_LIB := selftests/lib
PROBE_H := $(TEST_LIB)/netprobe.h $(TEST_LIB)/cgfwcmd.h $(TEST_LIB)/listjson.h \
	$(TEST_LIB)/bpfprog.h

UNIT_TESTS := $(patsubst selftests/unit/%.c,$(BUILD)/tests/%,\
	$(wildcard selftests/unit/*.c))
TEST_PROGS := $(UNIT_TESTS) $(BUILD)/tests/cgfw_selftest \
	$(BUILD)/tests/difftest $(BUILD)/tests/testrun \
	$(BUILD)/tests/nft_cgroup_skb

.PHONY: all deps check check-run demo demo-run bench bench-run \
	bench-classbench kernel \
	kernel-unpatched vm-check vm-check-debug vm-bench vm-deps clean docs lint \
	install uninstall fuzz

all: $(CGFW) $(CGFW_INSTALL) $(LIB_SO) $(LIB_A) $(TRAFFIC) $(TEST_PROGS) docs

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

# check.sh builds (all, and nft with the cgroup family) while the guest
# kernel builds beside it, then runs the stages in two lanes, one per
# core: the host's stages beside a guest, then the guest's other half
# (QEMU's TCG keeps a guest on one core). Each stage timed.
check-run:
	$(Q)tools/check.sh $(BUILD)

demo-run: $(CGFW) $(TRAFFIC)
	$(Q)tools/demo.sh $(BUILD)

bench: deps
	$(Q)$(MAKE) --no-print-directory bench-run

# Not part of check: timings are compared within one run (docs/benchmarks.rst).
# make bench QUICK=1: the short plan (under two minutes); BENCH_ARGS: more
# cgfw_bench options (--rounds, --groups, --paths, ...).
bench-run: $(CGFW) $(BUILD)/bench/cgfw_bench
	$(Q)bench/run.sh $(BUILD) $(if $(QUICK),--quick) $(BENCH_ARGS)

# The mixed rule shape is the ClassBench-style generator the classifier's
# tests use (selftests/lib/classbench.h).
BENCH_SRCS := $(wildcard bench/*.c)
$(BUILD)/bench/cgfw_bench: $(BENCH_SRCS) bench/bench.h $(PROBE_H) \
		$(TEST_LIB)/classbench.h
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -Ibench -o $@ $(BENCH_SRCS) $(LDFLAGS) \
		$(PKG_LIBS) -lm

# ClassBench's own lists and traces on the bpf backend: a packet's cost
# over one rule's, verdicts checked.
$(BUILD)/bench/cb_trace: bench/classbench/cb_trace.c $(PROBE_H) \
		$(TEST_LIB)/classbench.h
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -Wno-unused-result -o $@ $< $(LDFLAGS) \
		$(PKG_LIBS)

bench-classbench: $(CGFW) $(BUILD)/bench/cb_trace
	$(Q)$(BUILD)/bench/cb_trace $(CB_TRACE_ARGS)

# The guest kernel and the VM.
VM_DEB_PKGS := flex bison bc libssl-dev cpio ccache qemu-system-x86 \
	xz-utils linux-source-6.12

vm-deps:
	@missing=$$(for p in $(VM_DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "make vm-deps: installing" $$missing; \
		if [ "$$(id -u)" != 0 ]; then \
			echo "make vm-deps: run as root to install them" >&2; \
			exit 1; fi; \
		apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			$$missing >/dev/null || exit 1; \
	fi

# Debian's 6.12 with kernel-patches/, cached outside the checkout in
# /var/cache/cgfw-kernel.
kernel: vm-deps
	$(Q)tools/vm/build-kernel.sh

# The same kernel without the series (make vm-bench compares the two).
kernel-unpatched: vm-deps
	$(Q)tools/vm/build-kernel.sh unpatched

# The project's tests and the series' selftest inside that kernel, under
# QEMU (TCG); make check runs them too, after the tests on this machine.
vm-check: deps vm-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/vm/run.sh -t 3600 tools/vm/guest-tests.sh $(BUILD)

# The same in the kernel built with lockdep and KASAN (kernel-patches/
# config-debug): not part of check, its first build takes about an hour.
vm-check-debug: deps vm-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/vm/run.sh -t 7200 -k "$$(tools/vm/build-kernel.sh debug)" \
		tools/vm/guest-tests.sh $(BUILD)

# The benchmarks inside the patched kernel, where the native family is one
# more path, and the hook rows in the unpatched kernel too; the guest
# prints its CSVs, bench/vm.sh writes them to build/bench/vm/KERNEL/ and
# plots them. QUICK=1: the short plan; VM_BENCH_ARGS: cgfw_bench options.
vm-bench: deps vm-deps
	$(Q)$(MAKE) --no-print-directory $(CGFW) $(BUILD)/bench/cgfw_bench
	$(Q)bench/vm.sh $(BUILD) $(BUILD)/bench/vm $(if $(QUICK),--quick) \
		$(VM_BENCH_ARGS)

# ---- the library and the command ----

$(BUILD)/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Iuserspace/lib -fPIC -fvisibility=hidden -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS) userspace/lib/libcgfw.map
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=userspace/lib/libcgfw.map \
		-o $@ $(LIB_OBJS) $(LDFLAGS) $(PKG_LIBS)
	$(Q)ln -sf $(notdir $@) $(BUILD)/$(SONAME)
	$(Q)ln -sf $(SONAME) $(BUILD)/libcgfw.so

# The command links the shared library; in the tree it finds it next to
# itself, installed where the system finds libraries.
CLI_OBJS := $(BUILD)/userspace/cli/main.o $(BUILD)/userspace/cli/daemon.o

$(CGFW): $(CLI_OBJS) $(LIB_SO)
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $(CLI_OBJS) -L$(BUILD) -lcgfw -Wl,-rpath,'$$ORIGIN' $(LDFLAGS)

$(CGFW_INSTALL): $(CLI_OBJS) $(LIB_SO)
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -o $@ $(CLI_OBJS) -L$(BUILD) -lcgfw $(LDFLAGS)

$(TRAFFIC): tools/traffic.c $(PROBE_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(TEST_LIB) -o $@ $< $(LDFLAGS)

install: $(CGFW_INSTALL) $(LIB_SO) $(LIB_A) docs
	@# mkdir, not install -d: a directory that is there keeps its mode
	@# (Debian's /usr/local/sbin is 2775 root:staff); new ones 0755
	umask 022 && mkdir -p $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/cgfw $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(CGFW_INSTALL) $(DESTDIR)$(SBINDIR)/cgfw
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIB_SO)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libcgfw.so
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 644 userspace/include/cgfw/cgfw.h \
		$(DESTDIR)$(INCLUDEDIR)/cgfw/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
		-e 's|@PKGS@|$(PKGS)|' userspace/lib/libcgfw.pc.in \
		> $(DESTDIR)$(PKGCONFIGDIR)/libcgfw.pc
	if [ -f $(BUILD)/docs/cgfw.8 ]; then \
		(umask 022 && mkdir -p $(DESTDIR)$(MANDIR)/man8) && \
		install -m 644 $(BUILD)/docs/cgfw.8 $(DESTDIR)$(MANDIR)/man8/; fi
	umask 022 && mkdir -p $(DESTDIR)$(UNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|' userspace/cli/cgfw.service.in \
		> $(DESTDIR)$(UNITDIR)/cgfw.service
	@# the rules directory, root's alone, with an example the daemon
	@# does not read (not *.nft); nothing is enabled or started
	install -d -m 700 $(DESTDIR)$(SYSCONFDIR)/cgfw
	[ -e $(DESTDIR)$(SYSCONFDIR)/cgfw/web.nft.example ] || \
		install -m 600 docs/examples/web.nft \
			$(DESTDIR)$(SYSCONFDIR)/cgfw/web.nft.example
	if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; \
		systemctl daemon-reload 2>/dev/null || true; fi

# The daemon is stopped and disabled first; the tables it applied stay in
# force unless PURGE=1, which removes them (cgfw flush) and the example.
# The rules in $(SYSCONFDIR)/cgfw are the administrator's: left.
uninstall:
	if [ -z "$(DESTDIR)" ] && { systemctl is-enabled --quiet cgfw || \
	   systemctl is-active --quiet cgfw; } 2>/dev/null; then \
		systemctl disable --now cgfw; fi
	if [ -n "$(PURGE)" ] && [ -z "$(DESTDIR)" ] && [ -x $(SBINDIR)/cgfw ]; then \
		$(SBINDIR)/cgfw flush; \
	elif [ -z "$(DESTDIR)" ] && [ -x $(SBINDIR)/cgfw ] && \
	     $(SBINDIR)/cgfw list 2>/dev/null | grep -q '^table'; then \
		echo "make uninstall: the tables cgfw installed stay in force ('cgfw flush' before, or PURGE=1, removes them)"; fi
	rm -f $(DESTDIR)$(SBINDIR)/cgfw $(DESTDIR)$(LIBDIR)/libcgfw.so* \
		$(DESTDIR)$(LIBDIR)/libcgfw.a $(DESTDIR)$(PKGCONFIGDIR)/libcgfw.pc \
		$(DESTDIR)$(MANDIR)/man8/cgfw.8 $(DESTDIR)$(UNITDIR)/cgfw.service
	rm -rf $(DESTDIR)$(INCLUDEDIR)/cgfw
	@# the directories make install makes where none were, if empty
	@# now (one that was there, empty, goes too)
	rmdir $(DESTDIR)$(UNITDIR) $(DESTDIR)$(dir $(UNITDIR:/=)) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man8 \
		2>/dev/null || true
	if [ -n "$(PURGE)" ]; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/cgfw/web.nft.example; \
		rmdir $(DESTDIR)$(SYSCONFDIR)/cgfw 2>/dev/null || true; fi
	if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; \
		systemctl daemon-reload 2>/dev/null || true; fi

# ---- tests ----

# kselftest_harness.h comes from the kernel source package, not from the tree.
$(KSFT_H):
	$(call msg,EXTRACT,$(KSFT))
	@mkdir -p $(KSFT)
	$(Q)tar -xJf $(KSRC_TAR) -C $(KSFT) --strip-components=4 \
		linux-source-6.12/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.12/tools/testing/selftests/kselftest.h

TEST_CFLAGS = $(ALL_CFLAGS) -I$(KSFT) -Iuserspace/lib -I$(TEST_LIB) \
	-Wno-unused-parameter -Wno-missing-prototypes -Wno-shadow \
	-Wno-format-truncation -Wno-sign-compare

# unit tests: the library's own functions, through the static archive
$(BUILD)/tests/%: selftests/unit/%.c $(LIB_A) $(KSFT_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(LIB_A) $(LDFLAGS) $(PKG_LIBS)

# the classifier's tree against ClassBench-style lists (selftests/lib)
$(BUILD)/tests/test_cls: $(TEST_LIB)/classbench.h

$(BUILD)/tests/cgfw_selftest: selftests/system/cgfw_selftest.c $(PROBE_H) $(KSFT_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(LDFLAGS)

$(BUILD)/tests/difftest: selftests/system/difftest.c $(PROBE_H) $(TEST_LIB)/classbench.h
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -Wno-unused-result -o $@ $< $(LDFLAGS)

$(BUILD)/tests/testrun: selftests/system/testrun.c $(PROBE_H) $(KSFT_H)
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(LDFLAGS) $(PKG_LIBS)

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
	$(Q)$(CC) -O2 -g -Wall -Werror $(MNL_CFLAGS) -o $@ $< $(LDFLAGS) $(MNL_LIBS)

# Man page: rendered from its rst source when docutils is there.
docs: $(BUILD)/docs/cgfw.8

$(BUILD)/docs/cgfw.8: docs/cgfw.8.rst
	$(call msg,RST2MAN,$@)
	@mkdir -p $(dir $@)
	$(Q)if command -v rst2man >/dev/null; then rst2man --halt=warning $< $@; \
	else echo "rst2man missing (python3-docutils): man page not built" >&2; fi

lint: $(LIB_A)
	$(Q)tools/lint.sh $(BUILD)

# make check fuzzes for a fixed number of runs; this for longer
FUZZ_SECONDS ?= 600
fuzz: deps
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) tools/fuzz.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-san $(BUILD)-fuzz $(BUILD)-san.log

# ---- nft with the cgroup family: nft-extension/nft.mk ----------------------
include nft-extension/nft.mk
# ---- end of nft-extension ------------------------------------------------

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
