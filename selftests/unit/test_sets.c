// SPDX-License-Identifier: GPL-2.0
/*
 * Sets, without root: nf_tables' start and end elements paired into
 * intervals (front/intervals.c), and intervals split into the prefixes of
 * an LPM trie for the bpf backend (bpf/compile/maps.c), checked key by key.
 */
#include <arpa/inet.h>
#include <libnftnl/set.h>
#include <linux/netfilter/nf_tables.h>

#include "kselftest_harness.h"
#include "bpf/table.h"
#include "front/intervals.h"

/* A one-field interval set of 16-bit keys, elements as nft sends them. */
static struct nftnl_set *port_set(const uint16_t *keys, const bool *end,
				  size_t n)
{
	struct nftnl_set *s = nftnl_set_alloc();
	size_t i;

	nftnl_set_set_str(s, NFTNL_SET_NAME, "s");
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, 2);
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, NFT_SET_INTERVAL);
	for (i = 0; i < n; i++) {
		struct nftnl_set_elem *e = nftnl_set_elem_alloc();
		uint16_t k = htons(keys[i]);

		nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &k, 2);
		if (end[i])
			nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS,
					       NFT_SET_ELEM_INTERVAL_END);
		nftnl_set_elem_add(s, e);
	}
	return s;
}

struct got {
	uint16_t lo[16], hi[16];
	size_t n;
};

static int collect(const uint8_t *key, const uint8_t *last, uint32_t len,
		   struct nftnl_set_elem *e, void *data)
{
	struct got *g = data;

	g->lo[g->n] = key[0] << 8 | key[1];
	g->hi[g->n] = last ? (last[0] << 8 | last[1]) : g->lo[g->n];
	g->n++;
	return 0;
}

TEST(intervals_are_paired_from_start_and_end_elements)
{
	/* [10, 19], [30, 30], [40, max]; an end at 0 before them (nft's) */
	static const uint16_t keys[] = { 0, 10, 20, 30, 31, 40 };
	static const bool end[] = { true, false, true, false, true, false };
	struct nftnl_set *s = port_set(keys, end, 6);
	struct got g = { 0 };

	ASSERT_EQ(0, cgfw_set_elems(s, collect, &g));
	ASSERT_EQ(3, g.n);
	EXPECT_EQ(10, g.lo[0]);
	EXPECT_EQ(19, g.hi[0]);
	EXPECT_EQ(30, g.lo[1]);
	EXPECT_EQ(30, g.hi[1]);
	EXPECT_EQ(40, g.lo[2]);
	EXPECT_EQ(65535, g.hi[2]);
	nftnl_set_free(s);
}

TEST(adjacent_intervals_stay_two)
{
	/* [1, 5] and [6, 10]: the end of one and the start of the next at 6 */
	static const uint16_t keys[] = { 11, 6, 6, 1 };
	static const bool end[] = { true, false, true, false };
	struct nftnl_set *s = port_set(keys, end, 4);
	struct got g = { 0 };

	ASSERT_EQ(0, cgfw_set_elems(s, collect, &g));
	ASSERT_EQ(2, g.n);
	EXPECT_EQ(1, g.lo[0]);
	EXPECT_EQ(5, g.hi[0]);
	EXPECT_EQ(6, g.lo[1]);
	EXPECT_EQ(10, g.hi[1]);
	nftnl_set_free(s);
}

TEST(a_key_of_another_length_is_refused)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nftnl_set_elem *e = nftnl_set_elem_alloc();
	uint32_t k = 1;
	struct got g = { 0 };

	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, 2);
	nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &k, 4);
	nftnl_set_elem_add(s, e);
	EXPECT_EQ(-EINVAL, cgfw_set_elems(s, collect, &g));
	nftnl_set_free(s);
}

/* Is @v in exactly one prefix of @m (16-bit keys)? */
static int covered(const struct bpf_map_spec *m, uint16_t v)
{
	uint32_t i, plen;
	int n = 0;

	for (i = 0; i < m->n_elems; i++) {
		const uint8_t *k = (uint8_t *)m->keys + i * m->key_size;
		uint16_t p = k[4] << 8 | k[5], mask;

		memcpy(&plen, k, 4);
		mask = plen ? (uint16_t)(0xffff << (16 - plen)) : 0;
		n += (v & mask) == p;
	}
	return n;
}

TEST(an_interval_becomes_the_fewest_prefixes_that_cover_it_exactly)
{
	static const struct { uint16_t lo, hi; unsigned int n; } c[] = {
		{ 0, 65535, 1 },	/* everything: one /0 */
		{ 1024, 2047, 1 },	/* an aligned block */
		{ 1, 5, 3 },		/* 1, 2-3, 4-5 */
		{ 1000, 2000, 8 },	/* 1000-1007, ..., 1984-1999, 2000 */
		{ 80, 80, 1 },
		{ 1, 65534, 30 },
	};
	struct bpf_map_spec m;
	uint8_t value = 1;
	size_t i;
	uint32_t v;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		memset(&m, 0, sizeof(m));
		m.key_size = 4 + 2;
		m.value_size = 1;
		ASSERT_EQ(0, cgfw_bpf_add_range(&m, c[i].lo, c[i].hi, 2,
						&value));
		EXPECT_EQ(c[i].n, m.n_elems) TH_LOG("[%u, %u]", c[i].lo,
						     c[i].hi);
		for (v = 0; v <= 65535; v++) {
			if (covered(&m, v) != (v >= c[i].lo && v <= c[i].hi)) {
				EXPECT_EQ(v >= c[i].lo && v <= c[i].hi,
					  covered(&m, v))
					TH_LOG("[%u, %u], key %u", c[i].lo,
					       c[i].hi, v);
				break;
			}
		}
		free(m.keys);
		free(m.values);
	}
}

TEST_HARNESS_MAIN
