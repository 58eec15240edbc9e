// SPDX-License-Identifier: GPL-2.0
/*
 * ClassBench's own filter sets and traces through the bpf backend: each
 * list is applied to a cgroup as one egress chain (rule i accepts when i
 * is even, drops when it is odd; selftests/lib/classbench.h's cb_load()), and
 * every trace packet is test-run (BPF_PROG_TEST_RUN) on the attached
 * program and on a one-rule program, in turn, so that the machine's load
 * falls on both. The verdict of each is checked against the first match.
 *
 *   cb_trace [-6] [-d DIR] [-n PACKETS] [-p N] [-r REPEAT] [LIST...]
 *
 * DIR holds LIST.txt.xz and LIST.trace.xz (default: $CGFW_CLASSBENCH,
 * which make sets); LIST defaults to the six lists there. Prints one
 * line a list: rules, the apply's time, the program's memory (cgfw list),
 * the mean and 90th percentile of a packet's run over the mean of the
 * one-rule program's, and the verdicts that differ from the first match.
 * With -6, each list in IPv6 (cb_v6_rule(): prefixes of 32 to 128 bits,
 * nested as they were) and each packet twice, in IPv6 and as it was (an
 * IPv4 packet against an IPv6 list). With -p N, every Nth rule for tcp
 * is made one for tcp or udp ("meta l4proto { tcp, udp } th dport ..."),
 * as ClassBench's fw2 has rules with ports and no protocol.
 * Exits 77 with the reason when the lists are not there.
 * Runs as root in its own network and mount namespace.
 * Environment: CGFW, the cgfw binary (default build/cgfw).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfprog.h"
#include "cgfwcmd.h"
#include "classbench.h"
#include "netprobe.h"

static const char *const lists[] = {
	"acl1_10k", "fw1_10k", "ipc1_10k", "acl1_100k", "fw1_100k", "ipc1_100k",
};

static const char *cg = "cgfw-cbtrace";
static bool v6;		/* -6: the lists in IPv6, the packets in both */
static int any_every;	/* -p N: every Nth tcp rule for any protocol */
static char cg_path[PATH_MAX];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Ethernet, IPv4 or IPv6, the transport header (ports first). */
static size_t packet(const struct cb_packet *p, uint8_t *b)
{
	size_t l3 = p->v6 ? 40 : 20, l4len = p->proto == CB_TCP ? 20 : 8;
	uint8_t *ip = b + 14, *l4 = ip + l3;

	memset(b, 0, 14 + 40 + 20);
	if (p->v6) {
		b[12] = 0x86;	/* ETH_P_IPV6 */
		b[13] = 0xdd;
		ip[0] = 0x60;
		ip[4] = l4len >> 8;
		ip[5] = l4len;
		ip[6] = p->proto;
		ip[7] = 64;
		memcpy(ip + 8, p->src.b, 16);
		memcpy(ip + 24, p->dst.b, 16);
	} else {
		b[12] = 0x08;	/* ETH_P_IP */
		ip[0] = 0x45;
		ip[2] = (20 + l4len) >> 8;
		ip[3] = 20 + l4len;
		ip[8] = 64;
		ip[9] = p->proto;
		memcpy(ip + 12, p->src.b, 4);
		memcpy(ip + 16, p->dst.b, 4);
	}
	l4[0] = p->sport >> 8;
	l4[1] = p->sport;
	l4[2] = p->dport >> 8;
	l4[3] = p->dport;
	if (p->proto == CB_TCP)
		l4[12] = 5 << 4;
	else if (p->proto == CB_UDP)
		l4[5] = 8;
	return 14 + l3 + l4len;
}

static int test_run(int fd, uint8_t *pkt, size_t len, int repeat,
		    uint32_t *ns, uint32_t *ret)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o))
		return -errno;
	*ns = o.duration;
	*ret = o.retval;
	return 0;
}

static int apply(const char *table, const struct cb_set *s, double *secs,
		 char *out, size_t size)
{
	char path[PATH_MAX];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/tmp/cgfw-cbtrace-%d.nft", getpid());
	f = fopen(path, "w");
	if (!f)
		return -1;
	cb_table_text(f, s, table, cg, "egress", false);
	if (fclose(f))
		return -1;
	*secs = now();
	ret = run(out, size, "%s apply -b bpf %s 2>&1", cgfw_bin(), path);
	*secs = now() - *secs;
	unlink(path);
	return ret;
}

/* What cgfw list says the table holds in the kernel ("memory"). */
static void memory(const char *table, char *buf, size_t size)
{
	char out[4096], name[128], *m;

	snprintf(buf, size, "?");
	snprintf(name, sizeof(name), "\"table\":{\"family\":\"cgroup\",\"name\":\"%s\"",
		 table);
	if (run(out, sizeof(out), "%s list -j 2>/dev/null", cgfw_bin()))
		return;
	m = strstr(out, name);
	m = m ? strstr(m, "\"memory\":") : NULL;
	if (m)
		snprintf(buf, size, "%lld", strtoll(m + 9, NULL, 10));
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The one-rule program, "ip daddr 192.0.2.0/24 drop": a table "one"
 * beside the list's.
 */
static int one_rule(void)
{
	struct cb_rule r = { .dlen = 24, .drop = 1 };
	struct cb_set s = { .rules = &r, .n = 1 };
	char out[4096];
	double t;

	r.dst.b[0] = 192;
	r.dst.b[2] = 2;
	if (apply("one", &s, &t, out, sizeof(out))) {
		fprintf(stderr, "cb_trace: the one-rule table: %s", out);
		return -1;
	}
	return attached_prog("one", "egress", cg_path);
}

static int one_list(const char *dir, const char *name, int one, int max,
		    int repeat)
{
	char path[PATH_MAX], tpath[PATH_MAX], out[8192], mem[64];
	struct cb_set s;
	struct cb_packet *pk;
	double secs, *t, sum = 0, sum1 = 0;
	int i, n, fd, line, wrong = 0, first_wrong = -1;

	snprintf(path, sizeof(path), "%s/%s.txt.xz", dir, name);
	snprintf(tpath, sizeof(tpath), "%s/%s.trace.xz", dir, name);
	if (cb_load(&s, path, &line)) {
		printf("%-10s cannot read %s:%d: %s\n", name, path, line,
		       strerror(errno));
		return 1;
	}
	n = cb_load_trace(tpath, &pk, max);
	if (n <= 0) {
		printf("%-10s cannot read %s: %s\n", name, tpath,
		       n ? strerror(errno) : "no packets");
		cb_free(&s);
		return 1;
	}
	for (i = 0; any_every && i < s.n; i++)
		if (s.rules[i].proto == CB_TCP && i % any_every == any_every - 1)
			s.rules[i].proto = CB_TCPUDP;
	if (v6) {
		struct cb_packet *p2 = realloc(pk, 2 * n * sizeof(*pk));

		if (!p2) {
			printf("%-10s out of memory\n", name);
			cb_free(&s);
			free(pk);
			return 1;
		}
		pk = p2;
		for (i = 0; i < s.n; i++)
			cb_v6_rule(&s.rules[i]);
		/* each packet in IPv6, then as it was: a miss */
		memcpy(pk + n, pk, n * sizeof(*pk));
		for (i = 0; i < n; i++)
			cb_v6_packet(&pk[i]);
		n *= 2;
	}
	if (apply("cb", &s, &secs, out, sizeof(out))) {
		printf("%-10s %6d rules: the bpf backend refused it:\n%s", name,
		       s.n, out);
		cb_free(&s);
		free(pk);
		return 1;
	}
	fd = attached_prog("cb", "egress", cg_path);
	memory("cb", mem, sizeof(mem));
	t = calloc(n, sizeof(*t));
	for (i = 0; fd >= 0 && t && i < n; i++) {
		uint8_t b[96];
		size_t len = packet(&pk[i], b);
		uint32_t ns = 0, ns1 = 0, v = 0, v1 = 0;
		int m = cb_match(&s, &pk[i]);

		if (test_run(fd, b, len, repeat, &ns, &v) ||
		    test_run(one, b, len, repeat, &ns1, &v1))
			break;
		/* the packet passes unless its first match drops */
		if ((v & 1) != !(m >= 0 && s.rules[m].drop)) {
			if (!wrong++)
				first_wrong = i;
		}
		t[i] = ns;
		sum += ns;
		sum1 += ns1;
	}
	if (i < n) {
		printf("%-10s %6d rules: test run failed: %s\n", name, s.n,
		       strerror(errno));
		n = -1;
	} else {
		qsort(t, n, sizeof(*t), cmp_dbl);
		printf("%-10s %6d rules  apply %6.2f s  memory %10s B  %5d packets  one rule %5.1f ns  mean %6.1f ns (+%5.1f) %5.2fx  p90 %5.2fx  worst %6.2fx  wrong %d\n",
		       name, s.n, secs, mem, n, sum1 / n, sum / n,
		       (sum - sum1) / n, sum / sum1, t[n * 9 / 10] / (sum1 / n),
		       t[n - 1] / (sum1 / n), wrong);
		if (wrong)
			printf("#   first wrong: trace packet %d\n",
			       first_wrong + 1);
	}
	if (fd >= 0)
		close(fd);
	run(out, sizeof(out), "%s delete cb 2>&1", cgfw_bin());
	free(t);
	free(pk);
	cb_free(&s);
	return n < 0 || wrong;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("CGFW_CLASSBENCH");
	int opt, max = 2000, repeat = 200, one, i, bad = 0;
	char probe[PATH_MAX];

	if (!dir)
		dir = "";
	while ((opt = getopt(argc, argv, "6d:n:p:r:")) != -1) {
		switch (opt) {
		case 'p':
			any_every = atoi(optarg);
			break;
		case '6':
			v6 = true;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'n':
			max = atoi(optarg);
			break;
		case 'r':
			repeat = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: cb_trace [-6] [-d DIR] [-n PACKETS] [-p N] [-r REPEAT] [LIST...]\n");
			return 2;
		}
	}
	snprintf(probe, sizeof(probe), "%s/acl1_10k.txt.xz", dir);
	if (optind == argc && access(probe, R_OK)) {
		printf("# skip: no ClassBench lists in %s (CGFW_CLASSBENCH, -d)\n",
		       dir);
		return 77;
	}
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    probe_private_bpffs() || probe_cgroup2_on_sys_fs_cgroup()) {
		fprintf(stderr, "cb_trace: cannot make namespaces: %s\n",
			strerror(errno));
		return 1;
	}
	snprintf(cg_path, sizeof(cg_path), "/sys/fs/cgroup/%s", cg);
	mkdir(cg_path, 0755);
	one = one_rule();
	if (one < 0)
		return 1;
	printf("# %s%s%s, %d trace packets a list at most, %d runs each, the list's program and the one-rule program in turn\n",
	       dir, v6 ? " in IPv6 (the packets in both families)" : "",
	       any_every ? ", some tcp rules for any protocol (-p)" : "", max,
	       repeat);
	if (optind < argc)
		for (i = optind; i < argc; i++)
			bad |= one_list(dir, argv[i], one, max, repeat);
	else
		for (i = 0; i < (int)(sizeof(lists) / sizeof(*lists)); i++)
			bad |= one_list(dir, lists[i], one, max, repeat);
	close(one);
	return bad;
}
