// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf backend on crafted packets (BPF_PROG_TEST_RUN): what live
 * traffic cannot carry. Each case applies one rule with policy accept and
 * runs the attached program on a packet; the verdict must be nft's:
 *  - a header cut short: transport payload does not match (NFT_BREAK),
 *    the layer 4 protocol still does;
 *  - an IPv4 or IPv6 later fragment: the protocol is known, there is no
 *    transport header;
 *  - IPv6 extension headers, one after another, up to the transport
 *    header; AH ends the walk, as nf_tables' packet info ends it.
 * Environment: CGFW, the cgfw binary (default build/cgfw).
 */
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <linux/if_ether.h>

#include "kselftest_harness.h"

/* a guard against hangs, not a timing: under QEMU's emulation it is slow */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#include "cgfwcmd.h"
#include "bpfprog.h"
#include "netprobe.h"

static char cg_name[64], cg_path[PATH_MAX];

/*
 * Apply "chain out { egress, policy accept; RULE }", with @fill rules
 * before it that match none of the test packets (udp dport 1000 + i):
 * with 16 rules or more the bpf backend compiles the chain into its
 * classifier. The program's fd.
 */
static int prog_for_rules(const char *rule, int fill)
{
	char path[] = "/tmp/cgfw-testrun-XXXXXX", cmd[512];
	FILE *f = fdopen(mkstemp(path), "w");
	int ret, i;

	fprintf(f, "table cgroup tr {\n\tchain out {\n"
		   "\t\ttype filter hook egress cgroup \"%s\" priority 0; policy accept;\n",
		cg_name);
	for (i = 0; i < fill; i++)
		fprintf(f, "\t\tudp dport %d accept\n", 1000 + i);
	fprintf(f, "\t\t%s\n\t}\n}\n", rule);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s apply -b bpf %s", cgfw_bin(), path);
	ret = system(cmd);
	unlink(path);
	if (ret)
		return -1;
	return attached_prog("tr", "egress", cg_path);
}

/* The rule alone: the program's fd. */
static int prog_for(const char *rule)
{
	return prog_for_rules(rule, 0);
}

/* 1 pass, 0 drop, -1 the run failed */
static int run_on(int fd, const uint8_t *pkt, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len,
		    .repeat = 1);

	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	return o.retval;
}

/* Packets, from the Ethernet header on. */
#define ETH4 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x08, 0x00
#define ETH6 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x86, 0xdd
/* IPv4, 20 bytes, protocol P, fragment field F (big endian bytes) */
#define IP4(P, F0, F1) 0x45, 0, 0, 48, 0, 1, F0, F1, 64, P, 0, 0, \
	127, 0, 0, 1, 127, 0, 0, 2
/* IPv6, 40 bytes, next header N */
#define IP6(N) 0x60, 0, 0, 0, 0, 16, N, 64, \
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, \
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2
#define UDP53 0x9c, 0x40, 0x00, 0x35, 0, 16, 0, 0

static const uint8_t udp4[] = { ETH4, IP4(17, 0, 0), UDP53, 1, 2, 3, 4 };
/* the UDP header cut after its source port */
static const uint8_t udp4_short[] = { ETH4, IP4(17, 0, 0), 0x9c, 0x40 };
/* a later fragment (offset 8 bytes): protocol known, no UDP header */
static const uint8_t udp4_frag[] = { ETH4, IP4(17, 0, 1), UDP53, 1, 2 };
/* the first fragment (more fragments set): a transport header */
static const uint8_t udp4_first[] = { ETH4, IP4(17, 0x20, 0), UDP53 };
static const uint8_t udp6[] = { ETH6, IP6(17), UDP53 };
/* hop-by-hop (8), destination options (16), then UDP */
static const uint8_t udp6_ext[] = {
	ETH6, IP6(0), 60, 0, 1, 4, 0, 0, 0, 0,
	17, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UDP53,
};
/* AH (12 bytes: (len + 2) * 4), then UDP */
static const uint8_t udp6_ah[] = {
	ETH6, IP6(51), 17, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, UDP53,
};
/* a later fragment in a fragment header: UDP, no transport header */
static const uint8_t udp6_frag[] = {
	ETH6, IP6(44), 17, 0, 0, 8, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8,
};
/* an extension header cut short: the walk fails, l4proto unknown */
static const uint8_t udp6_cut[] = { ETH6, IP6(60), 17 };

struct tcase {
	const char *rule;
	const uint8_t *pkt;
	size_t len;
	int verdict;	/* 1 pass, 0 drop */
	const char *why;
};

#define P(x) x, sizeof(x)

static const struct tcase cases[] = {
	{ "udp dport 53 drop", P(udp4), 0, "a whole UDP header" },
	{ "udp dport 53 drop", P(udp4_short), 1, "a cut UDP header: no match" },
	{ "udp sport 40000 drop", P(udp4_short), 0, "the bytes that are there" },
	{ "meta l4proto udp drop", P(udp4_short), 0, "the protocol is known" },
	{ "udp dport 53 drop", P(udp4_frag), 1, "a later fragment: no UDP header" },
	{ "meta l4proto udp drop", P(udp4_frag), 0, "but its protocol" },
	{ "udp dport 53 drop", P(udp4_first), 0, "a first fragment has one" },
	{ "udp dport != 53 drop", P(udp4_short), 1, "!= does not match a missing header either" },
	{ "udp dport 53 drop", P(udp6), 0, "IPv6" },
	{ "udp dport 53 drop", P(udp6_ext), 0, "through hop-by-hop and destination options" },
	{ "meta l4proto udp drop", P(udp6_ext), 0, "the protocol after them" },
	{ "ip6 nexthdr 0 drop", P(udp6_ext), 0, "the raw next header field" },
	{ "udp dport 53 drop", P(udp6_ah), 1, "nf_tables stops at AH (IP6_FH_F_AUTH): no UDP header" },
	{ "meta l4proto ah drop", P(udp6_ah), 0, "its layer 4 protocol is AH" },
	{ "ah spi 1 drop", P(udp6_ah), 0, "AH's own fields, at the transport header" },
	{ "udp dport 53 drop", P(udp6_frag), 1, "an IPv6 later fragment: no UDP header" },
	{ "meta l4proto udp drop", P(udp6_frag), 0, "but its protocol" },
	{ "meta l4proto udp drop", P(udp6_cut), 1, "a cut extension header: protocol unknown" },
	{ "meta nfproto ipv6 drop", P(udp6_cut), 0, "still IPv6" },
	{ "meta length 32 drop", P(udp4), 0, "the length: 20 + 8 + 4 bytes" },
	{ "meta length 46 drop", P(udp4), 1, "not counting the Ethernet header" },
};

TEST(crafted_packets)
{
	size_t i;
	int fd, v;

	if (geteuid())
		SKIP(return, "needs root: BPF programs, namespaces");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		fd = prog_for(cases[i].rule);
		ASSERT_LE(0, fd) TH_LOG("cannot apply '%s'", cases[i].rule);
		v = run_on(fd, cases[i].pkt, cases[i].len);
		EXPECT_EQ(cases[i].verdict, v)
			TH_LOG("'%s' on case %zu (%s)", cases[i].rule, i,
			       cases[i].why);
		close(fd);
	}
}

/*
 * Statements in the classifier (rules it indexes, their statements run in
 * order after the match): the same sequence of verdicts as the rule alone
 * (compiled rule by rule) gives. A limit of burst 3 passes three packets
 * in a row, then a quota runs out.
 */
static const struct {
	const char *rule;
	int verdicts[6];	/* packet after packet */
} stateful[] = {
	{ "udp dport 53 limit rate 1/minute burst 3 packets counter drop",
	  { 0, 0, 0, 1, 1, 1 } },
	{ "udp dport 53 limit rate over 1/minute burst 3 packets drop",
	  { 1, 1, 1, 0, 0, 0 } },
	/* 32 bytes a packet: over 100 bytes from the fourth on */
	{ "udp dport 53 counter quota 100 bytes drop", { 0, 0, 0, 1, 1, 1 } },
	{ "udp dport 53 quota over 100 bytes drop", { 1, 1, 1, 0, 0, 0 } },
	{ "udp dport 53 meta mark set 7 meta mark 7 drop", { 0, 0, 0, 0, 0, 0 } },
};

TEST(statements_in_the_classifier)
{
	size_t i, k, fill;
	int fd, v;

	if (geteuid())
		SKIP(return, "needs root: BPF programs, namespaces");
	for (i = 0; i < ARRAY_SIZE(stateful); i++) {
		for (fill = 0; fill <= 20; fill += 20) {
			fd = prog_for_rules(stateful[i].rule, fill);
			ASSERT_LE(0, fd) TH_LOG("cannot apply '%s'",
						stateful[i].rule);
			for (k = 0; k < 6; k++) {
				v = run_on(fd, udp4, sizeof(udp4));
				EXPECT_EQ(stateful[i].verdicts[k], v)
					TH_LOG("'%s' after %zu other rules, packet %zu",
					       stateful[i].rule, fill, k + 1);
			}
			close(fd);
		}
	}
}

int main(int argc, char **argv)
{
	pid_t pid;
	int st;

	if (!geteuid()) {
		if (unshare(CLONE_NEWNET | CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    probe_private_bpffs() ||
		    probe_cgroup2_on_sys_fs_cgroup()) {
			perror("namespaces");
			return 1;
		}
		snprintf(cg_name, sizeof(cg_name), "cgfw-tr-%d", getpid());
		snprintf(cg_path, sizeof(cg_path), "/sys/fs/cgroup/%s", cg_name);
		mkdir(cg_path, 0755);
	}
	pid = fork();
	if (!pid)
		return test_harness_run(argc, argv);
	waitpid(pid, &st, 0);
	rmdir(cg_path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
