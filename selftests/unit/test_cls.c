// SPDX-License-Identifier: GPL-2.0
/*
 * The classifier's tree (userspace/lib/bpf/cls/cls_tree.c) against the
 * reference first match (selftests/lib/classbench.h), without nft or the kernel:
 * ClassBench-style rules as boxes, packets at random and at the rules'
 * edges, the first matching rule and every match after it compared.
 *
 *   test_cls                      the unit test (TAP)
 *   test_cls stats N [SEED] [PACKETS]   build statistics, the walks'
 *			costs (CLS_PRM=binth,spfac,cuts_log2,forks,fork_min,
 *			dense_space,part_spfac)
 *   test_cls bench N [SEED] [PSEED]     the benchmark packets' walks
 *   test_cls crossing N [SEED] [PACKETS]  the same as stats, on a list
 *			whose wildcards cross (crossing())
 *   test_cls file RULES TRACE [MAX]      a ClassBench filter set (.xz or
 *			not) and its trace: the build, the walks' costs
 */
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "classbench.h"
#include "bpf/cls/cls.h"

/* The dims of a ClassBench ruleset, as cls_rule.c makes them. */
enum {
	D_NFPROTO, D_L4, D_SPORT, D_DPORT,
	D_NET,	/* 10 words of the network header from offset 0 */
	N_DIMS = D_NET + 10,
};

static struct cls_dim dims[N_DIMS];

static void init_dims(void)
{
	int i;

	dims[D_NFPROTO] = (struct cls_dim){ .src = CLS_SRC_META, .len = 1,
					   .mask = 0xff };
	dims[D_L4] = (struct cls_dim){ .src = CLS_SRC_META, .len = 1,
				      .off = 1, .mask = 0xff };
	dims[D_SPORT] = (struct cls_dim){ .src = CLS_SRC_TH, .len = 2,
					 .mask = 0xffff };
	dims[D_DPORT] = (struct cls_dim){ .src = CLS_SRC_TH, .len = 2,
					 .off = 2, .mask = 0xffff };
	for (i = 0; i < 10; i++)
		dims[D_NET + i] = (struct cls_dim){ .src = CLS_SRC_NET,
						   .len = 4, .off = 4 * i,
						   .mask = 0xffffffff };
}

static uint32_t word(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

/* An address prefix as intervals on the words from @w0. */
static void prefix_box(uint64_t *lo, uint64_t *hi, int w0,
		       const struct cb_addr *a, int len)
{
	int w;

	for (w = 0; w * 32 < len; w++) {
		int bits = len - w * 32 > 32 ? 32 : len - w * 32;
		uint32_t m = bits == 32 ? 0xffffffff : ~(0xffffffffu >> bits);

		lo[w0 + w] = word(a->b + 4 * w) & m;
		hi[w0 + w] = lo[w0 + w] | ~m;
	}
}

struct set {
	struct cb_set cb;
	struct cls_input in;
	uint64_t *lo, *hi;
	uint32_t *box_rule, *slots;
	bool *terminal;
	uint16_t *cases;
};

/* A rule's box; the second of a rule for tcp or udp: @l4 its protocol. */
static void box_of(const struct cb_rule *r, uint64_t *lo, uint64_t *hi,
		   int l4)
{
	size_t d;

	for (d = 0; d < N_DIMS; d++) {
		lo[d] = 0;
		hi[d] = CLS_ABSENT;
	}
	lo[D_NFPROTO] = hi[D_NFPROTO] = r->v6 ? 10 : 2;
	prefix_box(lo, hi, D_NET + (r->v6 ? 2 : 3), &r->src, r->slen);
	prefix_box(lo, hi, D_NET + (r->v6 ? 6 : 4), &r->dst, r->dlen);
	if (!r->proto)
		return;
	lo[D_L4] = hi[D_L4] = l4;
	if (r->sport[0] || r->sport[1] != 65535) {
		lo[D_SPORT] = r->sport[0];
		hi[D_SPORT] = r->sport[1];
	}
	if (r->dport[0] || r->dport[1] != 65535) {
		lo[D_DPORT] = r->dport[0];
		hi[D_DPORT] = r->dport[1];
	}
}

static void boxes_of(struct set *s)
{
	size_t i, n = s->cb.n, nb = 0, b = 0;

	for (i = 0; i < n; i++)
		nb += s->cb.rules[i].proto == CB_TCPUDP ? 2 : 1;
	s->lo = calloc(nb * N_DIMS, 8);
	s->hi = calloc(nb * N_DIMS, 8);
	s->box_rule = calloc(nb, 4);
	s->slots = calloc(n, 4);
	s->terminal = calloc(n, 1);
	s->cases = calloc(n, 2);
	for (i = 0; i < n; i++) {
		const struct cb_rule *r = &s->cb.rules[i];
		bool two = r->proto == CB_TCPUDP;

		box_of(r, s->lo + b * N_DIMS, s->hi + b * N_DIMS,
		       two ? CB_TCP : r->proto);
		s->box_rule[b++] = i;
		if (two) {
			box_of(r, s->lo + b * N_DIMS, s->hi + b * N_DIMS,
			       CB_UDP);
			s->box_rule[b++] = i;
		}
		s->slots[i] = i + 1;	/* identifies the rule */
		/* counted rules let evaluation go on: the walk resumes */
		s->terminal[i] = !r->counter || getenv("CLS_TERM");
		s->cases[i] = !s->terminal[i] ? 0 : r->drop ? 2 : 1;
	}
	s->in = (struct cls_input){
		.n_dims = N_DIMS, .dims = dims, .n_rules = n,
		.terminal = s->terminal, .cases = s->cases, .slots = s->slots,
		.n_boxes = nb, .box_rule = s->box_rule, .box_lo = s->lo,
		.box_hi = s->hi,
	};
}

static void free_set(struct set *s)
{
	free(s->lo);
	free(s->hi);
	free(s->box_rule);
	free(s->slots);
	free(s->terminal);
	free(s->cases);
	cb_free(&s->cb);
}

/* The key a packet gives: its header bytes, as the program reads them. */
static void key_of(const struct cb_packet *p, uint64_t *key)
{
	uint8_t h[40] = { 0 };
	int i;

	if (p->v6) {
		h[0] = 0x60;
		h[6] = p->proto;
		memcpy(h + 8, p->src.b, 16);
		memcpy(h + 24, p->dst.b, 16);
	} else {
		h[0] = 0x45;
		h[9] = p->proto;
		memcpy(h + 12, p->src.b, 4);
		memcpy(h + 16, p->dst.b, 4);
		/* the transport header after it */
		h[20] = p->sport >> 8;
		h[21] = p->sport;
		h[22] = p->dport >> 8;
		h[23] = p->dport;
	}
	for (i = 0; i < 10; i++)
		key[D_NET + i] = word(h + 4 * i);
	key[D_NFPROTO] = p->v6 ? 10 : 2;
	key[D_L4] = p->proto;
	key[D_SPORT] = p->sport;
	key[D_DPORT] = p->dport;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A random IPv4 prefix of @len bits under @base (of @blen bits). */
static void sub_prefix(struct cb_rng *r, struct cb_addr *a,
		       const struct cb_addr *base, int blen, int len)
{
	int i;

	*a = *base;
	for (i = blen; i < len; i++)
		cb_set_bit(a, i, cb_rnd(r, 2));
	cb_mask(a, len, 32, 0);
}

/* A wide prefix's length, as acl3's: mostly /15, some /1, the rest /8-/14. */
static int wide_len(struct cb_rng *r)
{
	int k = cb_rnd(r, 10);

	return k < 7 ? 15 : k < 8 ? 1 : 8 + cb_rnd(r, 7);
}

/*
 * An access list whose wildcards cross, as ClassBench's acl3 and acl4
 * have them (about 16% of their rules wide in the source address and
 * narrow in the destination, 13% the reverse, 2% wide in both, the rest
 * narrow in both; "wide": shorter than /16), and nest (a /17 or a /32
 * inside a /15 that other rules name): one tree of all of them copies
 * each wide rule into every child of a cut on the address it is wide in.
 * IPv4 only; a few hundred /15 blocks, addresses within them.
 */
static int crossing(struct cb_set *s, int n, uint64_t seed)
{
	static const int dports[][2] = {
		{ 0, 65535 }, { 1024, 65535 }, { 80, 80 }, { 443, 443 },
		{ 25, 25 }, { 53, 53 }, { 20, 21 }, { 514, 514 },
	};
	struct cb_addr blocks[300], zero = { { 0 } };
	int i, k, b, len;
	struct cb_rng r;

	memset(s, 0, sizeof(*s));
	cb_default_cfg(&s->cfg);
	s->cfg.v6_percent = 0;
	s->cfg.v4_base_len = 0;		/* wildcards anywhere */
	s->rules = calloc(n ? n : 1, sizeof(*s->rules));
	if (!s->rules)
		return -ENOMEM;
	cb_seed(&r, seed);
	for (i = 0; i < 300; i++)
		sub_prefix(&r, &blocks[i], &zero, 0, 15);
	for (i = 0; i < n; i++) {
		struct cb_rule *ru = &s->rules[i];
		bool wide_src, wide_dst;

		k = cb_rnd(&r, 100);
		wide_src = k < 16 || k >= 98;
		wide_dst = (k >= 16 && k < 29) || k >= 98;
		b = cb_rnd(&r, 300);
		len = wide_src ? wide_len(&r) : 17 + cb_rnd(&r, 16);
		sub_prefix(&r, &ru->src, &blocks[b], len < 15 ? len : 15, len);
		ru->slen = len;
		b = cb_rnd(&r, 100);	/* destinations from fewer blocks */
		if (wide_dst)
			len = wide_len(&r);
		else	/* mostly hosts */
			len = cb_rnd(&r, 3) ? 32 : 17 + cb_rnd(&r, 15);
		sub_prefix(&r, &ru->dst, &blocks[b], len < 15 ? len : 15, len);
		ru->dlen = len;
		k = cb_rnd(&r, 100);
		ru->proto = k < 65 ? CB_TCP : k < 90 ? CB_UDP : 0;
		ru->sport[1] = 65535;
		ru->dport[1] = 65535;
		if (ru->proto) {
			k = cb_rnd(&r, 8);
			ru->dport[0] = dports[k][0];
			ru->dport[1] = dports[k][1];
		}
		ru->drop = i & 1;
	}
	s->n = n;
	return 0;
}

/*
 * Build, then compare @n_packets packets; the number that differ.
 * @records (NULL: not wanted): the walks' cuts and leaves, a walk.
 * @st_out (NULL: not wanted): the build's statistics.
 */
static int check_set(struct set *s, uint64_t seed, int n_packets,
		     const struct cls_params *prm, bool verbose,
		     double *records, struct cls_stats *st_out,
		     size_t *bytes)
{
	int n_rules = s->cb.n;
	struct cls_blob blob = { 0 };
	uint32_t root;
	struct cls_stats st;
	struct cb_rng r;
	struct cb_packet p;
	uint64_t key[N_DIMS];
	int i, j, bad = 0, want[8], got[8], nw, ng;
	struct cls_cost cost = { 0 };
	size_t walks = 0;
	double t0;

	boxes_of(s);
	t0 = now();
	if (cgfw_cls_build(&s->in, prm, &blob, &root, &st)) {
		printf("# build failed\n");
		return -1;
	}
	if (st_out)
		*st_out = st;
	if (bytes)
		*bytes = blob.len;
	if (verbose)
		printf("rules %d: build %.3f s, blob %zu KiB, nodes %zu, forks %zu, leaves %zu, entries %zu (%.2f per rule), checks %zu, depth %zu, largest leaf %zu%s\n",
		       n_rules, now() - t0, blob.len >> 10, st.nodes, st.forks,
		       st.leaves,
		       st.entries, (double)st.entries / (n_rules ? n_rules : 1),
		       st.checks, st.max_depth, st.max_leaf,
		       st.budget_hit ? ", budget hit" : "");
	cb_seed(&r, seed ^ 0x5555);
	for (i = 0; i < n_packets; i++) {
		int k = cb_rnd(&r, 4);

		if (k == 0 || !n_rules) {
			if (cb_packet_miss(&r, &s->cb, cb_rnd(&r, 2), &p))
				continue;
		} else {
			cb_packet_in(&r, &s->cb, cb_rnd(&r, n_rules), k == 1, &p);
		}
		/* every match up to the first terminal one, in order */
		for (nw = 0, j = 0; j < s->cb.n && nw < 8; j++) {
			if (!cb_rule_matches(&s->cb.rules[j], &p))
				continue;
			want[nw++] = j;
			if (s->terminal[j])
				break;
		}
		key_of(&p, key);
		for (ng = 0; ng < 8;) {
			uint32_t rule, slot;
			uint16_t kase;
			int m = cgfw_cls_walk(&blob, root, key,
					 ng ? got[ng - 1] : -1, &rule, &kase,
					 &slot, &cost);

			walks++;
			if (m <= 0)
				break;
			got[ng++] = slot == rule + 1 && kase == s->cases[rule] ?
				    (int)rule : -2;
			if (s->terminal[rule])
				break;
		}
		if (nw != ng || memcmp(want, got, nw * sizeof(int))) {
			if (bad++ < 5)
				printf("# rules %d seed %llu packet %d: %d matches (first %d), the tree %d (first %d)\n",
				       n_rules, (unsigned long long)seed, i,
				       nw, nw ? want[0] : -1, ng,
				       ng ? got[0] : -1);
		}
	}
	if (records)
		*records = (double)(cost.cuts + cost.leaves) / walks;
	if (verbose)
		printf("  per walk: %.1f cuts (%.1f on the parent's key), %.1f forks (%.1f skipped), %.1f leaves, %.1f entries, %.1f checks; model %.0f instructions\n",
		       (double)cost.cuts / walks, (double)cost.pre / walks,
		       (double)cost.forks / walks,
		       (double)cost.skips / walks,
		       (double)cost.leaves / walks,
		       (double)cost.entries / walks,
		       (double)cost.checks / walks,
		       (20.0 * cost.cuts + 12 * cost.forks + 12 * cost.leaves +
			10 * cost.entries +
			9 * cost.checks) / walks);
	cgfw_cls_blob_release(&blob);
	return bad;
}

static int check(int n_rules, uint64_t seed, int n_packets,
		 const struct cls_params *prm, bool verbose, double *records)
{
	struct set s = { 0 };
	struct cb_cfg cfg;
	int bad;

	cb_default_cfg(&cfg);
	cb_generate(&s.cb, &cfg, n_rules, seed);
	bad = check_set(&s, seed, n_packets, prm, verbose, records, NULL,
			NULL);
	free_set(&s);
	return bad;
}

static double model(const struct cls_cost *c)
{
	return 20.0 * c->cuts + 12 * c->forks + 12 * c->leaves +
	       10 * c->entries + 9 * c->checks;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * A ClassBench filter set and its trace (selftests/lib/classbench.h's
 * cb_load()): the build, and each trace packet's walk against the first
 * match; the walks' mean, 90th percentile and worst by the cost model.
 */
struct file_result {
	size_t max_leaf, bytes_per_rule;
};

static int check_file(const char *rules, const char *trace, int max,
		      bool v6, const struct cls_params *prm, bool verbose,
		      struct file_result *res)
{
	struct cls_blob blob = { 0 };
	struct cls_stats st;
	struct set s = { 0 };
	struct cb_packet *pk;
	uint64_t key[N_DIMS];
	double t0, *cost, sum = 0;
	int i, n, line, bad = 0;
	uint32_t root;

	if (cb_load(&s.cb, rules, &line)) {
		printf("# %s:%d: %s\n", rules, line, strerror(errno));
		return -1;
	}
	n = cb_load_trace(trace, &pk, max);
	if (n < 0) {
		printf("# %s: %s\n", trace, strerror(errno));
		return -1;
	}
	if (v6) {
		for (i = 0; i < s.cb.n; i++)
			cb_v6_rule(&s.cb.rules[i]);
		/* each packet in IPv6, then as it was */
		pk = realloc(pk, 2 * (n ? n : 1) * sizeof(*pk));
		memcpy(pk + n, pk, n * sizeof(*pk));
		for (i = 0; i < n; i++)
			cb_v6_packet(&pk[i]);
		n *= 2;
	}
	boxes_of(&s);
	t0 = now();
	if (cgfw_cls_build(&s.in, prm, &blob, &root, &st)) {
		printf("# build failed\n");
		return -1;
	}
	res->max_leaf = st.max_leaf;
	res->bytes_per_rule = blob.len / (s.cb.n ? s.cb.n : 1);
	if (verbose)
		printf("%s: %d rules, build %.2f s, blob %zu KiB (%zu bytes a rule), nodes %zu, forks %zu, leaves %zu, entries %zu (%.2f a rule), depth %zu, largest leaf %zu%s\n",
	       rules, s.cb.n, now() - t0, blob.len >> 10,
	       blob.len / (s.cb.n ? s.cb.n : 1), st.nodes, st.forks, st.leaves,
	       st.entries, (double)st.entries / (s.cb.n ? s.cb.n : 1),
	       st.max_depth, st.max_leaf, st.budget_hit ? ", budget hit" : "");
	cost = calloc(n + 1, sizeof(*cost));
	for (i = 0; i < n; i++) {
		struct cls_cost c = { 0 };
		uint32_t rule, slot;
		uint16_t kase;
		int want = cb_match(&s.cb, &pk[i]), got;

		key_of(&pk[i], key);
		got = cgfw_cls_walk(&blob, root, key, -1, &rule, &kase, &slot,
				    &c) > 0 ? (int)rule : -1;
		if (got != want && bad++ < 5)
			printf("# packet %d: first match %d, the tree %d\n",
			       i + 1, want + 1, got + 1);
		cost[i] = model(&c);
		sum += cost[i];
	}
	qsort(cost, n, sizeof(*cost), cmp_dbl);
	if (n && verbose)
		printf("  %d packets, %d wrong; model instructions a walk: mean %.0f, p90 %.0f, worst %.0f\n",
		       n, bad, sum / n, cost[n * 9 / 10], cost[n - 1]);
	free(cost);
	free(pk);
	cgfw_cls_blob_release(&blob);
	free_set(&s);
	return bad;
}

/* Prefixes covering a port range exactly (as a hash or trie needs them). */
static int range_prefixes(int lo, int hi)
{
	int n = 0, k;

	while (lo <= hi) {
		for (k = 0; k < 16 && !(lo & ((2 << k) - 1)) &&
			    lo + (2 << k) - 1 <= hi; k++)
			;
		n++;
		lo += 1 << k;
		if (!lo)
			break;
	}
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* How many distinct values of @n? (sorts them) */
static size_t distinct(uint64_t *v, size_t n)
{
	size_t i, k = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		k += !i || v[i] != v[i - 1];
	return k;
}

/*
 * The other structures on the same list: for LBVS (pcn-iptables), the
 * 64-bit words ANDed per packet (five fields) and the bitvectors' memory
 * (one of N bits per distinct prefix or port class of each field); for
 * tuple space search, the distinct tuples (prefix lengths, protocol,
 * port classes: one hash probe each for a miss) and the hash entries
 * once port ranges are cut into prefixes.
 */
static void compare(int n)
{
	struct cb_cfg cfg;
	struct cb_set s;
	uint64_t *v = calloc(n + 1, sizeof(*v));
	size_t f, i, classes[5], words = (n + 63) / 64, tuples;
	unsigned long long entries = 0, lbvs_bytes = 0;

	cb_default_cfg(&cfg);
	cb_generate(&s, &cfg, n, 1);
	for (f = 0; f < 5; f++) {
		for (i = 0; i < (size_t)n; i++) {
			const struct cb_rule *r = &s.rules[i];
			uint64_t h = 0xcbf29ce484222325ULL;
			const struct cb_addr *a = f == 0 ? &r->src : &r->dst;
			int k;

			switch (f) {
			case 0:
			case 1:
				for (k = 0; k < 16; k++)
					h = (h ^ a->b[k]) * 0x100000001b3ULL;
				h ^= (uint64_t)(f ? r->dlen : r->slen) << 56 |
				     (uint64_t)r->v6 << 48;
				break;
			case 2:
				h = r->proto;
				break;
			default:
				h = (uint64_t)(f == 3 ? r->sport[0] : r->dport[0]) << 16 |
				    (f == 3 ? r->sport[1] : r->dport[1]);
			}
			v[i] = h;
		}
		classes[f] = distinct(v, n);
		lbvs_bytes += (unsigned long long)classes[f] * words * 8;
	}
	for (i = 0; i < (size_t)n; i++) {
		const struct cb_rule *r = &s.rules[i];

		v[i] = (uint64_t)r->v6 << 40 | (uint64_t)r->slen << 32 |
		       (uint64_t)r->dlen << 24 | (uint64_t)r->proto << 16 |
		       (uint64_t)(r->sport[0] == r->sport[1]) << 1 |
		       (r->dport[0] == r->dport[1]);
		entries += (unsigned long long)range_prefixes(r->sport[0],
							      r->sport[1]) *
			   range_prefixes(r->dport[0], r->dport[1]);
	}
	tuples = distinct(v, n);
	printf("%d rules: LBVS %zu words ANDed per packet, %llu KiB of bitvectors; tuple space %zu tuples (probes per miss), %llu entries after port ranges are cut into prefixes\n",
	       n, 5 * words, lbvs_bytes >> 10, tuples, entries);
	free(v);
	cb_free(&s);
}

/*
 * What the walk does for the benchmark's packets (cb_bench_packet(): a
 * hit early, a hit late, a miss; IPv4 and IPv6) in a list of @n rules of
 * generator seed @seed; packet seed @pseed (0: 1000 + @seed).
 */
static int bench(int n, uint64_t seed, uint64_t pseed,
		 struct cls_params *prm)
{
	struct cb_cfg cfg;
	struct cls_blob blob = { 0 };
	struct cls_stats st;
	struct set s = { 0 };
	struct cb_rng r;
	uint32_t root;
	int kind, v6;

	cb_default_cfg(&cfg);
	cb_generate(&s.cb, &cfg, n, seed);
	boxes_of(&s);
	for (kind = 0; kind < (int)s.cb.n; kind++)
		s.terminal[kind] = true;
	if (cgfw_cls_build(&s.in, prm, &blob, &root, &st))
		return 1;
	cb_seed(&r, pseed ? pseed : 1000 + seed);
	for (kind = 0; kind < 3; kind++)
		for (v6 = 0; v6 < 2; v6++) {
			struct cb_packet p;
			struct cls_cost c = { 0 };
			uint64_t key[N_DIMS];
			uint32_t rule = 0, slot;
			uint16_t kase;
			int m = cb_bench_packet(&r, &s.cb, kind, v6, &p);

			if (m == -2)
				continue;
			key_of(&p, key);
			if (cgfw_cls_walk(&blob, root, key, -1, &rule,
					  &kase, &slot, &c) <= 0)
				rule = -1;
			printf("kind %d v%d: rule %d (want %d): %zu cuts (%zu on the parent's key), %zu forks (%zu skipped), %zu leaves, %zu entries, %zu checks\n",
			       kind, v6 ? 6 : 4, (int)rule, m, c.cuts, c.pre,
			       c.forks, c.skips, c.leaves,
			       c.entries, c.checks);
		}
	cgfw_cls_blob_release(&blob);
	free_set(&s);
	return 0;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 0, 1, 2, 10, 100, 1000, 3000 };
	/* the last in IPv6 too (cb_v6_rule()), with packets of both */
	static const char *const lists[] = {
		"acl1_10k", "fw1_10k", "ipc1_10k", "ipc1_100k", "fw1_10k",
	};
	const int n_lists = sizeof(lists) / sizeof(*lists);
	const char *dir = getenv("CGFW_CLASSBENCH");
	struct file_result res;
	struct cls_params prm;
	int i, t = 0, failed = 0;
	uint64_t seed;

	init_dims();
	cgfw_cls_default_params(&prm);
	if (argc > 2 && getenv("CLS_PRM"))	/* stats, bench: tuning */
		sscanf(getenv("CLS_PRM"), "%u,%u,%u,%u,%u,%u,%u",
		       &prm.binth, &prm.spfac, &prm.max_cuts_log2,
		       &prm.max_forks, &prm.fork_min, &prm.dense_space,
		       &prm.part_spfac);
	if (argc > 2 && !strcmp(argv[1], "compare")) {
		for (i = 2; i < argc; i++)
			compare(atoi(argv[i]));
		return 0;
	}
	if (argc > 2 && getenv("CLS_BUDGET"))
		prm.budget = strtoull(getenv("CLS_BUDGET"), NULL, 0);
	if (argc > 2 && getenv("CLS_PART"))
		prm.part_min = strtoull(getenv("CLS_PART"), NULL, 0);
	if (argc > 2 && getenv("CLS_PART_BYTES"))
		prm.part_bytes = strtoull(getenv("CLS_PART_BYTES"), NULL, 0);
	if (argc > 3 && !strcmp(argv[1], "file"))
		return check_file(argv[2], argv[3],
				  argc > 4 ? atoi(argv[4]) : INT32_MAX,
				  getenv("CB_V6"), &prm, true, &res) != 0;
	if (argc > 2 && !strcmp(argv[1], "bench"))
		return bench(atoi(argv[2]), argc > 3 ? atoll(argv[3]) : 1,
			     argc > 4 ? atoll(argv[4]) : 0, &prm);
	if (argc > 2 && !strcmp(argv[1], "crossing")) {
		struct set cs = { 0 };

		if (crossing(&cs.cb, atoi(argv[2]),
			     argc > 3 ? atoll(argv[3]) : 1))
			return 1;
		i = check_set(&cs, 1, argc > 4 ? atoi(argv[4]) : 2000, &prm,
			      true, NULL, NULL, NULL);
		free_set(&cs);
		return i != 0;
	}
	if (argc > 2 && !strcmp(argv[1], "stats")) {
		return check(atoi(argv[2]), argc > 3 ? atoll(argv[3]) : 1,
			     argc > 4 ? atoi(argv[4]) : 2000, &prm, true,
			     NULL) != 0;
	}
	printf("TAP version 13\n");
	for (i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++) {
		for (seed = 1; seed <= 2; seed++) {
			int bad = check(sizes[i], seed, 2000, &prm, false,
					NULL);

			failed |= bad != 0;
			printf("%s %d classifier tree: %d rules (seed %llu), matches in order == the reference on 2000 packets\n",
			       bad ? "not ok" : "ok", ++t, sizes[i],
			       (unsigned long long)seed);
		}
	}
	/*
	 * cuts of the whole block only, as before the dense block: right,
	 * and longer walks (the lists' rules in 198.18.0.0/15 stretch the
	 * block of an IPv4 address to the whole space)
	 */
	for (seed = 1; seed <= 2; seed++) {
		struct cls_params whole = prm;
		double dense = 0, plain = 0;
		int bad;

		whole.dense_space = 0;
		bad = check(3000, seed, 2000, &whole, false, &plain) ||
		      check(3000, seed, 2000, &prm, false, &dense);
		printf("%s %d classifier tree: 3000 rules (seed %llu) without dense blocks, still right; with them %.1f records a walk, without %.1f\n",
		       bad || dense >= plain ? "not ok" : "ok", ++t,
		       (unsigned long long)seed, dense, plain);
		failed |= bad || dense >= plain;
	}
	/* partitions wherever they can be made: still right */
	for (seed = 1; seed <= 2; seed++) {
		struct cls_params parts = prm;

		parts.part_min = 16;
		parts.part_bytes = 0;
		i = check(1000, seed, 2000, &parts, false, NULL) != 0;
		failed |= i;
		printf("%s %d classifier tree: 1000 rules (seed %llu) in partitions, still right\n",
		       i ? "not ok" : "ok", ++t, (unsigned long long)seed);
	}
	/*
	 * ClassBench's own lists and traces: right on every trace packet,
	 * bounded leaves, memory in proportion (ipc1_100k's one tree had a
	 * leaf of 37,542 rules: docs/classifier.rst, Partitions)
	 */
	for (i = 0; i < n_lists; i++) {
		char rules[512], trace[512];
		bool v6 = i == n_lists - 1;
		int bad;

		snprintf(rules, sizeof(rules), "%s/%s.txt.xz",
			 dir ? dir : "", lists[i]);
		snprintf(trace, sizeof(trace), "%s/%s.trace.xz",
			 dir ? dir : "", lists[i]);
		if (!dir || access(rules, R_OK)) {
			printf("ok %d # SKIP ClassBench %s: %s not there (CGFW_CLASSBENCH)\n",
			       ++t, lists[i], rules);
			continue;
		}
		bad = check_file(rules, trace, 5000, v6, &prm, false, &res);
		bad = bad || res.max_leaf > 64 ||
		      res.bytes_per_rule > (v6 ? 1024 : 600);
		failed |= bad;
		printf("%s %d classifier tree: ClassBench %s%s, the first match on 5000 trace packets%s, largest leaf %zu (at most 64), %zu bytes a rule (at most %d)\n",
		       bad ? "not ok" : "ok", ++t, lists[i],
		       v6 ? " in IPv6" : "", v6 ? " in each family" : "",
		       res.max_leaf, res.bytes_per_rule, v6 ? 1024 : 600);
	}
	/*
	 * wildcards that cross (acl3, acl4): one tree fills its budget,
	 * the partitions do not (docs/classifier.rst, Partitions)
	 */
	for (seed = 1; seed <= 2; seed++) {
		struct cls_params one = prm;
		struct cls_stats cst = { 0 }, ost = { 0 };
		struct set cs = { 0 };
		size_t bytes = 0;
		int bad;

		/* without partitions the list fills the budget: the case */
		one.part_min = 0;
		bad = crossing(&cs.cb, 10000, seed) ||
		      check_set(&cs, seed, 200, &one, false, NULL, &ost,
				NULL) != 0 || !ost.budget_hit;
		free_set(&cs);
		memset(&cs, 0, sizeof(cs));
		bad = bad || crossing(&cs.cb, 10000, seed) ||
		      check_set(&cs, seed, 2000, &prm, false, NULL, &cst,
				&bytes) != 0;
		bad = bad || cst.budget_hit || cst.max_leaf > 64 ||
		      bytes / 10000 > 600;
		failed |= bad;
		printf("%s %d classifier tree: 10000 rules whose wildcards cross (seed %llu), one tree %s its budget (largest leaf %zu); in partitions right, budget %s, largest leaf %zu (at most 64), %zu bytes a rule (at most 600)\n",
		       bad ? "not ok" : "ok", ++t, (unsigned long long)seed,
		       ost.budget_hit ? "fills" : "does not fill",
		       ost.max_leaf, cst.budget_hit ? "hit" : "not hit",
		       cst.max_leaf, bytes / 10000);
		free_set(&cs);
	}
	/* a tight budget: long leaves, still right */
	prm.budget = 1;
	i = check(2000, 7, 2000, &prm, false, NULL) != 0;
	failed |= i;
	printf("%s %d classifier tree: 2000 rules with no memory to cut, still right\n",
	       i ? "not ok" : "ok", ++t);
	printf("1..%d\n", t);
	return failed;
}
