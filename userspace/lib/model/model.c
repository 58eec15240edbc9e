// SPDX-License-Identifier: LGPL-2.1-or-later
/* The model of what is installed: building it up and tearing it down. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libnftnl/set.h>
#include <linux/netfilter/nf_tables.h>

#include "front/intervals.h"
#include "model/model.h"

/* One more zeroed entry at the end of *@v (of @n, each @size bytes). */
static void *grow(void **v, size_t *n, size_t size)
{
	char *p = realloc(*v, (*n + 1) * size);

	if (!p)
		return NULL;
	*v = p;
	p += (*n)++ * size;
	memset(p, 0, size);
	return p;
}

#define GROW(arr, n) ((typeof(arr))grow((void **)&(arr), &(n), sizeof(*(arr))))

struct model_table *cgfw_model_add_table(struct cgfw_listing *l)
{
	return GROW(l->tables, l->n_tables);
}

struct model_chain *cgfw_model_add_chain(struct model_table *t)
{
	return GROW(t->chains, t->n_chains);
}

struct model_rule *cgfw_model_add_rule(struct model_chain *c)
{
	return GROW(c->rules, c->n_rules);
}

struct model_set *cgfw_model_add_set(struct model_table *t)
{
	return GROW(t->sets, t->n_sets);
}

struct model_obj *cgfw_model_add_obj(struct model_table *t)
{
	return GROW(t->objs, t->n_objs);
}

struct model_elem *cgfw_model_add_elem(struct model_set *s)
{
	struct model_elem *v;
	size_t cap;

	if (s->n_elems == s->cap_elems) {	/* sets can be large */
		cap = s->cap_elems ? s->cap_elems * 2 : 16;
		v = realloc(s->elems, cap * sizeof(*v));
		if (!v)
			return NULL;
		s->elems = v;
		s->cap_elems = cap;
	}
	v = &s->elems[s->n_elems++];
	memset(v, 0, sizeof(*v));
	return v;
}

static void elem_release(struct model_elem *e)
{
	free(e->key);
	free(e->key_end);
	free(e->data);
	free(e->chain);
}

void cgfw_model_drop_elem(struct model_set *s)
{
	if (s->n_elems)
		elem_release(&s->elems[--s->n_elems]);
}

static void chain_release(struct model_chain *c)
{
	size_t i;

	for (i = 0; i < c->n_rules; i++)
		free(c->rules[i].text);
	free(c->rules);
	free(c->name);
	free(c->cgroup_path);
}

static void set_release(struct model_set *s)
{
	size_t i;

	for (i = 0; i < s->n_elems; i++)
		elem_release(&s->elems[i]);
	free(s->elems);
	free(s->name);
	free(s->where);
}

void cgfw_model_table_release(struct model_table *t)
{
	size_t i;

	for (i = 0; i < t->n_chains; i++)
		chain_release(&t->chains[i]);
	for (i = 0; i < t->n_sets; i++)
		set_release(&t->sets[i]);
	for (i = 0; i < t->n_objs; i++)
		free(t->objs[i].name);
	free(t->objs);
	free(t->chains);
	free(t->sets);
	free(t->name);
	free(t->kernel_name);
	free(t->note);
	memset(t, 0, sizeof(*t));
}

CGFW_API void cgfw_listing__free(struct cgfw_listing *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n_tables; i++)
		cgfw_model_table_release(&l->tables[i]);
	free(l->tables);
	free(l);
}

struct model_chain *cgfw_model_find_chain(const struct model_table *t,
					  const char *name)
{
	size_t i;

	for (i = 0; i < t->n_chains; i++)
		if (!strcmp(t->chains[i].name, name))
			return &t->chains[i];
	return NULL;
}

struct model_set *cgfw_model_find_set(const struct model_table *t,
				      const char *name)
{
	size_t i;

	for (i = 0; i < t->n_sets; i++)
		if (!strcmp(t->sets[i].name, name))
			return &t->sets[i];
	return NULL;
}

struct model_table *cgfw_model_find_table(const struct cgfw_listing *l,
					  const char *name, const char *backend)
{
	size_t i;

	for (i = 0; i < l->n_tables; i++)
		if (!strcmp(l->tables[i].name, name) &&
		    (!backend || !strcmp(l->tables[i].backend, backend)))
			return &l->tables[i];
	return NULL;
}

const char *cgfw_model_binding_str(enum model_binding b)
{
	switch (b) {
	case MODEL_BOUND:
		return "bound";
	case MODEL_STALE:
		return "stale";
	case MODEL_WAITING:
		return "waiting";
	}
	return "?";
}

enum model_binding cgfw_model_binding_of(const char *path, uint64_t id)
{
	struct stat st;

	if (!id)
		return MODEL_WAITING;
	if (!path || stat(path, &st) || !S_ISDIR(st.st_mode))
		return MODEL_STALE;
	return st.st_ino == id ? MODEL_BOUND : MODEL_STALE;
}

static uint8_t *dup_bytes(const void *p, uint32_t len)
{
	uint8_t *d = malloc(len ? len : 1);

	if (d && len)
		memcpy(d, p, len);
	return d;
}

static int add_nftnl_elem(const uint8_t *key, const uint8_t *last,
			  uint32_t len, struct nftnl_set_elem *e, void *data)
{
	struct model_set *ms = data;
	struct model_elem *me = cgfw_model_add_elem(ms);
	const void *d;
	uint32_t dlen;

	if (!me)
		return -ENOMEM;
	me->key = key ? dup_bytes(key, len) : NULL;
	me->key_end = last ? dup_bytes(last, len) : NULL;
	if ((key && !me->key) || (last && !me->key_end))
		return -ENOMEM;
	if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_VERDICT)) {
		me->verdict = nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_VERDICT);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_CHAIN) &&
		    cgfw_strdup(&me->chain, nftnl_set_elem_get_str(e,
						NFTNL_SET_ELEM_CHAIN)))
			return -ENOMEM;
	}
	if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_TIMEOUT))
		me->timeout = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
	if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION))
		me->expires = nftnl_set_elem_get_u64(e,
						     NFTNL_SET_ELEM_EXPIRATION);
	d = nftnl_set_elem_get(e, NFTNL_SET_ELEM_DATA, &dlen);
	if (d && ms->data_len) {
		me->data = calloc(1, ms->data_len);
		if (!me->data)
			return -ENOMEM;
		memcpy(me->data, d, dlen < ms->data_len ? dlen : ms->data_len);
	}
	return 0;
}

/* nft's own set userdata: the byte order of the key (nftables' netlink.c) */
#define NFTNL_UDATA_SET_KEYBYTEORDER 0

static uint32_t key_byteorder(const struct nftnl_set *s)
{
	const uint8_t *ud, *end;
	uint32_t len, v = 0;

	ud = nftnl_set_get_data(s, NFTNL_SET_USERDATA, &len);
	if (!ud)
		return 0;
	for (end = ud + len; ud + 2 <= end && ud + 2 + ud[1] <= end;
	     ud += 2 + ud[1]) {
		if (ud[0] == NFTNL_UDATA_SET_KEYBYTEORDER && ud[1] == 4) {
			memcpy(&v, ud + 2, 4);
			return v;
		}
	}
	return 0;
}

int cgfw_model_set_from_nftnl(struct model_set *ms, const struct nftnl_set *s)
{
	ms->name = strdup(nftnl_set_get_str(s, NFTNL_SET_NAME));
	if (!ms->name)
		return -ENOMEM;
	if (nftnl_set_is_set(s, NFTNL_SET_HANDLE))
		ms->handle = nftnl_set_get_u64(s, NFTNL_SET_HANDLE);
	ms->flags = nftnl_set_get_u32(s, NFTNL_SET_FLAGS);
	ms->key_type = nftnl_set_get_u32(s, NFTNL_SET_KEY_TYPE);
	ms->key_len = nftnl_set_get_u32(s, NFTNL_SET_KEY_LEN);
	ms->key_byteorder = key_byteorder(s);
	if (nftnl_set_is_set(s, NFTNL_SET_TIMEOUT))
		ms->timeout = nftnl_set_get_u64(s, NFTNL_SET_TIMEOUT);
	if (ms->flags & NFT_SET_MAP) {
		ms->data_type = nftnl_set_get_u32(s, NFTNL_SET_DATA_TYPE);
		ms->data_len = nftnl_set_get_u32(s, NFTNL_SET_DATA_LEN);
	}
	return cgfw_set_elems(s, add_nftnl_elem, ms);
}
