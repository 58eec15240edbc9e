// SPDX-License-Identifier: GPL-2.0
/*
 * cgfw selftests: rules applied with the cgfw command to a real cgroup, in a
 * private network and mount namespace, checked with real sockets.
 *
 * Each test runs once per FIXTURE_VARIANT: a backend, and where cgroup2 is
 * mounted (the host's hybrid /sys/fs/cgroup/unified, or a private mount on
 * /sys/fs/cgroup). The bpf backend and the native cgroup family join as
 * variants when they exist.
 *
 * Environment: CGFW, the cgfw binary (default build/cgfw).
 */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <linux/magic.h>

#include "kselftest_harness.h"

/*
 * The harness gives a test 30 s and then fails it. That is a guard against
 * hangs, and tests must not fail on timing: under QEMU's emulation, in the
 * debug kernel or on a loaded machine, a test that runs cgfw a few times
 * takes longer. A hang still ends.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#include "cgfwcmd.h"
#include "listjson.h"
#include "netprobe.h"

#define WAIT_MS 300	/* how long "nothing arrived" is waited for */

FIXTURE(cg) {
	char root[PATH_MAX];	/* the cgroup2 mount */
	char name[64];		/* our test cgroup, relative to root */
	char path[PATH_MAX];	/* its absolute path */
	char rules[64];		/* a temporary rule file */
};

FIXTURE_VARIANT(cg) {
	const char *backend;
	bool own_mount;		/* mount cgroup2 on /sys/fs/cgroup */
};

FIXTURE_VARIANT_ADD(cg, nft_hybrid_mount) {
	.backend = "nft-emulated",
	.own_mount = false,
};

FIXTURE_VARIANT_ADD(cg, nft_sys_fs_cgroup) {
	.backend = "nft-emulated",
	.own_mount = true,
};

/* the cgroup table family of kernel-patches/, where the kernel has it */
FIXTURE_VARIANT_ADD(cg, native_sys_fs_cgroup) {
	.backend = "nft-native",
	.own_mount = true,
};

FIXTURE_VARIANT_ADD(cg, bpf_hybrid_mount) {
	.backend = "bpf",
	.own_mount = false,
};

FIXTURE_VARIANT_ADD(cg, bpf_sys_fs_cgroup) {
	.backend = "bpf",
	.own_mount = true,
};

/*
 * both backends on the same cgroup: a packet must pass both. The nft side
 * is the native family where the kernel has it, else the emulated target.
 */
FIXTURE_VARIANT_ADD(cg, both_sys_fs_cgroup) {
	.backend = "both",
	.own_mount = true,
};

static void write_file(const char *path, const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* cgfw apply of @rules (a printf format); exit status, output in @out. */
static int apply_out(FIXTURE_DATA(cg) *self, const char *backend, char *out,
		     size_t size, const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(self->rules, "w");

	if (!f)
		return -1;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	return run(out, size, "%s apply -b %s %s 2>&1", cgfw_bin(), backend,
		   self->rules);
}

#define apply(fmt, ...)							\
	({								\
		char __out[4096];					\
		int __st = apply_out(self, variant->backend, __out,	\
				     sizeof(__out), fmt, ##__VA_ARGS__);\
		if (__st)						\
			TH_LOG("cgfw apply failed: %s", __out);		\
		__st;							\
	})

/* Make a cgroup below ours: "" is ours; returns its absolute path. */
static const char *subcg(FIXTURE_DATA(cg) *self, const char *sub,
			 char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", self->path, *sub ? "/" : "", sub);
	mkdir(buf, 0755);
	return buf;
}

typedef int (*probe_fn)(void *arg);

static void join_cgroup(const char *cg)
{
	char procs[PATH_MAX];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	write_file(procs, "0\n");
}

/* Run @fn in a child process that first joins cgroup @cg (NULL: stay). */
static int in_cgroup(const char *cg, probe_fn fn, void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return PROBE_ERROR;
	if (!pid) {
		if (cg)
			join_cgroup(cg);
		_exit(fn(arg));
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return PROBE_ERROR;
	return WEXITSTATUS(st);
}

struct target {
	const char *ip;
	int port;
};

static int udp_send_fn(void *arg)
{
	struct target *t = arg;

	return probe_udp_send(t->ip, t->port);
}

static int tcp_connect_fn(void *arg)
{
	struct target *t = arg;

	return probe_tcp_connect(t->ip, t->port, WAIT_MS);
}

static int ping_fn(void *arg)
{
	struct target *t = arg;

	return probe_ping(t->ip, WAIT_MS);
}

/* UDP from a process in @cg to ip:port: EPERM, or did it arrive? */
static int udp_from(const char *cg, const char *ip, int port)
{
	struct target t = { ip, port };
	int srv = probe_server(ip, port, SOCK_DGRAM), ret;

	if (srv < 0)
		return PROBE_ERROR;
	ret = in_cgroup(cg, udp_send_fn, &t);
	if (ret == PROBE_PASSED)
		ret = probe_udp_recv(srv, WAIT_MS);
	close(srv);
	return ret;
}

static int tcp_from(const char *cg, const char *ip, int port)
{
	struct target t = { ip, port };
	int srv = probe_server(ip, port, SOCK_STREAM), ret;

	if (srv < 0)
		return PROBE_ERROR;
	ret = in_cgroup(cg, tcp_connect_fn, &t);
	close(srv);
	return ret;
}

/*
 * A receiver created by a process in @cg: it binds (UDP) or listens (TCP),
 * says so on a pipe, and waits. The sender is this (outside) process.
 */
static pid_t receiver_in(const char *cg, const char *ip, int port, int type,
			 int *result_fd)
{
	int p[2], fd;
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		close(p[0]);
		join_cgroup(cg);
		fd = probe_server(ip, port, type);
		c = fd < 0 ? 'E' : 'R';
		if (write(p[1], &c, 1) != 1 || fd < 0)
			_exit(PROBE_ERROR);
		if (type == SOCK_DGRAM)
			_exit(probe_udp_recv(fd, WAIT_MS * 2));
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1 || c != 'R') {
		close(p[0]);
		return -1;
	}
	*result_fd = p[0];
	return pid;
}

static int udp_to(const char *cg, const char *ip, int port)
{
	int rfd, st;
	pid_t pid = receiver_in(cg, ip, port, SOCK_DGRAM, &rfd);

	if (pid < 0)
		return PROBE_ERROR;
	if (probe_udp_send(ip, port) != PROBE_PASSED) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(rfd);
		return PROBE_ERROR;
	}
	waitpid(pid, &st, 0);
	close(rfd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : PROBE_ERROR;
}

static int tcp_to(const char *cg, const char *ip, int port)
{
	int rfd, ret;
	pid_t pid = receiver_in(cg, ip, port, SOCK_STREAM, &rfd);

	if (pid < 0)
		return PROBE_ERROR;
	ret = probe_tcp_connect(ip, port, WAIT_MS);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(rfd);
	return ret;
}

static int count_of(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s++;
	}
	return n;
}

/*
 * With two backends, the one whose table counts: the one that sees the
 * packets first (a drop there is final). The emulation's output and input
 * chains run before CGROUP_SKB programs; native chains run after them.
 */
static const char *counting_backend;

/* Packets counted by rule @idx (0-based) of @chain, from cgfw list -j. */
static long long counter_of(const char *table, const char *chain, int idx,
			    bool policy)
{
	static char out[1 << 20];
	bool mine = !counting_backend;
	const char *v = NULL;
	struct jobj *o;
	size_t n, i;
	long long r = -1;

	if (run(out, sizeof(out), "%s list -j %s", cgfw_bin(), table) ||
	    jobjs_read(out, &o, &n))
		return -1;
	for (i = 0; i < n && !v; i++) {
		/* the objects after a table are that table's */
		if (jget(&o[i], "table.name")) {
			mine = !counting_backend ||
			       jis(&o[i], "table.cgfw.backend",
				   counting_backend);
			continue;
		}
		if (!mine)
			continue;
		if (policy && jis(&o[i], "chain.name", chain))
			v = jget(&o[i], "chain.cgfw.policy_counter.packets");
		else if (!policy && jis(&o[i], "rule.chain", chain) &&
			 jget(&o[i], "rule.cgfw.counter.packets") &&
			 !idx--)
			v = jget(&o[i], "rule.cgfw.counter.packets");
	}
	if (v)
		r = strtoll(v, NULL, 10);
	jobjs_free(o, n);
	(void)table;
	return r;
}

/* Is @backend one CGFW_SELFTEST_NOT names (blank-separated)? */
static bool backend_not_here(const char *backend)
{
	const char *l = getenv("CGFW_SELFTEST_NOT"), *p;
	size_t n = strlen(backend);

	for (p = l ? strstr(l, backend) : NULL; p; p = strstr(p + 1, backend))
		if ((p == l || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

FIXTURE_SETUP(cg)
{
	struct statfs sfs;

	if (geteuid())
		SKIP(return, "needs root: network namespaces and cgroups");
	/* make check's guest: the backends the host has run already */
	if (backend_not_here(variant->backend))
		SKIP(return, "%s ran on the host (CGFW_SELFTEST_NOT)",
		     variant->backend);
	if (!strcmp(variant->backend, "nft-native") && !native_family())
		SKIP(return, "this kernel has no nf_tables cgroup family (make vm-check runs these in the patched kernel)");
	if (!strcmp(variant->backend, "both"))
		counting_backend = native_family() ? "bpf" : "nft-emulated";
	ASSERT_EQ(0, unshare(CLONE_NEWNET | CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	ASSERT_EQ(0, probe_private_bpffs());
	if (variant->own_mount) {
		ASSERT_EQ(0, probe_cgroup2_on_sys_fs_cgroup());
		strcpy(self->root, "/sys/fs/cgroup");
	} else {
		strcpy(self->root, "/sys/fs/cgroup/unified");
		if (statfs(self->root, &sfs) ||
		    sfs.f_type != CGROUP2_SUPER_MAGIC)
			SKIP(return, "no hybrid cgroup2 mount at %s",
			     self->root);
	}
	snprintf(self->name, sizeof(self->name), "cgfw-test-%d", getpid());
	snprintf(self->path, sizeof(self->path), "%s/%s", self->root,
		 self->name);
	/* one an earlier test of the same pid could not remove: empty */
	if (mkdir(self->path, 0755) && errno == EEXIST)
		rmdir(self->path);
	ASSERT_EQ(0, access(self->path, F_OK) ? mkdir(self->path, 0755) : 0);
	strcpy(self->rules, "/tmp/cgfw-test-XXXXXX");
	ASSERT_LE(0, close(mkstemp(self->rules)));
	ASSERT_EQ(0, probe_lo_up());
	ASSERT_EQ(0, probe_allow_ping());
}

FIXTURE_TEARDOWN(cg)
{
	static const char *const subs[] = { "a/deep", "sub", "a", "b", "" };
	char buf[PATH_MAX];
	int tries;
	size_t i;

	if (!self->path[0])
		return;
	for (i = 0; i < ARRAY_SIZE(subs); i++) {
		snprintf(buf, sizeof(buf), "%s%s%s", self->path,
			 *subs[i] ? "/" : "", subs[i]);
		/* busy while the test's processes finish exiting */
		for (tries = 0; rmdir(buf) && errno == EBUSY && tries < 200;
		     tries++)
			usleep(10000);
	}
	unlink(self->rules);
}

/* ---- egress ---- */

TEST_F(cg, egress_udp_drop_v4)
{
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5001 counter drop\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5001));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5002));
	/* outside the cgroup: not filtered */
	EXPECT_EQ(PROBE_PASSED, udp_from(NULL, "127.0.0.1", 5001));
	EXPECT_EQ(1, counter_of("t", "out", 0, false));
}

TEST_F(cg, egress_udp_drop_v6)
{
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    ip6 daddr ::1 udp dport 5001 counter drop\n"
			   "  }\n"
			   "}\n", self->path));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "::1", 5001));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5001));
	EXPECT_EQ(PROBE_PASSED, udp_from(NULL, "::1", 5001));
}

TEST_F(cg, egress_tcp_connect_does_not_complete)
{
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    tcp dport 5003 drop\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_TIMEOUT, tcp_from(self->path, "127.0.0.1", 5003));
	EXPECT_EQ(PROBE_TIMEOUT, tcp_from(self->path, "::1", 5003));
	EXPECT_EQ(PROBE_PASSED, tcp_from(self->path, "127.0.0.1", 5004));
	EXPECT_EQ(PROBE_PASSED, tcp_from(NULL, "127.0.0.1", 5003));
}

TEST_F(cg, egress_icmp_echo_dropped)
{
	struct target v4 = { "127.0.0.1", 0 }, v6 = { "::1", 0 };

	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    icmp type echo-request counter drop\n"
			   "    icmpv6 type echo-request counter drop\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_EPERM, in_cgroup(self->path, ping_fn, &v4));
	/*
	 * Dropped too, but an IPv6 ping socket never hears of it:
	 * icmpv6_push_pending_frames() ignores the error of the output path.
	 */
	EXPECT_EQ(PROBE_TIMEOUT, in_cgroup(self->path, ping_fn, &v6));
	EXPECT_EQ(PROBE_PASSED, in_cgroup(NULL, ping_fn, &v4));
	EXPECT_EQ(PROBE_PASSED, in_cgroup(NULL, ping_fn, &v6));
	EXPECT_EQ(1, counter_of("t", "out", 0, false));
	EXPECT_EQ(1, counter_of("t", "out", 1, false));
}

/* ---- ingress ---- */

TEST_F(cg, ingress_udp_not_delivered)
{
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain in {\n"
			   "    type filter hook ingress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5005 counter drop\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_TIMEOUT, udp_to(self->path, "127.0.0.1", 5005));
	EXPECT_EQ(PROBE_TIMEOUT, udp_to(self->path, "::1", 5005));
	EXPECT_EQ(PROBE_PASSED, udp_to(self->path, "127.0.0.1", 5006));
	EXPECT_EQ(2, counter_of("t", "in", 0, false));
}

TEST_F(cg, ingress_tcp_syn_dropped_at_listener)
{
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain in {\n"
			   "    type filter hook ingress cgroup \"%s\" priority 0; policy accept;\n"
			   "    tcp dport 5007 drop\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_TIMEOUT, tcp_to(self->path, "127.0.0.1", 5007));
	EXPECT_EQ(PROBE_TIMEOUT, tcp_to(self->path, "::1", 5007));
	EXPECT_EQ(PROBE_PASSED, tcp_to(self->path, "127.0.0.1", 5008));
}

TEST_F(cg, ingress_icmp_echo_reply)
{
	struct target v4 = { "127.0.0.1", 0 }, v6 = { "::1", 0 };

	if (!strcmp(variant->backend, "nft-emulated"))
		SKIP(return, "the emulated nft target cannot attribute ICMP echo replies to a socket at input (socket lookup covers TCP, UDP and ICMP errors; docs/cgfw.8.rst, LIMITATIONS)");
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain in {\n"
			   "    type filter hook ingress cgroup \"%s\" priority 0; policy accept;\n"
			   "    icmp type echo-reply counter drop\n"
			   "    icmpv6 type echo-reply counter drop\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_TIMEOUT, in_cgroup(self->path, ping_fn, &v4));
	EXPECT_EQ(PROBE_TIMEOUT, in_cgroup(self->path, ping_fn, &v6));
	EXPECT_EQ(PROBE_PASSED, in_cgroup(NULL, ping_fn, &v4));
	EXPECT_EQ(PROBE_PASSED, in_cgroup(NULL, ping_fn, &v6));
}

/* ---- semantics ---- */

TEST_F(cg, policy_applies_when_no_rule_decides)
{
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy drop;\n"
			   "    udp dport 5009 accept\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5009));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5010));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "::1", 5010));
	EXPECT_EQ(2, counter_of("t", "out", 0, true));
}

TEST_F(cg, return_in_bound_chain_means_policy)
{
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy drop;\n"
			   "    udp dport 5011 return\n"
			   "    udp dport 5012 jump more\n"
			   "  }\n"
			   "  chain more {\n"
			   "    return\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5011));
	/* return from a jumped-to chain resumes the caller: then policy */
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5012));
}

TEST_F(cg, descendants_filtered_siblings_not)
{
	char sub[PATH_MAX], sib[PATH_MAX];

	subcg(self, "sub", sub, sizeof(sub));
	snprintf(sib, sizeof(sib), "%s/%s-sibling", self->root, self->name);
	ASSERT_EQ(0, mkdir(sib, 0755));
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5013 drop\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_EPERM, udp_from(sub, "127.0.0.1", 5013));
	EXPECT_EQ(PROBE_PASSED, udp_from(sib, "127.0.0.1", 5013));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->root, "127.0.0.1", 5013));
	rmdir(sib);
}

struct early {
	const char *cg;
};

/* A socket made before joining keeps its old cgroup; a new one does not. */
static int early_socket_fn(void *arg)
{
	struct early *e = arg;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), r1, r2;

	join_cgroup(e->cg);
	r1 = probe_udp_send_fd(fd, "127.0.0.1", 5014);
	r2 = probe_udp_send("127.0.0.1", 5014);
	close(fd);
	return r1 == PROBE_PASSED && r2 == PROBE_EPERM ? 0 : 10 + r1 * 4 + r2;
}

TEST_F(cg, socket_created_before_joining_is_not_filtered)
{
	struct early e = { self->path };

	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5014 drop\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(0, in_cgroup(NULL, early_socket_fn, &e));
}

TEST_F(cg, chains_run_in_priority_order)
{
	static const char rules[] =
		"table cgroup t {\n"
		"  chain marker {\n"
		"    type filter hook egress cgroup \"%s\" priority %d; policy accept;\n"
		"    udp dport 5015 meta mark set 42\n"
		"  }\n"
		"  chain dropper {\n"
		"    type filter hook egress cgroup \"%s\" priority %d; policy accept;\n"
		"    udp dport 5015 meta mark 42 drop\n"
		"  }\n"
		"}\n";

	/* the mark is set first: the later chain drops */
	ASSERT_EQ(0, apply(rules, self->name, -10, self->name, 10));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5015));
	/* the other way round: the drop rule runs before the mark is set */
	ASSERT_EQ(0, apply(rules, self->name, 10, self->name, -10));
	if (strcmp(variant->backend, "both")) {
		EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5015));
	} else {
		/*
		 * One backend's marker runs before the other's dropper: the
		 * emulation's output chain before BPF, BPF before the
		 * native family's chains.
		 */
		EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5015));
	}
}

TEST_F(cg, several_tables_and_cgroups)
{
	char a[PATH_MAX], b[PATH_MAX], out[8192];

	subcg(self, "a", a, sizeof(a));
	subcg(self, "b", b, sizeof(b));
	ASSERT_EQ(0, apply("table cgroup ta {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s/a\" priority 0; policy accept;\n"
			   "    udp dport 5016 drop\n"
			   "  }\n"
			   "}\n"
			   "table cgroup tb {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5017 drop\n"
			   "  }\n"
			   "}\n", self->name, b));
	EXPECT_EQ(PROBE_EPERM, udp_from(a, "127.0.0.1", 5016));
	EXPECT_EQ(PROBE_PASSED, udp_from(a, "127.0.0.1", 5017));
	EXPECT_EQ(PROBE_PASSED, udp_from(b, "127.0.0.1", 5016));
	EXPECT_EQ(PROBE_EPERM, udp_from(b, "127.0.0.1", 5017));
	ASSERT_EQ(0, run(out, sizeof(out), "%s list", cgfw_bin()));
	EXPECT_NE(NULL, strstr(out, "table cgroup ta {"));
	EXPECT_NE(NULL, strstr(out, "table cgroup tb {"));
}

TEST_F(cg, named_set_jump_and_verdict_map)
{
	ASSERT_EQ(0, apply("define blocked = { 5018, 5019 }\n"
			   "table cgroup t {\n"
			   "  set ports { type inet_service; elements = $blocked }\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport @ports jump deny\n"
			   "    udp dport vmap { 5020 : drop, 5021 : accept }\n"
			   "    ip daddr { 127.0.0.2, 127.0.0.3 } udp dport 5022 drop\n"
			   "  }\n"
			   "  chain deny {\n"
			   "    counter drop\n"
			   "  }\n"
			   "}\n", self->name));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5018));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5019));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5020));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5021));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.2", 5022));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5022));
	EXPECT_EQ(2, counter_of("t", "deny", 0, false));
}

TEST_F(cg, counters_count_what_they_match)
{
	int i;

	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5023 counter accept\n"
			   "    udp dport 5024 counter accept\n"
			   "  }\n"
			   "}\n", self->name));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5023));
	EXPECT_EQ(PROBE_PASSED, udp_from(NULL, "127.0.0.1", 5024));
	EXPECT_EQ(3, counter_of("t", "out", 0, false));
	EXPECT_EQ(0, counter_of("t", "out", 1, false));
}

/* cgfw update with one command; exit status */
static int update(FIXTURE_DATA(cg) *self, const char *cmd, char *out,
		  size_t size)
{
	write_file(self->rules, "%s\n", cmd);
	return run(out, size, "%s update %s 2>&1", cgfw_bin(), self->rules);
}

TEST_F(cg, named_sets_update_in_place)
{
	char out[4096], before[4096], after[4096];

	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  set ok { type ipv4_addr; elements = { 127.0.0.2 } }\n"
			   "  set nets { type ipv4_addr; flags interval; elements = { 10.0.0.0/8 } }\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy drop;\n"
			   "    ip daddr @ok accept\n"
			   "    ip daddr @nets accept\n"
			   "  }\n"
			   "}\n", self->name));
	run(before, sizeof(before), "bpftool cgroup show %s", self->path);
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.2", 5030));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.3", 5030));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5030));

	EXPECT_EQ(0, update(self, "add element cgroup t ok { 127.0.0.3 }",
			    out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.3", 5030));
	EXPECT_EQ(0, update(self, "delete element cgroup t ok { 127.0.0.2 }",
			    out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.2", 5030));
	/* an element that is not there: an error on every backend, as in
	 * nft, and the addition beside it undone */
	EXPECT_EQ(1, update(self, "add element cgroup t ok { 127.0.0.4 }\n"
			    "delete element cgroup t ok { 127.0.0.2 }",
			    out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, ":2:")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "nothing was changed")) TH_LOG("%s", out);
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.4", 5030));
	/* one element added and deleted: nft's order cannot be kept */
	EXPECT_EQ(1, update(self, "add element cgroup t ok { 127.0.0.5 }\n"
			    "delete element cgroup t ok { 127.0.0.5 }",
			    out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, ":2:1-6: Error: an element of set 'ok' is both added and deleted"))
		TH_LOG("%s", out);
	/* an interval: the bpf backend's prefixes */
	EXPECT_EQ(0, update(self, "add element cgroup t nets { 127.0.0.0-127.0.0.1 }",
			    out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5030));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.4", 5030));
	/* an interval deleted where another added ends: not the same */
	EXPECT_EQ(0, update(self, "add element cgroup t nets { 127.0.3.0/24 }",
			    out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(0, update(self, "add element cgroup t nets { 127.0.2.0/24 }\n"
			    "delete element cgroup t nets { 127.0.3.0/24 }",
			    out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.2.5", 5030));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.3.5", 5030));

	/* the same programs: nothing was reloaded */
	run(after, sizeof(after), "bpftool cgroup show %s", self->path);
	EXPECT_STREQ(before, after);

	/* refused: a chain (apply makes them); a set that is not there */
	EXPECT_EQ(1, update(self, "add chain cgroup t other", out,
			    sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "1:1-3: Error: cgfw update takes"));
	EXPECT_EQ(1, update(self, "add element cgroup t nope { 1.2.3.4 }",
			    out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "no table 't' with a set 'nope'"));
	EXPECT_EQ(1, update(self, "add element cgroup t ok { 1.2.3.4/x }",
			    out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, ":1:"));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.3", 5030));
}

TEST_F(cg, limit_and_quota)
{
	char out[8192];
	int i;

	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5031 limit rate over 1/minute burst 3 packets drop\n"
			   "    udp dport 5032 limit rate 1/minute accept\n"
			   "    udp dport 5032 drop\n"
			   "    udp dport 5033 quota over 100 bytes drop\n"
			   "  }\n"
			   "}\n", self->name));
	/* a burst of 3, then one a minute: none more here */
	for (i = 0; i < 3; i++)
		EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5031));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5031));
	/* the default burst is 5 packets */
	for (i = 0; i < 5; i++)
		EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5032));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5032));
	/* 32-byte packets: 96 is not past 100, 128 is */
	for (i = 0; i < 3; i++)
		EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5033));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5033));
	/* a used-up quota is listed as such (the kernel reports it depleted) */
	ASSERT_EQ(0, run(out, sizeof(out), "%s list t 2>&1", cgfw_bin()));
	EXPECT_NE(NULL, strstr(out, "quota over 100 bytes"));
	if (!strncmp(variant->backend, "nft-", 4))
		EXPECT_NE(NULL, strstr(out, "quota over 100 bytes used 100 bytes"))
			TH_LOG("%s", out);
}

/* ---- replacement, deletion, failure ---- */

static volatile sig_atomic_t stop_sender;

static void on_term(int sig)
{
	(void)sig;
	stop_sender = 1;
}

/*
 * Send to a dropped port until told to stop, pausing 50 us between sends
 * (without a pause the senders starve the applies in an emulated guest);
 * count the sends and the ones refused with EPERM into @counts.
 */
static void hammer(const struct target *t, unsigned long counts[2])
{
	signal(SIGTERM, on_term);
	prctl(PR_SET_TIMERSLACK, 1UL);	/* 50 us, not 100 */
	while (!stop_sender) {
		if (probe_udp_send(t->ip, t->port) == PROBE_EPERM)
			__atomic_add_fetch(&counts[1], 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&counts[0], 1, __ATOMIC_RELAXED);
		usleep(50);
	}
}

#define REAPPLIES	60

/*
 * The handles of nf_tables table t and of the base chain that holds its
 * chain "out" on the hook (the native chain, the emulation's
 * cgfw_hook_out), as "TABLE/CHAIN"; "" if not found. A table made again
 * has a new handle; a chain made again in a new table may not.
 */
static void nft_handles(const char *backend, char *buf, size_t size)
{
	unsigned long long table = 0, chain = 0;
	char out[65536];
	const char *p, *h;
	struct jobj *o;
	size_t n, i;

	*buf = '\0';
	if (!strcmp(backend, "nft-emulated")) {
		if (run(out, sizeof(out), "nft -a list table inet cgfw_t"))
			return;
		h = strstr(out, "# handle ");
		table = h ? strtoull(h + 9, NULL, 10) : 0;
		p = strstr(out, "chain cgfw_hook_out {");
		h = p ? strstr(p, "# handle ") : NULL;
		chain = h ? strtoull(h + 9, NULL, 10) : 0;
	} else {
		if (run(out, sizeof(out), "%s list -j t", cgfw_bin()) ||
		    jobjs_read(out, &o, &n))
			return;
		for (i = 0; i < n; i++) {
			if (jis(&o[i], "table.name", "t") &&
			    jget(&o[i], "table.handle"))
				table = strtoull(jget(&o[i], "table.handle"),
						 NULL, 10);
			if (jis(&o[i], "chain.name", "out") &&
			    jget(&o[i], "chain.handle"))
				chain = strtoull(jget(&o[i], "chain.handle"),
						 NULL, 10);
		}
		jobjs_free(o, n);
	}
	if (table && chain)
		snprintf(buf, size, "%llu/%llu", table, chain);
}

/*
 * 60 re-applies under a sender on every CPU (at least two), each version
 * dropping the port sent to: every send is refused, none received. The
 * versions differ in a rule, and every other one in the chain's policy,
 * so each re-apply replaces rules (a base chain kept: docs/design.rst).
 */
/*
 * Under QEMU's TCG, with a sender busy on each vCPU, the 60 re-applies of
 * -b both (an nft table and programs each time) took over the default
 * 300 s once: a longer bound, not fewer re-applies.
 */
TEST_F_TIMEOUT(cg, reapply_swaps_atomically, 900)
{
	static const char rules[] =
		"table cgroup t {\n"
		"  chain out {\n"
		"    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
		"    udp dport %d counter accept\n"
		"    udp dport 5025 drop\n"
		"  }\n"
		"}\n";
	static const char rules_drop[] =
		"table cgroup t {\n"
		"  chain out {\n"
		"    type filter hook egress cgroup \"%s\" priority 0; policy drop;\n"
		"    udp dport %d counter accept\n"
		"    udp dport 5025 drop\n"
		"    ip daddr 127.0.0.1 accept\n"
		"  }\n"
		"}\n";
	struct target t = { "127.0.0.1", 5025 };
	int srv = probe_server("127.0.0.1", 5025, SOCK_DGRAM), i, n, st, got;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char base[64] = "", now[64];
	unsigned long *counts;
	char out[65536];
	pid_t pid[64];

	ASSERT_LE(0, srv);
	counts = mmap(NULL, 2 * sizeof(*counts), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, counts);
	ASSERT_EQ(0, apply(rules, self->name, 6000));
	if (!strncmp(variant->backend, "nft-", 4))
		nft_handles(variant->backend, base, sizeof(base));
	n = cpus < 2 ? 2 : cpus > 64 ? 64 : cpus;
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			join_cgroup(self->path);
			hammer(&t, counts);
			_exit(0);
		}
	}
	for (i = 0; i < REAPPLIES; i++) {
		/* every other pair of versions with policy drop */
		st = i % 4 < 2 ? apply(rules, self->name, 6001 + i % 2) :
				 apply(rules_drop, self->name, 6001 + i % 2);
		ASSERT_EQ(0, st);
	}
	for (i = 0; i < n; i++) {
		kill(pid[i], SIGTERM);
		ASSERT_EQ(pid[i], waitpid(pid[i], &st, 0));
	}
	for (got = 0; probe_udp_recv(srv, 50) != PROBE_TIMEOUT; got++)
		;
	close(srv);
	TH_LOG("%d senders, %d re-applies: %lu sends, %lu refused, %d received",
	       n, REAPPLIES, counts[0], counts[1], got);
	/* never a moment without the rule: refused plus received is sent */
	EXPECT_LT(0, counts[0]);
	EXPECT_EQ(counts[0], counts[1]);
	EXPECT_EQ(0, got);
	munmap(counts, 2 * sizeof(*counts));
	/* the nft targets kept their table and base chain: same handles */
	if (!strncmp(variant->backend, "nft-", 4)) {
		nft_handles(variant->backend, now, sizeof(now));
		EXPECT_NE(0, strlen(base));
		EXPECT_STREQ(base, now);
	}
	/* and one table per backend: never two */
	ASSERT_EQ(0, run(out, sizeof(out), "%s list", cgfw_bin()));
	EXPECT_EQ(strcmp(variant->backend, "both") ? 1 : 2,
		  count_of(out, "table cgroup t {"));
	if (strncmp(variant->backend, "nft", 3)) {
		/* one program on the cgroup, not two */
		ASSERT_EQ(0, run(out, sizeof(out), "bpftool cgroup show %s",
				 self->path));
		EXPECT_EQ(1, count_of(out, "cgroup_inet_egress"));
	}
}

TEST_F(cg, failed_apply_leaves_old_rules_running)
{
	char out[4096];

	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5026 drop\n"
			   "  }\n"
			   "}\n", self->name));
	/* a missing cgroup, and a rule nft rejects: both refused whole */
	EXPECT_EQ(1, apply_out(self, variant->backend, out, sizeof(out),
			       "table cgroup t {\n"
			       "  chain out {\n"
			       "    type filter hook egress cgroup \"%s/nope\" priority 0; policy accept;\n"
			       "  }\n"
			       "}\n", self->name));
	EXPECT_NE(NULL, strstr(out, "does not exist"));
	EXPECT_EQ(1, apply_out(self, variant->backend, out, sizeof(out),
			       "table cgroup t {\n"
			       "  chain out {\n"
			       "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			       "    udp dport 5027 drop\n"
			       "    udp dport 5026 frobnicate\n"
			       "  }\n"
			       "}\n", self->name));
	EXPECT_NE(NULL, strstr(out, ":5:"));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5026));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5027));
}

TEST_F(cg, delete_and_flush_remove_only_cgfw_tables)
{
	char out[8192];

	ASSERT_EQ(0, run(NULL, 0, "nft add table inet mine"));
	ASSERT_EQ(0, apply("table cgroup t {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5028 drop\n"
			   "  }\n"
			   "}\n"
			   "table cgroup u {\n"
			   "  chain out {\n"
			   "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			   "    udp dport 5029 drop\n"
			   "  }\n"
			   "}\n", self->name, self->name));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5028));
	ASSERT_EQ(0, run(NULL, 0, "%s delete t", cgfw_bin()));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5028));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "127.0.0.1", 5029));
	EXPECT_EQ(1, run(out, sizeof(out), "%s delete t 2>&1", cgfw_bin()));
	EXPECT_NE(NULL, strstr(out, "no table 't'"));
	ASSERT_EQ(0, run(NULL, 0, "%s flush", cgfw_bin()));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "127.0.0.1", 5029));
	ASSERT_EQ(0, run(out, sizeof(out), "${NFT_ALL:-nft} list tables"));
	EXPECT_NE(NULL, strstr(out, "table inet mine"));
	EXPECT_EQ(NULL, strstr(out, "cgfw_"));
}

TEST_F(cg, refuses_to_replace_a_table_it_did_not_make)
{
	char out[4096];

	if (!strcmp(variant->backend, "bpf"))
		SKIP(return, "about nf_tables tables: the bpf backend makes none");
	if (!strcmp(variant->backend, "nft-native") ||
	    (!strcmp(variant->backend, "both") && native_family()))
		SKIP(return, "nft 1.0.6 cannot make a cgroup-family table that cgfw did not make");
	ASSERT_EQ(0, run(NULL, 0, "nft add table inet cgfw_t"));
	EXPECT_EQ(1, apply_out(self, variant->backend, out, sizeof(out),
			       "table cgroup t {\n"
			       "  chain out {\n"
			       "    type filter hook egress cgroup \"%s\" priority 0; policy accept;\n"
			       "  }\n"
			       "}\n", self->name));
	EXPECT_NE(NULL, strstr(out, "was not made by cgfw"));
}

/* The ruleset of docs/design.rst ("The language"), with real resolvers and servers. */
TEST_F(cg, design_example)
{
	ASSERT_EQ(0, run(NULL, 0,
			 "ip addr add 192.0.2.53/32 dev lo && "
			 "ip addr add 198.51.100.53/32 dev lo && "
			 "ip addr add 203.0.113.7/32 dev lo"));
	ASSERT_EQ(0, apply("table cgroup web {\n"
			   "    set resolvers { type ipv4_addr; elements = { 192.0.2.53, 198.51.100.53 } }\n"
			   "    chain egress {\n"
			   "        type filter hook egress cgroup \"%s\" priority 0; policy drop;\n"
			   "        ip daddr @resolvers udp dport 53 counter accept\n"
			   "        tcp dport { 80, 443 } counter accept\n"
			   "    }\n"
			   "    chain ingress {\n"
			   "        type filter hook ingress cgroup \"%s\" priority 0; policy accept;\n"
			   "        tcp dport 22 counter drop\n"
			   "    }\n"
			   "}\n", self->path, self->name));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "192.0.2.53", 53));
	EXPECT_EQ(PROBE_PASSED, udp_from(self->path, "198.51.100.53", 53));
	EXPECT_EQ(PROBE_EPERM, udp_from(self->path, "203.0.113.7", 53));
	EXPECT_EQ(PROBE_PASSED, tcp_from(self->path, "203.0.113.7", 443));
	EXPECT_EQ(PROBE_PASSED, tcp_from(self->path, "203.0.113.7", 80));
	EXPECT_EQ(PROBE_TIMEOUT, tcp_from(self->path, "203.0.113.7", 8080));
	EXPECT_EQ(PROBE_TIMEOUT, tcp_to(self->path, "127.0.0.1", 22));
	EXPECT_EQ(PROBE_PASSED, tcp_from(NULL, "203.0.113.7", 8080));
	EXPECT_EQ(2, counter_of("web", "egress", 0, false));
	EXPECT_EQ(1, counter_of("web", "ingress", 0, false));
}

TEST_HARNESS_MAIN
