// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The description of a bpf table's generation (bpf/desc.h): written as
 * netlink attributes, read back with libmnl, stored in an array map.
 *
 * The map's entries hold the stream in order; the first starts with a
 * header { magic, total length }.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <libmnl/libmnl.h>

#include "base/list.h"
#include "bpf/desc.h"

enum {
	DESC_UNSPEC,
	DESC_FORMAT,		/* u32 */
	DESC_GEN,		/* u64 */
	DESC_TABLE,		/* strz */
	DESC_CHAIN,		/* nested DC_* */
	DESC_RULE,		/* nested DR_* */
	DESC_SET,		/* nested DS_* */
	DESC_PROG,		/* nested DP_* */
	DESC_SLOT,		/* nested DL_* */
	DESC_QUOTA,		/* nested DQ_* */
	DESC_WITH_NFT,		/* u32: the apply's nft family, or 0 */
	DESC_OBJ,		/* nested DO_* */
	DESC_LOG,		/* nested DG_* */
	DESC_CONNTRACK,		/* u32: its programs read ct (bpf/keeper.c) */
};

enum {
	DC_UNSPEC, DC_NAME, DC_BASE, DC_DIR, DC_POLICY, DC_PRIORITY,
	DC_CGROUP_PATH, DC_CGROUP_ID,
};
enum { DR_UNSPEC, DR_CHAIN, DR_TEXT, DR_COUNTER, DR_QUOTA };
enum { DS_UNSPEC, DS_NAME, DS_MAP_ID, DS_NLSET, DS_METER };
enum { DP_UNSPEC, DP_DIR, DP_CGROUP_ID, DP_COUNTERS_ID };
enum { DL_UNSPEC, DL_PROG, DL_SLOT, DL_CHAIN, DL_RULE };
enum { DQ_UNSPEC, DQ_MAP_ID, DQ_SLOT, DQ_CHAIN, DQ_RULE, DQ_BYTES };
enum { DG_UNSPEC, DG_ID, DG_PREFIX, DG_LEVEL, DG_RING_ID, DG_LOST_ID };
enum {
	DO_UNSPEC, DO_TYPE, DO_NAME, DO_MAP_ID, DO_SLOT, DO_BYTES, DO_UNIT,
	DO_BURST, DO_FLAGS, DO_LIMIT_TYPE,
};

#define DESC_MAGIC 0x44574643u	/* "CFWD" */
#define ENTRY_MAX (64u * 1024)

struct desc_head {
	uint32_t magic;
	uint32_t pad;
	uint64_t len;
};

/* ---- writing ---- */

static void put(struct strbuf *sb, uint16_t type, const void *data,
		size_t len)
{
	struct nlattr a = { .nla_len = MNL_ATTR_HDRLEN + len,
			    .nla_type = type };
	static const char zero[MNL_ALIGNTO];

	cgfw_sb_addn(sb, (const char *)&a, sizeof(a));
	cgfw_sb_addn(sb, data, len);
	cgfw_sb_addn(sb, zero, MNL_ALIGN(len) - len);
}

static void put_u32(struct strbuf *sb, uint16_t type, uint32_t v)
{
	put(sb, type, &v, sizeof(v));
}

static void put_u64(struct strbuf *sb, uint16_t type, uint64_t v)
{
	put(sb, type, &v, sizeof(v));
}

static void put_str(struct strbuf *sb, uint16_t type, const char *s)
{
	put(sb, type, s, strlen(s) + 1);
}

/* Start a nest; its length is set by nest_end(). */
static size_t nest_start(struct strbuf *sb, uint16_t type)
{
	size_t at = sb->len;

	put(sb, type, NULL, 0);
	return at;
}

static void nest_end(struct strbuf *sb, size_t at)
{
	struct nlattr *a;

	if (sb->oom)
		return;
	a = (struct nlattr *)(sb->buf + at);
	if (sb->len - at > UINT16_MAX)
		sb->oom = true;	/* cannot happen: records are small */
	else
		a->nla_len = sb->len - at;
}

void cgfw_desc_put_header(struct strbuf *sb, uint64_t gen, uint32_t with_nft,
			  const char *table, bool conntrack)
{
	put_u32(sb, DESC_FORMAT, CGFW_DESC_FORMAT);
	put_u64(sb, DESC_GEN, gen);
	put_u32(sb, DESC_WITH_NFT, with_nft);
	put_str(sb, DESC_TABLE, table);
	if (conntrack)
		put_u32(sb, DESC_CONNTRACK, 1);
}

void cgfw_desc_put_chain(struct strbuf *sb, const struct desc_chain *c)
{
	size_t n = nest_start(sb, DESC_CHAIN);

	put_str(sb, DC_NAME, c->name);
	put_u32(sb, DC_BASE, c->base);
	if (c->base) {
		put_u32(sb, DC_DIR, c->dir);
		put_u32(sb, DC_POLICY, c->policy);
		put_u32(sb, DC_PRIORITY, c->priority);
		put_str(sb, DC_CGROUP_PATH, c->cgroup_path);
		put_u64(sb, DC_CGROUP_ID, c->cgroup_id);
	}
	nest_end(sb, n);
}

void cgfw_desc_put_rule(struct strbuf *sb, const struct desc_rule *r)
{
	size_t n = nest_start(sb, DESC_RULE);
	/* a rule's text is below 64 KiB: the rewrite's statements are */
	size_t len = r->text ? strlen(r->text) : 0;

	put_u32(sb, DR_CHAIN, r->chain);
	if (r->text && len < UINT16_MAX - 64)
		put_str(sb, DR_TEXT, r->text);
	put_u32(sb, DR_COUNTER, r->counter);
	put_u32(sb, DR_QUOTA, r->quota);
	nest_end(sb, n);
}

void cgfw_desc_put_set(struct strbuf *sb, const struct desc_set *s)
{
	size_t n = nest_start(sb, DESC_SET);

	put_str(sb, DS_NAME, s->name);
	put_u32(sb, DS_MAP_ID, s->map_id);
	put(sb, DS_NLSET, s->nlset, s->nlset_len);
	if (s->meter)
		put_u32(sb, DS_METER, 1);
	nest_end(sb, n);
}

void cgfw_desc_put_prog(struct strbuf *sb, const struct desc_prog *p)
{
	size_t n = nest_start(sb, DESC_PROG);

	put_u32(sb, DP_DIR, p->dir);
	put_u64(sb, DP_CGROUP_ID, p->cgroup_id);
	put_u32(sb, DP_COUNTERS_ID, p->counters_id);
	nest_end(sb, n);
}

void cgfw_desc_put_slot(struct strbuf *sb, const struct desc_slot *s)
{
	size_t n = nest_start(sb, DESC_SLOT);

	put_u32(sb, DL_PROG, s->prog);
	put_u32(sb, DL_SLOT, s->slot);
	put_u32(sb, DL_CHAIN, s->chain);
	put_u32(sb, DL_RULE, s->rule);
	nest_end(sb, n);
}

void cgfw_desc_put_quota(struct strbuf *sb, const struct desc_quota *q)
{
	size_t n = nest_start(sb, DESC_QUOTA);

	put_u32(sb, DQ_MAP_ID, q->map_id);
	put_u32(sb, DQ_SLOT, q->slot);
	put_u32(sb, DQ_CHAIN, q->chain);
	put_u32(sb, DQ_RULE, q->rule);
	put_u64(sb, DQ_BYTES, q->bytes);
	nest_end(sb, n);
}

void cgfw_desc_put_obj(struct strbuf *sb, const struct desc_obj *o)
{
	size_t n = nest_start(sb, DESC_OBJ);

	put_u32(sb, DO_TYPE, o->type);
	put_str(sb, DO_NAME, o->name);
	put_u32(sb, DO_MAP_ID, o->map_id);
	put_u32(sb, DO_SLOT, o->slot);
	put_u64(sb, DO_BYTES, o->bytes);
	put_u64(sb, DO_UNIT, o->unit);
	put_u32(sb, DO_BURST, o->burst);
	put_u32(sb, DO_FLAGS, o->flags);
	put_u32(sb, DO_LIMIT_TYPE, o->limit_type);
	nest_end(sb, n);
}

void cgfw_desc_put_log(struct strbuf *sb, const struct desc_log *l)
{
	size_t n = nest_start(sb, DESC_LOG);

	put_u32(sb, DG_ID, l->id);
	put_str(sb, DG_PREFIX, l->prefix);
	put_u32(sb, DG_LEVEL, l->level);
	put_u32(sb, DG_RING_ID, l->ring_id);
	put_u32(sb, DG_LOST_ID, l->lost_id);
	nest_end(sb, n);
}

/* ---- reading ---- */

/* The attributes of a nest, by type; each checked for its size. */
struct attrs {
	const struct nlattr *a[16];
};

static int nest_parse(const struct nlattr *nest, struct attrs *at)
{
	const struct nlattr *a;

	memset(at, 0, sizeof(*at));
	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_get_type(a) < ARRAY_SIZE(at->a))
			at->a[mnl_attr_get_type(a)] = a;
	}
	return 0;
}

static bool get_u32(const struct attrs *at, int type, uint32_t *v)
{
	const struct nlattr *a = at->a[type];

	if (!a || mnl_attr_get_payload_len(a) != sizeof(*v))
		return false;
	memcpy(v, mnl_attr_get_payload(a), sizeof(*v));
	return true;
}

static bool get_u64(const struct attrs *at, int type, uint64_t *v)
{
	const struct nlattr *a = at->a[type];

	if (!a || mnl_attr_get_payload_len(a) != sizeof(*v))
		return false;
	memcpy(v, mnl_attr_get_payload(a), sizeof(*v));
	return true;
}

/* A copy of a NUL-terminated string attribute; NULL if absent or bad. */
static char *get_str(const struct attrs *at, int type)
{
	const struct nlattr *a = at->a[type];
	const char *s;
	size_t n;

	if (!a)
		return NULL;
	s = mnl_attr_get_payload(a);
	n = mnl_attr_get_payload_len(a);
	if (!n || s[n - 1])
		return NULL;
	return strdup(s);
}

#define GROW(arr, n)							\
	({								\
		typeof(arr) _p = realloc((arr), ((n) + 1) * sizeof(*(arr))); \
		if (_p) {						\
			(arr) = _p;					\
			memset(&_p[n], 0, sizeof(*_p));			\
		}							\
		_p ? &_p[(n)++] : NULL;					\
	})

static int parse_chain(const struct nlattr *a, struct desc *d)
{
	struct desc_chain *c = GROW(d->chains, d->n_chains);
	struct attrs at;
	uint32_t base = 0, prio = 0;

	if (!c)
		return -ENOMEM;
	nest_parse(a, &at);
	c->name = get_str(&at, DC_NAME);
	if (!c->name || !get_u32(&at, DC_BASE, &base))
		return -EINVAL;
	c->base = base;
	if (!base)
		return 0;
	c->cgroup_path = get_str(&at, DC_CGROUP_PATH);
	if (!get_u32(&at, DC_DIR, &c->dir) ||
	    !get_u32(&at, DC_POLICY, &c->policy) ||
	    !get_u32(&at, DC_PRIORITY, &prio) || !c->cgroup_path ||
	    !get_u64(&at, DC_CGROUP_ID, &c->cgroup_id))
		return -EINVAL;
	c->priority = prio;
	return 0;
}

static int parse_rule(const struct nlattr *a, struct desc *d)
{
	struct desc_rule *r = GROW(d->rules, d->n_rules);
	uint32_t counter = 0, quota = 0;
	struct attrs at;

	if (!r)
		return -ENOMEM;
	nest_parse(a, &at);
	r->text = get_str(&at, DR_TEXT);
	if (!get_u32(&at, DR_CHAIN, &r->chain) || r->chain >= d->n_chains ||
	    !get_u32(&at, DR_COUNTER, &counter) ||
	    !get_u32(&at, DR_QUOTA, &quota))
		return -EINVAL;
	r->counter = counter;
	r->quota = quota;
	return 0;
}

static int parse_set(const struct nlattr *a, struct desc *d)
{
	struct desc_set *s = GROW(d->sets, d->n_sets);
	struct attrs at;

	if (!s)
		return -ENOMEM;
	nest_parse(a, &at);
	s->name = get_str(&at, DS_NAME);
	if (!s->name || !get_u32(&at, DS_MAP_ID, &s->map_id) ||
	    !at.a[DS_NLSET])
		return -EINVAL;
	s->nlset_len = mnl_attr_get_payload_len(at.a[DS_NLSET]);
	s->nlset = malloc(s->nlset_len);
	if (!s->nlset)
		return -ENOMEM;
	memcpy(s->nlset, mnl_attr_get_payload(at.a[DS_NLSET]), s->nlset_len);
	s->meter = at.a[DS_METER];	/* optional: older cgfw had none */
	return 0;
}

static int parse_prog(const struct nlattr *a, struct desc *d)
{
	struct desc_prog *p = GROW(d->progs, d->n_progs);
	struct attrs at;

	if (!p)
		return -ENOMEM;
	nest_parse(a, &at);
	if (!get_u32(&at, DP_DIR, &p->dir) ||
	    !get_u64(&at, DP_CGROUP_ID, &p->cgroup_id) ||
	    !get_u32(&at, DP_COUNTERS_ID, &p->counters_id))
		return -EINVAL;
	return 0;
}

static int parse_slot(const struct nlattr *a, struct desc *d)
{
	struct desc_slot *s = GROW(d->slots, d->n_slots);
	struct attrs at;
	uint32_t rule;

	if (!s)
		return -ENOMEM;
	nest_parse(a, &at);
	if (!get_u32(&at, DL_PROG, &s->prog) ||
	    !get_u32(&at, DL_SLOT, &s->slot) ||
	    !get_u32(&at, DL_CHAIN, &s->chain) ||
	    !get_u32(&at, DL_RULE, &rule) || s->prog >= d->n_progs ||
	    s->chain >= d->n_chains)
		return -EINVAL;
	s->rule = rule;
	return 0;
}

static int parse_quota(const struct nlattr *a, struct desc *d)
{
	struct desc_quota *q = GROW(d->quotas, d->n_quotas);
	struct attrs at;
	uint32_t rule;

	if (!q)
		return -ENOMEM;
	nest_parse(a, &at);
	if (!get_u32(&at, DQ_MAP_ID, &q->map_id) ||
	    !get_u32(&at, DQ_SLOT, &q->slot) ||
	    !get_u32(&at, DQ_CHAIN, &q->chain) ||
	    !get_u32(&at, DQ_RULE, &rule) || q->chain >= d->n_chains ||
	    !get_u64(&at, DQ_BYTES, &q->bytes))
		return -EINVAL;
	q->rule = rule;
	return 0;
}

static int parse_obj(const struct nlattr *a, struct desc *d)
{
	struct desc_obj *o = GROW(d->objs, d->n_objs);
	struct attrs at;

	if (!o)
		return -ENOMEM;
	nest_parse(a, &at);
	o->name = get_str(&at, DO_NAME);
	if (!o->name || !get_u32(&at, DO_TYPE, &o->type) ||
	    !get_u32(&at, DO_MAP_ID, &o->map_id) ||
	    !get_u32(&at, DO_SLOT, &o->slot) ||
	    !get_u64(&at, DO_BYTES, &o->bytes) ||
	    !get_u64(&at, DO_UNIT, &o->unit) ||
	    !get_u32(&at, DO_BURST, &o->burst) ||
	    !get_u32(&at, DO_FLAGS, &o->flags) ||
	    !get_u32(&at, DO_LIMIT_TYPE, &o->limit_type))
		return -EINVAL;
	return 0;
}

static int parse_log(const struct nlattr *a, struct desc *d)
{
	struct desc_log *l = GROW(d->logs, d->n_logs);
	struct attrs at;

	if (!l)
		return -ENOMEM;
	nest_parse(a, &at);
	l->prefix = get_str(&at, DG_PREFIX);
	if (!l->prefix || !get_u32(&at, DG_ID, &l->id) ||
	    !get_u32(&at, DG_LEVEL, &l->level) ||
	    !get_u32(&at, DG_RING_ID, &l->ring_id) ||
	    !get_u32(&at, DG_LOST_ID, &l->lost_id))
		return -EINVAL;
	return 0;
}

int cgfw_desc_parse(const void *buf, size_t len, struct desc *d)
{
	const struct nlattr *attr, *a;
	struct attrs top;
	uint32_t ct = 0;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	memset(&top, 0, sizeof(top));
	mnl_attr_for_each_payload(buf, len) {
		a = attr;
		switch (mnl_attr_get_type(a)) {
		case DESC_FORMAT:
		case DESC_GEN:
		case DESC_TABLE:
		case DESC_WITH_NFT:
		case DESC_CONNTRACK:
			top.a[mnl_attr_get_type(a)] = a;
			if (mnl_attr_get_type(a) == DESC_FORMAT &&
			    (!get_u32(&top, DESC_FORMAT, &d->format) ||
			     d->format != CGFW_DESC_FORMAT))
				ret = -EINVAL;
			break;
		case DESC_CHAIN:
			ret = parse_chain(a, d);
			break;
		case DESC_RULE:
			ret = parse_rule(a, d);
			break;
		case DESC_SET:
			ret = parse_set(a, d);
			break;
		case DESC_PROG:
			ret = parse_prog(a, d);
			break;
		case DESC_SLOT:
			ret = parse_slot(a, d);
			break;
		case DESC_QUOTA:
			ret = parse_quota(a, d);
			break;
		case DESC_OBJ:
			ret = parse_obj(a, d);
			break;
		case DESC_LOG:
			ret = parse_log(a, d);
			break;
		}
		if (ret)
			break;
	}
	d->table = get_str(&top, DESC_TABLE);
	get_u32(&top, DESC_WITH_NFT, &d->with_nft);
	d->conntrack = get_u32(&top, DESC_CONNTRACK, &ct) && ct;
	if (!ret && (d->format != CGFW_DESC_FORMAT || !d->table ||
		     !get_u64(&top, DESC_GEN, &d->gen)))
		ret = -EINVAL;
	if (ret)
		cgfw_desc_release(d);
	return ret;
}

void cgfw_desc_release(struct desc *d)
{
	size_t i;

	for (i = 0; i < d->n_chains; i++) {
		free(d->chains[i].name);
		free(d->chains[i].cgroup_path);
	}
	for (i = 0; i < d->n_rules; i++)
		free(d->rules[i].text);
	for (i = 0; i < d->n_sets; i++) {
		free(d->sets[i].name);
		free(d->sets[i].nlset);
	}
	for (i = 0; i < d->n_objs; i++)
		free(d->objs[i].name);
	free(d->objs);
	for (i = 0; i < d->n_logs; i++)
		free(d->logs[i].prefix);
	free(d->logs);
	free(d->chains);
	free(d->rules);
	free(d->sets);
	free(d->progs);
	free(d->slots);
	free(d->quotas);
	free(d->table);
	memset(d, 0, sizeof(*d));
}

/* ---- the map ---- */

void cgfw_desc_map_size(size_t len, uint32_t *value_size, uint32_t *entries)
{
	size_t all = sizeof(struct desc_head) + len;

	*value_size = all < ENTRY_MAX ? (all + 7) / 8 * 8 : ENTRY_MAX;
	*entries = (all + *value_size - 1) / *value_size;
}

int cgfw_desc_store(int fd, const struct strbuf *sb)
{
	struct desc_head h = { .magic = DESC_MAGIC, .len = sb->len };
	uint32_t value_size, entries, i;
	size_t at = 0, n;
	char *v;
	int ret = 0;

	cgfw_desc_map_size(sb->len, &value_size, &entries);
	v = malloc(value_size);
	if (!v)
		return -ENOMEM;
	for (i = 0; !ret && i < entries; i++) {
		size_t off = 0;

		memset(v, 0, value_size);
		if (!i) {
			memcpy(v, &h, sizeof(h));
			off = sizeof(h);
		}
		n = sb->len - at < value_size - off ? sb->len - at :
						       value_size - off;
		memcpy(v + off, sb->buf + at, n);
		at += n;
		ret = bpf_map_update_elem(fd, &i, v, BPF_ANY);
	}
	free(v);
	/* nothing changes it from now on: not a program, not a command */
	return ret ? : bpf_map_freeze(fd);
}

int cgfw_desc_load(int fd, struct desc *d)
{
	struct bpf_map_info info = { 0 };
	uint32_t ilen = sizeof(info), i;
	struct desc_head h;
	char *v = NULL, *all = NULL;
	size_t at = 0, n;
	int ret;

	ret = bpf_obj_get_info_by_fd(fd, &info, &ilen);
	if (ret)
		return ret;
	if (info.key_size != 4 || info.value_size < sizeof(h))
		return -EINVAL;
	v = malloc(info.value_size);
	ret = v ? 0 : -ENOMEM;
	for (i = 0; !ret && i < info.max_entries; i++) {
		ret = bpf_map_lookup_elem(fd, &i, v);
		if (ret)
			break;
		if (!i) {
			memcpy(&h, v, sizeof(h));
			if (h.magic != DESC_MAGIC ||
			    h.len > (uint64_t)info.value_size *
				    info.max_entries) {
				ret = -EINVAL;
				break;
			}
			all = malloc(h.len + 1);
			if (!all) {
				ret = -ENOMEM;
				break;
			}
		}
		n = i ? info.value_size : info.value_size - sizeof(h);
		if (n > h.len - at)
			n = h.len - at;
		memcpy(all + at, v + (i ? 0 : sizeof(h)), n);
		at += n;
	}
	if (!ret && (!all || at != h.len))
		ret = -EINVAL;
	if (!ret)
		ret = cgfw_desc_parse(all, at, d);
	free(v);
	free(all);
	return ret;
}
