// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nft bytecode to the classifier's boxes (docs/classifier.rst).
 *
 * A rule can be indexed when it is
 *	match... [counter] [verdict]
 * where each match is a load (payload from the network or transport
 * header, a meta key, socket cgroupv2), maybe masked (bitwise), then
 * cmp, range, or a lookup in an anonymous set; and the verdict is
 * accept, drop, continue, return, jump or goto. Anything else (a named
 * set, which "cgfw update" changes in place, a verdict map, quota, limit,
 * meta statements, a match after a statement, a meta key a statement of
 * the table sets) leaves the rule to codegen.c, evaluated in its place.
 *
 * The values nft compares are the register's bytes, as memcmp() orders
 * them: a load of len bytes is a big-endian number. It is cut into
 * dimensions of at most 4 bytes (a load of the fixed network header that
 * starts on a 4-byte boundary into its 32-bit words, so that "ip saddr
 * 10.0.0.0/8", a 1-byte load, and "ip saddr 10.1.2.3", a 4-byte one, are
 * one dimension); an interval of the load becomes a union of boxes over
 * its dimensions, and a rule's match the intersection of its loads'.
 */
#include <stdio.h>
#include <stdlib.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "bpf/cls/cls_int.h"

typedef unsigned __int128 u128;

/* A rule is refused by the classifier (not by cgfw) past these. */
#define MAX_BOXES_RULE	64
/*
 * A lookup in a set of boxes (intervals of concatenations) takes up to
 * this many, each as a rule would; with CLS_MIN_RUN or more, the rule is
 * a run of its own (cls_gen.c).
 */
#define MAX_BOXES_SET	16384
#define MAX_IV		256	/* intervals of one constraint */

struct load {
	uint8_t src;
	uint16_t off;
	uint8_t len;		/* bytes in the register */
	uint32_t word;		/* socket: 0 */
	uint8_t mask[16], xor[16];
	bool masked;
};

struct iv {
	u128 lo, hi;
};

struct ivset {
	struct iv v[MAX_IV];
	size_t n;
};

/* One rule being read: register words hold loads. */
struct rctx {
	struct cls_prog *cp;
	const struct bpf_table *bt;
	enum cgfw_dir dir;
	struct load loads[16];
	size_t n_loads;
	int word_load[16];	/* -1: not a load we know */
	int word_piece[16];
	struct cls_rbox *boxes;	/* the rule's match so far */
	size_t n_boxes;
	size_t max_boxes;	/* MAX_BOXES_RULE, or a set of boxes' size */
	bool many;		/* a set of boxes, a run of its own */
	bool fail;
};

static u128 be_val(const uint8_t *b, size_t n)
{
	u128 v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

static u128 max_of(size_t bytes)
{
	return bytes >= 16 ? ~(u128)0 : ((u128)1 << (8 * bytes)) - 1;
}

static int reg_word(uint32_t reg)
{
	if (reg >= NFT_REG_1 && reg <= NFT_REG_4)
		return (reg - NFT_REG_1) * 4;
	if (reg >= NFT_REG32_00 && reg <= NFT_REG32_15)
		return reg - NFT_REG32_00;
	return -1;
}

/* ---- interval sets ---- */

static void iv_add(struct rctx *r, struct ivset *s, u128 lo, u128 hi)
{
	if (lo > hi)
		return;
	if (s->n == MAX_IV) {
		r->fail = true;
		return;
	}
	s->v[s->n].lo = lo;
	s->v[s->n++].hi = hi;
}

static int cmp_iv(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sort and merge into disjoint intervals. */
static void iv_norm(struct ivset *s)
{
	size_t i, k = 0;

	qsort(s->v, s->n, sizeof(s->v[0]), cmp_iv);
	for (i = 0; i < s->n; i++) {
		if (k && (s->v[i].lo <= s->v[k - 1].hi ||
			  s->v[i].lo - 1 == s->v[k - 1].hi)) {
			if (s->v[i].hi > s->v[k - 1].hi)
				s->v[k - 1].hi = s->v[i].hi;
			continue;
		}
		s->v[k++] = s->v[i];
	}
	s->n = k;
}

/* The complement within [0, max]. */
static void iv_invert(struct rctx *r, struct ivset *s, u128 max)
{
	struct ivset *t = malloc(sizeof(*t));
	u128 next = 0;
	bool end = false;
	size_t i;

	if (!t) {
		r->fail = true;
		return;
	}
	t->n = 0;
	iv_norm(s);
	for (i = 0; i < s->n && !end; i++) {
		if (s->v[i].lo > next)
			iv_add(r, t, next, s->v[i].lo - 1);
		if (s->v[i].hi >= max)
			end = true;
		else
			next = s->v[i].hi + 1;
	}
	if (!end)
		iv_add(r, t, next, max);
	memcpy(s, t, sizeof(*t));
	free(t);
}

/* ---- dimensions ---- */

static int dim_find(struct rctx *r, const struct cls_dim *d)
{
	struct cls_prog *cp = r->cp;
	size_t i;

	for (i = 0; i < cp->n_dims; i++)
		if (cp->dims[i].src == d->src && cp->dims[i].off == d->off &&
		    cp->dims[i].len == d->len && cp->dims[i].mask == d->mask &&
		    cp->dims[i].word == d->word)
			return i;
	if (cp->n_dims == CLS_MAX_DIMS) {
		r->fail = true;
		return -1;
	}
	cp->dims[cp->n_dims] = *d;
	return cp->n_dims++;
}

static void box_full(struct cls_rbox *b)
{
	size_t d;

	for (d = 0; d < CLS_MAX_DIMS; d++) {
		b->lo[d] = 0;
		b->hi[d] = CLS_ABSENT;
	}
}

/* A field's layout: its pieces (dims) and the padding bits after it. */
struct layout {
	int dims[4];
	unsigned int bits[4];	/* of each piece */
	size_t n;
	unsigned int pad;	/* bits added after the value */
};

/*
 * The dims of @len bytes of load @l, masked with @m (of @len bytes, NULL:
 * none, already known not to be a prefix mask only if @len <= 4).
 */
static bool layout_of(struct rctx *r, const struct load *l, size_t len,
		      uint32_t dmask, struct layout *lay)
{
	struct cls_dim d = { .src = l->src, .word = l->word };
	size_t i, plen, total;

	memset(lay, 0, sizeof(*lay));
	if (l->src == CLS_SRC_NET && l->off % 4 == 0 &&
	    l->off + (len + 3) / 4 * 4 <= 40 && dmask == UINT32_MAX) {
		/* the fixed header's words: present in every packet */
		total = (len + 3) / 4 * 4;
		lay->pad = 8 * (total - len);
		plen = 4;
	} else {
		total = len;
		plen = 4;
	}
	for (i = 0; i * plen < total; i++) {
		if (lay->n == 4)
			return false;
		d.off = l->off + (l->src == CLS_SRC_SOCKET ? 0 : i * plen);
		if (l->src == CLS_SRC_SOCKET)
			d.word = i;
		d.len = total - i * plen < plen ? total - i * plen : plen;
		d.mask = d.len == 4 ? UINT32_MAX : (1u << (8 * d.len)) - 1;
		if (dmask != UINT32_MAX)
			d.mask = dmask;
		lay->bits[lay->n] = 8 * d.len;
		lay->dims[lay->n] = dim_find(r, &d);
		if (lay->dims[lay->n++] < 0)
			return false;
	}
	return true;
}

/*
 * [lo, hi] over the pieces from @k on (their bits summed: @w) as boxes
 * refining @base; appended to @out.
 */
static void split(struct rctx *r, const struct layout *lay, size_t k,
		  u128 lo, u128 hi, const struct cls_rbox *base,
		  struct cls_rbox *out, size_t *n, size_t cap)
{
	unsigned int w = 0, rest;
	u128 rmask, lo0, hi0, lor, hir;
	struct cls_rbox b;
	size_t i;
	int d;

	for (i = k; i < lay->n; i++)
		w += lay->bits[i];
	if (r->fail)
		return;
	if (k == lay->n) {
		if (*n == cap) {
			r->fail = true;
			return;
		}
		out[(*n)++] = *base;
		return;
	}
	rest = w - lay->bits[k];
	rmask = rest >= 128 ? ~(u128)0 : ((u128)1 << rest) - 1;
	lo0 = lo >> rest;
	hi0 = hi >> rest;
	lor = lo & rmask;
	hir = hi & rmask;
	d = lay->dims[k];
	b = *base;
	if (lo0 == hi0) {
		b.lo[d] = lo0;
		b.hi[d] = lo0;
		split(r, lay, k + 1, lor, hir, &b, out, n, cap);
		return;
	}
	/* the first value of this piece, with the rest from lor up */
	if (lor) {
		b.lo[d] = b.hi[d] = lo0;
		split(r, lay, k + 1, lor, rmask, &b, out, n, cap);
		lo0++;
	}
	if (hir != rmask) {
		b = *base;
		b.lo[d] = b.hi[d] = hi0;
		split(r, lay, k + 1, 0, hir, &b, out, n, cap);
		hi0--;
	}
	if (lo0 <= hi0) {
		b = *base;
		b.lo[d] = lo0;
		b.hi[d] = hi0;
		if (*n == cap) {
			r->fail = true;
			return;
		}
		out[(*n)++] = b;
	}
}

/* Intersect the rule's boxes with @alt (a union): the product. */
static void and_boxes(struct rctx *r, const struct cls_rbox *alt, size_t n)
{
	struct cls_rbox *nb;
	size_t i, j, k = 0, d;

	if (r->fail)
		return;
	if (r->n_boxes * n > r->max_boxes * 4) {
		r->fail = true;
		return;
	}
	nb = malloc((r->n_boxes * n + 1) * sizeof(*nb));
	if (!nb) {
		r->fail = true;
		return;
	}
	for (i = 0; i < r->n_boxes; i++) {
		for (j = 0; j < n; j++) {
			struct cls_rbox *b = &nb[k];

			for (d = 0; d < CLS_MAX_DIMS; d++) {
				b->lo[d] = r->boxes[i].lo[d] > alt[j].lo[d] ?
					   r->boxes[i].lo[d] : alt[j].lo[d];
				b->hi[d] = r->boxes[i].hi[d] < alt[j].hi[d] ?
					   r->boxes[i].hi[d] : alt[j].hi[d];
				if (b->lo[d] > b->hi[d])
					break;
			}
			k += d == CLS_MAX_DIMS;	/* not empty */
		}
	}
	free(r->boxes);
	r->boxes = nb;
	r->n_boxes = k;
	if (k > r->max_boxes)
		r->fail = true;
}

/* Is @m (of @n bytes) ones, then zeros? Its number of ones. */
static int prefix_mask(const uint8_t *m, size_t n)
{
	size_t i;
	int ones = 0;
	bool zero = false;

	for (i = 0; i < 8 * n; i++) {
		bool bit = m[i / 8] >> (7 - i % 8) & 1;

		if (bit && zero)
			return -1;
		if (!bit)
			zero = true;
		else
			ones++;
	}
	return ones;
}

/*
 * The constraint "load @l, first @len bytes, is in @s" (values of the
 * masked and xored register bytes) as boxes, ANDed into the rule.
 */
static void constrain(struct rctx *r, const struct load *l, size_t len,
		      struct ivset *s)
{
	struct cls_rbox base, *alt;
	struct layout lay;
	uint32_t dmask = UINT32_MAX;
	u128 m = max_of(len), x = 0, v;
	size_t i, n = 0, cap = MAX_BOXES_RULE * 4;
	int ones = 8 * len;

	if (r->fail || len > l->len)
		goto fail;
	if (l->masked) {
		m = be_val(l->mask, len);
		x = be_val(l->xor, len);
		ones = prefix_mask(l->mask, len);
	}
	if (x) {
		/* (v & m) ^ x in s  <=>  v & m in s ^ x: only for points */
		for (i = 0; i < s->n; i++) {
			if (s->v[i].lo != s->v[i].hi)
				goto fail;
			s->v[i].lo ^= x;
			s->v[i].hi ^= x;
		}
	}
	if (ones < 0) {
		/* another mask: a dim of its own, the masked value */
		if (len > 4)
			goto fail;
		dmask = (uint32_t)m;
	} else if (l->masked) {
		/*
		 * a prefix: v & m in [a, b] <=> v in [a, b | ~m] for a, b
		 * multiples of the block; any other interval is cut to its
		 * blocks
		 */
		u128 low = max_of(len) & ~m;

		for (i = 0; i < s->n; i++) {
			u128 a = s->v[i].lo, b = s->v[i].hi;

			a = (a + low) & m;	/* the first block inside */
			if (a < s->v[i].lo)	/* overflowed */
				a = s->v[i].lo;
			if ((a & low) || a > (b & m)) {
				s->v[i].lo = 1;	/* empty */
				s->v[i].hi = 0;
				continue;
			}
			s->v[i].lo = a;
			s->v[i].hi = (b & m) | low;
		}
	}
	if (!layout_of(r, l, len, dmask, &lay))
		goto fail;
	alt = malloc(cap * sizeof(*alt));
	if (!alt)
		goto fail;
	box_full(&base);
	for (i = 0; i < s->n && !r->fail; i++) {
		if (s->v[i].lo > s->v[i].hi)
			continue;
		v = (u128)1 << (lay.pad ? lay.pad : 0);
		split(r, &lay, 0, s->v[i].lo << lay.pad,
		      lay.pad ? (s->v[i].hi << lay.pad) | (v - 1) :
				s->v[i].hi,
		      &base, alt, &n, cap);
	}
	and_boxes(r, alt, n);
	free(alt);
	return;
fail:
	r->fail = true;
}

/* ---- expressions ---- */

static const void *attr(struct nftnl_expr *e, uint16_t a, uint32_t *len)
{
	const void *d = nftnl_expr_get(e, a, len);

	if (!d)
		*len = 0;
	return d;
}

/* The load that starts at register word @w, or NULL. */
static struct load *load_at(struct rctx *r, uint32_t reg)
{
	int w = reg_word(reg);

	if (w < 0 || r->word_load[w] < 0 || r->word_piece[w])
		return NULL;
	return &r->loads[r->word_load[w]];
}

static void set_load(struct rctx *r, uint32_t reg, const struct load *l)
{
	int w = reg_word(reg), i;

	if (w < 0 || r->n_loads == ARRAY_SIZE(r->loads)) {
		r->fail = true;
		return;
	}
	r->loads[r->n_loads] = *l;
	for (i = 0; i * 4 < l->len && w + i < 16; i++) {
		r->word_load[w + i] = r->n_loads;
		r->word_piece[w + i] = i;
	}
	if (w + i > 16 || ((l->len + 3) / 4 > i)) {
		r->fail = true;
		return;
	}
	r->n_loads++;
}

static bool meta_indexable(struct rctx *r, uint32_t key)
{
	switch (key) {
	case NFT_META_LEN:
	case NFT_META_PROTOCOL:
	case NFT_META_NFPROTO:
	case NFT_META_L4PROTO:
	case NFT_META_SKUID:
		return true;
	case NFT_META_MARK:
		return !r->cp->sets_mark;
	case NFT_META_PRIORITY:
		return !r->cp->sets_priority;
	case NFT_META_IIF:
		return r->dir == CGFW_INGRESS;
	case NFT_META_OIF:
		return r->dir == CGFW_EGRESS;
	}
	return false;
}

static void ex_cmp(struct rctx *r, struct nftnl_expr *e)
{
	struct load *l = load_at(r, nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_SREG));
	uint32_t op = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP), len;
	const uint8_t *d = attr(e, NFTNL_EXPR_CMP_DATA, &len);
	struct ivset *s = malloc(sizeof(*s));
	u128 v, max;

	if (!l || !s || !len || len > 16) {
		free(s);
		r->fail = true;
		return;
	}
	s->n = 0;
	v = be_val(d, len);
	max = max_of(len);
	switch (op) {
	case NFT_CMP_EQ:
	case NFT_CMP_NEQ:
		iv_add(r, s, v, v);
		break;
	case NFT_CMP_LT:
		if (v)
			iv_add(r, s, 0, v - 1);
		break;
	case NFT_CMP_LTE:
		iv_add(r, s, 0, v);
		break;
	case NFT_CMP_GT:
		if (v < max)
			iv_add(r, s, v + 1, max);
		break;
	case NFT_CMP_GTE:
		iv_add(r, s, v, max);
		break;
	default:
		r->fail = true;
	}
	/* ordered comparisons of a masked value: only on its own dim */
	if (op != NFT_CMP_EQ && op != NFT_CMP_NEQ && l->masked &&
	    prefix_mask(l->mask, len) >= 0)
		r->fail = true;
	if (op == NFT_CMP_NEQ) {
		if (l->masked && prefix_mask(l->mask, len) >= 0) {
			/* != of a prefix: outside its block, on the raw value */
			struct load raw = *l;
			u128 m = be_val(l->mask, len), x = be_val(l->xor, len);

			raw.masked = false;
			s->n = 0;
			v ^= x;
			if ((v & m) == v) {
				iv_add(r, s, v, v | (max & ~m));
				iv_invert(r, s, max);
			} else {
				iv_add(r, s, 0, max);
			}
			constrain(r, &raw, len, s);
			free(s);
			return;
		}
		if (l->masked && be_val(l->xor, len))
			r->fail = true;
		else
			iv_invert(r, s, max);
	}
	if (!r->fail)
		constrain(r, l, len, s);
	free(s);
}

static void ex_range(struct rctx *r, struct nftnl_expr *e)
{
	struct load *l = load_at(r, nftnl_expr_get_u32(e, NFTNL_EXPR_RANGE_SREG));
	uint32_t op = nftnl_expr_get_u32(e, NFTNL_EXPR_RANGE_OP), fl, tl;
	const uint8_t *from = attr(e, NFTNL_EXPR_RANGE_FROM_DATA, &fl);
	const uint8_t *to = attr(e, NFTNL_EXPR_RANGE_TO_DATA, &tl);
	struct ivset *s = malloc(sizeof(*s));

	if (!l || !s || fl != tl || !fl || fl > 16 || l->masked) {
		free(s);
		r->fail = true;
		return;
	}
	s->n = 0;
	iv_add(r, s, be_val(from, fl), be_val(to, fl));
	if (op == NFT_RANGE_NEQ)
		iv_invert(r, s, max_of(fl));
	else if (op != NFT_RANGE_EQ)
		r->fail = true;
	if (!r->fail)
		constrain(r, l, fl, s);
	free(s);
}

static const struct bpf_map_spec *set_spec(const struct rctx *r,
					   const char *name)
{
	size_t i;

	for (i = 0; i < r->bt->n_maps; i++)
		if (r->bt->maps[i].set &&
		    !strcmp(nftnl_set_get_str(r->bt->maps[i].set->nl,
					      NFTNL_SET_NAME), name))
			return &r->bt->maps[i];
	return NULL;
}

/* An LPM key { u32 prefixlen; bytes } as the interval it covers. */
static void lpm_iv(const uint8_t *k, uint32_t klen, u128 *lo, u128 *hi)
{
	uint32_t plen;
	u128 v = be_val(k + 4, klen), host;

	memcpy(&plen, k, 4);
	host = plen >= 8 * klen ? 0 : max_of(klen) >> plen;
	*lo = v & ~host;
	*hi = v | host;
}

/* The fields of the key: loads in consecutive register words. */
static bool lookup_fields(struct rctx *r, const struct bpf_map_spec *m,
			  uint32_t sreg, struct load **fl, size_t *n_f)
{
	size_t off, w;

	w = reg_word(sreg);
	for (off = 0; off < (m->type == BPF_MAP_TYPE_LPM_TRIE ?
			     m->key_size - 4 : m->key_size);) {
		if (w >= 16 || *n_f == 4 || r->word_load[w] < 0 ||
		    r->word_piece[w]) {
			r->fail = true;
			return false;
		}
		fl[*n_f] = &r->loads[r->word_load[w]];
		off += (fl[*n_f]->len + 3) / 4 * 4;
		w += (fl[*n_f]->len + 3) / 4;
		(*n_f)++;
	}
	return true;
}

/*
 * A set of one field (or an LPM trie): its keys as intervals of the load,
 * their complement for !=.
 */
static void lookup_one(struct rctx *r, const struct bpf_map_spec *m,
		       struct load **fl, size_t n_f, uint32_t flags)
{
	uint32_t klen = m->type == BPF_MAP_TYPE_LPM_TRIE ?
			m->key_size - 4 : m->key_size;
	struct ivset *s;
	size_t i;

	/* as cmp does: the key is the first klen bytes of the register */
	if (n_f != 1 || klen > fl[0]->len) {
		r->fail = true;
		return;
	}
	s = malloc(sizeof(*s));
	if (!s) {
		r->fail = true;
		return;
	}
	s->n = 0;
	for (i = 0; i < m->n_elems; i++) {
		const uint8_t *k = (const uint8_t *)m->keys +
				   i * m->key_size;
		u128 lo, hi;

		if (m->type == BPF_MAP_TYPE_LPM_TRIE)
			lpm_iv(k, klen, &lo, &hi);
		else
			lo = hi = be_val(k, klen);
		iv_add(r, s, lo, hi);
	}
	if (flags & NFT_LOOKUP_F_INV)
		iv_invert(r, s, max_of(klen));
	if (!r->fail)
		constrain(r, fl[0], klen, s);
	free(s);
}

/*
 * A concatenation of exact keys, or of intervals (a set's boxes, from
 * its first key to its last): one box per element.
 */
static void lookup_concat(struct rctx *r, const struct bpf_map_spec *m,
			  struct load **fl, size_t n_f, uint32_t flags)
{
	size_t i, j, off;
	struct rctx sub;
	struct cls_rbox *alt = NULL, full;
	size_t n_alt = 0;

	if (flags & NFT_LOOKUP_F_INV) {
		r->fail = true;
		return;
	}
	alt = malloc((m->n_elems + 1) * sizeof(*alt));
	if (!alt || m->n_elems > (m->boxes ? MAX_BOXES_SET : MAX_BOXES_RULE)) {
		free(alt);
		r->fail = true;
		return;
	}
	if (m->boxes && m->n_elems > r->max_boxes) {
		r->max_boxes = m->n_elems;	/* each box as a rule */
		r->many = r->n_boxes == 1 && m->n_elems >= CLS_MIN_RUN;
	}
	box_full(&full);
	for (i = 0; i < m->n_elems && !r->fail; i++) {
		const uint8_t *k = (const uint8_t *)m->keys + i * m->key_size;
		const uint8_t *h = m->boxes ? (const uint8_t *)m->values +
					      i * m->value_size : k;

		memset(&sub, 0, sizeof(sub));
		sub.cp = r->cp;
		sub.max_boxes = MAX_BOXES_RULE;
		sub.boxes = malloc(sizeof(*sub.boxes));
		if (!sub.boxes) {
			r->fail = true;
			break;
		}
		sub.boxes[0] = full;
		sub.n_boxes = 1;
		for (j = 0, off = 0; j < n_f && !sub.fail; j++) {
			struct ivset *p = malloc(sizeof(*p));

			if (!p) {
				sub.fail = true;
				break;
			}
			p->n = 0;
			iv_add(&sub, p, be_val(k + off, fl[j]->len),
			       be_val(h + off, fl[j]->len));
			constrain(&sub, fl[j], fl[j]->len, p);
			free(p);
			off += (fl[j]->len + 3) / 4 * 4;
		}
		if (sub.fail || sub.n_boxes > 1)
			r->fail = true;
		else if (sub.n_boxes)
			alt[n_alt++] = sub.boxes[0];
		free(sub.boxes);
	}
	if (!r->fail)
		and_boxes(r, alt, n_alt);
	free(alt);
}

static void ex_lookup(struct rctx *r, struct nftnl_expr *e)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET);
	uint32_t flags = nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_FLAGS);
	uint32_t sreg = nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_SREG);
	const struct bpf_map_spec *m = set_spec(r, name);
	struct load *fl[4];
	size_t n_f = 0;

	if (!m || (!m->set->anonymous && !m->boxes) ||
	    nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_DREG) ||
	    nftnl_set_get_u32(m->set->nl, NFTNL_SET_FLAGS) & NFT_SET_MAP) {
		r->fail = true;
		return;
	}
	if (!lookup_fields(r, m, sreg, fl, &n_f))
		return;
	if (m->type == BPF_MAP_TYPE_LPM_TRIE || (n_f == 1 && !m->boxes))
		lookup_one(r, m, fl, n_f, flags);
	else
		lookup_concat(r, m, fl, n_f, flags);
}

static void ex_bitwise(struct rctx *r, struct nftnl_expr *e)
{
	struct load *l = load_at(r, nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_SREG));
	uint32_t len = nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_LEN), ml, xl;
	const uint8_t *mask = attr(e, NFTNL_EXPR_BITWISE_MASK, &ml);
	const uint8_t *xor = attr(e, NFTNL_EXPR_BITWISE_XOR, &xl);
	struct load n;

	if (!l || l->masked || len > l->len || len > 16 ||
	    nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_OP) != NFT_BITWISE_BOOL ||
	    ml < len || (xl && xl < len)) {
		r->fail = true;
		return;
	}
	n = *l;
	n.len = len;
	n.masked = true;
	memcpy(n.mask, mask, len);
	memset(n.xor, 0, sizeof(n.xor));
	if (xl)
		memcpy(n.xor, xor, len);
	set_load(r, nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_DREG), &n);
}

/* One expression of the match part; false: the match part ended. */
static bool ex_match(struct rctx *r, struct nftnl_expr *e)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	struct load l = { 0 };

	if (!strcmp(name, "payload")) {
		uint32_t base = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE);

		if (nftnl_expr_is_set(e, NFTNL_EXPR_PAYLOAD_SREG) ||
		    (base != NFT_PAYLOAD_NETWORK_HEADER &&
		     base != NFT_PAYLOAD_TRANSPORT_HEADER)) {
			r->fail = true;
			return false;
		}
		l.src = base == NFT_PAYLOAD_NETWORK_HEADER ? CLS_SRC_NET :
							     CLS_SRC_TH;
		if (nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET) > 0xffff ||
		    nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN) > 16) {
			r->fail = true;
			return false;
		}
		l.off = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET);
		l.len = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN);
		if (!l.len) {
			r->fail = true;
			return false;
		}
		set_load(r, nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_DREG), &l);
		return true;
	}
	if (!strcmp(name, "meta")) {
		uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY);

		if (nftnl_expr_is_set(e, NFTNL_EXPR_META_SREG))
			return false;	/* a statement */
		if (!meta_indexable(r, key)) {
			r->fail = true;
			return false;
		}
		l.src = CLS_SRC_META;
		l.off = key;
		l.len = 4;
		set_load(r, nftnl_expr_get_u32(e, NFTNL_EXPR_META_DREG), &l);
		return true;
	}
	if (!strcmp(name, "socket")) {
		if (nftnl_expr_get_u32(e, NFTNL_EXPR_SOCKET_KEY) !=
		    NFT_SOCKET_CGROUPV2) {
			r->fail = true;
			return false;
		}
		l.src = CLS_SRC_SOCKET;
		l.off = nftnl_expr_get_u32(e, NFTNL_EXPR_SOCKET_LEVEL);
		l.len = 8;
		set_load(r, nftnl_expr_get_u32(e, NFTNL_EXPR_SOCKET_DREG), &l);
		return true;
	}
	if (!strcmp(name, "cmp"))
		ex_cmp(r, e);
	else if (!strcmp(name, "range"))
		ex_range(r, e);
	else if (!strcmp(name, "lookup"))
		ex_lookup(r, e);
	else if (!strcmp(name, "bitwise"))
		ex_bitwise(r, e);
	else
		return false;
	return true;
}

static bool plain_verdict(int32_t v)
{
	return v == NF_ACCEPT || v == NF_DROP || v == NFT_CONTINUE ||
	       v == NFT_RETURN || v == NFT_JUMP || v == NFT_GOTO;
}

/* limit, as nft_limit_init() has it: cost per packet or per byte */
static void op_limit(struct rctx *r, struct nftnl_expr *e,
		     struct cls_rule *out, struct cls_opspec *op)
{
	uint64_t rate = nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_RATE);
	uint64_t unit = nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_UNIT);
	uint32_t burst = nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_BURST);
	uint64_t nsecs = unit * 1000000000ULL;

	if (!rate) {
		r->fail = true;	/* codegen.c refuses it */
		return;
	}
	op->kind = CLS_OP_LIMIT;
	op->e = e;
	if (nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_FLAGS) & NFT_LIMIT_F_INV)
		op->flags |= CLS_OPF_INV;
	if (nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_TYPE) == NFT_LIMIT_PKTS) {
		op->flags |= CLS_OPF_PKTS;
		if (!burst)
			burst = 5;	/* the kernel's default */
		op->a = nsecs / rate;
		op->b = op->a * burst;
	} else {
		op->a = nsecs;
		op->b = nsecs * (rate + burst) / rate;
		op->c = rate;
	}
	out->n_ops++;
}

/* The verdict: accept, drop, continue, return, jump or goto. */
static void op_verdict(struct rctx *r, struct nftnl_expr *e,
		       struct cls_rule *out)
{
	if (!plain_verdict(nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT))) {
		r->fail = true;
		return;
	}
	out->has_verdict = true;
	out->verdict = nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);
	if (nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN))
		out->chain = nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN);
}

/* "meta mark set N": a constant, then meta set (the next expression) */
static void op_meta_set(struct rctx *r, struct nftnl_expr_iter *it,
			struct nftnl_expr *e, struct cls_rule *out,
			struct cls_opspec *op)
{
	uint32_t reg = nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG);
	struct nftnl_expr *set = nftnl_expr_iter_next(it);
	uint32_t len, v = 0, key;
	const void *d = attr(e, NFTNL_EXPR_IMM_DATA, &len);

	if (!set || !d || len != 4 ||
	    strcmp(nftnl_expr_get_str(set, NFTNL_EXPR_NAME), "meta") ||
	    !nftnl_expr_is_set(set, NFTNL_EXPR_META_SREG) ||
	    nftnl_expr_get_u32(set, NFTNL_EXPR_META_SREG) != reg ||
	    out->n_ops == CLS_MAX_OPS) {
		r->fail = true;
		return;
	}
	key = nftnl_expr_get_u32(set, NFTNL_EXPR_META_KEY);
	if (key != NFT_META_MARK && key != NFT_META_PRIORITY) {
		r->fail = true;
		return;
	}
	memcpy(&v, d, 4);
	op->kind = CLS_OP_SET;
	op->a = v;
	op->flags = key == NFT_META_PRIORITY ? CLS_OPF_PRIORITY : 0;
	out->n_ops++;
}

/*
 * One expression after the match part: a statement, or the verdict.
 * A meta set takes the expression after @e from @it.
 */
static void ex_stmt(struct rctx *r, struct nftnl_expr_iter *it,
		    struct nftnl_expr *e, struct cls_rule *out)
{
	struct cls_opspec *op = &out->ops[out->n_ops];
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	if (out->has_verdict || (strcmp(name, "immediate") &&
				 out->n_ops == CLS_MAX_OPS)) {
		r->fail = true;	/* after the verdict, or too many */
	} else if (!strcmp(name, "counter")) {
		op->kind = CLS_OP_COUNTER;
		out->n_ops++;
		out->counter = true;
	} else if (!strcmp(name, "quota")) {
		op->kind = CLS_OP_QUOTA;
		op->e = e;
		op->a = nftnl_expr_get_u64(e, NFTNL_EXPR_QUOTA_BYTES);
		op->flags = nftnl_expr_get_u32(e, NFTNL_EXPR_QUOTA_FLAGS) &
			    NFT_QUOTA_F_INV ? CLS_OPF_INV : 0;
		out->n_ops++;
	} else if (!strcmp(name, "limit")) {
		op_limit(r, e, out, op);
	} else if (!strcmp(name, "immediate") &&
		   nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG) ==
		   NFT_REG_VERDICT) {
		op_verdict(r, e, out);
	} else if (!strcmp(name, "immediate")) {
		op_meta_set(r, it, e, out, op);
	} else {
		r->fail = true;	/* a statement not indexed */
	}
}

/* The rule's boxes to @out, or the rule left to codegen.c. */
static int rule_done(struct rctx *r, struct cls_rule *out, size_t saved_dims)
{
	if (out->verdict == NFT_CONTINUE)
		out->has_verdict = false;
	if ((out->verdict == NFT_JUMP || out->verdict == NFT_GOTO) &&
	    !out->chain)
		r->fail = true;
	if (r->fail) {
		free(r->boxes);
		r->cp->n_dims = saved_dims;	/* dims only this rule needed */
		out->indexable = false;
		return 0;
	}
	out->indexable = true;
	out->many = r->many && r->n_boxes >= CLS_MIN_RUN;
	out->boxes = r->boxes;
	out->n_boxes = r->n_boxes;
	return 0;
}

int cgfw_cls_rule_read(struct cls_prog *cp, const struct bpf_table *bt,
		       enum cgfw_dir dir, const struct ir_rule *ir,
		       struct cls_rule *out)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(ir->nl);
	struct rctx r = { .cp = cp, .bt = bt, .dir = dir,
			  .max_boxes = MAX_BOXES_RULE };
	struct nftnl_expr *e;
	size_t i, saved_dims = cp->n_dims;
	bool in_match = true;

	memset(out, 0, sizeof(*out));
	out->verdict = NFT_CONTINUE;
	if (!it)
		return -ENOMEM;
	for (i = 0; i < 16; i++)
		r.word_load[i] = -1;
	r.boxes = malloc(sizeof(*r.boxes));
	if (!r.boxes) {
		nftnl_expr_iter_destroy(it);
		return -ENOMEM;
	}
	box_full(&r.boxes[0]);
	r.n_boxes = 1;
	while (!r.fail && (e = nftnl_expr_iter_next(it))) {
		if (in_match && ex_match(&r, e))
			continue;
		in_match = false;
		ex_stmt(&r, it, e, out);
	}
	out->has_ops = out->n_ops > 1 ||
		       (out->n_ops == 1 && out->ops[0].kind != CLS_OP_COUNTER);
	nftnl_expr_iter_destroy(it);
	return rule_done(&r, out, saved_dims);
}
