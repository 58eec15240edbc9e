// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The classifier's decision tree (docs/classifier.rst), as HiCuts builds
 * it (Gupta and McKeown, "Packet classification using hierarchical
 * intelligent cuttings", 1999), with boxes instead of rules:
 *
 *  - a node holds the boxes that intersect its region; at most @binth of
 *    them (or nothing left to cut) make a leaf;
 *  - otherwise it cuts one dimension's block (what the boxes constrain
 *    there, or its dense block: zoom_of(), dense_of()) into 2^k equal
 *    parts, k as large as keeps the children's boxes, summed, under
 *    spfac times its own (HiCuts' space measure), with one more child
 *    for any value outside the block and CLS_ABSENT (257 of them, by
 *    first byte, for a 4-byte dimension's dense block); of the cuts, the
 *    one whose largest child is smallest;
 *  - boxes that would be in every child go to a side subtree (a fork);
 *  - children with the same boxes are one subtree over the hull of their
 *    regions (a box that covers the hull covers each of them);
 *  - a box that covers a node's region and whose rule ends the chain
 *    hides every later rule there: they are left out (redundancy
 *    removal);
 *  - when the entries of all leaves would pass the budget, nodes stop
 *    being cut: leaves get longer, never wrong.
 *
 * A leaf's entries keep rule order; each has the checks of the dims in
 * which its box does not cover the leaf's region.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/cls/cls.h"

void cgfw_cls_default_params(struct cls_params *p)
{
	p->binth = 4;
	p->spfac = 8;
	p->max_cuts_log2 = 12;
	p->max_depth = 24;
	p->max_forks = 4;
	p->fork_min = 8;
	p->dense_space = 3;
	p->budget = 0;	/* 0: 16 * boxes + 65536 */
	p->part_min = 1024;
	p->part_bytes = 512;
	p->part_spfac = 4;
}

void cgfw_cls_blob_release(struct cls_blob *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

static int blob_reserve(struct cls_blob *b, size_t len, uint32_t *off)
{
	size_t need = b->len + len, cap;
	uint8_t *p;

	if (need > UINT32_MAX - 64)
		return -E2BIG;
	if (need > b->cap) {
		cap = b->cap ? b->cap : 4096;
		while (cap < need)
			cap *= 2;
		p = realloc(b->buf, cap);
		if (!p)
			return -ENOMEM;
		b->buf = p;
		b->cap = cap;
	}
	*off = b->len;
	b->len = need;
	return 0;
}

int cgfw_cls_blob_add(struct cls_blob *b, const void *data, size_t len,
		      uint32_t *off)
{
	int ret = blob_reserve(b, len, off);

	if (!ret)
		memcpy(b->buf + *off, data, len);
	return ret;
}

struct bctx {
	const struct cls_input *in;
	const struct cls_params *prm;
	struct cls_blob *blob;
	struct cls_stats *st;
	size_t budget;
	void *scratch;		/* finest_children()'s */
	size_t cap_scratch;
	uint64_t *ranges;	/* dense_of's, and as many to sort them */
	size_t cap_ranges;
	bool parted;		/* building a partition, or one tree */
	bool in_part;		/* building a partition */
	size_t trial_limit;	/* blob length the one tree may reach */
	bool trial_failed;	/* it did */
};

/* Real values of a dim: [0, 2^(8 len) - 1]. */
static uint64_t dim_max(const struct cls_dim *d)
{
	return (1ULL << (8 * d->len)) - 1;
}

static const uint64_t *blo(const struct bctx *b, uint32_t i)
{
	return b->in->box_lo + (size_t)i * b->in->n_dims;
}

static const uint64_t *bhi(const struct bctx *b, uint32_t i)
{
	return b->in->box_hi + (size_t)i * b->in->n_dims;
}

/* The bits a width takes: ceil(log2(w)). */
static unsigned int bits_of(uint64_t w)
{
	unsigned int k = w > 1 ? 64 - __builtin_clzll(w - 1) : 0;

	return k < 63 ? k : 63;
}

static bool covers(const struct bctx *b, uint32_t i, const uint64_t *rlo,
		   const uint64_t *rhi)
{
	const uint64_t *lo = blo(b, i), *hi = bhi(b, i);
	size_t d;

	for (d = 0; d < b->in->n_dims; d++)
		if (lo[d] > rlo[d] || hi[d] < rhi[d])
			return false;
	return true;
}

/*
 * Leave out what a covering box of a terminal rule hides: every box of a
 * later rule, and the other boxes of that rule. Returns the new count.
 */
static size_t prune(const struct bctx *b, uint32_t *boxes, size_t n,
		    const uint64_t *rlo, const uint64_t *rhi)
{
	size_t i, j, k;
	uint32_t r;

	for (i = 0; i < n; i++) {
		r = b->in->box_rule[boxes[i]];
		if (!b->in->terminal[r] || !covers(b, boxes[i], rlo, rhi))
			continue;
		/* boxes are in rule order: keep those before, and this one */
		for (j = 0, k = 0; j < n; j++)
			if (b->in->box_rule[boxes[j]] < r || j == i)
				boxes[k++] = boxes[j];
		return k;
	}
	return n;
}

/*
 * A leaf's record, but for its entries: what the walk does after it.
 * That is @cont, a guard or the end; a guard's test is made by the leaf
 * itself, so the walk goes from the leaf to the guard's side (or past
 * it) without a step through the guard's record.
 */
static void leaf_then(const struct bctx *b, uint32_t cont,
		      struct cls_node *out)
{
	const struct cls_node *g = (const void *)(b->blob->buf + cont);

	memset(out, 0, sizeof(*out));
	out->kind = CLS_LEAF;
	if (g->kind != CLS_GUARD) {
		out->b = out->c = cont;
		return;
	}
	out->shift = g->nkey;
	/* a lower bound is enough: the test only skips what cannot match */
	out->min = g->c > UINT16_MAX ? UINT16_MAX : g->c;
	out->b = g->a;
	out->c = g->b;
}

static int leaf(struct bctx *b, const uint32_t *boxes, size_t n,
		const uint64_t *rlo, const uint64_t *rhi, uint32_t cont,
		struct cls_node *out)
{
	const struct cls_input *in = b->in;
	size_t i, j, d, n_checks = 0, size;
	struct cls_entry *e;
	struct cls_check *c;
	uint32_t start, off;
	int ret;

	if (!n) {
		/*
		 * Nothing here: the walk goes on at @cont, a record already
		 * written (the end, or a guard), whose fields are offsets; a
		 * copy of it does what it does, one record sooner.
		 */
		memcpy(out, b->blob->buf + cont, sizeof(*out));
		b->st->leaves++;
		return 0;
	}
	for (i = 0; i < n; i++)
		for (d = 0; d < in->n_dims; d++)
			n_checks += blo(b, boxes[i])[d] > rlo[d] ||
				    bhi(b, boxes[i])[d] < rhi[d];
	size = n * CLS_ENTRY_SIZE + n_checks * CLS_CHECK_SIZE;
	ret = blob_reserve(b->blob, size, &start);
	if (ret)
		return ret;
	off = start;
	for (i = 0; i < n; i++) {
		const uint64_t *lo = blo(b, boxes[i]), *hi = bhi(b, boxes[i]);
		uint32_t r = in->box_rule[boxes[i]], first = off;
		/*
		 * the likeliest to fail first: the box narrowest against the
		 * region (in bits); the one-byte dims (a family, a protocol:
		 * few values) last
		 */
		uint64_t width[CLS_MAX_DIMS], w;
		size_t order[CLS_MAX_DIMS], m = 0, k, o;

		for (d = 0; d < in->n_dims; d++) {
			if (lo[d] <= rlo[d] && hi[d] >= rhi[d])
				continue;
			w = 64 + bits_of((hi[d] > dim_max(&in->dims[d]) ?
					  dim_max(&in->dims[d]) : hi[d]) -
					 lo[d] + 1) -
			    bits_of((rhi[d] > dim_max(&in->dims[d]) ?
				     dim_max(&in->dims[d]) : rhi[d]) -
				    rlo[d] + 1);
			if (in->dims[d].len == 1)
				w += 128;
			for (k = m; k && width[k - 1] > w; k--) {
				width[k] = width[k - 1];
				order[k] = order[k - 1];
			}
			width[k] = w;
			order[k] = d;
			m++;
		}
		off += CLS_ENTRY_SIZE;
		for (j = 0; j < m; j++) {
			o = order[j];
			c = (struct cls_check *)(b->blob->buf + off);
			c->key = o * 8;
			c->lo = lo[o];
			c->hi = hi[o] > UINT32_MAX ? UINT32_MAX : hi[o];
			off += CLS_CHECK_SIZE;
		}
		e = (struct cls_entry *)(b->blob->buf + first);
		memset(e, 0, sizeof(*e));
		e->next = i + 1 < n ? off : 0;	/* 0: the leaf's last */
		e->rule = r;
		e->nchk = m;
		e->kase = in->cases[r];
		e->slot = in->slots[r];
		b->st->checks += m;
	}
	leaf_then(b, cont, out);
	out->a = start;
	b->st->leaves++;
	b->st->entries += n;
	if (n > b->st->max_leaf)
		b->st->max_leaf = n;
	return 0;
}

/*
 * A cut of dim d: the smallest aligned block of 2^bits values that holds
 * what the boxes constrain there, in 2^k parts of 2^shift; any other
 * value (outside the block, or CLS_ABSENT) goes to one more child, whose
 * region stays the node's. A dim whose constrained values share their
 * first bits (every rule's address in 10.0.0.0/8, in fd00::/16) is then
 * cut where they differ, not on the bits they share.
 */
struct zoom {
	uint64_t blo, bhi;	/* the block */
	unsigned int bits;
};

/* The block of dim @d at this node; false if no box constrains it. */
static bool zoom_of(const struct bctx *b, const uint32_t *boxes, size_t n,
		    const uint64_t *rlo, const uint64_t *rhi, size_t d,
		    struct zoom *z)
{
	uint64_t rmax = rhi[d] > dim_max(&b->in->dims[d]) ?
			dim_max(&b->in->dims[d]) : rhi[d];
	uint64_t hlo = UINT64_MAX, hhi = 0, lo, hi;
	size_t i;

	if (rlo[d] > rmax)
		return false;	/* only CLS_ABSENT here */
	for (i = 0; i < n; i++) {
		lo = blo(b, boxes[i])[d];
		hi = bhi(b, boxes[i])[d];
		if (lo <= rlo[d] && hi >= rhi[d])
			continue;	/* covers the region */
		lo = lo < rlo[d] ? rlo[d] : lo;
		hi = hi > rmax ? rmax : hi;
		if (lo < hlo)
			hlo = lo;
		if (hi > hhi)
			hhi = hi;
	}
	if (hlo > hhi)
		return false;
	for (z->bits = 0; z->bits < 40 && (hlo ^ hhi) >> z->bits; z->bits++)
		;
	z->blo = hlo & ~((1ULL << z->bits) - 1);
	z->bhi = z->blo + (1ULL << z->bits) - 1;
	return true;
}

/*
 * The real children [*i0, *i1] that a box's [lo, hi] reaches in a cut of
 * @z into parts of 2^shift (np of them); *out: it reaches the other one.
 */
static void child_range(uint64_t lo, uint64_t hi, const struct zoom *z,
			unsigned int shift, uint64_t np, uint64_t *i0,
			uint64_t *i1, bool *out)
{
	*out = lo < z->blo || hi > z->bhi;
	*i0 = lo <= z->blo ? 0 : lo > z->bhi ? np - 1 : (lo - z->blo) >> shift;
	*i1 = hi >= z->bhi ? np - 1 : hi < z->blo ? 0 : (hi - z->blo) >> shift;
	if (*i0 > *i1)
		*i0 = *i1;
}

/* A cut: dim, block, parts, and whether the boxes in every part go aside. */
struct cutplan {
	size_t d;
	struct zoom z;
	unsigned int k;
	bool fork;
	bool dense;	/* of the dense block */
	uint64_t score, partial, sum;
};

/* Does a box reach every real child (it would be copied into each)? */
static bool spans(uint64_t i0, uint64_t i1, uint64_t np)
{
	return !i0 && i1 >= np - 1 && np > 1;
}

/*
 * The @m records of @v, @stride words each, by their first word's bits
 * from @shift up, none above @max there: a radix sort, a byte a pass,
 * through @tmp (as large); a pass whose byte is the same in every record
 * is skipped. A few records, by insertion.
 */
static void radix_sort(uint64_t *v, uint64_t *tmp, size_t m, size_t stride,
		       unsigned int shift, uint64_t max)
{
	uint64_t *src = v, *dst = tmp, *t, r[2];
	size_t count[256], i, j, at, c;
	unsigned int sh;

	if (m <= 32) {
		for (i = 1; i < m; i++) {
			memcpy(r, v + stride * i, stride * sizeof(*v));
			for (j = i; j > 0 &&
			     v[stride * (j - 1)] >> shift > r[0] >> shift; j--)
				memcpy(v + stride * j, v + stride * (j - 1),
				       stride * sizeof(*v));
			memcpy(v + stride * j, r, stride * sizeof(*v));
		}
		return;
	}
	for (sh = 0; sh < 64 && max >> sh; sh += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < m; i++)
			count[src[stride * i] >> (shift + sh) & 0xff]++;
		if (m && count[src[0] >> (shift + sh) & 0xff] == m)
			continue;
		for (i = 0, at = 0; i < 256; i++) {
			c = count[i];
			count[i] = at;
			at += c;
		}
		for (i = 0; i < m; i++) {
			at = count[src[stride * i] >> (shift + sh) & 0xff]++;
			for (j = 0; j < stride; j++)
				dst[stride * at + j] = src[stride * i + j];
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, stride * m * sizeof(*v));
}

/*
 * The dense block of dim @d: the smallest aligned block that holds, whole,
 * 7/8 of what the boxes constrain there, when it is smaller than the
 * block of all of it (@hull). A few rules elsewhere (198.18.0.0/15 beside
 * 10.0.0.0/8) make that the whole space, and its cut spends most of its
 * parts on the gap between; a cut of the dense block goes to the other
 * child for any value outside it, with the boxes that reach there.
 * 0 (*found says), or -ENOMEM.
 */
static int dense_of(struct bctx *b, const uint32_t *boxes, size_t n,
		    const uint64_t *rlo, const uint64_t *rhi, size_t d,
		    const struct zoom *hull, struct zoom *z, bool *found)
{
	uint64_t rmax = rhi[d] > dim_max(&b->in->dims[d]) ?
			dim_max(&b->in->dims[d]) : rhi[d];
	uint64_t lo, hi, *v, block = 0, max = 0;
	size_t i, j, m = 0, most, whole;
	unsigned int bits;

	*found = false;
	if (n > b->cap_ranges) {
		void *p = realloc(b->ranges, 4 * n * sizeof(uint64_t));

		if (!p)
			return -ENOMEM;
		b->ranges = p;
		b->cap_ranges = n;
	}
	v = b->ranges;
	for (i = 0; i < n; i++) {
		lo = blo(b, boxes[i])[d];
		hi = bhi(b, boxes[i])[d];
		if (lo <= rlo[d] && hi >= rhi[d])
			continue;	/* covers the region: in every child */
		v[2 * m] = lo < rlo[d] ? rlo[d] : lo;
		v[2 * m + 1] = hi > rmax ? rmax : hi;
		max |= v[2 * m];
		m++;
	}
	radix_sort(v, v + 2 * n, m, 2, 0, max);
	for (bits = hull->bits; bits-- > 0;) {
		/* the block of 2^bits that holds the most ranges whole */
		for (i = 0, most = 0; i < m; i = j) {
			for (j = i, whole = 0;
			     j < m && v[2 * j] >> bits == v[2 * i] >> bits; j++)
				whole += v[2 * j + 1] >> bits == v[2 * i] >> bits;
			if (whole > most) {
				most = whole;
				block = v[2 * i] >> bits;
			}
		}
		if (!most || most * 8 < m * 7)
			break;
		*found = true;
		z->bits = bits;
		z->blo = block << bits;
		z->bhi = z->blo + (1ULL << bits) - 1;
	}
	return 0;
}

static int eval_zoom(struct bctx *b, const uint32_t *boxes, size_t n,
		     const uint64_t *rlo, const uint64_t *rhi, size_t d,
		     bool may_fork, const struct zoom *zp,
		     struct cutplan *best);

/*
 * The best cut of dim @d: of the block of all the boxes constrain there,
 * or of its dense block when that has a smaller largest child at no more
 * than dense_space times the entries (the boxes that reach past it are
 * in the other child too).
 */
static int eval_dim(struct bctx *b, const uint32_t *boxes, size_t n,
		    const uint64_t *rlo, const uint64_t *rhi, size_t d,
		    bool may_fork, struct cutplan *best)
{
	struct zoom z, dz;
	struct cutplan c;
	bool dense = false;
	int ret;

	best->score = UINT64_MAX;
	if (!zoom_of(b, boxes, n, rlo, rhi, d, &z))
		return 0;
	ret = eval_zoom(b, boxes, n, rlo, rhi, d, may_fork, &z, best);
	best->dense = false;
	if (!ret && b->prm->dense_space)
		ret = dense_of(b, boxes, n, rlo, rhi, d, &z, &dz, &dense);
	if (ret || !dense)
		return ret;
	ret = eval_zoom(b, boxes, n, rlo, rhi, d, may_fork, &dz, &c);
	c.dense = true;
	if (!ret && c.score < best->score &&
	    (best->score == UINT64_MAX ||
	     c.sum <= (uint64_t)b->prm->dense_space * best->sum))
		*best = c;
	return ret;
}

/* A cut of a block into 2^k parts, as eval_zoom() weighs it. */
struct parts {
	uint64_t span;		/* boxes that reach every real child */
	bool fork;		/* those go to a side subtree */
	uint64_t sum;		/* the children's boxes, the space measure */
	uint64_t maxc;		/* the largest child's */
	uint64_t partial;	/* boxes that still need a check in the dim */
};

/*
 * The boxes of a node at the finest cut of a block, into 2^kmax parts
 * (coarser cuts shift them), as count_parts() reads them: for each box
 * that matters, its children c0 to c1, whether it reaches the other
 * child, and the alignment of its ends in the block (log2 of the largest
 * power of 2 they are both on: a cut into parts of 2^s leaves it partial
 * when that is below s; COVERS when it covers the node's region in the
 * dim, and needs no check there); and the boxes in the order of their
 * first child (starts) and of their last (ends), as (child << 32 | box).
 * The boxes that cover the region and reach every child are in every
 * child of every cut and are only counted: with wildcards, most of them.
 */
struct finest {
	uint64_t *starts, *ends, *tmp;
	uint32_t *c0, *c1;
	uint8_t *out, *align;
	size_t m;		/* boxes in the arrays */
	size_t cover;		/* boxes only counted */
	size_t cover_out;	/* of which reach the other child */
};

#define COVERS 0xff

/* The alignment of @x (0: on every power of 2). */
static uint8_t align_of(uint64_t x)
{
	return x ? __builtin_ctzll(x) : 64;
}

/* Room for finest_children()'s arrays of @n boxes, in b->scratch. */
static int finest_room(struct bctx *b, size_t n, struct finest *f)
{
	/* starts, ends and the sort's: 8 bytes each; c0, c1: 4; 2 more */
	const size_t box_bytes = 3 * 8 + 2 * 4 + 2;

	if (n > b->cap_scratch) {
		void *p = realloc(b->scratch, n * box_bytes);

		if (!p)
			return -ENOMEM;
		b->scratch = p;
		b->cap_scratch = n;
	}
	f->starts = b->scratch;
	f->ends = f->starts + n;
	f->tmp = f->ends + n;
	f->c0 = (uint32_t *)(f->tmp + n);
	f->c1 = f->c0 + n;
	f->out = (uint8_t *)(f->c1 + n);
	f->align = f->out + n;
	return 0;
}

static int finest_children(struct bctx *b, const uint32_t *boxes, size_t n,
			   const uint64_t *rlo, const uint64_t *rhi, size_t d,
			   const struct zoom *z, unsigned int kmax,
			   struct finest *f)
{
	uint64_t npmax = 1ULL << kmax, i0, i1, lo, hi, i;
	uint8_t a_lo, a_hi;
	bool o;
	int ret;

	ret = finest_room(b, n, f);
	if (ret)
		return ret;
	f->m = f->cover = f->cover_out = 0;
	for (i = 0; i < n; i++) {
		lo = blo(b, boxes[i])[d];
		hi = bhi(b, boxes[i])[d];
		child_range(lo, hi, z, z->bits - kmax, npmax, &i0, &i1, &o);
		if (lo <= rlo[d] && hi >= rhi[d]) {
			if (!i0 && i1 == npmax - 1) {
				f->cover++;
				f->cover_out += o;
				continue;
			}
			a_lo = a_hi = COVERS;
		} else {
			/* an end at the block's edge or beyond splits nothing */
			a_lo = lo > z->blo ? align_of(lo - z->blo) : 64;
			a_hi = hi < z->bhi ? align_of(hi + 1 - z->blo) : 64;
		}
		f->c0[f->m] = i0;
		f->c1[f->m] = i1;
		f->out[f->m] = o;
		f->align[f->m] = a_lo < a_hi ? a_lo : a_hi;
		f->starts[f->m] = i0 << 32 | f->m;
		f->ends[f->m] = i1 << 32 | f->m;
		f->m++;
	}
	/* a coarser cut shifts the children: the orders stay */
	radix_sort(f->starts, f->tmp, f->m, 1, 32, npmax - 1);
	radix_sort(f->ends, f->tmp, f->m, 1, 32, npmax - 1);
	return 0;
}

/*
 * The children of a cut into @np parts: walked from child to child where
 * a box starts or ends (children between have the same boxes: one
 * subtree). p->sum: each such run's boxes once, and a child record as an
 * eighth of an entry; p->maxc: the largest child's. The boxes that span
 * every child go aside when p->fork; the covering ones are @base.
 */
static void walk_parts(const struct finest *f, uint64_t np, unsigned int s,
		       uint64_t base, uint64_t n_out, struct parts *p)
{
	uint64_t run = base, at = 0, q, qs, qe, is = 0, ie = 0, box;

	p->sum = np / 8 + n_out;
	p->maxc = n_out;
	for (;;) {
		qs = is < f->m ? (f->starts[is] >> 32) >> s : UINT64_MAX;
		qe = ie < f->m ? ((f->ends[ie] >> 32) >> s) + 1 : UINT64_MAX;
		q = qs <= qe ? qs : qe;
		if (q >= np)
			break;
		box = (uint32_t)(q == qs ? f->starts[is++] : f->ends[ie++]);
		if (p->fork && spans(f->c0[box] >> s, f->c1[box] >> s, np))
			continue;
		if (q != at) {
			/* the run from child @at to here */
			p->sum += run;
			if (run > p->maxc)
				p->maxc = run;
			at = q;
		}
		if (q == qs)
			run++;
		else
			run--;
	}
	p->sum += run;
	if (run > p->maxc)
		p->maxc = run;
}

/*
 * The cut of @z into 2^k parts, from the finest cut's children @f of the
 * node's @n boxes: the boxes that reach every child, whether they fork,
 * and the boxes of the children (those aside left out).
 */
static void count_parts(const struct bctx *b, size_t n,
			const struct finest *f, const struct zoom *z,
			unsigned int k, unsigned int kmax, bool may_fork,
			struct parts *p)
{
	uint64_t np = 1ULL << k, i0, i1, i, n_out = 0, base = 0;
	unsigned int s = kmax - k, part_bits = z->bits - k;

	p->span = np > 1 ? f->cover : 0;
	for (i = 0; i < f->m; i++)
		p->span += spans(f->c0[i] >> s, f->c1[i] >> s, np);
	p->fork = may_fork && p->span >= b->prm->fork_min && p->span < n;
	p->partial = 0;
	if (!(p->fork && np > 1)) {
		/* the covering boxes: in every child, no check in the dim */
		base = f->cover;
		n_out = f->cover_out;
	}
	for (i = 0; i < f->m; i++) {
		i0 = f->c0[i] >> s;
		i1 = f->c1[i] >> s;
		if (p->fork && spans(i0, i1, np))
			continue;
		n_out += f->out[i];
		/* boxes that will still need a check in this dim */
		p->partial += f->align[i] != COVERS &&
			      (f->align[i] < part_bits || f->out[i]);
	}
	walk_parts(f, np, s, base, n_out, p);
}

/*
 * The best cut of the block @zp of dim @d: for each number of parts the
 * space measure allows, the largest child; the boxes that reach every
 * child go to a side subtree (a fork) when there are enough of them and
 * forks left.
 */
static int eval_zoom(struct bctx *b, const uint32_t *boxes, size_t n,
		     const uint64_t *rlo, const uint64_t *rhi, size_t d,
		     bool may_fork, const struct zoom *zp,
		     struct cutplan *best)
{
	unsigned int k, kmin, kmax;
	/* a partition's boxes are narrow where it cuts: less room */
	unsigned int spfac = b->in_part && b->prm->part_spfac ?
			     b->prm->part_spfac : b->prm->spfac;
	const struct zoom z = *zp;
	uint64_t score;
	struct finest f;
	struct parts p;
	int ret;

	best->score = UINT64_MAX;
	kmax = z.bits < b->prm->max_cuts_log2 ? z.bits : b->prm->max_cuts_log2;
	kmin = kmax ? 1 : 0;
	ret = finest_children(b, boxes, n, rlo, rhi, d, &z, kmax, &f);
	if (ret)
		return ret;
	for (k = kmin; k <= kmax; k++) {
		count_parts(b, n, &f, &z, k, kmax, may_fork, &p);
		if (best->score != UINT64_MAX && p.sum > (uint64_t)spfac * n)
			break;
		/* a side subtree is walked too: count half of it */
		score = p.maxc + (p.fork ? p.span / 2 : 0);
		if (p.maxc + (p.fork ? p.span : 0) >= n)
			score = UINT64_MAX;	/* separates nothing */
		if (score < best->score ||
		    (score == best->score && (p.partial < best->partial ||
		     (p.partial == best->partial && p.sum < best->sum)))) {
			best->d = d;
			best->z = z;
			best->k = k;
			best->fork = p.fork;
			best->score = score;
			best->partial = p.partial;
			best->sum = p.sum;
		}
	}
	return 0;
}

struct group {
	uint32_t *boxes;
	size_t n;
	uint64_t hash;
	uint64_t lo, hi;	/* the hull of the regions, in the cut dim */
	size_t rep;		/* the group this child joins, or itself */
	struct cls_node node;
};

static bool same_boxes(const struct group *x, const struct group *y)
{
	return x->hash == y->hash && x->n == y->n &&
	       !memcmp(x->boxes, y->boxes, x->n * sizeof(uint32_t));
}

static int build(struct bctx *b, uint32_t *boxes, size_t n, uint64_t *rlo,
		 uint64_t *rhi, unsigned int depth, unsigned int forks,
		 uint32_t cont, struct cls_node *out);

/* A guard: walk @target, unless the best match is below rule @min. */
static int add_guard(struct bctx *b, uint32_t target, uint32_t skip,
		     uint32_t min, uint32_t *off)
{
	struct cls_node r = {
		.kind = CLS_GUARD, .a = target, .b = skip, .c = min,
	};

	return cgfw_cls_blob_add(b->blob, &r, sizeof(r), off);
}

/*
 * A guard loads the key of the cut it may walk to (its nkey): that cut,
 * reached only through the guard and the guard's copies, becomes a cut on
 * the parent's key.
 */
static void link_guard(struct bctx *b, uint32_t guard, uint32_t target)
{
	struct cls_node *gr = (struct cls_node *)(b->blob->buf + guard);
	struct cls_node *t = (struct cls_node *)(b->blob->buf + target);

	if (t->kind != CLS_CUT)
		return;
	gr->nkey = t->key & ~CLS_COARSE;
	t->kind = CLS_CUT_PRE;
}

/* A cut of dim @d (kind 0): it becomes kind 3. */
static void cut_pre(struct cls_node *r, size_t d)
{
	if (r->kind == CLS_CUT && r->key / 8 == d)
		r->kind = CLS_CUT_PRE;
}

/*
 * The key a cut loads for its @np children while it picks one: the dim
 * they cut most, each child weighed by its boxes (a shared subtree once
 * per child it is; ties and no cut: the cut's own dim @d). Those children
 * become cuts on the parent's key (kind 3). The children after the last
 * (@n_other of them from recs[np]) get the cut's own key instead: they
 * are kind 3 if they cut @d again (the boxes beyond a dense block). What
 * a leaf goes on to is never one: a guard or the end, which load no key
 * for it.
 */
static uint8_t children_key(struct cls_node *recs, const struct group *g,
			    size_t np, size_t n_other, size_t d)
{
	size_t count[CLS_MAX_DIMS] = { 0 }, j, best = d;

	for (j = 0; j < np; j++)
		if (recs[j].kind == CLS_CUT)
			count[recs[j].key / 8] += g[j].n;
	for (j = 0; j < CLS_MAX_DIMS; j++)
		if (count[j] > count[best])
			best = j;
	for (j = 0; j < np; j++)
		cut_pre(&recs[j], best);
	for (j = np; j < np + n_other; j++)
		cut_pre(&recs[j], d);
	return best * 8;
}

/*
 * The children after the last that box @i reaches, [*t0, *t1] of them:
 * the one, or by the first byte of the values it holds in the region
 * (CLS_ABSENT: the last of them).
 */
static void other_range(const struct bctx *b, uint32_t i, const uint64_t *rlo,
			const uint64_t *rhi, size_t d, bool coarse,
			uint64_t *t0, uint64_t *t1)
{
	uint64_t lo = blo(b, i)[d], hi = bhi(b, i)[d];

	*t0 = *t1 = 0;
	if (!coarse)
		return;
	*t0 = (lo < rlo[d] ? rlo[d] : lo) >> CLS_COARSE_SHIFT;
	*t1 = (hi > rhi[d] ? rhi[d] : hi) >> CLS_COARSE_SHIFT;
}

/*
 * A cut being made (cut_dim()): a group of boxes for each child (np real
 * ones, then the other child, or CLS_COARSE_N of them by first byte),
 * the children's records, and the boxes that go aside.
 */
struct cutting {
	const struct cutplan *c;
	size_t d;
	uint64_t rmax;		/* the region's last real value in d */
	unsigned int shift;
	uint64_t np, ng;
	/* a dense block's 4-byte dim: the values beyond it by first byte */
	bool coarse;
	struct group *g;
	struct cls_node *recs;
	uint32_t *side;
	size_t n_side;
	uint32_t *pool;		/* the groups' boxes */
};

/* Count box @box in group @x, or (@fill) put it there. */
static void group_add(struct group *x, uint32_t box, bool fill)
{
	if (fill) {
		x->boxes[x->n] = box;
		x->hash = (x->hash ^ box) * 0x100000001b3ULL;
	}
	x->n++;
}

/*
 * Each box to the children it reaches, the real ones and those after the
 * last; a box that reaches every real child of a fork goes aside. First
 * the boxes are counted, then (@fill) put in the groups.
 */
static void to_children(const struct bctx *b, const uint32_t *boxes,
			size_t n, const uint64_t *rlo, const uint64_t *rhi,
			struct cutting *s, bool fill)
{
	uint64_t i, j, i0, i1, t0, t1;
	bool o;

	for (i = 0; i < n; i++) {
		child_range(blo(b, boxes[i])[s->d], bhi(b, boxes[i])[s->d],
			    &s->c->z, s->shift, s->np, &i0, &i1, &o);
		if (s->c->fork && spans(i0, i1, s->np)) {
			if (!fill)
				s->side[s->n_side++] = boxes[i];
			continue;
		}
		for (j = i0; j <= i1; j++)
			group_add(&s->g[j], boxes[i], fill);
		other_range(b, boxes[i], rlo, rhi, s->d, s->coarse, &t0, &t1);
		for (j = s->np + t0; o && j <= s->np + t1; j++)
			group_add(&s->g[j], boxes[i], fill);
	}
}

/*
 * Room for the boxes counted in each group, and its child's region in
 * dim d. *sum: the entries of the children, those after the last as if
 * one, the largest.
 */
static int init_groups(const uint64_t *rlo, const uint64_t *rhi,
		       struct cutting *s, uint64_t *sum)
{
	uint64_t j, np = s->np, ng = s->ng, other = 0;
	unsigned int shift = s->shift;
	struct group *g = s->g;
	size_t d = s->d;
	uint32_t *at;

	for (j = 0, *sum = 0; j < ng; j++)
		*sum += g[j].n;
	/* the groups' boxes, one after the other */
	s->pool = malloc((*sum ? *sum : 1) * sizeof(uint32_t));
	if (!s->pool)
		return -ENOMEM;
	at = s->pool;
	*sum = 0;
	for (j = 0; j < ng; j++) {
		/* as if one child after the last: the largest */
		if (j < np)
			*sum += g[j].n;
		else if (g[j].n > other)
			other = g[j].n;
		g[j].boxes = at;
		at += g[j].n;
		g[j].n = 0;
		g[j].hash = 0xcbf29ce484222325ULL;
		/*
		 * the other child keeps the node's region; by first byte, its
		 * values of that byte
		 */
		if (j < np) {
			g[j].lo = s->c->z.blo + (j << shift);
			g[j].hi = g[j].lo + (1ULL << shift) - 1;
		} else if (s->coarse) {
			g[j].lo = (j - np) << CLS_COARSE_SHIFT;
			g[j].hi = j + 1 < ng ? g[j].lo +
				  (1ULL << CLS_COARSE_SHIFT) - 1 : CLS_ABSENT;
		} else {
			g[j].lo = rlo[d];
			g[j].hi = rhi[d];
		}
		if (g[j].lo < rlo[d])
			g[j].lo = rlo[d];
		if (g[j].hi > (j < np ? s->rmax : rhi[d]))
			g[j].hi = j < np ? s->rmax : rhi[d];
		g[j].rep = j;
	}
	*sum += other;
	return 0;
}

/*
 * Children with the same boxes: one subtree over their hull, the first
 * child's. An open-addressed table of the groups by their boxes' hash.
 */
static int share_groups(struct cutting *s)
{
	struct group *g = s->g;
	size_t cap = 16, mask, h, j, *slot;

	while (cap < 2 * s->ng)
		cap *= 2;
	mask = cap - 1;
	slot = malloc(cap * sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	memset(slot, 0xff, cap * sizeof(*slot));
	for (j = 0; j < s->ng; j++) {
		struct group *x = &g[j], *r;

		h = (x->hash ^ x->hash >> 29) * 0x9e3779b97f4a7c15ULL;
		for (h >>= 16; slot[h & mask] != SIZE_MAX; h++)
			if (same_boxes(&g[slot[h & mask]], x))
				break;
		if (slot[h & mask] == SIZE_MAX) {
			slot[h & mask] = j;
			continue;
		}
		x->rep = slot[h & mask];
		r = &g[x->rep];
		if (x->lo < r->lo)
			r->lo = x->lo;
		if (x->hi > r->hi)
			r->hi = x->hi;
	}
	free(slot);
	return 0;
}

/*
 * With a side subtree, the side with the lower rules is walked first
 * (true: the side); its leaves go on to a guard that walks the other
 * unless the best match so far is below its lowest rule, *later_min.
 */
static bool side_first(const struct cls_input *in, const struct cutting *s,
		       uint32_t *later_min)
{
	uint32_t min_main = UINT32_MAX, min_side = in->box_rule[s->side[0]];
	bool first;
	uint64_t j;

	for (j = 0; j < s->ng; j++)
		if (s->g[j].n && in->box_rule[s->g[j].boxes[0]] < min_main)
			min_main = in->box_rule[s->g[j].boxes[0]];
	first = min_side <= min_main;
	*later_min = first ? min_main : min_side;
	return first;
}

/*
 * The subtree of each group, once for the children that share it, over
 * its region in dim d; its leaves go on to @cont.
 */
static int build_children(struct bctx *b, uint64_t *rlo, uint64_t *rhi,
			  unsigned int depth, unsigned int forks,
			  uint32_t cont, struct cutting *s)
{
	size_t d = s->d;
	uint64_t j;
	int ret = 0;

	for (j = 0; j < s->ng && !ret; j++) {
		struct group *x = &s->g[j];
		uint64_t slo = rlo[d], shi = rhi[d];

		if (x->rep != j)
			continue;
		rlo[d] = x->lo;
		rhi[d] = x->hi;
		ret = build(b, x->boxes, x->n, rlo, rhi, depth + 1,
			    forks + !!s->n_side, cont, &x->node);
		rlo[d] = slo;
		rhi[d] = shi;
	}
	return ret;
}

/*
 * The children's records into the blob (one of a shared subtree for
 * each child it is), and *rec, the cut's, with the key they load.
 */
static int cut_record(struct bctx *b, struct cutting *s, struct cls_node *rec)
{
	const struct zoom *z = &s->c->z;
	uint32_t off;
	uint64_t j;
	int ret;

	for (j = 0; j < s->ng; j++)
		s->recs[j] = s->g[s->g[j].rep].node;
	memset(rec, 0, sizeof(*rec));
	rec->nkey = children_key(s->recs, s->g, s->np, s->ng - s->np, s->d);
	ret = cgfw_cls_blob_add(b->blob, s->recs, s->ng * sizeof(*s->recs),
				&off);
	if (ret)
		return ret;
	rec->kind = CLS_CUT;
	rec->shift = s->shift;
	rec->key = s->d * 8 | (s->coarse ? CLS_COARSE : 0);
	rec->a = z->blo;
	rec->b = z->bhi;
	/* mod 2^32: the walk adds (key >> shift) << 4 to it in 32 bits */
	rec->c = off - (uint32_t)((z->blo >> s->shift) << 4);
	b->st->nodes++;
	return 0;
}

/* Make the cut @c of the node: 0 and *done, or 0 and not (no room). */
static int cut_dim(struct bctx *b, uint32_t *boxes, size_t n, uint64_t *rlo,
		   uint64_t *rhi, unsigned int depth, unsigned int forks,
		   uint32_t cont, const struct cutplan *c, struct cls_node *out,
		   bool *done)
{
	const struct cls_input *in = b->in;
	struct cutting s = { .c = c, .d = c->d };
	struct cls_node main_rec, side_rec;
	uint32_t off, guard = 0, main_off = 0, later_min = 0;
	uint32_t main_cont = cont;
	bool first = false;
	uint64_t sum;
	int ret = 0;

	*done = false;
	s.rmax = rhi[s.d] > dim_max(&in->dims[s.d]) ?
		 dim_max(&in->dims[s.d]) : rhi[s.d];
	s.shift = c->z.bits - c->k;
	s.np = 1ULL << c->k;
	s.coarse = c->dense && in->dims[s.d].len == 4;
	s.ng = s.np + (s.coarse ? CLS_COARSE_N : 1);
	s.g = calloc(s.ng, sizeof(*s.g));
	s.recs = malloc(s.ng * sizeof(*s.recs));
	s.side = malloc((n ? n : 1) * sizeof(*s.side));
	if (!s.g || !s.recs || !s.side) {
		ret = -ENOMEM;
		goto out;
	}
	to_children(b, boxes, n, rlo, rhi, &s, false);
	ret = init_groups(rlo, rhi, &s, &sum);
	if (ret)
		goto out;
	if (b->st->entries + sum + s.n_side > b->budget) {
		b->st->budget_hit = true;
		goto out;
	}
	if (b->blob->len > b->trial_limit) {
		b->trial_failed = true;
		goto out;
	}
	to_children(b, boxes, n, rlo, rhi, &s, true);
	ret = share_groups(&s);
	if (ret)
		goto out;
	if (s.n_side)
		first = side_first(in, &s, &later_min);
	if (s.n_side && !first) {
		/* the side after the main cut: build it first */
		ret = build(b, s.side, s.n_side, rlo, rhi, depth + 1, forks + 1,
			    cont, &side_rec);
		ret = ret ? : cgfw_cls_blob_add(b->blob, &side_rec,
						sizeof(side_rec), &off);
		ret = ret ? : add_guard(b, off, cont, later_min, &guard);
		if (ret)
			goto out;
		link_guard(b, guard, off);
		main_cont = guard;
	}
	if (s.n_side && first) {
		/* the cut's records go where the guard can find them */
		ret = blob_reserve(b->blob, sizeof(main_rec), &main_off);
		ret = ret ? : add_guard(b, main_off, cont, later_min, &guard);
		if (ret)
			goto out;
	}
	ret = build_children(b, rlo, rhi, depth, forks, main_cont, &s);
	ret = ret ? : cut_record(b, &s, &main_rec);
	if (ret)
		goto out;
	*out = main_rec;
	if (s.n_side && first) {
		memcpy(b->blob->buf + main_off, &main_rec, sizeof(main_rec));
		link_guard(b, guard, main_off);
		ret = build(b, s.side, s.n_side, rlo, rhi, depth + 1, forks + 1,
			    guard, out);
	}
	b->st->forks += !!s.n_side;
	*done = !ret;
out:
	free(s.pool);
	free(s.g);
	free(s.recs);
	free(s.side);
	return ret;
}

/* Is box @i wide in dim @d: more than half the dim's bits free? */
static bool wide(const struct bctx *b, uint32_t i, size_t d)
{
	const struct cls_dim *dim = &b->in->dims[d];
	uint64_t lo = blo(b, i)[d], hi = bhi(b, i)[d];

	if (hi > dim_max(dim))
		hi = dim_max(dim);
	return hi < lo || bits_of(hi - lo + 1) > 4 * dim->len;
}

/*
 * The two dims of 4 bytes in which most boxes are narrow: a box is in
 * partition 2 * (wide in the first) + (wide in the second). -1: none.
 */
static int part_dims(const struct bctx *b, const uint32_t *boxes, size_t n,
		     size_t *da, size_t *db)
{
	size_t d, i, best[2] = { 0, 0 }, narrow;
	int found = 0;

	for (d = 0; d < b->in->n_dims; d++) {
		if (b->in->dims[d].len != 4 || b->in->dims[d].live)
			continue;
		for (i = 0, narrow = 0; i < n; i++)
			narrow += !wide(b, boxes[i], d);
		if (!narrow)
			continue;
		if (narrow > best[0]) {
			best[1] = best[0];
			*db = *da;
			best[0] = narrow;
			*da = d;
			found++;
		} else if (narrow > best[1]) {
			best[1] = narrow;
			*db = d;
			found++;
		}
	}
	return found >= 2 ? 0 : -1;
}

/*
 * Partitions (CutSplit's, after the fields in which a rule is small),
 * each its own tree, walked one after the other in the order of their
 * lowest rules, each behind a guard: as a fork's sides.
 */
static int build_parts(struct bctx *b, uint32_t *boxes, size_t n,
		       uint64_t *rlo, uint64_t *rhi, unsigned int depth,
		       uint32_t end, struct cls_node *out)
{
	uint64_t plo[CLS_MAX_DIMS], phi[CLS_MAX_DIMS];
	uint32_t *part[4], min[4], order[4], cont = end, off, guard;
	size_t np[4] = { 0 }, da = 0, db = 0, i, k, m = 0;
	int ret = 0;

	if (part_dims(b, boxes, n, &da, &db))
		return 1;
	for (k = 0; k < 4; k++) {
		part[k] = malloc((n ? n : 1) * sizeof(**part));
		min[k] = UINT32_MAX;
	}
	for (i = 0; i < n; i++) {
		k = 2 * wide(b, boxes[i], da) + wide(b, boxes[i], db);
		if (!np[k])
			min[k] = b->in->box_rule[boxes[i]];
		if (part[k])
			part[k][np[k]++] = boxes[i];
	}
	for (k = 0; k < 4; k++) {
		if (!part[k]) {
			ret = -ENOMEM;
			goto out;
		}
		if (np[k])
			order[m++] = k;
	}
	/* lowest rule first */
	for (i = 1; i < m; i++)
		for (k = i; k > 0 && min[order[k]] < min[order[k - 1]]; k--) {
			uint32_t t = order[k];

			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	b->parted = true;
	b->in_part = true;
	for (i = m; i-- > 0;) {
		k = order[i];
		memcpy(plo, rlo, sizeof(plo));
		memcpy(phi, rhi, sizeof(phi));
		ret = build(b, part[k], np[k], plo, phi, depth, 0, cont, out);
		if (ret || !i)
			break;
		ret = cgfw_cls_blob_add(b->blob, out, sizeof(*out), &off);
		ret = ret ? : add_guard(b, off, cont, min[k], &guard);
		if (ret)
			break;
		link_guard(b, guard, off);
		cont = guard;
	}
out:
	for (k = 0; k < 4; k++)
		free(part[k]);
	b->parted = false;
	b->in_part = false;
	return ret;
}

/*
 * One tree, unless it takes more than prm->part_bytes a box or fills the
 * build's budget: then the partitions. The tree's records, made first,
 * are taken back.
 */
static int cut_or_part(struct bctx *b, uint32_t *boxes, size_t n,
		       uint64_t *rlo, uint64_t *rhi, unsigned int depth,
		       unsigned int forks, uint32_t cont,
		       const struct cutplan *best, struct cls_node *out,
		       bool *done)
{
	size_t len = b->blob->len, limit = b->trial_limit;
	struct cls_stats st = *b->st;
	bool failed;
	int ret;

	b->parted = true;
	b->trial_limit = len + b->prm->part_bytes * n;
	ret = cut_dim(b, boxes, n, rlo, rhi, depth, forks, cont, best, out,
		      done);
	b->parted = false;
	b->trial_limit = limit;
	/* too large, or the budget hit within it: the partitions */
	failed = b->trial_failed || (b->st->budget_hit && !st.budget_hit);
	if (ret || !failed)
		return ret;
	b->trial_failed = false;
	b->blob->len = len;
	*b->st = st;
	ret = build_parts(b, boxes, n, rlo, rhi, depth, cont, out);
	if (ret <= 0) {
		*done = !ret;
		return ret;
	}
	/* nothing to partition on: the one tree, without a limit */
	b->parted = true;
	ret = cut_dim(b, boxes, n, rlo, rhi, depth, forks, cont, best, out,
		      done);
	b->parted = false;
	return ret;
}

/* How many boxes do not cover the region in dim @d? */
static size_t constrained(const struct bctx *b, const uint32_t *boxes,
			  size_t n, const uint64_t *rlo, const uint64_t *rhi,
			  size_t d)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += blo(b, boxes[i])[d] > rlo[d] || bhi(b, boxes[i])[d] < rhi[d];
	return k;
}

static int cut(struct bctx *b, uint32_t *boxes, size_t n, uint64_t *rlo,
	       uint64_t *rhi, unsigned int depth, unsigned int forks,
	       uint32_t cont, struct cls_node *out, bool *done)
{
	const struct cls_input *in = b->in;
	struct cutplan best = { .score = UINT64_MAX }, c;
	bool may_fork = forks < b->prm->max_forks;
	size_t d;
	int ret;

	*done = false;
	for (d = 0; d < in->n_dims; d++) {
		if (in->dims[d].live || rlo[d] > dim_max(&in->dims[d]))
			continue;
		ret = eval_dim(b, boxes, n, rlo, rhi, d, may_fork, &c);
		if (ret)
			return ret;
		/* a family or a protocol first: one value below, no checks */
		if (in->dims[d].len == 1 && c.score != UINT64_MAX &&
		    constrained(b, boxes, n, rlo, rhi, d) * 2 >= n)
			c.score /= 16;
		if (c.score < best.score ||
		    (c.score == best.score && c.score != UINT64_MAX &&
		     (c.partial < best.partial ||
		      (c.partial == best.partial && c.sum < best.sum))))
			best = c;
	}
	if (best.score == UINT64_MAX || b->st->budget_hit || b->trial_failed)
		return 0;
	/* below the cuts on a family or a protocol: partitions, once */
	if (!b->parted && b->prm->part_min && n >= b->prm->part_min &&
	    in->dims[best.d].len != 1)
		return cut_or_part(b, boxes, n, rlo, rhi, depth, forks, cont,
				   &best, out, done);
	return cut_dim(b, boxes, n, rlo, rhi, depth, forks, cont, &best, out,
		       done);
}

static int build(struct bctx *b, uint32_t *boxes, size_t n, uint64_t *rlo,
		 uint64_t *rhi, unsigned int depth, unsigned int forks,
		 uint32_t cont, struct cls_node *out)
{
	bool done = false;
	int ret;

	n = prune(b, boxes, n, rlo, rhi);
	if (depth > b->st->max_depth)
		b->st->max_depth = depth;
	if (n > b->prm->binth && depth < b->prm->max_depth) {
		ret = cut(b, boxes, n, rlo, rhi, depth, forks, cont, out,
			  &done);
		if (ret || done)
			return ret;
	}
	return leaf(b, boxes, n, rlo, rhi, cont, out);
}

int cgfw_cls_build(const struct cls_input *in, const struct cls_params *prm,
		   struct cls_blob *blob, uint32_t *root, struct cls_stats *st)
{
	struct bctx b = {
		.in = in, .prm = prm, .blob = blob, .st = st,
	};
	uint64_t rlo[CLS_MAX_DIMS], rhi[CLS_MAX_DIMS];
	struct cls_node rec = { 0 };
	uint32_t *boxes, end;
	size_t i;
	int ret;

	if (in->n_dims > CLS_MAX_DIMS)
		return -E2BIG;
	memset(st, 0, sizeof(*st));
	b.budget = prm->budget ? prm->budget : 16 * in->n_boxes + 65536;
	b.trial_limit = SIZE_MAX;
	for (i = 0; i < in->n_dims; i++) {
		rlo[i] = 0;
		rhi[i] = CLS_ABSENT;
	}
	if (prm->max_cuts_log2 > 16)
		return -EINVAL;
	boxes = malloc((in->n_boxes ? in->n_boxes : 1) * sizeof(*boxes));
	if (!boxes)
		return -ENOMEM;
	for (i = 0; i < in->n_boxes; i++)
		boxes[i] = i;
	/* where every walk of this run ends */
	rec.kind = CLS_END;
	ret = cgfw_cls_blob_add(blob, &rec, sizeof(rec), &end);
	ret = ret ? : build(&b, boxes, in->n_boxes, rlo, rhi, 0, 0, end, &rec);
	/* the walk starts with the root's key loaded */
	if (rec.kind == CLS_CUT)
		rec.kind = CLS_CUT_PRE;
	free(boxes);
	free(b.scratch);
	free(b.ranges);
	return ret ? : cgfw_cls_blob_add(blob, &rec, sizeof(rec), root);
}

int cgfw_cls_walk(const struct cls_blob *blob, uint32_t root, const uint64_t *key,
		  int64_t last, uint32_t *rule, uint16_t *kase, uint32_t *slot,
		  struct cls_cost *cost)
{
	struct cls_cost none;
	/*
	 * what a cut or a guard loaded for the records after it, or
	 * none_loaded where the program's register holds no key (stricter
	 * than the program: a kind 3 record where the builder must not put
	 * one sends the walk wrong)
	 */
	const uint64_t none_loaded = CLS_ABSENT + 1;
	uint64_t best = UINT64_MAX, v, pre = none_loaded;
	uint32_t n = root, e, i;
	bool pre_cut;
	struct cls_entry en;
	struct cls_check c;
	struct cls_node r;

	if (!cost)
		cost = &none;
	memcpy(&r, blob->buf + root, sizeof(r));
	if (r.kind == CLS_CUT_PRE)
		pre = key[r.key / 8];
	for (;;) {
		memcpy(&r, blob->buf + n, sizeof(r));
		switch (r.kind) {
		case CLS_CUT:
		case CLS_CUT_PRE:
			cost->cuts++;
			pre_cut = r.kind == CLS_CUT_PRE;
			cost->pre += pre_cut;
			v = pre_cut ? pre : key[r.key / 8];
			pre = key[r.nkey / 8];
			if (v >= r.a && v <= r.b) {
				n = r.c + (uint32_t)((v >> r.shift) *
						     CLS_NODE_SIZE);
				continue;
			}
			/* the child after the last, or by the first byte */
			pre = key[r.key / 8];
			i = (uint32_t)(((uint64_t)r.b >> r.shift) + 1);
			if (r.key & CLS_COARSE)
				i += v >> CLS_COARSE_SHIFT;
			n = r.c + i * CLS_NODE_SIZE;
			continue;
		case CLS_GUARD:
			pre = key[r.nkey / 8];
			cost->forks++;
			cost->skips += r.c >= best;
			n = r.c >= best ? r.b : r.a;
			continue;
		case CLS_END:
			return best != UINT64_MAX;
		}
		cost->leaves++;

		for (e = r.a; e; e = en.next) {
			memcpy(&en, blob->buf + e, sizeof(en));
			cost->entries++;
			if ((int64_t)en.rule <= last)
				continue;
			if (en.rule >= best)
				break;
			for (i = 0; i < en.nchk; i++) {
				memcpy(&c, blob->buf + e + CLS_ENTRY_SIZE +
				       i * CLS_CHECK_SIZE, sizeof(c));
				cost->checks++;
				if (key[c.key / 8] < c.lo ||
				    key[c.key / 8] > c.hi)
					break;
			}
			if (i < en.nchk)
				continue;
			best = en.rule;
			*rule = en.rule;
			*kase = en.kase;
			*slot = en.slot;
			break;
		}
		/* the guard's test, made by the leaf; its side's key */
		pre = key[r.shift / 8];
		if (r.b != r.c) {
			cost->forks++;
			cost->skips += r.min >= best;
		}
		n = r.min >= best ? r.c : r.b;
	}
}
