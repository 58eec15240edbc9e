// SPDX-License-Identifier: GPL-2.0
/*
 * Two builds of cgfw's bpf backend, test run against test run
 * (cgfw_bench --ab BIN_B): the mixed list of @n rules and of one rule,
 * each applied by both builds to a cgroup of its own, then the
 * classifier's benchmark packets (tr4-early ... tr6-miss, and the live
 * rows' tr4-mixed) run through the four programs in turn, a batch of
 * BPF_PROG_TEST_RUNs each, round after round. The programs stay loaded
 * and alternate within a second, so the machine's load falls on both
 * builds alike: the way a change to the classifier's walk is measured
 * (docs/classifier.rst). Prints, per packet, each build's median and
 * fastest ns a run over the rounds, its ratio to one rule (of the same
 * family, the one-rule list's miss), and build B's median over A's.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define AB_PKTS 7
#define AB_REPEAT 100000
#define AB_MAX_ROUNDS 256

static const char *const ab_names[AB_PKTS] = {
	"tr4-early", "tr4-late", "tr4-miss", "tr6-early", "tr6-late",
	"tr6-miss", "tr4-mixed",
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Apply @n rules with @bin to cgroup @cg as table @table: the program */
static int ab_apply(const char *bin, const char *table, const struct cgref *cg,
		    int n, int maxn)
{
	struct ruleset rs = {
		.kind = K_RULES, .dir = EGRESS, .n = n, .cg = cg, .n_cg = 1,
		.sender = cg,
	};
	char err[512];
	int fd;

	rs.rules = shape_mixed.rules(maxn, 17);
	bench_table = table;
	if (bpf_apply_bin(bin, &rs, err, sizeof(err))) {
		fprintf(stderr, "bench: %s apply of %d rules: %s\n", bin, n,
			err);
		return -1;
	}
	fd = cgfw_prog_fd(&rs);
	if (fd < 0)
		fprintf(stderr, "bench: no program for table %s\n", table);
	return fd;
}

/* One batch of test runs of @k; 0, or 1 with why on stderr */
static int ab_testrun(int fd, const struct pkt *k, int want, uint32_t *ns,
		      const char *bin, const char *name)
{
	uint32_t verdict;
	int ret = testrun_pkt(fd, k, AB_REPEAT, ns, &verdict);

	if (ret) {
		fprintf(stderr, "bench: %s, %s: test run: %s\n", bin, name,
			strerror(-ret));
		return 1;
	}
	if (verdict != (uint32_t)want) {
		fprintf(stderr, "bench: %s, %s: verdict %u, nft's is %d (1 pass, 0 drop)\n",
			bin, name, verdict, want);
		return 1;
	}
	return 0;
}

static uint32_t median(uint32_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u32);
	return v[n / 2];
}

int ab_run(const char *bin_a, const char *bin_b, int n, int rounds,
	   const struct cgref *cg)
{
	static uint32_t t[2][AB_PKTS][AB_MAX_ROUNDS], one[2][2][AB_MAX_ROUNDS];
	const char *bins[2] = { bin_a, bin_b };
	int fd[2][2] = { { -1, -1 }, { -1, -1 } }, b, k, r, v6, ret = 0;
	int want[AB_PKTS];	/* the verdict nft gives, or -1: no packet */
	struct pkt pk[AB_PKTS], miss1[2];
	char err[256];

	if (rounds > AB_MAX_ROUNDS)
		rounds = AB_MAX_ROUNDS;
	for (b = 0; b < 2 && !ret; b++) {
		fd[b][0] = ab_apply(bins[b], b ? "ab_b1" : "ab_a1",
				    &cg[2 * b], 1, n);
		fd[b][1] = ab_apply(bins[b], b ? "ab_bn" : "ab_an",
				    &cg[2 * b + 1], n, n);
		ret = fd[b][0] < 0 || fd[b][1] < 0;
	}
	for (k = 0; k < 6; k++)
		want[k] = mixed_bench_packet(n, n, k % 3, k / 3, &pk[k]);
	/* a late hit of an accept rule, or a miss: passed either way */
	want[6] = shape_mixed.miss(n, 0, &pk[6]) ? -1 : 1;
	for (v6 = 0; v6 < 2; v6++)	/* one rule's miss: the policy, accept */
		mixed_bench_packet(1, n, 2, v6, &miss1[v6]);

	/* every run's verdict is nft's: a build that is wrong is not timed */
	for (r = 0; r < rounds && !ret; r++)
		for (b = 0; b < 2 && !ret; b++) {
			for (v6 = 0; v6 < 2 && !ret; v6++)
				ret = ab_testrun(fd[b][0], &miss1[v6], 1,
						 &one[b][v6][r], bins[b],
						 "one rule");
			for (k = 0; k < AB_PKTS && !ret; k++)
				if (want[k] >= 0)
					ret = ab_testrun(fd[b][1], &pk[k],
							 want[k], &t[b][k][r],
							 bins[b], ab_names[k]);
		}
	if (ret)
		goto out;

	printf("ns a test run, %d rounds of %d runs; A: %s, B: %s\n",
	       rounds, AB_REPEAT, bin_a, bin_b);
	for (v6 = 0; v6 < 2; v6++) {
		uint32_t fa, fb;

		fa = median(one[0][v6], rounds);
		fb = median(one[1][v6], rounds);
		printf("one rule, IPv%d miss: A %u (fastest %u), B %u (fastest %u)\n",
		       v6 ? 6 : 4, fa, one[0][v6][0], fb, one[1][v6][0]);
	}
	printf("%-10s %21s %21s %6s\n", "packet", "A (x one rule)",
	       "B (x one rule)", "B/A");
	for (k = 0; k < AB_PKTS; k++) {
		uint32_t m[2], base[2];
		char col[2][32];

		if (want[k] < 0)
			continue;
		v6 = k >= 3 && k < 6;
		for (b = 0; b < 2; b++) {
			base[b] = one[b][v6][rounds / 2];
			m[b] = median(t[b][k], rounds);
			snprintf(col[b], sizeof(col[b]), "%u [%u] (%.2f)", m[b],
				 t[b][k][0], base[b] ? (double)m[b] / base[b] :
				 0);
		}
		printf("%-10s %21s %21s %6.3f\n", ab_names[k], col[0], col[1],
		       m[0] ? (double)m[1] / m[0] : 0);
	}
out:
	for (b = 0; b < 2; b++)
		for (k = 0; k < 2; k++)
			if (fd[b][k] >= 0)
				close(fd[b][k]);
	/* the four tables, cgfw's state: either build removes them */
	if (sh(err, sizeof(err), "%s flush", bin_a))
		fprintf(stderr, "bench: cgfw flush: %s\n", err);
	return ret;
}
