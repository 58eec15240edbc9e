/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A seeded ClassBench-style access-list generator, for the benchmarks and
 * the differential test (header-only: both include it).
 *
 * What it makes, after the ACL seeds of ClassBench (Taylor and Turner,
 * "ClassBench: a packet classification benchmark", 2005):
 *  - IPv4 and IPv6 rules (cb_cfg.v6_percent), each with a source and a
 *    destination prefix whose lengths follow an access-list mix (many
 *    host addresses and /24s (/64s), some short prefixes, wildcards);
 *    prefixes nest in earlier ones (a "nesting" share), so rules overlap;
 *  - a protocol mix: mostly tcp, then udp, a few rules for any protocol;
 *  - ports in ClassBench's five classes: wildcard, 1024-65535 (HI),
 *    0-1023 (LO), an arbitrary range (AR), an exact port (EM); source
 *    ports mostly wildcard, destination ports mostly exact;
 *  - accept or drop, a counter on some rules;
 *  - a share of rules whose addresses lie in space no packet comes from
 *    (cb_cfg.dead_percent): rules that match nothing.
 * Packets: a hit early, a hit late, a miss, and packets aimed at the
 * boundaries of a rule (first and last address of a prefix, one outside
 * each, both ends of a port range and one outside each). cb_match() is
 * the reference: nft's first match in rule order.
 */
#ifndef CGFW_CLASSBENCH_H
#define CGFW_CLASSBENCH_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#define CB_TCP 6
#define CB_UDP 17
/* ports of any protocol: "meta l4proto { tcp, udp } th sport ..." */
#define CB_TCPUDP 256

struct cb_rng {
	uint64_t s;
};

static inline void cb_seed(struct cb_rng *r, uint64_t seed)
{
	r->s = seed * 0x9E3779B97F4A7C15ULL + 0x1234567;
	if (!r->s)
		r->s = 1;
}

/* xorshift64*: uniform enough, the same on every machine */
static inline uint32_t cb_u32(struct cb_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((r->s * 2685821657736338717ULL) >> 32);
}

static inline uint32_t cb_rnd(struct cb_rng *r, uint32_t n)
{
	return n ? cb_u32(r) % n : 0;
}

/* An address, network order, 4 or 16 bytes used. */
struct cb_addr {
	uint8_t b[16];
};

struct cb_rule {
	int v6;
	struct cb_addr src, dst;
	int slen, dlen;		/* prefix lengths, 0: any */
	int proto;		/* 0: any (then no ports), CB_TCPUDP */
	int sport[2], dport[2];	/* inclusive ranges, [0, 65535]: any */
	int drop;		/* else accept */
	int counter;
};

struct cb_packet {
	int v6;
	struct cb_addr src, dst;
	int proto, sport, dport;
};

struct cb_cfg {
	int v6_percent;		/* IPv6 rules, of 100 */
	int dead_percent;	/* rules in space no packet uses, of 100 */
	int counter_percent;
	int drop_percent;
	/* where the live rules' addresses lie (the differential test makes
	 * these local to its namespace); dead rules use 198.18.0.0/15 and
	 * 2001:db8::/32 */
	struct cb_addr v4_base, v6_base;
	int v4_base_len, v6_base_len;
	int ports_min;		/* lowest port a rule names (not 0 for live) */
};

static inline void cb_default_cfg(struct cb_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->v6_percent = 50;
	c->dead_percent = 10;
	c->counter_percent = 25;
	c->drop_percent = 40;
	c->v4_base.b[0] = 10;		/* 10.0.0.0/8 */
	c->v4_base_len = 8;
	c->v6_base.b[0] = 0xfd;		/* fd00::/16 */
	c->v6_base_len = 16;
	c->ports_min = 1;
}

/* ---- prefixes ---- */

static inline int cb_bit(const struct cb_addr *a, int i)
{
	return a->b[i / 8] >> (7 - i % 8) & 1;
}

static inline void cb_set_bit(struct cb_addr *a, int i, int v)
{
	if (v)
		a->b[i / 8] |= 0x80 >> (i % 8);
	else
		a->b[i / 8] &= ~(0x80 >> (i % 8));
}

/* Keep the first @len bits of @a, set the rest to @fill (0 or 1). */
static inline void cb_mask(struct cb_addr *a, int len, int bits, int fill)
{
	int i;

	for (i = len; i < bits; i++)
		cb_set_bit(a, i, fill);
}

static inline bool cb_in_prefix(const struct cb_addr *a,
				const struct cb_addr *p, int len)
{
	int i;

	for (i = 0; i < len; i++)
		if (cb_bit(a, i) != cb_bit(p, i))
			return false;
	return true;
}

/* Prefix-length mixes of access lists: value, weight. */
struct cb_weight {
	int v, w;
};

static const struct cb_weight cb_v4_src_len[] = {
	{ 0, 22 }, { 8, 2 }, { 12, 2 }, { 16, 7 }, { 20, 4 }, { 22, 3 },
	{ 23, 3 }, { 24, 18 }, { 26, 3 }, { 27, 3 }, { 28, 4 }, { 29, 3 },
	{ 30, 2 }, { 31, 1 }, { 32, 23 },
};
static const struct cb_weight cb_v4_dst_len[] = {
	{ 0, 8 }, { 8, 1 }, { 12, 1 }, { 16, 6 }, { 20, 3 }, { 21, 2 },
	{ 22, 3 }, { 24, 22 }, { 25, 2 }, { 26, 3 }, { 27, 3 }, { 28, 4 },
	{ 29, 3 }, { 30, 3 }, { 32, 36 },
};
static const struct cb_weight cb_v6_src_len[] = {
	{ 0, 22 }, { 16, 1 }, { 32, 3 }, { 40, 2 }, { 44, 2 }, { 48, 12 },
	{ 52, 2 }, { 56, 6 }, { 60, 4 }, { 64, 20 }, { 80, 2 }, { 96, 3 },
	{ 112, 2 }, { 120, 2 }, { 127, 1 }, { 128, 16 },
};
static const struct cb_weight cb_v6_dst_len[] = {
	{ 0, 8 }, { 16, 1 }, { 32, 3 }, { 44, 2 }, { 48, 14 }, { 52, 2 },
	{ 56, 6 }, { 60, 4 }, { 62, 2 }, { 64, 24 }, { 96, 3 }, { 112, 3 },
	{ 124, 2 }, { 126, 1 }, { 128, 25 },
};

static inline int cb_pick(struct cb_rng *r, const struct cb_weight *w, int n)
{
	int total = 0, i, x;

	for (i = 0; i < n; i++)
		total += w[i].w;
	x = cb_rnd(r, total);
	for (i = 0; i < n; i++) {
		if (x < w[i].w)
			return w[i].v;
		x -= w[i].w;
	}
	return w[n - 1].v;
}

#define CB_PICK(r, arr) cb_pick(r, arr, sizeof(arr) / sizeof(arr[0]))

/* Prefixes made so far, to nest new ones in (one pool per family). */
struct cb_pool {
	struct cb_addr *a;
	int *len;
	int n, cap;
};

static inline void cb_pool_add(struct cb_pool *p, const struct cb_addr *a,
			       int len)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 256;
		p->a = realloc(p->a, p->cap * sizeof(*p->a));
		p->len = realloc(p->len, p->cap * sizeof(*p->len));
		if (!p->a || !p->len)
			abort();
	}
	p->a[p->n] = *a;
	p->len[p->n++] = len;
}

/*
 * A prefix of length @len: half of the time inside one made before
 * (nested, or the same one again, as access lists repeat networks),
 * else random inside @base/@blen.
 */
static inline void cb_prefix(struct cb_rng *r, struct cb_pool *pool,
			     const struct cb_addr *base, int blen, int bits,
			     int len, struct cb_addr *out)
{
	int i, tries, from = blen;

	*out = *base;
	for (tries = 0; pool->n && tries < 4 && cb_rnd(r, 100) < 60; tries++) {
		i = pool->n - 1 - (int)cb_rnd(r, pool->n < 512 ? pool->n : 512);
		if (pool->len[i] <= len && pool->len[i] >= blen) {
			*out = pool->a[i];
			from = pool->len[i];
			break;
		}
	}
	for (i = from; i < bits; i++)
		cb_set_bit(out, i, cb_rnd(r, 2));
	cb_mask(out, len, bits, 0);
	if (len > blen && len < bits)
		cb_pool_add(pool, out, len);
}

/* ---- rules ---- */

struct cb_set {
	struct cb_rule *rules;
	int n;
	struct cb_cfg cfg;
	struct cb_pool pools[2][2];	/* [v6][dst] */
};

static inline void cb_ports(struct cb_rng *r, int *p, bool dst, int min)
{
	int k = cb_rnd(r, 100), a, b;

	/* source: 86 any, 8 HI, 2 LO, 2 AR, 2 EM; dest: 14, 8, 5, 15, 58 */
	if (!dst)
		k = k < 86 ? 0 : k < 94 ? 1 : k < 96 ? 2 : k < 98 ? 3 : 4;
	else
		k = k < 14 ? 0 : k < 22 ? 1 : k < 27 ? 2 : k < 42 ? 3 : 4;
	switch (k) {
	case 0:
		p[0] = 0;
		p[1] = 65535;
		break;
	case 1:
		p[0] = 1024;
		p[1] = 65535;
		break;
	case 2:
		p[0] = min;
		p[1] = 1023;
		break;
	case 3:
		a = min + cb_rnd(r, 65536 - min);
		b = a + 1 + cb_rnd(r, cb_rnd(r, 2) ? 16 : 4000);
		p[0] = a;
		p[1] = b > 65535 ? 65535 : b;
		break;
	default:
		/* well-known ports more often than others */
		a = cb_rnd(r, 3) ? (int[]){ 22, 25, 53, 80, 110, 123, 143,
					    443, 993, 3306, 5432, 8080 }
					  [cb_rnd(r, 12)] :
				   1 + (int)cb_rnd(r, 65535);
		p[0] = p[1] = a < min ? min : a;
	}
}

static inline void cb_rule(struct cb_set *s, struct cb_rng *r,
			   struct cb_rule *ru)
{
	const struct cb_cfg *c = &s->cfg;
	struct cb_addr dead4 = { { 198, 18 } }, dead6 = { { 0x20, 0x01, 0x0d,
							    0xb8 } };
	int bits, k;
	bool dead;

	memset(ru, 0, sizeof(*ru));
	ru->v6 = (int)cb_rnd(r, 100) < c->v6_percent;
	bits = ru->v6 ? 128 : 32;
	dead = (int)cb_rnd(r, 100) < c->dead_percent;
	ru->slen = ru->v6 ? CB_PICK(r, cb_v6_src_len) : CB_PICK(r, cb_v4_src_len);
	ru->dlen = ru->v6 ? CB_PICK(r, cb_v6_dst_len) : CB_PICK(r, cb_v4_dst_len);
	if (!ru->slen && !ru->dlen)	/* access lists name at least one */
		ru->dlen = ru->v6 ? 64 : 24;
	for (k = 0; k < 2; k++) {
		const struct cb_addr *base = ru->v6 ? &c->v6_base : &c->v4_base;
		int blen = ru->v6 ? c->v6_base_len : c->v4_base_len;
		int *len = k ? &ru->dlen : &ru->slen;
		struct cb_addr *a = k ? &ru->dst : &ru->src;

		if (dead) {
			base = ru->v6 ? &dead6 : &dead4;
			blen = ru->v6 ? 32 : 15;
		}
		if (*len && *len < blen)
			*len = blen;	/* not wider than the space we own */
		if (!*len)
			continue;
		cb_prefix(r, &s->pools[ru->v6][k], base, blen, bits, *len, a);
		/* a dead rule: one address in dead space is enough */
		dead = false;
	}
	k = cb_rnd(r, 100);
	ru->proto = k < 70 ? CB_TCP : k < 95 ? CB_UDP : 0;
	if (ru->proto) {
		cb_ports(r, ru->sport, false, c->ports_min);
		cb_ports(r, ru->dport, true, c->ports_min);
	} else {
		ru->sport[1] = ru->dport[1] = 65535;
	}
	ru->drop = (int)cb_rnd(r, 100) < c->drop_percent;
	ru->counter = (int)cb_rnd(r, 100) < c->counter_percent;
}

/* @n rules from @seed. */
static inline void cb_generate(struct cb_set *s, const struct cb_cfg *cfg,
			       int n, uint64_t seed)
{
	struct cb_rng r;
	int i;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->rules = calloc(n ? n : 1, sizeof(*s->rules));
	if (!s->rules)
		abort();
	cb_seed(&r, seed);
	for (i = 0; i < n; i++)
		cb_rule(s, &r, &s->rules[i]);
	s->n = n;
}

static inline void cb_free(struct cb_set *s)
{
	int i, j;

	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++) {
			free(s->pools[i][j].a);
			free(s->pools[i][j].len);
		}
	free(s->rules);
	memset(s, 0, sizeof(*s));
}

/* ---- text ---- */

static inline void cb_addr_str(const struct cb_addr *a, int v6, char *buf,
			       size_t size)
{
	inet_ntop(v6 ? AF_INET6 : AF_INET, a->b, buf, size);
}

static inline void cb_port_str(FILE *f, const char *proto, const char *dir,
			       const int *p)
{
	if (p[0] == 0 && p[1] == 65535)
		return;
	if (p[0] == p[1])
		fprintf(f, "%s %s %d ", proto, dir, p[0]);
	else
		fprintf(f, "%s %s %d-%d ", proto, dir, p[0], p[1]);
}

/* One rule as nft writes it. */
static inline void cb_rule_text(FILE *f, const struct cb_rule *ru)
{
	const char *ip = ru->v6 ? "ip6" : "ip";
	const char *proto = ru->proto == CB_TCP ? "tcp" : "udp";
	char a[64];
	int bits = ru->v6 ? 128 : 32;

	/* the rule's family, where no address says it */
	if (!ru->slen && !ru->dlen)
		fprintf(f, "meta nfproto %s ", ru->v6 ? "ipv6" : "ipv4");
	if (ru->slen) {
		cb_addr_str(&ru->src, ru->v6, a, sizeof(a));
		fprintf(f, ru->slen == bits ? "%s saddr %s " : "%s saddr %s/%d ",
			ip, a, ru->slen);
	}
	if (ru->dlen) {
		cb_addr_str(&ru->dst, ru->v6, a, sizeof(a));
		fprintf(f, ru->dlen == bits ? "%s daddr %s " : "%s daddr %s/%d ",
			ip, a, ru->dlen);
	}
	if (ru->proto == CB_TCP || ru->proto == CB_UDP) {
		cb_port_str(f, proto, "sport", ru->sport);
		cb_port_str(f, proto, "dport", ru->dport);
		if (ru->sport[0] == 0 && ru->sport[1] == 65535 &&
		    ru->dport[0] == 0 && ru->dport[1] == 65535)
			fprintf(f, "meta l4proto %s ", proto);
	} else if (ru->proto) {
		if (ru->proto == CB_TCPUDP)
			fprintf(f, "meta l4proto { tcp, udp } ");
		else
			fprintf(f, "meta l4proto %d ", ru->proto);
		cb_port_str(f, "th", "sport", ru->sport);
		cb_port_str(f, "th", "dport", ru->dport);
	}
	fprintf(f, "%s%s", ru->counter ? "counter " : "",
		ru->drop ? "drop" : "accept");
}

/* table cgroup @table { chain out { ...; policy P; rules } } */
static inline void cb_table_text(FILE *f, const struct cb_set *s,
				 const char *table, const char *cgroup,
				 const char *hook, bool policy_drop)
{
	int i;

	fprintf(f, "table cgroup %s {\n\tchain %s {\n"
		   "\t\ttype filter hook %s cgroup \"%s\" priority 0; policy %s;\n",
		table, hook, hook, cgroup, policy_drop ? "drop" : "accept");
	for (i = 0; i < s->n; i++) {
		fputs("\t\t", f);
		cb_rule_text(f, &s->rules[i]);
		fputs("\n", f);
	}
	fputs("\t}\n}\n", f);
}

/* ---- packets ---- */

static inline bool cb_rule_matches(const struct cb_rule *ru,
				   const struct cb_packet *p)
{
	if (ru->v6 != p->v6)
		return false;
	if (!cb_in_prefix(&p->src, &ru->src, ru->slen) ||
	    !cb_in_prefix(&p->dst, &ru->dst, ru->dlen))
		return false;
	if (!ru->proto)
		return true;
	if (ru->proto == CB_TCPUDP ? p->proto != CB_TCP && p->proto != CB_UDP :
				     ru->proto != p->proto)
		return false;
	return p->sport >= ru->sport[0] && p->sport <= ru->sport[1] &&
	       p->dport >= ru->dport[0] && p->dport <= ru->dport[1];
}

/* nft's answer: the first rule that matches, -1: none (the policy). */
static inline int cb_match(const struct cb_set *s, const struct cb_packet *p)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (cb_rule_matches(&s->rules[i], p))
			return i;
	return -1;
}

/*
 * A packet inside rule @i, each field at a random place or, with @edges,
 * at an edge: first or last address of a prefix or one beyond, an end of
 * a port range or one beyond.
 */
static inline void cb_packet_in(struct cb_rng *r, const struct cb_set *s,
				int i, bool edges, struct cb_packet *p)
{
	const struct cb_rule *ru = &s->rules[i];
	int bits = ru->v6 ? 128 : 32, k, e;

	memset(p, 0, sizeof(*p));
	p->v6 = ru->v6;
	for (k = 0; k < 2; k++) {
		const struct cb_addr *pre = k ? &ru->dst : &ru->src;
		const struct cb_addr *base = ru->v6 ? &s->cfg.v6_base :
						      &s->cfg.v4_base;
		int len = k ? ru->dlen : ru->slen;
		int blen = ru->v6 ? s->cfg.v6_base_len : s->cfg.v4_base_len;
		struct cb_addr *a = k ? &p->dst : &p->src;
		int j;

		if (!len) {	/* anywhere in the live space */
			*a = *base;
			for (j = blen; j < bits; j++)
				cb_set_bit(a, j, cb_rnd(r, 2));
			continue;
		}
		*a = *pre;
		e = edges ? (int)cb_rnd(r, 5) : 4;
		if (e < 2) {		/* first or last address */
			cb_mask(a, len, bits, e);
		} else if (e < 4 && len > blen) {
			/* just outside: flip the last prefix bit, then the
			 * nearest address on the other side */
			cb_set_bit(a, len - 1, !cb_bit(a, len - 1));
			cb_mask(a, len, bits, e == 2 ? !cb_bit(a, len - 1) :
							cb_bit(a, len - 1));
		} else {
			for (j = len; j < bits; j++)
				cb_set_bit(a, j, cb_rnd(r, 2));
		}
	}
	p->proto = ru->proto && ru->proto != CB_TCPUDP ? ru->proto :
		   cb_rnd(r, 2) ? CB_TCP : CB_UDP;
	for (k = 0; k < 2; k++) {
		const int *pr = k ? ru->dport : ru->sport;
		int *v = k ? &p->dport : &p->sport, lo = pr[0], hi = pr[1];

		if (lo < s->cfg.ports_min)
			lo = s->cfg.ports_min;
		e = edges ? (int)cb_rnd(r, 6) : 5;
		if (e == 0)
			*v = lo;
		else if (e == 1)
			*v = hi;
		else if (e == 2 && lo > s->cfg.ports_min)
			*v = lo - 1;
		else if (e == 3 && hi < 65535)
			*v = hi + 1;
		else
			*v = lo + cb_rnd(r, hi - lo + 1);
	}
}

/*
 * A packet no rule matches: inside the rules' own address space if one
 * can be found, else from space no rule names (192.0.2.0/24, 3fff::/20);
 * -1 if none.
 */
static inline int cb_packet_miss(struct cb_rng *r, const struct cb_set *s,
				 int v6, struct cb_packet *p)
{
	int tries, j, k, bits = v6 ? 128 : 32;

	for (tries = 0; tries < 2200; tries++) {
		bool outside = tries >= 2000;

		memset(p, 0, sizeof(*p));
		p->v6 = v6;
		for (k = 0; k < 2; k++) {
			struct cb_addr *a = k ? &p->dst : &p->src;
			int from = v6 ? s->cfg.v6_base_len : s->cfg.v4_base_len;

			*a = v6 ? s->cfg.v6_base : s->cfg.v4_base;
			if (outside) {
				memset(a, 0, sizeof(*a));
				if (v6) {
					a->b[0] = 0x3f;
					a->b[1] = 0xff;
					from = 20;
				} else {
					a->b[0] = 192;
					a->b[2] = 2;
					from = 24;
				}
			}
			for (j = from; j < bits; j++)
				cb_set_bit(a, j, cb_rnd(r, 2));
		}
		p->proto = cb_rnd(r, 2) ? CB_TCP : CB_UDP;
		p->sport = 1024 + cb_rnd(r, 64512);
		p->dport = s->cfg.ports_min + cb_rnd(r, 65536 - s->cfg.ports_min);
		if (cb_match(s, p) < 0)
			return 0;
	}
	return -1;
}

/*
 * A packet whose first match is rule @lo or later and before @hi, of
 * family @v6; -1 if none found. Rules late in a long list are often
 * hidden by earlier ones: each rule from the end gets a few tries.
 */
static inline int cb_packet_hit(struct cb_rng *r, const struct cb_set *s,
				int v6, int lo, int hi, struct cb_packet *p)
{
	int tries, i, m, k;

	if (hi > s->n)
		hi = s->n;
	for (tries = 0; tries < 2000 && lo < hi; tries++) {
		i = lo + cb_rnd(r, hi - lo);
		if (s->rules[i].v6 != v6)
			continue;
		cb_packet_in(r, s, i, false, p);
		m = cb_match(s, p);
		if (m >= lo && m < hi)
			return m;
	}
	for (i = hi - 1; i >= lo; i--) {
		if (s->rules[i].v6 != v6)
			continue;
		for (k = 0; k < 8; k++) {
			cb_packet_in(r, s, i, k & 1, p);
			if (cb_match(s, p) == i)
				return i;
		}
	}
	return -1;
}

/*
 * The benchmark's packets: @kind 0, a hit in the first 1% of the rules
 * (at least 10; or the earliest hit there is), 1, a hit in the last 1%
 * (at least 10), 2, a miss;
 * of family @v6. The rule it matches first (-1: none), or -2 when there
 * is no such packet.
 */
static inline int cb_bench_packet(struct cb_rng *r, const struct cb_set *s,
				  int kind, int v6, struct cb_packet *p)
{
	/* 1% of the rules, or the first or last 10 */
	int edge = s->n / 100 > 10 ? s->n / 100 : s->n < 10 ? s->n : 10, m;

	if (kind == 2)
		return cb_packet_miss(r, s, v6, p) ? -2 : -1;
	m = kind == 0 ? cb_packet_hit(r, s, v6, 0, edge, p) :
			cb_packet_hit(r, s, v6, s->n - edge, s->n, p);
	if (m < 0 && kind == 0)
		m = cb_packet_hit(r, s, v6, 0, s->n, p);
	return m < 0 ? -2 : m;
}

/* ---- ClassBench's own files (ClassBench's db_generator, trace_generator) ---- */

/* A file, through "xz -dc" if its name ends in .xz; NULL with errno. */
static inline FILE *cb_open(const char *path, bool *piped)
{
	size_t n = strlen(path);
	char cmd[4200];

	*piped = n > 3 && !strcmp(path + n - 3, ".xz");
	if (!*piped)
		return fopen(path, "re");
	if (strchr(path, '\'') || n > 4000) {
		errno = EINVAL;
		return NULL;
	}
	if (access(path, R_OK))
		return NULL;
	snprintf(cmd, sizeof(cmd), "xz -dc -- '%s'", path);
	return popen(cmd, "re");
}

static inline int cb_close(FILE *f, bool piped)
{
	if (!piped)
		return fclose(f);
	return pclose(f) ? (errno = EIO, -1) : 0;
}

static inline bool cb_parse_prefix(const char *s, struct cb_addr *a, int *len)
{
	unsigned int b[4], l;
	int i;

	if (sscanf(s, "%u.%u.%u.%u/%u", &b[0], &b[1], &b[2], &b[3], &l) != 5 ||
	    l > 32)
		return false;
	memset(a, 0, sizeof(*a));
	for (i = 0; i < 4; i++) {
		if (b[i] > 255)
			return false;
		a->b[i] = b[i];
	}
	cb_mask(a, l, 32, 0);
	*len = l;
	return true;
}

/*
 * A filter set ("@SRC/LEN DST/LEN SP : SP DP : DP PROTO/MASK FLAGS/MASK"),
 * in order. Rule i accepts when i is even and drops when it is odd.
 * Ports of any protocol are CB_TCPUDP's. 0, or -1 with errno (EINVAL:
 * a line that does not parse, its number in *@line).
 */
static inline int cb_load(struct cb_set *s, const char *path, int *line)
{
	char buf[512];
	bool piped;
	FILE *f = cb_open(path, &piped);
	int cap = 0;

	memset(s, 0, sizeof(*s));
	*line = 0;
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		char src[64], dst[64];
		unsigned int sp[2], dp[2], proto, pmask;
		struct cb_rule *ru;

		++*line;
		if (sscanf(buf, "@%63s %63s %u : %u %u : %u %x/%x", src, dst,
			   &sp[0], &sp[1], &dp[0], &dp[1], &proto,
			   &pmask) != 8)
			goto bad;
		if (s->n == cap) {
			struct cb_rule *nr;

			cap = cap ? 2 * cap : 1024;
			nr = realloc(s->rules, cap * sizeof(*nr));
			if (!nr)
				goto fail;
			s->rules = nr;
		}
		ru = &s->rules[s->n];
		memset(ru, 0, sizeof(*ru));
		if (!cb_parse_prefix(src, &ru->src, &ru->slen) ||
		    !cb_parse_prefix(dst, &ru->dst, &ru->dlen) ||
		    sp[0] > sp[1] || sp[1] > 65535 || dp[0] > dp[1] ||
		    dp[1] > 65535 || (pmask != 0 && pmask != 0xff) ||
		    proto > 255)
			goto bad;
		ru->sport[0] = sp[0];
		ru->sport[1] = sp[1];
		ru->dport[0] = dp[0];
		ru->dport[1] = dp[1];
		ru->proto = pmask ? (int)proto : 0;
		if (!ru->proto && (sp[0] || sp[1] != 65535 || dp[0] ||
				   dp[1] != 65535))
			ru->proto = CB_TCPUDP;
		ru->drop = s->n & 1;
		s->n++;
	}
	*line = 0;
	if (cb_close(f, piped))
		goto fail_closed;
	return 0;
bad:
	errno = EINVAL;
fail:
	cb_close(f, piped);
fail_closed:
	cb_free(s);
	return -1;
}

/*
 * A header trace ("SRC DST SPORT DPORT PROTO FLAGS FILTER", decimal), at
 * most @max packets: their number, or -1 with errno.
 */
static inline int cb_load_trace(const char *path, struct cb_packet **out,
				int max)
{
	struct cb_packet *pk = NULL;
	char buf[256];
	bool piped;
	FILE *f = cb_open(path, &piped);
	int n = 0, cap = 0;

	*out = NULL;
	if (!f)
		return -1;
	while (n < max && fgets(buf, sizeof(buf), f)) {
		unsigned long src, dst;
		unsigned int sp, dp, proto;
		struct cb_packet *p;
		uint32_t a;

		if (sscanf(buf, "%lu %lu %u %u %u", &src, &dst, &sp, &dp,
			   &proto) != 5 || src > 0xffffffffUL ||
		    dst > 0xffffffffUL || sp > 65535 || dp > 65535 ||
		    proto > 255) {
			errno = EINVAL;
			goto fail;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			p = realloc(pk, cap * sizeof(*p));
			if (!p)
				goto fail;
			pk = p;
		}
		p = &pk[n++];
		memset(p, 0, sizeof(*p));
		a = htonl(src);
		memcpy(p->src.b, &a, 4);
		a = htonl(dst);
		memcpy(p->dst.b, &a, 4);
		p->sport = sp;
		p->dport = dp;
		p->proto = proto;
	}
	/* stopped early, xz dies of SIGPIPE: not an error */
	if (cb_close(f, piped) && n < max) {
		free(pk);
		return -1;
	}
	*out = pk;
	return n;
fail:
	cb_close(f, piped);
	free(pk);
	return -1;
}

/*
 * The same list in IPv6: each address of 2001:db8::/32 followed by 96
 * bits made of the IPv4 address's, three for one (the first the IPv4
 * bit, the other two a hash of the bits up to it), a prefix of n bits
 * one of 32 + 3n. Rules nest and overlap as they did; prefixes are 32 to
 * 128 bits long.
 */
static inline void cb_v6_addr(struct cb_addr *a)
{
	uint32_t v4 = (uint32_t)a->b[0] << 24 | a->b[1] << 16 | a->b[2] << 8 |
		      a->b[3], h = 0x811c9dc5;
	int k, t;

	memset(a, 0, sizeof(*a));
	a->b[0] = 0x20;
	a->b[1] = 0x01;
	a->b[2] = 0x0d;
	a->b[3] = 0xb8;
	for (k = 0; k < 32; k++) {
		int bit = v4 >> (31 - k) & 1;

		h = (h ^ (bit + 1)) * 16777619;
		for (t = 0; t < 3; t++)
			cb_set_bit(a, 32 + 3 * k + t,
				   t ? (int)(h >> (7 + 5 * t) & 1) : bit);
	}
}

static inline void cb_v6_rule(struct cb_rule *ru)
{
	if (ru->v6)
		return;
	ru->v6 = 1;
	cb_v6_addr(&ru->src);
	cb_v6_addr(&ru->dst);
	ru->slen = ru->slen ? 32 + 3 * ru->slen : 0;
	ru->dlen = ru->dlen ? 32 + 3 * ru->dlen : 0;
	cb_mask(&ru->src, ru->slen, 128, 0);
	cb_mask(&ru->dst, ru->dlen, 128, 0);
}

/*
 * A packet in IPv6. A next header that nf_tables walks past as an
 * extension header (hop-by-hop, routing, fragment, AH, destination
 * options, mobility, HIP, shim6, the experimental ones) is not one a
 * packet's transport protocol can be: it is sent as 255.
 */
static inline void cb_v6_packet(struct cb_packet *p)
{
	static const uint8_t ext[] = { 0, 43, 44, 51, 60, 135, 139, 140, 253,
				       254 };
	size_t i;

	if (p->v6)
		return;
	p->v6 = 1;
	cb_v6_addr(&p->src);
	cb_v6_addr(&p->dst);
	for (i = 0; i < sizeof(ext); i++)
		if (p->proto == ext[i])
			p->proto = 255;
}

#endif
