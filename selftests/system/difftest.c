// SPDX-License-Identifier: GPL-2.0
/*
 * Differential test: the bpf backend and the native cgroup family against
 * nft's inet family, verdict for verdict.
 *
 * Random rulesets (matches on addresses, ports, lengths, marks, families,
 * IPv6 extension headers, cpu, packet types, sets, intervals,
 * concatenations, verdict maps, sets the rules add to;
 * counters, quotas, mark statements; in half of them named counters,
 * quotas and limits, elements added with and without timeouts and
 * deleted, and a meter (a counter, quota or limit per element);
 * accept, drop, continue, return, jump, goto) are applied to a cgroup,
 * first with the emulated nft target (inet + socket cgroupv2), then with
 * the bpf backend, then with the native cgroup family where the kernel has
 * it. The same random UDP datagrams are sent by this process, which is in
 * the cgroup, under each. The emulated target is the oracle: the sender's
 * verdict (sent, or EPERM) and every counter must be the same under each.
 *
 * Then ClassBench-style access lists (selftests/lib/classbench.h: IPv4 and IPv6
 * prefixes of mixed lengths in address space made local here, tcp and
 * udp, exact ports and port ranges, overlapping rules, accept, drop,
 * counters), large enough that the bpf backend compiles them into its
 * classifier, with packets aimed at the rules' boundaries: the first and
 * last address of a prefix and the nearest ones outside it, both ends of
 * a port range and one beyond each, inside overlapping rules, and misses.
 * TCP packets are connection attempts (their SYN), UDP ones datagrams.
 *
 * Then, with -C DIR, ClassBench's own lists acl1_10k, fw1_10k and ipc1_10k
 * (selftests/lib/classbench.h's cb_load(): rule i accepts when i is even, a
 * counter on every fourth rule) and the first PACKETS_PER_TRACE packets of
 * their traces, then acl1_10k in IPv6 (cb_v6_rule()) with each packet in
 * IPv6 and in IPv4; skipped, with the reason, where DIR does not have them.
 *
 *   difftest [-s SEED] [-r RULESETS] [-p PACKETS_PER_RULESET]
 *	      [-L RULES] [-l LISTS] [-P PACKETS_PER_LIST]
 *	      [-C DIR] [-T PACKETS_PER_TRACE]
 *
 * Runs as root in its own network and mount namespace. Prints TAP.
 * Environment: CGFW, the cgfw binary (default build/cgfw).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "cgfwcmd.h"
#include "netprobe.h"
#include "listjson.h"
#include "classbench.h"

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)	/* xorshift64*, uniform enough */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32) % n;
}

#define PICK(arr) (arr[rnd(sizeof(arr) / sizeof(arr[0]))])

static const char *const v4[] = {
	"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4",
};
static const char *const v6[] = { "::1", "fd00::1", "fd00::2", "fd00::3" };
static const char *const v4_prefix[] = {
	"127.0.0.0/30", "127.0.0.2/31", "127.0.0.0/8", "127.0.0.4/32",
};
static const char *const ops[] = { "", "!= ", "< ", "> ", "<= ", ">= " };

#define PORT0 40000
#define NPORTS 8

struct sb {
	char buf[32768];
	size_t len;
};

static void add(struct sb *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	s->len += vsnprintf(s->buf + s->len, sizeof(s->buf) - s->len, fmt, ap);
	va_end(ap);
	if (s->len >= sizeof(s->buf))
		s->len = sizeof(s->buf) - 1;
}

static int port(void)
{
	return PORT0 + rnd(NPORTS);
}

/*
 * What one rule has said so far: its family (4, 6, 0: none yet) in the
 * low byte, and whether it matched udp fields or said tcp: nft refuses
 * a rule with both.
 */
#define FAM(x)		((x) & 0xff)
#define SAID_UDP	0x100
#define SAID_TCP	0x200

/* May this rule match a udp field? It then says udp. */
static bool udp_ok(int *fam)
{
	if (*fam & SAID_TCP)
		return false;
	*fam |= SAID_UDP;
	return true;
}

static void set_fam(int *fam, int f)
{
	*fam = (*fam & ~0xff) | f;
}

static void port_match(struct sb *s, const char *field)
{
	int a = port(), b = port();

	switch (rnd(4)) {
	case 0:
		add(s, "udp %s %s%d ", field, PICK(ops), a);
		break;
	case 1:
		add(s, "udp %s %s{ %d, %d, %d } ", field, rnd(3) ? "" : "!= ",
		    a, b, port());
		break;
	case 2:
		add(s, "udp %s %s%d-%d ", field, rnd(3) ? "" : "!= ",
		    a < b ? a : b, a < b ? b : a);
		break;
	default:	/* an interval set */
		add(s, "udp %s { %d-%d, %d } ", field, PORT0, PORT0 + rnd(3),
		    PORT0 + 5 + rnd(3));
	}
}

/*
 * The ruleset being made declares named objects and sets the rules add
 * to (set dyn) and meter (set met, with this statement for each element).
 */
static bool stateful;
static const char *meter_stmt;

/* One match; @fam: 4, 6, or 0 when the rule has no family yet. */
static void match(struct sb *s, int *fam)
{
	int a;

	if (stateful && !rnd(8) && udp_ok(fam)) {
		add(s, "udp dport %s@dyn ", rnd(3) ? "" : "!= ");
		return;
	}

	switch (rnd(13)) {
	case 0:
		if (udp_ok(fam))
			port_match(s, "dport");
		break;
	case 1:
		if (udp_ok(fam))
			port_match(s, "sport");
		break;
	case 2:
		if (FAM(*fam) == 6)
			break;
		set_fam(fam, 4);
		switch (rnd(4)) {
		case 0:
			add(s, "ip %s %s%s ", rnd(2) ? "daddr" : "saddr",
			    rnd(3) ? "" : "!= ", PICK(v4));
			break;
		case 1:
			add(s, "ip daddr %s ", PICK(v4_prefix));
			break;
		case 2:
			add(s, "ip daddr { %s, %s } ", PICK(v4), PICK(v4));
			break;
		default:
			add(s, "ip saddr { 127.0.0.0/31, %s } ", PICK(v4));
		}
		break;
	case 3:
		if (FAM(*fam) == 4)
			break;
		set_fam(fam, 6);
		if (rnd(2))
			add(s, "ip6 daddr %s%s ", rnd(3) ? "" : "!= ", PICK(v6));
		else
			add(s, "ip6 saddr { %s, %s } ", PICK(v6), PICK(v6));
		break;
	case 4:
		add(s, "meta length %s%u ", PICK(ops), 40 + rnd(200));
		break;
	case 5:
		add(s, "meta mark %s%u ", rnd(2) ? "" : "!= ", rnd(3));
		break;
	case 6:
		if (*fam)
			break;
		*fam = rnd(2) ? 4 : 6;
		add(s, "meta nfproto %s ", FAM(*fam) == 4 ? "ipv4" : "ipv6");
		break;
	case 7:
		if (rnd(2) || FAM(*fam) == 4) {
			if (rnd(4) || (*fam & SAID_UDP)) {
				add(s, "meta l4proto udp ");
			} else {
				*fam |= SAID_TCP;
				add(s, "meta l4proto tcp ");
			}
			break;
		}
		/* the raw field: 60 when a destination options header comes */
		set_fam(fam, 6);
		add(s, "ip6 nexthdr %s ", PICK(((const char *const[]){
			"udp", "60", "0", "{ udp, 60 }" })));
		break;
	case 8:
		if (FAM(*fam) == 6 || !udp_ok(fam))
			break;
		set_fam(fam, 4);
		if (rnd(2)) {
			add(s, "ip daddr . udp dport { %s . %d, %s . %d } ",
			    PICK(v4), port(), PICK(v4), port());
			break;
		}
		/* intervals of concatenations: boxes, apart by their ports */
		a = PORT0 + rnd(4);
		add(s, "ip daddr . udp dport { %s . %d-%d, %s . %d } ",
		    PICK(v4_prefix), a, a + 1 + rnd(2), PICK(v4), a + 3);
		break;
	case 9:
		if (FAM(*fam) == 4 || !udp_ok(fam))
			break;
		set_fam(fam, 6);
		if (rnd(2)) {
			add(s, "ip6 daddr . udp dport { %s . %d } ", PICK(v6),
			    port());
			break;
		}
		a = PORT0 + rnd(4);
		add(s, "ip6 daddr . udp dport { %s . %d-%d, fd00::/127 . %d } ",
		    PICK(v6), a, a + 1 + rnd(2), a + 3);
		break;
	case 10:	/* the headers some IPv6 datagrams carry */
		if (FAM(*fam) == 4)
			break;
		set_fam(fam, 6);
		switch (rnd(4)) {
		case 0:
			add(s, "exthdr %s %s ", rnd(2) ? "hbh" : "dst",
			    rnd(2) ? "exists" : "missing");
			break;
		case 1:
			add(s, "%s nexthdr %s ", rnd(2) ? "hbh" : "dst",
			    rnd(2) ? "udp" : "tcp");
			break;
		case 2:
			add(s, "%s hdrlength %s%u ", rnd(2) ? "hbh" : "dst",
			    rnd(2) ? "" : "!= ", rnd(4));
			break;
		default:
			add(s, "exthdr rt missing ");
		}
		break;
	case 11:	/* the sender runs on CPU 0 (main()) */
		if (rnd(2))
			add(s, "meta cpu %s%u ", PICK(ops), rnd(2));
		else
			add(s, "meta pkttype %s ", PICK(((const char *const[]){
				"host", "multicast", "broadcast",
				"{ host, other }" })));
		break;
	default:
		if (udp_ok(fam))
			add(s, "udp length %s%u ", PICK(ops), 8 + rnd(200));
	}
}

/* A statement on the named objects, set dyn or the meter set met. */
static void stateful_stmt(struct sb *s, int *fam)
{
	switch (rnd(10)) {
	case 0:
		add(s, "counter name \"c0\" ");
		break;
	case 1:
		add(s, "quota name \"q0\" ");
		break;
	case 2:
		add(s, "limit name \"l0\" ");
		break;
	case 3:
		if (udp_ok(fam))
			add(s, "add @dyn { udp dport } ");
		break;
	case 4:
		if (udp_ok(fam))
			add(s, "add @dyn { udp dport timeout %us } ", 60 + rnd(60));
		break;
	case 5:
		if (udp_ok(fam))
			add(s, "delete @dyn { udp dport } ");
		break;
	case 6:
	case 7:
		if (udp_ok(fam))
			add(s, "update @met { udp dport %s } ", meter_stmt);
		break;
	}
}

static void rule(struct sb *s, bool may_jump)
{
	static const char *const verdicts[] = {
		"accept", "drop", "continue", "return", "",
	};
	int fam = 0, n = rnd(4), i;

	add(s, "\t\t");
	for (i = 0; i < n; i++)
		match(s, &fam);
	if (stateful)
		stateful_stmt(s, &fam);
	if (!rnd(3))
		add(s, "counter ");
	if (!rnd(8))	/* the same packets in the same order: same state */
		add(s, "quota %s%u bytes ", rnd(2) ? "over " : "",
		    100 + rnd(3000));
	if (!rnd(6))
		add(s, "meta mark set %u ", rnd(3));
	if (may_jump && !rnd(6) && udp_ok(&fam)) {
		int a = port(), b = PORT0 + (a - PORT0 + 1 + rnd(NPORTS - 2)) % NPORTS;
		int c = PORT0 + (b - PORT0 + 1) % NPORTS;

		if (c == a)
			c = PORT0 + (c - PORT0 + 1) % NPORTS;
		add(s, "udp dport vmap { %d : accept, %d : drop, %d : jump sub } ",
		    a, b, c);
	} else if (may_jump && !rnd(5)) {
		add(s, "%s sub", rnd(2) ? "jump" : "goto");
	} else {
		add(s, "%s", PICK(verdicts));
	}
	add(s, "\n");
}

/*
 * A rule the classifier indexes (matches, a counter, a verdict: no
 * statement); in long chains most rules are these, so that runs of them
 * become trees.
 */
static void rule_idx(struct sb *s, bool may_jump)
{
	static const char *const verdicts[] = {
		"accept", "drop", "continue", "return", "",
	};
	int fam = 0, n = 1 + rnd(3), i;

	add(s, "\t\t");
	for (i = 0; i < n; i++)
		match(s, &fam);
	if (!rnd(3))
		add(s, "counter ");
	if (may_jump && !rnd(6))
		add(s, "%s sub", rnd(2) ? "jump" : "goto");
	else
		add(s, "%s", PICK(verdicts));
	add(s, "\n");
}

/*
 * A run of rules alike but for one constant (the bpf backend makes them
 * one lookup): duplicates, counters, mixed verdicts, a shared prefix.
 */
static void run_of_rules(struct sb *s)
{
	static const char *const verdicts[] = {
		"accept", "drop", "return", "goto sub",
	};
	static const char *const prefixes[] = {
		"", "meta l4proto udp ", "ip daddr 127.0.0.0/30 ",
		"ip6 daddr { ::1, fd00::1 } ", "meta mark 1 ",
	};
	const char *prefix = PICK(prefixes);
	bool counter = rnd(2), same = rnd(2);
	const char *v = PICK(verdicts);
	int i, n = 16 + rnd(24);

	for (i = 0; i < n; i++)
		add(s, "\t\t%sudp dport %d %s%s\n", prefix, port(),
		    counter ? "counter " : "", same ? v : PICK(verdicts));
}

static void ruleset(struct sb *s, const char *cg)
{
	static const char *const meters[] = {
		"counter", "quota over 150 bytes",
		"limit rate over 1/hour burst 2 packets",
	};
	int i, n = 1 + rnd(8);

	add(s, "table cgroup t {\n");
	stateful = rnd(2);
	if (stateful) {
		meter_stmt = PICK(meters);
		add(s, "\tcounter c0 { }\n\tquota q0 { over %u bytes }\n"
		       "\tlimit l0 { rate 1/hour burst %u packets }\n"
		       "\tset dyn { type inet_service; flags dynamic, timeout; timeout 1h; }\n"
		       "\tset met { type inet_service; flags dynamic; }\n",
		    200 + rnd(2000), 2 + rnd(6));
	}
	add(s, "\tchain out {\n"
	       "\t\ttype filter hook egress cgroup \"%s\" priority 0; policy %s;\n",
	    cg, rnd(2) ? "accept" : "drop");
	if (rnd(2)) {
		/* a long chain: mostly indexable rules, a classifier's */
		int m = 16 + rnd(40);

		for (i = 0; i < m; i++) {
			if (rnd(10))
				rule_idx(s, true);
			else
				rule(s, true);
		}
	}
	for (i = 0; i < n; i++) {
		if (!rnd(12))
			run_of_rules(s);
		rule(s, true);
	}
	add(s, "\t}\n\tchain sub {\n");
	for (i = 0, n = 1 + rnd(3); i < n; i++)
		rule(s, false);
	if (!rnd(4))	/* a classifier in the chain jumped to */
		for (i = 0, n = 16 + rnd(24); i < n; i++)
			rule_idx(s, false);
	add(s, "\t}\n}\n");
}

struct packet {
	int v6, saddr, daddr, sport, dport, len, mark;
	int exthdr;	/* IPv6: 0, or IPV6_HOPOPTS / IPV6_DSTOPTS */
	int extlen;	/* its length in 8-byte units, minus one */
};

static void packet_str(const struct packet *p, char *buf, size_t size)
{
	snprintf(buf, size, "udp %s:%d -> %s:%d, %d bytes, mark %d%s",
		 p->v6 ? v6[p->saddr] : v4[p->saddr], p->sport,
		 p->v6 ? v6[p->daddr] : v4[p->daddr], p->dport, p->len,
		 p->mark, !p->exthdr ? "" :
		 p->exthdr == IPV6_HOPOPTS ? ", hop-by-hop header" :
					     ", destination options header");
}

/* sendmsg, with an IPv6 extension header as ancillary data if asked */
static ssize_t send_with_exthdr(int fd, const struct packet *p,
				const struct probe_addr *dst, char *payload)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(256)];
	} ctl;
	struct iovec iov = { payload, p->len };
	struct msghdr msg = {
		.msg_name = (void *)&dst->ss, .msg_namelen = dst->len,
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	size_t hlen = (p->extlen + 1) * 8;
	struct cmsghdr *c;
	uint8_t *opt;

	if (p->exthdr) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(hlen);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = IPPROTO_IPV6;
		c->cmsg_type = p->exthdr;
		c->cmsg_len = CMSG_LEN(hlen);
		opt = CMSG_DATA(c);
		opt[1] = p->extlen;	/* the kernel sets the next header */
		opt[2] = 1;		/* PadN over the rest */
		opt[3] = hlen - 4;
	}
	return sendmsg(fd, &msg, 0);
}

/* Send one datagram: PROBE_PASSED, PROBE_EPERM or PROBE_ERROR. */
static int send_packet(const struct packet *p)
{
	struct probe_addr src, dst;
	char payload[256] = { 0 };
	int fd, one = 1, ret;

	probe_addr(&src, p->v6 ? v6[p->saddr] : v4[p->saddr], p->sport);
	probe_addr(&dst, p->v6 ? v6[p->daddr] : v4[p->daddr], p->dport);
	fd = socket(src.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return PROBE_ERROR;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &p->mark, sizeof(p->mark)) ||
	    bind(fd, (struct sockaddr *)&src.ss, src.len)) {
		close(fd);
		return PROBE_ERROR;
	}
	ret = send_with_exthdr(fd, p, &dst, payload) == p->len ? PROBE_PASSED :
	      errno == EPERM ? PROBE_EPERM : PROBE_ERROR;
	close(fd);
	return ret;
}

/*
 * The counters of "cgfw list -j t", chain by chain, as one string
 * "out: 1/84 0/0 | sub: ...": packets/bytes of each rule with a counter,
 * and the policy; and those of the named counter and quota.
 */
static int counters(char *buf, size_t size)
{
	static char out[1 << 22];	/* an access list's 1,000 rules */
	const char *chain, *pk, *by;
	struct jobj *o;
	size_t n, i, len = 0;

	if (run(out, sizeof(out), "%s list -j t", cgfw_bin()) ||
	    jobjs_read(out, &o, &n))
		return -1;
	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++) {
		if ((chain = jget(&o[i], "chain.name"))) {
			pk = jget(&o[i], "chain.cgfw.policy_counter.packets");
			by = jget(&o[i], "chain.cgfw.policy_counter.bytes");
			len += snprintf(buf + len, size - len, "%s policy %s/%s | ",
					chain, pk ? pk : "-", by ? by : "-");
		} else if ((pk = jget(&o[i], "counter.packets"))) {
			by = jget(&o[i], "counter.bytes");
			len += snprintf(buf + len, size - len,
					"counter %s/%s | ", pk, by ? by : "-");
		} else if ((by = jget(&o[i], "quota.used"))) {
			len += snprintf(buf + len, size - len, "quota %s | ",
					by);
		} else if ((chain = jget(&o[i], "rule.chain")) &&
			   (pk = jget(&o[i], "rule.cgfw.counter.packets"))) {
			by = jget(&o[i], "rule.cgfw.counter.bytes");
			len += snprintf(buf + len, size - len, "%s %s/%s | ",
					chain, pk, by ? by : "-");
		}
	}
	jobjs_free(o, n);
	return len < size ? 0 : -1;
}

static int write_rules(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static const char *const root = "/sys/fs/cgroup";
static char cg_name[64];	/* the test's cgroup, below root */

/*
 * Wait until no BPF program is attached at the egress of cgroup @cg: a
 * pinned link that cgfw removed is detached by a kernel work item a
 * moment later, and until then the previous ruleset's program would
 * judge the oracle's packets too.
 */
static void wait_no_bpf(const char *cg)
{
	char path[PATH_MAX];
	int fd, i;

	snprintf(path, sizeof(path), "%s/%s", root, cg);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (i = 0; i < 2000; i++) {
		union bpf_attr attr;
		struct timespec ms = { 0, 1000000 };

		memset(&attr, 0, sizeof(attr));
		attr.query.target_fd = fd;
		attr.query.attach_type = BPF_CGROUP_INET_EGRESS;
		if (syscall(__NR_bpf, BPF_PROG_QUERY, &attr, sizeof(attr)) ||
		    !attr.query.prog_cnt)
			break;
		nanosleep(&ms, NULL);
	}
	close(fd);
}

/*
 * The instructions the verifier processed for the program at the egress
 * of cgroup @cg (the first, if there are more); 0 if it cannot be told.
 */
static unsigned int verified_insns(const char *cg)
{
	struct bpf_prog_info info;
	char path[PATH_MAX];
	union bpf_attr attr;
	uint32_t id = 0;
	int fd, prog;

	snprintf(path, sizeof(path), "%s/%s", root, cg);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	memset(&attr, 0, sizeof(attr));
	attr.query.target_fd = fd;
	attr.query.attach_type = BPF_CGROUP_INET_EGRESS;
	attr.query.prog_ids = (uintptr_t)&id;
	attr.query.prog_cnt = 1;
	syscall(__NR_bpf, BPF_PROG_QUERY, &attr, sizeof(attr));
	close(fd);
	if (!id)
		return 0;
	memset(&attr, 0, sizeof(attr));
	attr.prog_id = id;
	prog = syscall(__NR_bpf, BPF_PROG_GET_FD_BY_ID, &attr, sizeof(attr));
	if (prog < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = prog;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uintptr_t)&info;
	if (syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)))
		info.verified_insns = 0;
	close(prog);
	return info.verified_insns;
}

static void setup(char *cg, size_t size)
{
	char path[PATH_MAX];

	if (unshare(CLONE_NEWNET | CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    probe_private_bpffs() ||
	    probe_cgroup2_on_sys_fs_cgroup()) {
		printf("not ok 1 differential: cannot make namespaces: %s\n",
		       strerror(errno));
		exit(1);
	}
	snprintf(cg, size, "cgfw-diff-%d", getpid());
	snprintf(path, sizeof(path), "%s/%s", root, cg);
	mkdir(path, 0755);
	probe_lo_up();
	system("ip -6 addr add fd00::1/128 dev lo nodad && "
	       "ip -6 addr add fd00::2/128 dev lo nodad && "
	       "ip -6 addr add fd00::3/128 dev lo nodad");
}

/* The sender lives in the cgroup; its parent stays out to remove it. */
static int fork_into(const char *cg)
{
	char path[PATH_MAX];
	pid_t pid;
	FILE *f;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", root, cg);
		f = fopen(path, "w");
		if (!f || fprintf(f, "0\n") < 0 || fclose(f)) {
			printf("not ok 1 differential: cannot join the cgroup\n");
			exit(1);
		}
		return 0;
	}
	waitpid(pid, &st, 0);
	snprintf(path, sizeof(path), "%s/%s", root, cg);
	rmdir(path);
	exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

/* One backend under test: what it was asked and how often it differed. */
struct contender {
	const char *backend;
	unsigned long long pairs, drops, ext, bad, bad_counters, errors;
	unsigned int verified;	/* the most a list's program needed */
};

/*
 * What the verifier may process for an access list's program, at most:
 * the classifier needs 23,875 instructions on 6.12 and 2,907 on 6.18
 * (docs/classifier.rst); a walk that 6.12 could not prune needed 74,991
 * to over 1,000,000 there, where 6.18 still took it in 7,576.
 */
#define VERIFY_BUDGET 100000

/*
 * Apply the ruleset with c's backend, send every packet, compare verdicts
 * and counters with the oracle's. Returns the number of reports printed.
 */
static int compare(struct contender *c, const char *rules_path,
		   const struct sb *s, int r, unsigned long long seed,
		   const struct packet *pk, int n_packets,
		   const int *verdict_oracle, const char *cnt_oracle,
		   int reported)
{
	static char cnt[8192], out[8192];
	int i;

	if (run(out, sizeof(out), "%s apply -b %s %s 2>&1", cgfw_bin(),
		c->backend, rules_path)) {
		c->bad++;
		if (reported++ < 3)
			printf("# ruleset %d (seed %llu): the %s backend refused it:\n# %s\n%s",
			       r, seed, c->backend, out, s->buf);
		return reported;
	}
	if (strcmp(c->backend, "bpf"))
		wait_no_bpf(cg_name);
	for (i = 0; i < n_packets; i++) {
		int v = send_packet(&pk[i]);
		char desc[256];

		c->pairs++;
		c->drops += v == PROBE_EPERM;
		c->ext += pk[i].exthdr != 0;
		/* a datagram that was not sent tests nothing */
		c->errors += v == PROBE_ERROR ||
			     verdict_oracle[i] == PROBE_ERROR;
		if (v == verdict_oracle[i])
			continue;
		c->bad++;
		if (reported++ >= 3)
			continue;
		packet_str(&pk[i], desc, sizeof(desc));
		printf("# ruleset %d (seed %llu), packet %s: nft-emulated says %s, %s says %s\n",
		       r, seed, desc, probe_str(verdict_oracle[i]),
		       c->backend, probe_str(v));
		printf("%s", s->buf);
	}
	if (counters(cnt, sizeof(cnt))) {
		c->bad_counters++;
		if (reported++ < 3)
			printf("# ruleset %d (seed %llu): cgfw list of the %s table failed\n%s",
			       r, seed, c->backend, s->buf);
	} else if (strcmp(cnt_oracle, cnt)) {
		c->bad_counters++;
		if (reported++ < 3)
			printf("# ruleset %d (seed %llu): counters differ\n#  nft-emulated: %s\n#  %s: %s\n%s",
			       r, seed, cnt_oracle, c->backend, cnt, s->buf);
	}
	return reported;
}

/* ---- ClassBench-style lists ---- */

/*
 * Send one packet as it is, through a raw socket (the headers built here,
 * any source address): what happened to it. A raw socket's sendmsg()
 * reports an egress drop as EPERM for TCP as for UDP (a TCP socket's
 * connect() does not: it would send the SYN again later).
 */
static int send_cb(const struct cb_packet *p)
{
	uint8_t pkt[80] = { 0 }, *l4;
	struct sockaddr_storage dst = { 0 };
	socklen_t dlen;
	size_t len, l3 = p->v6 ? 40 : 20;
	size_t l4len = p->proto == CB_TCP ? 20 : p->proto == CB_UDP ? 16 : 8;
	int fd, ret, one = 1;

	len = l3 + l4len;
	l4 = pkt + l3;
	if (p->v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&dst;

		pkt[0] = 0x60;
		pkt[4] = l4len >> 8;
		pkt[5] = l4len;
		pkt[6] = p->proto;
		pkt[7] = 64;
		memcpy(pkt + 8, p->src.b, 16);
		memcpy(pkt + 24, p->dst.b, 16);
		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, p->dst.b, 16);
		dlen = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&dst;

		pkt[0] = 0x45;
		pkt[2] = len >> 8;
		pkt[3] = len;
		pkt[8] = 64;
		pkt[9] = p->proto;
		memcpy(pkt + 12, p->src.b, 4);
		memcpy(pkt + 16, p->dst.b, 4);
		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, p->dst.b, 4);
		dlen = sizeof(*s4);
	}
	l4[0] = p->sport >> 8;
	l4[1] = p->sport;
	l4[2] = p->dport >> 8;
	l4[3] = p->dport;
	if (p->proto == CB_TCP) {
		l4[12] = 5 << 4;	/* data offset */
		l4[13] = 0x02;		/* SYN */
		l4[15] = 0xff;		/* window */
	} else if (p->proto == CB_UDP) {
		l4[4] = l4len >> 8;
		l4[5] = l4len;
	}
	fd = socket(p->v6 ? AF_INET6 : AF_INET, SOCK_RAW | SOCK_CLOEXEC,
		    IPPROTO_RAW);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one,
				 sizeof(one))) {
		if (fd >= 0)
			close(fd);
		return PROBE_ERROR;
	}
	ret = sendto(fd, pkt, len, 0, (struct sockaddr *)&dst, dlen) ==
	      (ssize_t)len ? PROBE_PASSED :
	      errno == EPERM ? PROBE_EPERM : PROBE_ERROR;
	close(fd);
	return ret;
}

static void cb_packet_str(const struct cb_packet *p, char *buf, size_t size)
{
	char a[64], b[64];

	cb_addr_str(&p->src, p->v6, a, sizeof(a));
	cb_addr_str(&p->dst, p->v6, b, sizeof(b));
	snprintf(buf, size, "%s %s%s%s:%d -> %s%s%s:%d",
		 p->proto == CB_TCP ? "tcp" : "udp", p->v6 ? "[" : "", a,
		 p->v6 ? "]" : "", p->sport, p->v6 ? "[" : "", b,
		 p->v6 ? "]" : "", p->dport);
}

/* Every address is this namespace's own: packets go out, and come back. */
static int large_setup(void)
{
	return system("ip route add local 0.0.0.0/0 dev lo && "
		      "ip -6 route add local ::/0 dev lo");
}

/*
 * List @s, written to @rules_path, and its @n_packets packets: the oracle,
 * then each contender; its differences into the contenders. @what names
 * the list in reports. Reports printed.
 */
static int run_list(struct contender *cs, int n_cs, const char *rules_path,
		    const struct cb_set *s, bool policy_drop,
		    const struct cb_packet *pk, int n_packets, const char *what,
		    int reported)
{
	static char cnt_oracle[1 << 18], cnt[1 << 18], out[8192];
	int *oracle = calloc(n_packets + 1, sizeof(*oracle));
	int *ref = calloc(n_packets + 1, sizeof(*ref));
	int i, k, disagree = 0;
	FILE *f;

	for (i = 0; i < n_packets; i++)
		ref[i] = cb_match(s, &pk[i]);
	f = fopen(rules_path, "w");
	if (!f || !oracle || !ref)
		goto out;
	cb_table_text(f, s, "t", cg_name, "egress", policy_drop);
	fclose(f);
	if (run(out, sizeof(out), "%s apply -b nft-emulated %s 2>&1",
		cgfw_bin(), rules_path)) {
		printf("# %s: the oracle refused it:\n# %s", what, out);
		for (k = 0; k < n_cs; k++)
			cs[k].bad++;
		goto out;
	}
	wait_no_bpf(cg_name);
	for (i = 0; i < n_packets; i++) {
		oracle[i] = send_cb(&pk[i]);
		/* the reference first match: a check of the lists' reading */
		disagree += (oracle[i] == PROBE_EPERM) !=
			    (ref[i] >= 0 ? s->rules[ref[i]].drop : policy_drop);
	}
	if (disagree)
		printf("# %s: the reference first match and nft disagree on %d packets\n",
		       what, disagree);
	if (counters(cnt_oracle, sizeof(cnt_oracle))) {
		printf("# %s: cgfw list of the oracle failed\n", what);
		for (k = 0; k < n_cs; k++)
			cs[k].bad_counters++;
		goto out;
	}
	for (k = 0; k < n_cs; k++) {
		struct contender *c = &cs[k];

		if (run(out, sizeof(out), "%s apply -b %s %s 2>&1",
			cgfw_bin(), c->backend, rules_path)) {
			c->bad++;
			if (reported++ < 3)
				printf("# %s: the %s backend refused it:\n# %s",
				       what, c->backend, out);
			continue;
		}
		if (strcmp(c->backend, "bpf")) {
			wait_no_bpf(cg_name);
		} else {
			unsigned int v = verified_insns(cg_name);

			c->verified = v > c->verified ? v : c->verified;
		}
		for (i = 0; i < n_packets; i++) {
			int v = send_cb(&pk[i]);
			char desc[256];

			c->pairs++;
			c->drops += v == PROBE_EPERM;
			c->errors += v == PROBE_ERROR ||
				     oracle[i] == PROBE_ERROR;
			if (v == oracle[i])
				continue;
			c->bad++;
			if (reported++ >= 3)
				continue;
			cb_packet_str(&pk[i], desc, sizeof(desc));
			printf("# %s, packet %s: nft-emulated says %s, %s says %s; first match by the reference: rule %d:\n#   ",
			       what, desc, probe_str(oracle[i]), c->backend,
			       probe_str(v), ref[i] + 1);
			if (ref[i] >= 0)
				cb_rule_text(stdout, &s->rules[ref[i]]);
			printf("\n");
		}
		if (counters(cnt, sizeof(cnt))) {
			c->bad_counters++;
			if (reported++ < 3)
				printf("# %s: cgfw list of the %s table failed\n",
				       what, c->backend);
		} else if (strcmp(cnt_oracle, cnt)) {
			c->bad_counters++;
			if (reported++ < 3) {
				for (i = 0; cnt[i] && cnt[i] == cnt_oracle[i];
				     i++)
					;
				printf("# %s: counters differ from character %d on:\n#  nft-emulated: %.80s\n#  %s: %.80s\n",
				       what, i, cnt_oracle + i, c->backend,
				       cnt + i);
			}
		}
	}
out:
	free(oracle);
	free(ref);
	return reported;
}

/*
 * One list of @n_rules rules and @n_packets packets, at its rules'
 * boundaries mostly.
 */
static int large_list(struct contender *cs, int n_cs, const char *rules_path,
		      int n_rules, int n_packets, unsigned long long seed,
		      int reported)
{
	struct cb_packet *pk = calloc(n_packets + 1, sizeof(*pk));
	struct cb_cfg cfg;
	struct cb_set s;
	struct cb_rng r;
	char what[128];
	int i;

	cb_default_cfg(&cfg);
	cb_generate(&s, &cfg, n_rules, seed);
	cb_seed(&r, seed ^ 0xd1ff);
	for (i = 0; pk && i < n_packets; i++) {
		int kind = cb_rnd(&r, 10);

		if (!n_rules || kind == 0) {
			if (cb_packet_miss(&r, &s, cb_rnd(&r, 2), &pk[i]))
				cb_packet_in(&r, &s, 0, true, &pk[i]);
		} else {
			/* edges mostly; a rule's inside, where rules overlap */
			cb_packet_in(&r, &s, cb_rnd(&r, n_rules), kind > 2,
				     &pk[i]);
		}
	}
	snprintf(what, sizeof(what), "list of %d rules (seed %llu)", n_rules,
		 seed);
	if (pk)
		reported = run_list(cs, n_cs, rules_path, &s, cb_rnd(&r, 2), pk,
				    n_packets, what, reported);
	cb_free(&s);
	free(pk);
	return reported;
}

/*
 * ClassBench's own list @name from @dir and the first @n_packets packets
 * of its trace, a counter on every fourth rule. -1: not there.
 */
static int classbench_list(struct contender *cs, int n_cs,
			   const char *rules_path, const char *dir,
			   const char *name, bool v6, int n_packets,
			   int *reported)
{
	char path[PATH_MAX], what[128];
	struct cb_packet *pk;
	struct cb_set s;
	int i, n, line;

	snprintf(path, sizeof(path), "%s/%s.txt.xz", dir, name);
	if (access(path, R_OK))
		return -1;
	snprintf(what, sizeof(what), "ClassBench %s%s", name,
		 v6 ? " in IPv6" : "");
	if (cb_load(&s, path, &line)) {
		printf("# %s: %s:%d: %s\n", what, path, line, strerror(errno));
		cs[0].bad++;
		return 0;
	}
	for (i = 0; i < s.n; i += 4)
		s.rules[i].counter = 1;
	snprintf(path, sizeof(path), "%s/%s.trace.xz", dir, name);
	n = cb_load_trace(path, &pk, n_packets);
	if (n > 0 && v6) {
		struct cb_packet *p2 = realloc(pk, 2 * n * sizeof(*pk));

		if (p2) {
			pk = p2;
			for (i = 0; i < s.n; i++)
				cb_v6_rule(&s.rules[i]);
			/* each packet in IPv6, and as it was */
			memcpy(pk + n, pk, n * sizeof(*pk));
			for (i = 0; i < n; i++)
				cb_v6_packet(&pk[i]);
			n *= 2;
		}
	}
	if (n <= 0) {
		printf("# %s: %s: %s\n", what, path,
		       n ? strerror(errno) : "no packets");
		cs[0].bad++;
	} else {
		*reported = run_list(cs, n_cs, rules_path, &s, false, pk, n,
				     what, *reported);
	}
	free(pk);
	cb_free(&s);
	return 0;
}

/* The generated lists' results, as TAP. Whether any failed. */
static int report_lists(struct contender *cs, int n_cs, int n_large,
			int n_lists, unsigned long long seed, int *test)
{
	int k, failed = 0;

	for (k = 0; k < 2; k++) {
		struct contender *c = &cs[k];

		if (k >= n_cs) {
			printf("ok %d differential: access lists, %s # SKIP this kernel has no nf_tables cgroup family\n",
			       ++*test, c->backend);
			continue;
		}
		failed |= c->bad || c->errors || c->bad_counters;
		printf("%s %d differential: %d access lists of %d rules, %llu (list, packet) pairs at rule boundaries, %s verdict == nft-emulated verdict, %llu of them drops (seed %llu)\n",
		       c->bad || c->errors ? "not ok" : "ok", ++*test, n_lists,
		       n_large, c->pairs, c->backend, c->drops, seed);
		if (c->errors)
			printf("# %llu packets could not be sent at all\n",
			       c->errors);
		printf("%s %d differential: access lists, %s counters equal\n",
		       c->bad_counters ? "not ok" : "ok", ++*test, c->backend);
		if (strcmp(c->backend, "bpf"))
			continue;
		if (!c->verified) {
			printf("ok %d differential: access lists, what the verifier processed # SKIP this kernel does not tell (verified_insns)\n",
			       ++*test);
			continue;
		}
		failed |= c->verified > VERIFY_BUDGET;
		printf("%s %d differential: access lists of %d rules, the bpf program verified in %u instructions (at most %d)\n",
		       c->verified > VERIFY_BUDGET ? "not ok" : "ok", ++*test,
		       n_large, c->verified, VERIFY_BUDGET);
	}
	return failed;
}

int main(int argc, char **argv)
{
	int n_rulesets = 100, n_packets = 100, opt, r, i, reported = 0;
	int n_large = 0, n_lists = 1, n_large_packets = 3000;
	char cg[64], rules_path[] = "/tmp/cgfw-diff-XXXXXX";
	static char cnt_oracle[8192], out[8192];
	struct contender cs[2] = { { .backend = "bpf" },
				   { .backend = "nft-native" } };
	int n_cs, k, test = 0, failed = 0;
	struct packet *pk;
	int *verdict_oracle;
	unsigned long long seed = 1, skipped = 0;
	cpu_set_t cpus;
	/* the fourth: acl1_10k again, in IPv6 */
	static const char *const cb_lists[] = {
		"acl1_10k", "fw1_10k", "ipc1_10k",
	};
	const char *cb_dir = NULL;
	int n_cb_packets = 2000;

	while ((opt = getopt(argc, argv, "s:r:p:L:l:P:C:T:")) != -1) {
		if (opt == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (opt == 'r')
			n_rulesets = atoi(optarg);
		else if (opt == 'p')
			n_packets = atoi(optarg);
		else if (opt == 'L')
			n_large = atoi(optarg);
		else if (opt == 'l')
			n_lists = atoi(optarg);
		else if (opt == 'P')
			n_large_packets = atoi(optarg);
		else if (opt == 'C')
			cb_dir = optarg;
		else if (opt == 'T')
			n_cb_packets = atoi(optarg);
	}
	if (geteuid()) {
		printf("ok 1 differential # SKIP needs root (namespaces, cgroups)\n");
		return 0;
	}
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	/* "meta cpu" rules: every packet from CPU 0 */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		printf("# cannot run on CPU 0 alone: %s\n", strerror(errno));
	setup(cg, sizeof(cg));
	snprintf(cg_name, sizeof(cg_name), "%s", cg);
	fork_into(cg);
	/* the native family is compared where the kernel has it */
	n_cs = native_family() ? 2 : 1;
	close(mkstemp(rules_path));
	pk = calloc(n_packets, sizeof(*pk));
	verdict_oracle = calloc(n_packets, sizeof(*verdict_oracle));

	for (r = 0; r < n_rulesets; r++) {
		struct sb s = { .len = 0 };

		ruleset(&s, cg);
		for (i = 0; i < n_packets; i++)
			pk[i] = (struct packet){
				.v6 = rnd(2), .saddr = rnd(4), .daddr = rnd(4),
				.sport = port(), .dport = port(),
				.len = rnd(200), .mark = rnd(3),
			};
		for (i = 0; i < n_packets; i++) {
			if (!pk[i].v6 || rnd(3))
				continue;
			pk[i].exthdr = rnd(2) ? IPV6_DSTOPTS : IPV6_HOPOPTS;
			pk[i].extlen = rnd(4);
		}
		write_rules(rules_path, s.buf);

		/* the oracle: nft's own inet family (socket cgroupv2) */
		if (run(out, sizeof(out), "%s apply -b nft-emulated %s 2>&1",
			cgfw_bin(), rules_path)) {
			skipped++;	/* nft itself refuses the combination */
			continue;
		}
		wait_no_bpf(cg);
		for (i = 0; i < n_packets; i++)
			verdict_oracle[i] = send_packet(&pk[i]);
		if (counters(cnt_oracle, sizeof(cnt_oracle))) {
			printf("not ok 1 differential: cgfw list of the oracle failed\n");
			return 1;
		}
		for (k = 0; k < n_cs; k++)
			reported = compare(&cs[k], rules_path, &s, r, seed, pk,
					   n_packets, verdict_oracle,
					   cnt_oracle, reported);
	}
	run(out, sizeof(out), "%s flush", cgfw_bin());
	unlink(rules_path);
	for (k = 0; k < 2; k++) {
		struct contender *c = &cs[k];

		if (k >= n_cs) {
			printf("ok %d differential: %s # SKIP this kernel has no nf_tables cgroup family (make vm-check runs it in the patched kernel)\n",
			       ++test, c->backend);
			printf("ok %d differential: %s counters # SKIP no cgroup family\n",
			       ++test, c->backend);
			continue;
		}
		failed |= c->bad || c->errors || c->bad_counters;
		printf("%s %d differential: %llu (ruleset, packet) pairs, %s verdict == nft-emulated verdict, %llu of them drops, %llu with an IPv6 extension header (seed %llu, %llu rulesets nft refused)\n",
		       c->bad || c->errors ? "not ok" : "ok", ++test, c->pairs,
		       c->backend, c->drops, c->ext, seed, skipped);
		if (c->errors)
			printf("# %llu datagrams could not be sent at all\n",
			       c->errors);
		printf("%s %d differential: %s counters of %d rulesets equal\n",
		       c->bad_counters ? "not ok" : "ok", ++test, c->backend,
		       n_rulesets - (int)skipped);
	}
	if (!n_large)
		return failed;

	/* the access lists, with contenders counted afresh */
	if (large_setup()) {
		printf("ok %d differential: access lists # SKIP cannot make 10.0.0.0/8 and fd00::/16 local here\n",
		       ++test);
		return failed;
	}
	memset(cs, 0, sizeof(cs));
	cs[0].backend = "bpf";
	cs[1].backend = "nft-native";
	reported = 0;
	for (r = 0; r < n_lists; r++)
		reported = large_list(cs, n_cs, rules_path, n_large,
				      n_large_packets, seed + r, reported);
	run(out, sizeof(out), "%s flush", cgfw_bin());
	failed |= report_lists(cs, n_cs, n_large, n_lists, seed, &test);

	/* ClassBench's own lists and traces, where they are */
	memset(cs, 0, sizeof(cs));
	cs[0].backend = "bpf";
	cs[1].backend = "nft-native";
	reported = 0;
	for (r = 0, i = 0; cb_dir && r < 4; r++)
		i += !classbench_list(cs, n_cs, rules_path, cb_dir,
				      cb_lists[r % 3], r == 3, n_cb_packets,
				      &reported);
	run(out, sizeof(out), "%s flush", cgfw_bin());
	unlink(rules_path);
	for (k = 0; k < 2; k++) {
		struct contender *c = &cs[k];

		if (!i || k >= n_cs) {
			printf("ok %d differential: ClassBench lists and traces, %s # SKIP %s\n",
			       ++test, c->backend, !i ?
			       "no ClassBench lists here (-C DIR)" :
			       "this kernel has no nf_tables cgroup family");
			continue;
		}
		failed |= c->bad || c->errors || c->bad_counters;
		printf("%s %d differential: %d ClassBench lists, %llu (list, trace packet) pairs, %s verdict == nft-emulated verdict, %llu of them drops\n",
		       c->bad || c->errors ? "not ok" : "ok", ++test, i,
		       c->pairs, c->backend, c->drops);
		if (c->errors)
			printf("# %llu packets could not be sent at all\n",
			       c->errors);
		printf("%s %d differential: ClassBench lists, %s counters equal\n",
		       c->bad_counters ? "not ok" : "ok", ++test, c->backend);
	}
	return failed;
}
