// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A table for the bpf backend: its sets as BPF maps, its bound chains
 * grouped into one program per (cgroup, direction).
 *
 *  - a set of exact keys is a hash map keyed by the key's bytes;
 *  - an interval set (one field) is an LPM trie: each interval is split
 *    into the prefixes that cover it exactly (nft keeps intervals apart,
 *    so a key is in at most one of them);
 *  - a map's value is its data; a verdict map's is { s32 verdict; u32
 *    chain }, the chain by its index in the table;
 *  - the counters are a per-CPU array, one { packets, bytes } per slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter/nf_tables.h>

#include "bpf/desc.h"
#include "bpf/compile/codegen.h"
#include "front/intervals.h"

/* Anonymous sets of at most this many exact keys are compared inline. */
#define INLINE_SET_MAX 8

/* Room for elements added later to a named set (add element). */
#define SET_HEADROOM 256
/*
 * A set the rules add to (flags dynamic) without a size: nf_tables bounds
 * it by nothing, a BPF map must be sized; past this many elements an add
 * fails there, and the rule ends as nft ends it when a set is full.
 */
#define DYNSET_DEFAULT_SIZE 65536

/* nftnl_set_elem_get_u32() crashes on an unset attribute */
static uint32_t elem_u32(struct nftnl_set_elem *e, uint16_t attr)
{
	uint32_t v = 0, len;
	const void *p = nftnl_set_elem_get(e, attr, &len);

	if (p && len >= sizeof(v))
		memcpy(&v, p, sizeof(v));
	return v;
}

static int add_map(struct bpf_table *bt, struct bpf_map_spec **out)
{
	struct bpf_map_spec *m;

	m = realloc(bt->maps, (bt->n_maps + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	bt->maps = m;
	m = &bt->maps[bt->n_maps++];
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	*out = m;
	return 0;
}

/* One element more for a set's map; its arrays grow by half again. */
static int add_elem(struct bpf_map_spec *m, const void *key,
		    const void *value)
{
	uint8_t *k, *v;
	size_t cap;

	if (m->n_elems == m->cap_elems) {
		cap = m->cap_elems < 16 ? 16 :
		      (size_t)m->cap_elems + m->cap_elems / 2;
		if (cap > UINT32_MAX)
			return -E2BIG;
		k = realloc(m->keys, cap * m->key_size);
		if (!k)
			return -ENOMEM;
		m->keys = k;
		v = realloc(m->values, cap * m->value_size);
		if (!v)
			return -ENOMEM;
		m->values = v;
		m->cap_elems = cap;
	}
	memcpy((uint8_t *)m->keys + (size_t)m->n_elems * m->key_size, key,
	       m->key_size);
	memcpy((uint8_t *)m->values + (size_t)m->n_elems * m->value_size,
	       value, m->value_size);
	m->n_elems++;
	return 0;
}

static int chain_idx(const struct ir_table *t, const char *name)
{
	const struct ir_chain *c;
	int i = 0;

	list_for_each_entry(c, &t->chains, list) {
		if (!strcmp(c->name, name))
			return i;
		i++;
	}
	return -1;
}

/*
 * The value of an element: its data, or { verdict, chain }; @t NULL (an
 * update, no chains at hand): a jump or goto cannot be resolved.
 */
static int elem_value(const struct ir_table *t, struct nftnl_set_elem *e,
		      bool verdict, uint8_t *value, uint32_t size)
{
	const void *d;
	uint32_t len;
	int32_t v[2] = { 0, 0 };

	memset(value, 0, size);
	if (verdict) {
		v[0] = elem_u32(e, NFTNL_SET_ELEM_VERDICT);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_CHAIN)) {
			if (!t)
				return -EOPNOTSUPP;
			v[1] = chain_idx(t, nftnl_set_elem_get_str(e,
								   NFTNL_SET_ELEM_CHAIN));
			if (v[1] < 0)
				return -ENOENT;
		}
		memcpy(value, v, sizeof(v));
		return 0;
	}
	d = nftnl_set_elem_get(e, NFTNL_SET_ELEM_DATA, &len);
	if (d)
		memcpy(value, d, len < size ? len : size);
	return 0;
}

static cgfw_u128 low_mask(unsigned int k)
{
	return k >= 128 ? ~(cgfw_u128)0 : ((cgfw_u128)1 << k) - 1;
}

/* [lo, hi] as LPM entries: the fewest aligned blocks that cover it. */
int cgfw_bpf_add_range(struct bpf_map_spec *m, cgfw_u128 lo, cgfw_u128 hi,
		       uint32_t klen, const uint8_t *value)
{
	unsigned int bits = klen * 8, k;
	uint8_t key[4 + 16];
	uint32_t plen;
	int ret;

	while (lo <= hi) {
		for (k = 0; k < bits && !(lo & low_mask(k + 1)) &&
		     (lo | low_mask(k + 1)) <= hi; k++)
			;
		plen = bits - k;
		memcpy(key, &plen, 4);
		cgfw_be_put(key + 4, klen, lo);
		ret = add_elem(m, key, value);
		if (ret)
			return ret;
		if ((lo | low_mask(k)) >= hi)
			break;
		lo = (lo | low_mask(k)) + 1;
	}
	return 0;
}

struct fill {
	const struct ir_table *t;
	struct bpf_map_spec *m;
	bool verdict;
	uint64_t timeout;	/* the set's, ms */
};

/*
 * The element's times, for a set with timeouts: its timeout (its own, or
 * the set's) and, until the map is armed (cgfw_bpf_arm_timeouts()), the
 * ms it has left in place of when it expires.
 */
static void elem_time(const struct fill *f, struct nftnl_set_elem *e,
		      uint8_t *value)
{
	struct cgfw_elem_time t = { .timeout = f->timeout };

	if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_TIMEOUT))
		t.timeout = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
	t.expires = t.timeout;
	if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION))
		t.expires = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_EXPIRATION);
	memcpy(value + f->m->time_off, &t, sizeof(t));
}

void cgfw_bpf_arm_timeouts(struct bpf_map_spec *m)
{
	struct cgfw_elem_time t;
	struct timespec now;
	uint64_t now_ns;
	uint8_t *v;
	uint32_t i;

	if (!m->time_off || m->armed)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ns = (uint64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	for (i = 0; i < m->n_elems; i++) {
		v = (uint8_t *)m->values + (size_t)i * m->value_size +
		    m->time_off;
		memcpy(&t, v, sizeof(t));
		if (t.expires)
			t.expires = now_ns + cgfw_timeout_ms(t.expires) * 1000000;
		memcpy(v, &t, sizeof(t));
	}
	m->armed = true;
}

/* One element or interval of a set into its map. */
static int fill_elem(const uint8_t *key, const uint8_t *last, uint32_t len,
		     struct nftnl_set_elem *e, void *data)
{
	struct fill *f = data;
	uint8_t value[CGFW_BPF_VALUE_MAX];
	int ret;

	if (!key)
		return -EOPNOTSUPP;	/* the catch-all: refused above */
	memset(value, 0, sizeof(value));
	ret = elem_value(f->t, e, f->verdict, value + f->m->data_off,
			 f->m->value_size - f->m->data_off);
	if (ret)
		return ret;
	if (f->m->boxes) {	/* the box: its first and last keys */
		memcpy(value, last ? last : key, len);
		return add_elem(f->m, key, value);
	}
	if (f->m->time_off)
		elem_time(f, e, value);
	if (f->m->type != BPF_MAP_TYPE_LPM_TRIE)
		return add_elem(f->m, key, value);
	if (!last)
		last = key;
	return cgfw_bpf_add_range(f->m, cgfw_be_get(key, len),
				  cgfw_be_get(last, len), len, value);
}

/* The catch-all element has no equivalent yet: refused with the set. */
static int catchall(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		    const struct cgfw_loc *loc, const struct nftnl_set *s,
		    const char *name)
{
	struct nftnl_set_elems_iter *it = nftnl_set_elems_iter_create(s);
	struct nftnl_set_elem *e;
	int ret = 0;

	if (!it)
		return -ENOMEM;
	while (!ret && (e = nftnl_set_elems_iter_next(it))) {
		if (!(elem_u32(e, NFTNL_SET_ELEM_FLAGS) &
		      NFT_SET_ELEM_CATCHALL))
			continue;
		cgfw_err_at(ctx, src, loc,
			    "the bpf backend cannot do the catch-all element of set '%s' yet; use the nft backend",
			    name);
		ret = -EOPNOTSUPP;
	}
	nftnl_set_elems_iter_destroy(it);
	return ret;
}

/* What no map holds: -EOPNOTSUPP, said at the set; else 0. */
static int refused(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		   const struct cgfw_loc *loc, const struct ir_set *set)
{
	const struct nftnl_set *s = set->nl;
	const char *name = nftnl_set_get_str(s, NFTNL_SET_NAME);
	uint32_t flags = nftnl_set_get_u32(s, NFTNL_SET_FLAGS);

	if (flags & NFT_SET_OBJECT ||
	    (flags & NFT_SET_EVAL &&
	     (flags & NFT_SET_INTERVAL || flags & NFT_SET_MAP)) ||
	    nftnl_set_get_u32(s, NFTNL_SET_KEY_LEN) > 16 * 4) {
		cgfw_err_at(ctx, src, loc,
			    "the bpf backend cannot do set '%s' (objects, or a dynamic map or interval set); use the nft backend",
			    set->anonymous ? "(anonymous)" : name);
		return -EOPNOTSUPP;
	}
	if (flags & NFT_SET_TIMEOUT && flags & NFT_SET_INTERVAL) {
		cgfw_err_at(ctx, src, loc,
			    "the bpf backend cannot do set '%s': timeouts in an interval set (its elements are split into prefixes or compared in the program); use the nft backend",
			    name);
		return -EOPNOTSUPP;
	}
	if (nftnl_set_is_set(s, NFTNL_SET_EXPR) ||
	    nftnl_set_is_set(s, NFTNL_SET_EXPRESSIONS)) {
		cgfw_err_at(ctx, src, loc,
			    "the bpf backend cannot do set '%s': statements declared in the set (each element's counter, quota or limit); use the nft backend, or a meter (update @%s { KEY limit rate ... } in the rule)",
			    set->anonymous ? "(anonymous)" : name, name);
		return -EOPNOTSUPP;
	}
	return 0;
}

int cgfw_bpf_set_spec(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		      const struct cgfw_loc *loc, const struct ir_table *table,
		      const struct ir_set *set, struct bpf_map_spec *m)
{
	const struct nftnl_set *s = set->nl;
	const char *name = nftnl_set_get_str(s, NFTNL_SET_NAME);
	uint32_t flags = nftnl_set_get_u32(s, NFTNL_SET_FLAGS);
	uint32_t klen = nftnl_set_get_u32(s, NFTNL_SET_KEY_LEN);
	bool is_map = flags & NFT_SET_MAP, verdict = false;
	uint32_t time_off;
	struct fill f;
	int ret;

	if (is_map)
		verdict = nftnl_set_get_u32(s, NFTNL_SET_DATA_TYPE) ==
			  NFT_DATA_VERDICT;
	ret = refused(ctx, src, loc, set);
	if (ret)
		return ret;
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->set = set;
	snprintf(m->name, sizeof(m->name), "cgfw_%.10s", name);
	m->value_size = cgfw_bpf_value_size(flags,
					    nftnl_set_get_u32(s, NFTNL_SET_DATA_TYPE),
					    nftnl_set_get_u32(s, NFTNL_SET_DATA_LEN),
					    &m->time_off);
	/* a map's data, without the times; a set's one byte is none */
	m->data_size = !is_map ? 0 :
		       cgfw_bpf_value_size(flags & ~NFT_SET_TIMEOUT,
					   nftnl_set_get_u32(s, NFTNL_SET_DATA_TYPE),
					   nftnl_set_get_u32(s, NFTNL_SET_DATA_LEN),
					   &time_off);
	if (flags & NFT_SET_INTERVAL && flags & NFT_SET_CONCAT) {
		if (!cgfw_set_fields(s, NULL, NULL)) {
			cgfw_err_at(ctx, src, loc,
				    "the bpf backend cannot do set '%s': the fields of its concatenation are not given, or one is longer than 16 bytes; use the nft backend",
				    set->anonymous ? "(anonymous)" : name);
			return -EOPNOTSUPP;
		}
		m->type = BPF_MAP_TYPE_HASH;
		m->key_size = klen;
		m->data_off = klen;
		m->value_size = klen + m->data_size;
		m->boxes = true;
	} else if (flags & NFT_SET_INTERVAL) {
		if (klen > 16)
			return -EOPNOTSUPP;
		m->type = BPF_MAP_TYPE_LPM_TRIE;
		m->key_size = 4 + klen;
		m->flags = BPF_F_NO_PREALLOC;
	} else {
		m->type = BPF_MAP_TYPE_HASH;
		m->key_size = klen;
	}
	if (m->value_size > CGFW_BPF_VALUE_MAX)
		return -EOPNOTSUPP;
	ret = catchall(ctx, src, loc, s, name);
	f = (struct fill){ .t = table, .m = m, .verdict = verdict };
	if (nftnl_set_is_set(s, NFTNL_SET_TIMEOUT))
		f.timeout = nftnl_set_get_u64(s, NFTNL_SET_TIMEOUT);
	ret = ret ? : cgfw_set_elems(s, fill_elem, &f);
	if (ret && ret != -EOPNOTSUPP && !ctx->err.len)
		cgfw_err(ctx, "cannot turn set %s into a BPF map: %s", name,
			 strerror(-ret));
	/* a few exact keys, fixed: comparisons beat a lookup, and no map */
	m->inline_only = set->anonymous && !is_map && !ret &&
			 !(flags & NFT_SET_EVAL) &&	/* a meter's, dynamic */
			 m->type == BPF_MAP_TYPE_HASH &&
			 (m->n_elems <= INLINE_SET_MAX || m->boxes);
	/* boxes are compiled in: no element goes in later */
	m->max_entries = m->n_elems +
			 (set->anonymous || m->boxes ? 0 : SET_HEADROOM);
	if (flags & NFT_SET_EVAL)	/* the rules add to it: its size */
		m->max_entries = nftnl_set_is_set(s, NFTNL_SET_DESC_SIZE) &&
				 nftnl_set_get_u32(s, NFTNL_SET_DESC_SIZE) ?
				 nftnl_set_get_u32(s, NFTNL_SET_DESC_SIZE) :
				 m->n_elems + DYNSET_DEFAULT_SIZE;
	if (!m->max_entries)
		m->max_entries = 1;
	if (ret == -EOPNOTSUPP && !ctx->err.len)
		cgfw_err_at(ctx, src, loc,
			    "set '%s': a jump or goto in a verdict map cannot be added in place; re-apply the table",
			    name);
	return ret;
}

static int set_to_map(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		      struct bpf_table *bt, const struct ir_set *set)
{
	struct bpf_map_spec *m;
	int ret = add_map(bt, &m);

	return ret ? : cgfw_bpf_set_spec(ctx, &rs->src, &bt->table->loc, bt->table,
				    set, m);
}

static int cmp_prio(const void *a, const void *b)
{
	const struct ir_chain *x = *(const struct ir_chain *const *)a;
	const struct ir_chain *y = *(const struct ir_chain *const *)b;

	return (x->priority > y->priority) - (x->priority < y->priority);
}

/* The program for (cgroup, direction) of @c, made if needed. */
static struct bpf_prog_spec *prog_for(struct bpf_table *bt,
				      const struct ir_chain *c)
{
	struct bpf_prog_spec *p;
	const struct ir_chain **v;
	size_t i;

	for (i = 0; i < bt->n_progs; i++) {
		p = &bt->progs[i];
		if (p->dir == c->dir && p->cgroup->id == c->cgroup.id)
			goto found;
	}
	p = realloc(bt->progs, (bt->n_progs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	bt->progs = p;
	p = &bt->progs[bt->n_progs++];
	memset(p, 0, sizeof(*p));
	p->table = bt->table;
	p->fd = -1;
	p->dir = c->dir;
	p->cgroup = &c->cgroup;
found:
	v = realloc(p->chains, (p->n_chains + 1) * sizeof(*v));
	if (!v)
		return NULL;
	p->chains = v;
	v[p->n_chains++] = c;
	return p;
}

void cgfw_bpf_table_release(struct bpf_table *bt)
{
	size_t i;

	for (i = 0; i < bt->n_maps; i++) {
		free(bt->maps[i].keys);
		free(bt->maps[i].values);
		if (bt->maps[i].fd >= 0)
			close(bt->maps[i].fd);
	}
	for (i = 0; i < bt->n_progs; i++) {
		if (bt->progs[i].fd >= 0)
			close(bt->progs[i].fd);
		cgfw_em_release(&bt->progs[i].em);
		free(bt->progs[i].chains);
		free(bt->progs[i].slots);
	}
	free(bt->maps);
	free(bt->progs);
	free(bt->quotas.exprs);
	free(bt->limits.exprs);
	free(bt->counter_objs.exprs);
	free(bt->numgens.exprs);
	free(bt->logs.exprs);
	memset(bt, 0, sizeof(*bt));
}

struct meter_find {
	struct bpf_table *bt;
	int err;
};

/* A dynset with a statement: its set's map holds the statement's state. */
static int meter_of(struct nftnl_expr *e, void *data)
{
	struct meter_find *f = data;
	uint64_t init[CGFW_METER_STATE_MAX / 8];
	struct nftnl_expr *stmt;
	struct bpf_map_spec *m;
	const char *set;
	uint32_t size, state, i, k;
	bool several, lock;
	void *v;

	if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "dynset"))
		return 0;
	stmt = cgfw_bpf_dynset_stmt(e, &several);
	if (!stmt || several || cgfw_bpf_meter_state(stmt, init, &size, &lock))
		return 0;	/* refused where the rule is compiled */
	set = nftnl_expr_get_str(e, NFTNL_EXPR_DYNSET_SET_NAME);
	for (i = 0; i < f->bt->n_maps; i++) {
		m = &f->bt->maps[i];
		if (!m->set || m->meter || m->type != BPF_MAP_TYPE_HASH ||
		    strcmp(nftnl_set_get_str(m->set->nl, NFTNL_SET_NAME), set))
			continue;
		state = size;
		if (m->time_off) {	/* the state, then the times */
			m->time_off = state;
			size += sizeof(struct cgfw_elem_time);
		}
		/* (a meter has no elements of its own: refused at the rule) */
		v = realloc(m->values, (size_t)(m->n_elems ? : 1) * size);
		if (!v) {
			f->err = -ENOMEM;
			return -1;
		}
		m->values = v;
		memset(v, 0, (size_t)m->n_elems * size);
		for (k = 0; k < m->n_elems; k++)
			memcpy((uint8_t *)v + (size_t)k * size, init, state);
		m->value_size = size;
		m->spin_lock = lock;
		m->meter = stmt;
		break;
	}
	return 0;
}

/* The sets that are meters (codegen.h): their maps hold the state. */
static int meter_maps(struct bpf_table *bt)
{
	struct meter_find f = { .bt = bt };
	const struct ir_chain *c;
	const struct ir_rule *r;

	list_for_each_entry(c, &bt->table->chains, list)
		list_for_each_entry(r, &c->rules, list)
			if (nftnl_expr_foreach(r->nl, meter_of, &f) < 0)
				return f.err;
	return 0;
}

/* @t compiled; program k rule by rule where @no_cls[k] (k < @n) */
static int compile_table(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			 const struct ir_table *t, struct bpf_table *bt,
			 const bool *no_cls, size_t n)
{
	const struct ir_chain *c;
	const struct ir_set *s;
	struct bpf_map_spec *m;
	struct bpf_prog_spec *p;
	size_t i;
	int ret = 0;

	memset(bt, 0, sizeof(*bt));
	bt->rs = rs;
	bt->table = t;
	bt->quotas.map = SIZE_MAX;
	bt->limits.map = SIZE_MAX;
	bt->counter_objs.map = SIZE_MAX;
	bt->numgens.map = SIZE_MAX;
	bt->logs.map = SIZE_MAX;
	bt->log_ring = SIZE_MAX;
	list_for_each_entry(s, &t->sets, list) {
		ret = set_to_map(ctx, rs, bt, s);
		if (ret)
			goto err;
	}
	ret = meter_maps(bt);
	ret = ret ? : cgfw_bpf_obj_slots(ctx, rs, bt);
	if (ret)
		goto err;
	list_for_each_entry(c, &t->chains, list) {
		if (c->base && !prog_for(bt, c)) {
			ret = -ENOMEM;
			goto err;
		}
	}
	/* the description: sized and filled when loaded (bpf/load.c) */
	ret = add_map(bt, &m);
	if (ret)
		goto err;
	bt->desc_map = bt->n_maps - 1;
	m->type = BPF_MAP_TYPE_ARRAY;
	m->key_size = 4;
	m->value_size = 8;
	m->max_entries = 1;
	m->flags = BPF_F_RDONLY_PROG;
	m->desc = true;
	snprintf(m->name, sizeof(m->name), CGFW_DESC_MAP_NAME);
	for (i = 0; i < bt->n_progs; i++) {
		p = &bt->progs[i];
		qsort(p->chains, p->n_chains, sizeof(*p->chains), cmp_prio);
		ret = add_map(bt, &m);
		if (ret)
			goto err;
		p->counters_map = bt->n_maps - 1;
		m->type = BPF_MAP_TYPE_PERCPU_ARRAY;
		m->key_size = 4;
		m->value_size = 16;
		snprintf(m->name, sizeof(m->name), "cgfw_count");
		p->no_cls = i < n && no_cls[i];
		ret = cgfw_bpf_generate(ctx, rs, bt, p, p->no_cls ? NULL :
					&cgfw_bpf_classifier);
		if (ret)
			goto err;
		m = &bt->maps[p->counters_map];
		m->max_entries = p->n_slots ? p->n_slots : 1;
	}
	return 0;
err:
	if (ret == -ENOMEM && !ctx->err.len)
		cgfw_err(ctx, "out of memory compiling table '%s' to BPF",
			 t->name);
	cgfw_bpf_table_release(bt);
	return ret;
}

int cgfw_bpf_compile_table(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			   const struct ir_table *t, struct bpf_table *bt)
{
	return compile_table(ctx, rs, t, bt, NULL, 0);
}

int cgfw_bpf_recompile(struct cgfw_ctx *ctx, struct bpf_table *bt, size_t k)
{
	const struct cgfw_ruleset *rs = bt->rs;
	const struct ir_table *t = bt->table;
	size_t i, n = bt->n_progs;
	bool *no_cls;
	int ret;

	no_cls = calloc(n + 1, sizeof(*no_cls));
	if (!no_cls)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		no_cls[i] = bt->progs[i].no_cls || i == k;
	cgfw_bpf_table_release(bt);
	ret = compile_table(ctx, rs, t, bt, no_cls, n);
	free(no_cls);
	return ret;
}
