// SPDX-License-Identifier: GPL-2.0
/*
 * Rule shapes, behind one interface (struct shape): each gives the first
 * n rules of one seeded list, and a packet none of them matches.
 *
 * friendly  "udp dport P accept", P = 10000 + i: the shape bpfilter
 *           published and the bpf backend turns into one hash lookup
 * mixed     access-list rules from the seeded ClassBench-style generator
 *           the classifier is tested with (selftests/lib/classbench.h):
 *           prefixes in 10.0.0.0/8 and fd00::/16, tcp/udp/any, exact
 *           ports and ranges; the bpf backend makes them its classifier
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "classbench.h"

#define MIXED_SEED 14

/* ---- friendly ---- */

static const struct brule *friendly_rules(int n, int proto)
{
	static struct brule *r[2];
	static int have[2];
	int k = proto == 6, i;

	if (n > have[k]) {
		free(r[k]);
		r[k] = calloc(n, sizeof(*r[k]));
		if (!r[k])
			abort();
		for (i = 0; i < n; i++) {
			r[k][i].v6 = -1;
			r[k][i].proto = proto;
			r[k][i].sport[1] = 65535;
			r[k][i].dport[0] = r[k][i].dport[1] = 10000 + i;
		}
		have[k] = n;
	}
	return r[k];
}

static int friendly_miss(int n, int v6, struct pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->v6 = v6;
	p->proto = 17;
	strcpy(p->saddr, v6 ? "::1" : "127.0.0.1");
	strcpy(p->daddr, p->saddr);
	p->sport = 40000;
	p->dport = 9999;
	return 0;
}

const struct shape shape_friendly = {
	.name = "friendly",
	.generator = "udp dport 10000+i accept",
	.rules = friendly_rules,
	.miss = friendly_miss,
};

/* ---- mixed ---- */

static struct brule *mixed;
static int n_mixed;
static struct cb_set mixed_set;	/* the generator's, for its packets */
char mixed_packet[256];

static bool rule_matches(const struct brule *r, const struct pkt *p,
			 const uint8_t *s, const uint8_t *d)
{
	int i;

	if (r->v6 >= 0 && r->v6 != p->v6)
		return false;
	for (i = 0; i < r->slen; i++)
		if ((s[i / 8] ^ r->src[i / 8]) & (0x80 >> (i % 8)))
			return false;
	for (i = 0; i < r->dlen; i++)
		if ((d[i / 8] ^ r->dst[i / 8]) & (0x80 >> (i % 8)))
			return false;
	if (!r->proto)
		return true;
	return r->proto == p->proto && p->sport >= r->sport[0] &&
	       p->sport <= r->sport[1] && p->dport >= r->dport[0] &&
	       p->dport <= r->dport[1];
}

/* nft's answer: the first rule that matches, -1 for none */
static int first_match(int n, const struct pkt *p)
{
	uint8_t s[16] = { 0 }, d[16] = { 0 };
	int i, af = p->v6 ? AF_INET6 : AF_INET;

	inet_pton(af, p->saddr, s);
	inet_pton(af, p->daddr, d);
	for (i = 0; i < n; i++)
		if (rule_matches(&mixed[i], p, s, d))
			return i;
	return -1;
}

static bool any_matches(int n, const struct pkt *p)
{
	return first_match(n, p) >= 0;
}

static const char mixed_generator[] =
	"ClassBench-style (selftests/lib/classbench.h)";

static void mixed_generate(int n)
{
	struct cb_cfg cfg;
	int i;

	if (mixed_set.rules)
		cb_free(&mixed_set);
	cb_default_cfg(&cfg);
	cb_generate(&mixed_set, &cfg, n, MIXED_SEED);
	for (i = 0; i < n; i++) {
		const struct cb_rule *c = &mixed_set.rules[i];
		struct brule *r = &mixed[i];

		r->v6 = c->v6;
		memcpy(r->src, c->src.b, 16);
		memcpy(r->dst, c->dst.b, 16);
		r->slen = c->slen;
		r->dlen = c->dlen;
		r->proto = c->proto;
		memcpy(r->sport, c->sport, sizeof(r->sport));
		memcpy(r->dport, c->dport, sizeof(r->dport));
		r->drop = c->drop;
		r->counter = c->counter;
	}
}

static const struct brule *mixed_rules(int n, int proto)
{
	(void)proto;
	if (n > n_mixed) {
		free(mixed);
		mixed = calloc(n, sizeof(*mixed));
		if (!mixed)
			abort();
		mixed_generate(n);
		n_mixed = n;
	}
	return mixed;
}

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* an address inside @a/@len (random below the prefix) */
static void inside(const uint8_t *a, int len, int v6, uint64_t *s,
		   char *buf, size_t size)
{
	uint8_t b[16];
	int i;

	memcpy(b, a, 16);
	for (i = len; i < (v6 ? 128 : 32); i++)
		if (lcg(s) & 1)
			b[i / 8] |= 0x80 >> (i % 8);
		else
			b[i / 8] &= ~(0x80 >> (i % 8));
	if (!v6 && (b[3] == 0 || b[3] == 255) && len < 32)
		b[3] = 7;
	inet_ntop(v6 ? AF_INET6 : AF_INET, b, buf, size);
}

/*
 * Where every packet of the rules' space matches some rule (access lists
 * with a catch-all), a UDP packet whose first match is an accept rule as
 * late in the list as can be found: linear evaluation walks that far.
 */
static int mixed_late(int n, int v6, struct pkt *p)
{
	uint64_t s = 0x1a7e0000 + n;
	int tries, best = -1;
	struct pkt k;

	for (tries = 0; tries < 20000; tries++) {
		int i = n - 1 - (int)(lcg(&s) % (n / 4 + 1)), m;
		const struct brule *r = &mixed[i];

		if (r->drop || (r->v6 >= 0 && r->v6 != v6) ||
		    (r->proto && r->proto != 17))
			continue;
		memset(&k, 0, sizeof(k));
		k.v6 = v6;
		k.proto = 17;
		inside(r->src, r->slen, v6, &s, k.saddr, sizeof(k.saddr));
		inside(r->dst, r->dlen, v6, &s, k.daddr, sizeof(k.daddr));
		if (!r->slen)	/* in the rules' space, not just anywhere */
			inside((const uint8_t[16]){ v6 ? 0xfd : 10 }, 8, v6, &s,
			       k.saddr, sizeof(k.saddr));
		if (!r->dlen)
			inside((const uint8_t[16]){ v6 ? 0xfd : 10 }, 8, v6, &s,
			       k.daddr, sizeof(k.daddr));
		k.sport = r->sport[0] + lcg(&s) % (r->sport[1] - r->sport[0] + 1);
		k.dport = r->dport[0] + lcg(&s) % (r->dport[1] - r->dport[0] + 1);
		if (k.sport < 1024)	/* ports a socket can bind without fuss */
			continue;
		m = first_match(n, &k);
		if (m > best && !mixed[m].drop) {
			best = m;
			*p = k;
		}
	}
	return best;
}

/* Addresses in the rules' own space that no rule matches; else a late
 * hit (mixed_late()). */
static int mixed_miss(int n, int v6, struct pkt *p)
{
	uint64_t s = 0x5eed0000 + n;
	int tries, i;

	mixed_rules(n, 0);
	for (tries = 0; tries < 100000; tries++) {
		uint8_t a[2][16] = { { 0 } };

		for (i = 0; i < 2; i++) {
			int j;

			a[i][0] = v6 ? 0xfd : 10;
			for (j = 1; j < (v6 ? 16 : 4); j++) {
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				a[i][j] = s >> 56;
			}
			/* not a network's or broadcast address */
			if (!v6 && (a[i][3] == 0 || a[i][3] == 255))
				a[i][3] = 7;
		}
		memset(p, 0, sizeof(*p));
		p->v6 = v6;
		p->proto = 17;
		inet_ntop(v6 ? AF_INET6 : AF_INET, a[0], p->saddr,
			  sizeof(p->saddr));
		inet_ntop(v6 ? AF_INET6 : AF_INET, a[1], p->daddr,
			  sizeof(p->daddr));
		s = s * 6364136223846793005ULL + 1;
		p->sport = 1024 + (s >> 33) % 60000;
		p->dport = 1024 + (s >> 17) % 60000;
		if (!any_matches(n, p)) {
			snprintf(mixed_packet, sizeof(mixed_packet),
				 "a miss: udp %s:%d -> %s:%d", p->saddr,
				 p->sport, p->daddr, p->dport);
			return 0;
		}
	}
	tries = mixed_late(n, v6, p);
	if (tries >= 0)
		snprintf(mixed_packet, sizeof(mixed_packet),
			 "no packet of the rules' space misses all %d: first match rule %d (accept), udp %s:%d -> %s:%d",
			 n, tries + 1, p->saddr, p->sport, p->daddr, p->dport);
	return tries >= 0 ? 0 : -1;
}

/*
 * The generator's own benchmark packets (cb_bench_packet()) for the first
 * @n of @maxn rules: @kind 0 a hit in the first 1%, 1 in the last 1%,
 * 2 a miss; IPv6 if @v6. The verdict a test run must give (1 pass, 0
 * drop; the chains' policy is accept), or -1 when there is no such
 * packet.
 */
int mixed_bench_packet(int n, int maxn, int kind, int v6, struct pkt *p)
{
	struct cb_rng r;
	struct cb_packet c;
	struct cb_set s;
	int m, af = v6 ? AF_INET6 : AF_INET;

	mixed_rules(maxn, 0);
	s = mixed_set;
	s.n = n;
	cb_seed(&r, 1000 + n);
	m = cb_bench_packet(&r, &s, kind, v6, &c);
	if (m == -2)
		return -1;
	memset(p, 0, sizeof(*p));
	p->v6 = v6;
	p->proto = c.proto;
	inet_ntop(af, c.src.b, p->saddr, sizeof(p->saddr));
	inet_ntop(af, c.dst.b, p->daddr, sizeof(p->daddr));
	p->sport = c.sport;
	p->dport = c.dport;
	return m < 0 ? 1 : !mixed[m].drop;
}

const struct shape shape_mixed = {
	.name = "mixed",
	.generator = mixed_generator,
	.rules = mixed_rules,
	.miss = mixed_miss,
};

void set_element(int i, bool interval, char *buf, size_t size)
{
	uint32_t a = (10u << 24) + 8u * i;

	snprintf(buf, size, interval ? "%u.%u.%u.%u/30" : "%u.%u.%u.%u",
		 a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255);
}

void set_gap_addr(int n, char *buf, size_t size)
{
	uint32_t a = (10u << 24) + 8u * (n / 2) + 5;

	snprintf(buf, size, "%u.%u.%u.%u", a >> 24, a >> 16 & 255,
		 a >> 8 & 255, a & 255);
}
