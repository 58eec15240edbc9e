// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Read back: nf_tables tables, chains, sets with their elements, and
 * rules, as libnftnl objects in the IR. The rules come back as nf_tables
 * bytecode, the IR of both backends.
 *
 * Messages come from dumps of the current network namespace, or from a
 * stream of such messages recorded elsewhere (the compile's child process
 * records its dumps, front/compile.c): both go through readback_msg().
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>

#include "base/hash.h"
#include "front/readback.h"
#include "nl/netlink.h"

struct rb_state {
	struct cgfw_ruleset *rs;
	const struct readback_opts *opts;
	int err;
};

static struct ir_table *table_of(struct rb_state *st, const char *name)
{
	return name ? cgfw_ir_find_table(st->rs, name) : NULL;
}

static int table_msg(struct rb_state *st, const struct nlmsghdr *nlh)
{
	struct nftnl_table *nt = nftnl_table_alloc();
	struct ir_table *t = NULL;

	if (!nt || nftnl_table_nlmsg_parse(nlh, nt) < 0)
		goto err;
	if (st->opts && st->opts->want &&
	    !st->opts->want(nt, st->opts->data)) {
		nftnl_table_free(nt);
		return 0;
	}
	t = calloc(1, sizeof(*t));
	if (!t || cgfw_strdup(&t->name, nftnl_table_get_str(nt,
							    NFTNL_TABLE_NAME)))
		goto err;
	t->nl = nt;
	list_init(&t->chains);
	list_init(&t->sets);
	list_init(&t->objs);
	list_add_tail(&t->list, &st->rs->tables);
	return 0;
err:
	if (nt)
		nftnl_table_free(nt);
	free(t);
	return -ENOMEM;
}

/* What libnftnl 1.2.4 does not parse: the cgroup family's hook id. */
static int hook_attr_cb(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == NFTA_HOOK_CGROUP_ID &&
	    mnl_attr_validate(a, MNL_TYPE_U64) >= 0)
		*(uint64_t *)data = be64toh(mnl_attr_get_u64(a));
	return MNL_CB_OK;
}

static int chain_attr_cb(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == NFTA_CHAIN_HOOK)
		mnl_attr_parse_nested(a, hook_attr_cb, data);
	return MNL_CB_OK;
}

static int chain_msg(struct rb_state *st, const struct nlmsghdr *nlh)
{
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct ir_chain *c = NULL;
	struct ir_table *t;

	if (!nc || nftnl_chain_nlmsg_parse(nlh, nc) < 0)
		goto err;
	t = table_of(st, nftnl_chain_get_str(nc, NFTNL_CHAIN_TABLE));
	if (!t) {		/* a table we do not read */
		nftnl_chain_free(nc);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c || cgfw_strdup(&c->name, nftnl_chain_get_str(nc,
							    NFTNL_CHAIN_NAME)))
		goto err;
	c->nl = nc;
	c->base = nftnl_chain_is_set(nc, NFTNL_CHAIN_HOOKNUM);
	if (c->base) {
		c->priority = nftnl_chain_get_s32(nc, NFTNL_CHAIN_PRIO);
		c->policy = nftnl_chain_is_set(nc, NFTNL_CHAIN_POLICY) ?
			    nftnl_chain_get_u32(nc, NFTNL_CHAIN_POLICY) :
			    NF_ACCEPT;
		c->packets = nftnl_chain_get_u64(nc, NFTNL_CHAIN_PACKETS);
		c->bytes = nftnl_chain_get_u64(nc, NFTNL_CHAIN_BYTES);
		mnl_attr_parse(nlh, sizeof(struct nfgenmsg), chain_attr_cb,
			       &c->cgroup.id);
	}
	list_init(&c->rules);
	list_add_tail(&c->list, &t->chains);
	return 0;
err:
	if (nc)
		nftnl_chain_free(nc);
	free(c);
	return -ENOMEM;
}

static int set_msg(struct rb_state *st, const struct nlmsghdr *nlh)
{
	struct nftnl_set *ns = nftnl_set_alloc();
	struct ir_set *s;
	struct ir_table *t;

	if (!ns || nftnl_set_nlmsg_parse(nlh, ns) < 0) {
		if (ns)
			nftnl_set_free(ns);
		return -ENOMEM;
	}
	t = table_of(st, nftnl_set_get_str(ns, NFTNL_SET_TABLE));
	s = t ? calloc(1, sizeof(*s)) : NULL;
	if (!s) {
		nftnl_set_free(ns);
		return t ? -ENOMEM : 0;
	}
	s->nl = ns;
	s->anonymous = nftnl_set_get_u32(ns, NFTNL_SET_FLAGS) &
		       NFT_SET_ANONYMOUS;
	list_add_tail(&s->list, &t->sets);
	return 0;
}

static int elem_list_cb(const struct nlattr *a, void *data)
{
	const char **names = data;

	if (mnl_attr_get_type(a) == NFTA_SET_ELEM_LIST_TABLE &&
	    mnl_attr_validate(a, MNL_TYPE_STRING) >= 0)
		names[0] = mnl_attr_get_str(a);
	else if (mnl_attr_get_type(a) == NFTA_SET_ELEM_LIST_SET &&
		 mnl_attr_validate(a, MNL_TYPE_STRING) >= 0)
		names[1] = mnl_attr_get_str(a);
	return MNL_CB_OK;
}

static int elem_msg(struct rb_state *st, const struct nlmsghdr *nlh)
{
	const char *names[2] = { NULL, NULL };
	struct ir_table *t;
	struct ir_set *s;

	mnl_attr_parse(nlh, sizeof(struct nfgenmsg), elem_list_cb, names);
	t = table_of(st, names[0]);
	s = t && names[1] ? cgfw_ir_find_set(t, names[1]) : NULL;
	if (!s)
		return 0;
	return nftnl_set_elems_nlmsg_parse(nlh, s->nl) < 0 ? -EINVAL : 0;
}

static int rule_msg(struct rb_state *st, const struct nlmsghdr *nlh)
{
	struct nlmsghdr *named;
	const struct nlmsghdr *parsed = cgfw_rule_names_ended(nlh, &named);
	struct nftnl_rule *nr = nftnl_rule_alloc();
	struct ir_rule *r = NULL;
	struct ir_table *t;
	struct ir_chain *c;

	if (!nr || !parsed || nftnl_rule_nlmsg_parse(parsed, nr) < 0)
		goto err;
	free(named);
	named = NULL;
	t = table_of(st, nftnl_rule_get_str(nr, NFTNL_RULE_TABLE));
	c = t ? cgfw_ir_find_chain(t, nftnl_rule_get_str(nr, NFTNL_RULE_CHAIN)) :
		NULL;
	if (!c) {
		nftnl_rule_free(nr);
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		goto err;
	r->nl = nr;
	list_add_tail(&r->list, &c->rules);
	return 0;
err:
	free(named);
	if (nr)
		nftnl_rule_free(nr);
	free(r);
	return -ENOMEM;
}

static int obj_msg(struct rb_state *st, const struct nlmsghdr *nlh)
{
	struct nftnl_obj *no = nftnl_obj_alloc();
	struct ir_table *t;
	struct ir_obj *o;

	if (!no)
		return -ENOMEM;
	if (nftnl_obj_nlmsg_parse(nlh, no) < 0) {
		nftnl_obj_free(no);
		return -EINVAL;
	}
	t = table_of(st, nftnl_obj_get_str(no, NFTNL_OBJ_TABLE));
	o = t ? calloc(1, sizeof(*o)) : NULL;
	if (!o) {
		nftnl_obj_free(no);
		return t ? -ENOMEM : 0;
	}
	o->nl = no;
	list_add_tail(&o->list, &t->objs);
	return 0;
}

/* One message of a dump, whichever kind. */
static int dispatch(const struct nlmsghdr *nlh, void *data)
{
	struct rb_state *st = data;
	int ret;

	switch (NFNL_MSG_TYPE(nlh->nlmsg_type)) {
	case NFT_MSG_NEWTABLE:
		ret = table_msg(st, nlh);
		break;
	case NFT_MSG_NEWCHAIN:
		ret = chain_msg(st, nlh);
		break;
	case NFT_MSG_NEWSET:
		ret = set_msg(st, nlh);
		break;
	case NFT_MSG_NEWSETELEM:
		ret = elem_msg(st, nlh);
		break;
	case NFT_MSG_NEWRULE:
		ret = rule_msg(st, nlh);
		break;
	case NFT_MSG_NEWOBJ:
		ret = obj_msg(st, nlh);
		break;
	default:
		ret = 0;
	}
	if (ret && !st->err)
		st->err = ret;
	if (!ret && st->opts && st->opts->tap) {
		ret = st->opts->tap(nlh, st->opts->tap_data);
		st->err = st->err ? : ret;
	}
	return st->err ? MNL_CB_ERROR : MNL_CB_OK;
}

static int dump(struct mnl_socket *nl, struct rb_state *st, uint16_t type,
		uint16_t family)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int ret;

	nlh = nftnl_nlmsg_build_hdr(buf, type, family, NLM_F_DUMP, 1);
	ret = cgfw_nl_dump(nl, nlh, dispatch, st);
	return st->err ? : ret;
}

/* ---- a set's elements, read until two reads agree ---- */

/*
 * A dump of a hash set's elements is no snapshot: it comes in parts, each
 * a new walk of the kernel's hash table that skips what earlier parts
 * sent, and while that table is resized (which goes on for a while after
 * a transaction that added many elements) a walk's order changes: a dump
 * then repeats some elements and leaves others out. So a set is dumped
 * again until two dumps in a row hold the same keys, none of them twice.
 */
#define ELEM_DUMP_TRIES 16

struct elem_dump {
	struct strbuf msgs;	/* the messages, as they came */
	uint64_t *keys;		/* a hash of each element's key, sorted */
	size_t n, cap;
};

static int collect(const struct nlmsghdr *nlh, void *data)
{
	struct strbuf *sb = data;

	cgfw_sb_addn(sb, (const char *)nlh, NLMSG_ALIGN(nlh->nlmsg_len));
	return sb->oom ? MNL_CB_ERROR : MNL_CB_OK;
}

static int key_of(const struct nlattr *elem, struct elem_dump *ed)
{
	const struct nlattr *a;
	uint64_t h = CGFW_FNV1A_INIT, *v;

	mnl_attr_for_each_nested(a, elem) {
		uint16_t type = mnl_attr_get_type(a);

		if (type == NFTA_SET_ELEM_KEY || type == NFTA_SET_ELEM_KEY_END ||
		    type == NFTA_SET_ELEM_FLAGS) {
			h = cgfw_fnv1a(h, &type, sizeof(type));
			h = cgfw_fnv1a(h, mnl_attr_get_payload(a),
				  mnl_attr_get_payload_len(a));
		}
	}
	if (ed->n == ed->cap) {
		ed->cap = ed->cap ? 2 * ed->cap : 1024;
		v = realloc(ed->keys, ed->cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ed->keys = v;
	}
	ed->keys[ed->n++] = h;
	return 0;
}

/* The keys of every element the messages hold; -EAGAIN if one is twice. */
static int elem_keys(struct elem_dump *ed)
{
	const struct nlmsghdr *nlh = (const void *)ed->msgs.buf;
	const struct nlattr *a, *e;
	int left = ed->msgs.len, ret;
	size_t i;

	ed->n = 0;
	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		if (NFNL_MSG_TYPE(nlh->nlmsg_type) != NFT_MSG_NEWSETELEM)
			continue;
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
			if (mnl_attr_get_type(a) != NFTA_SET_ELEM_LIST_ELEMENTS)
				continue;
			mnl_attr_for_each_nested(e, a) {
				ret = key_of(e, ed);
				if (ret)
					return ret;
			}
		}
	}
	if (ed->n)	/* an empty set has no array */
		qsort(ed->keys, ed->n, sizeof(*ed->keys), cgfw_cmp_u64);
	for (i = 1; i < ed->n; i++)
		if (ed->keys[i] == ed->keys[i - 1])
			return -EAGAIN;
	return 0;
}

static int dump_elems(struct mnl_socket *nl, struct rb_state *st,
		      const struct ir_set *s, uint16_t family)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct elem_dump d[2] = { 0 };
	struct elem_dump *cur, *prev = NULL;
	const struct nlmsghdr *m;
	struct nlmsghdr *nlh;
	int ret = 0, try, left;

	for (try = 0; try < ELEM_DUMP_TRIES; try++) {
		cur = &d[try % 2];
		cgfw_sb_release(&cur->msgs);
		cgfw_sb_init(&cur->msgs);
		nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETSETELEM, family,
					    NLM_F_DUMP, 2);
		nftnl_set_elems_nlmsg_build_payload(nlh, s->nl);
		ret = cgfw_nl_dump(nl, nlh, collect, &cur->msgs);
		if (cur->msgs.oom)
			ret = -ENOMEM;
		ret = ret ? : elem_keys(cur);
		if (ret == -EAGAIN || ret == -EINTR) {
			prev = NULL;	/* a dump with an element twice */
			continue;
		}
		if (ret)
			break;
		if (prev && prev->n == cur->n &&
		    (!cur->n ||
		     !memcmp(prev->keys, cur->keys,
			     cur->n * sizeof(*cur->keys))))
			break;
		prev = cur;
		ret = -EAGAIN;
	}
	if (!ret) {
		m = (const void *)cur->msgs.buf;
		left = cur->msgs.len;
		for (; mnl_nlmsg_ok(m, left); m = mnl_nlmsg_next(m, &left))
			if (dispatch(m, st) != MNL_CB_OK)
				break;
		ret = st->err;
	}
	for (try = 0; try < 2; try++) {
		cgfw_sb_release(&d[try].msgs);
		free(d[try].keys);
	}
	return ret;
}

int cgfw_readback(struct cgfw_ctx *ctx, struct cgfw_ruleset *rs,
		  const struct readback_opts *opts)
{
	static const struct readback_opts none;
	struct rb_state st = { .rs = rs, .opts = opts ? opts : &none };
	uint16_t family = st.opts->family;
	const struct ir_set *busy = NULL;
	struct mnl_socket *nl;
	struct ir_table *t;
	struct ir_set *s;
	int ret;

	ret = cgfw_nl_open(ctx, &nl);
	if (ret)
		return ret;
	/*
	 * One dump of each kind for the family: not every kind can be
	 * filtered by table, and what belongs to a table not read is left
	 * out by the callbacks.
	 */
	ret = dump(nl, &st, NFT_MSG_GETTABLE, family);
	if (!ret && !list_empty(&rs->tables)) {
		ret = dump(nl, &st, NFT_MSG_GETCHAIN, family);
		if (!st.opts->no_sets)
			ret = ret ? : dump(nl, &st, NFT_MSG_GETSET, family);
		if (!st.opts->no_rules)
			ret = ret ? : dump(nl, &st, NFT_MSG_GETRULE, family);
		ret = ret ? : dump(nl, &st, NFT_MSG_GETOBJ, family);
	}
	list_for_each_entry(t, &rs->tables, list) {
		uint16_t f = nftnl_table_get_u32(t->nl, NFTNL_TABLE_FAMILY);

		list_for_each_entry(s, &t->sets, list) {
			if (ret || st.opts->no_elems)
				break;
			if (st.opts->have_elems &&
			    st.opts->have_elems(s->nl, st.opts->have_data))
				continue;
			ret = dump_elems(nl, &st, s, f);
			if (ret == -EAGAIN)
				busy = s;
		}
	}
	mnl_socket_close(nl);
	if (busy)
		cgfw_err(ctx, "the elements of set '%s' changed in each of %d reads; try again",
			 nftnl_set_get_str(busy->nl, NFTNL_SET_NAME),
			 ELEM_DUMP_TRIES);
	else if (ret)
		cgfw_err(ctx, "cannot read the nf_tables tables back: %s",
			 strerror(-ret));
	return ret;
}

int cgfw_readback_stream(struct cgfw_ruleset *rs, const void *buf, size_t len)
{
	struct rb_state st = { .rs = rs };
	const struct nlmsghdr *nlh = buf;
	int left = len;

	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		if (dispatch(nlh, &st) != MNL_CB_OK)
			return st.err;
	return left ? -EINVAL : 0;
}
