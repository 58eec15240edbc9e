// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * "cgfw update" for the bpf backend: the elements nft compiled (update.c)
 * go into and out of the maps of the named sets that the table's programs
 * use now, found through the description they carry. The programs stay
 * as they are. A map has no transactions: every element changed is kept
 * in a journal (its key and the value it had, if any), and
 * cgfw_bpf_update_end() puts them all back when the update fails, here
 * or in a backend after this one (an nft set that refuses): all or
 * nothing.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <libnftnl/set.h>

#include "bpf/desc.h"
#include "bpf/table.h"

/* One element changed: the map, its key, and the value it had. */
struct upd_change {
	int fd;				/* a dup of the map's fd */
	bool had;			/* it was there before, with val */
	uint8_t *key, *val;
};

struct upd_journal {
	struct upd_change *v;
	size_t n, size;
};

/*
 * The keys of an LPM trie, sorted: a lookup there finds the longest
 * prefix that covers a key, not the key, so whether the key itself was
 * there is read from these.
 */
struct lpm_keys {
	uint8_t *v;
	size_t n;
	uint32_t size;
};

static int cmp_key(const void *a, const void *b, void *size)
{
	return memcmp(a, b, *(uint32_t *)size);
}

static int lpm_keys_read(int fd, uint32_t key_size, struct lpm_keys *lk)
{
	size_t cap = 0;
	uint8_t *nv;

	lk->v = NULL;
	lk->n = 0;
	lk->size = key_size;
	for (;;) {
		if (lk->n == cap) {
			cap = cap ? 2 * cap : 256;
			nv = realloc(lk->v, cap * key_size);
			if (!nv)
				return -ENOMEM;
			lk->v = nv;
		}
		if (bpf_map_get_next_key(fd, lk->n ? lk->v + (lk->n - 1) * key_size :
					 NULL, lk->v + lk->n * key_size))
			break;
		lk->n++;
	}
	qsort_r(lk->v, lk->n, key_size, cmp_key, &lk->size);
	return 0;
}

static bool lpm_has(const struct lpm_keys *lk, const void *key)
{
	size_t lo = 0, hi = lk->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = memcmp(key, lk->v + mid * lk->size, lk->size);
		if (!c)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

/* Keep the element @key of map @fd as it is now, before it changes. */
static int journal_add(struct upd_cmds *u, int fd, const void *key,
		       uint32_t key_size, uint32_t value_size,
		       const struct lpm_keys *lpm)
{
	struct upd_journal *j = u->journal;
	struct upd_change *c;

	if (!j) {
		j = u->journal = calloc(1, sizeof(*j));
		if (!j)
			return -ENOMEM;
	}
	if (j->n == j->size) {
		size_t size = j->size ? 2 * j->size : 64;

		c = realloc(j->v, size * sizeof(*c));
		if (!c)
			return -ENOMEM;
		j->v = c;
		j->size = size;
	}
	c = &j->v[j->n];
	c->key = malloc(key_size);
	c->val = malloc(value_size ? value_size : 1);
	c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (!c->key || !c->val || c->fd < 0) {
		free(c->key);
		free(c->val);
		if (c->fd >= 0)
			close(c->fd);
		return -ENOMEM;
	}
	memcpy(c->key, key, key_size);
	c->had = !bpf_map_lookup_elem(fd, key, c->val) &&
		 (!lpm || lpm_has(lpm, key));
	j->n++;
	return 0;
}

void cgfw_bpf_update_end(struct upd_cmds *u, bool undo)
{
	struct upd_journal *j = u->journal;
	struct upd_change *c;

	if (!j)
		return;
	while (j->n) {
		c = &j->v[--j->n];
		if (undo && c->had)
			bpf_map_update_elem(c->fd, c->key, c->val, BPF_ANY);
		else if (undo)
			bpf_map_delete_elem(c->fd, c->key);
		close(c->fd);
		free(c->key);
		free(c->val);
	}
	free(j->v);
	free(j);
	u->journal = NULL;
}

/*
 * Elements of @s (add or delete) into or out of the map @fd; a meter's
 * (@meter) elements are the rules' to add.
 */
static int update_map(struct cgfw_ctx *ctx, struct upd_cmds *u,
		      const struct upd_set *s, int fd, bool meter,
		      struct nftnl_set *elems, bool del)
{
	struct ir_set set = { .nl = elems };
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info), i;
	struct lpm_keys lpm = { 0 };
	struct bpf_map_spec m = { 0 };
	int ret;

	if (meter && !del) {
		cgfw_err_at(ctx, &u->src, s->loc,
			    "set '%s' of table '%s' is a meter: each element holds the state its rule gives it, and the rule adds them",
			    s->set, s->table);
		return -EINVAL;
	}
	ret = cgfw_bpf_set_spec(ctx, &u->src, s->loc, NULL, &set, &m);
	if (!ret && m.boxes) {
		cgfw_err_at(ctx, &u->src, s->loc,
			    "set '%s' of table '%s' holds intervals of concatenations, which the bpf backend compiles into its programs; apply the table again with the elements changed",
			    s->set, s->table);
		ret = -EOPNOTSUPP;
	}
	if (!ret && (bpf_obj_get_info_by_fd(fd, &info, &len) ||
		     info.key_size != m.key_size ||
		     info.value_size != m.value_size)) {
		cgfw_err_at(ctx, &u->src, s->loc,
			    info.value_size > m.value_size && m.value_size == 1 ?
			    "set '%s' of table '%s' is a meter: each element holds the state its rule gives it, and the rule adds them" :
			    "the map of set '%s' does not fit these elements; apply table '%s' again",
			    s->set, s->table);
		ret = -EINVAL;
	}
	if (!ret && info.type == BPF_MAP_TYPE_LPM_TRIE &&
	    lpm_keys_read(fd, m.key_size, &lpm)) {
		cgfw_err(ctx, "out of memory reading the set's elements");
		ret = -ENOMEM;
	}
	if (!ret)
		cgfw_bpf_arm_timeouts(&m);
	for (i = 0; !ret && i < m.n_elems; i++) {
		void *k = (uint8_t *)m.keys + i * m.key_size;

		ret = journal_add(u, fd, k, m.key_size, info.value_size,
				  lpm.size ? &lpm : NULL);
		if (ret) {
			cgfw_err(ctx, "out of memory keeping the elements an update changes");
			break;
		}
		if (del) {	/* a missing element is an error, as in nft */
			ret = bpf_map_delete_elem(fd, k);
			if (ret)
				cgfw_err_at(ctx, &u->src, s->del_loc,
					    "cannot delete an element of set '%s' of table '%s': %s; nothing was changed",
					    s->set, s->table,
					    ret == -ENOENT ? "it has no such element" : strerror(-ret));
			continue;
		}
		ret = bpf_map_update_elem(fd, k,
					  (uint8_t *)m.values + i * m.value_size,
					  BPF_ANY);
		if (ret == -E2BIG)
			cgfw_err_at(ctx, &u->src, s->loc,
				    "set '%s' is full (%u entries); apply table '%s' again to make room",
				    s->set, info.max_entries, s->table);
		else if (ret)
			cgfw_err_at(ctx, &u->src, s->loc,
				    "cannot update the map of set '%s': %s",
				    s->set, strerror(-ret));
	}
	free(lpm.v);
	free(m.keys);
	free(m.values);
	return ret;
}

/* The map of set @set of table @table that its programs use now. */
/* The map of set @set of table @table; *@meter: a meter's. */
static int set_map(const char *table, const char *set, int *fd, bool *meter)
{
	struct desc d;
	size_t i;
	int ret;

	ret = cgfw_bpf_running_desc(table, &d);
	if (ret)
		return ret;
	ret = -ESRCH;
	for (i = 0; i < d.n_sets && ret == -ESRCH; i++) {
		if (strcmp(d.sets[i].name, set))
			continue;
		*meter = d.sets[i].meter;
		*fd = cgfw_bpf_table_map(table, d.sets[i].map_id);
		ret = *fd < 0 ? *fd : 0;
	}
	cgfw_desc_release(&d);
	return ret;
}

/*
 * Rule commands are refused for a table held here: its rules are compiled
 * into its programs, which only an apply makes.
 */
static int refuse_rules(struct cgfw_ctx *ctx, const struct upd_cmds *u)
{
	const struct rw_rule_cmd *rc;
	struct desc d;

	list_for_each_entry(rc, &u->rw.rule_cmds, list) {
		if (cgfw_bpf_running_desc(rc->table, &d))
			continue;
		cgfw_desc_release(&d);
		cgfw_err_at(ctx, &u->src, &rc->loc,
			    "table '%s' is held by the bpf backend, whose rules are compiled into its programs: change the table's file and run 'cgfw apply' again (rule commands are for tables of the nft backend)",
			    rc->table);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Deletions, then additions, map by map: each element goes in or out on
 * its own (a BPF map has no transactions), kept in the journal.
 */
int cgfw_bpf_update(struct cgfw_ctx *ctx, struct upd_cmds *u)
{
	const struct upd_set *s;
	bool held = false, meter = false;
	int fd, ret;

	ret = refuse_rules(ctx, u);
	if (ret)
		return ret;
	list_for_each_entry(s, &u->sets, list) {
		ret = set_map(s->table, s->set, &fd, &meter);
		if (ret == -ENOENT)
			continue;	/* no table of that name here */
		held = true;
		if (ret) {
			cgfw_err_at(ctx, &u->src, s->loc,
				    "table '%s' has no named set '%s' in the bpf backend",
				    s->table, s->set);
			return -EINVAL;
		}
		if (s->del)
			ret = update_map(ctx, u, s, fd, meter, s->del, true);
		if (!ret && s->add)
			ret = update_map(ctx, u, s, fd, meter, s->add, false);
		close(fd);
		if (ret)
			return ret;
	}
	return held ? 0 : CGFW_NOT_HELD;
}
