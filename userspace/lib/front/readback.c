// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Read back: the third stage of the front end (DESIGN.md 2.1).
 *
 * After nft compiled the rewritten file into the shadow namespace, dump its
 * tables, chains, sets with their elements, and rules. The rules come back
 * as nf_tables bytecode (libnftnl expressions): the IR of both backends.
 */
#include <stdio.h>
#include <stdlib.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "front/compile.h"
#include "front/ir.h"
#include "nl/netlink.h"

struct rb_state {
	uint16_t family;
	struct cgfw_ctx *ctx;
	struct cgfw_ruleset *rs;
	struct mnl_socket *nl;
	int err;
	unsigned int n_objects;
};

static struct ir_table *find_table(struct cgfw_ruleset *rs, const char *name)
{
	struct ir_table *t;

	list_for_each_entry(t, &rs->tables, list)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

struct ir_chain *ir_find_chain(const struct ir_table *t, const char *name)
{
	struct ir_chain *c;

	list_for_each_entry(c, &t->chains, list)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rb_state *st = data;
	struct nftnl_table *nt = nftnl_table_alloc();
	struct ir_table *t = calloc(1, sizeof(*t));

	if (!nt || !t || nftnl_table_nlmsg_parse(nlh, nt) < 0)
		goto err;
	t->name = strdup(nftnl_table_get_str(nt, NFTNL_TABLE_NAME));
	if (!t->name)
		goto err;
	t->nl = nt;
	list_init(&t->chains);
	list_init(&t->sets);
	list_add_tail(&t->list, &st->rs->tables);
	return MNL_CB_OK;
err:
	if (nt)
		nftnl_table_free(nt);
	free(t);
	st->err = -ENOMEM;
	return MNL_CB_ERROR;
}

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rb_state *st = data;
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct ir_chain *c = calloc(1, sizeof(*c));
	struct ir_table *t;

	if (!nc || !c || nftnl_chain_nlmsg_parse(nlh, nc) < 0)
		goto err;
	t = find_table(st->rs, nftnl_chain_get_str(nc, NFTNL_CHAIN_TABLE));
	if (!t)
		goto err;
	c->name = strdup(nftnl_chain_get_str(nc, NFTNL_CHAIN_NAME));
	if (!c->name)
		goto err;
	c->nl = nc;
	c->base = nftnl_chain_is_set(nc, NFTNL_CHAIN_HOOKNUM);
	if (c->base) {
		c->priority = nftnl_chain_get_s32(nc, NFTNL_CHAIN_PRIO);
		c->policy = nftnl_chain_is_set(nc, NFTNL_CHAIN_POLICY) ?
			    nftnl_chain_get_u32(nc, NFTNL_CHAIN_POLICY) :
			    NF_ACCEPT;
	}
	list_init(&c->rules);
	list_add_tail(&c->list, &t->chains);
	return MNL_CB_OK;
err:
	if (nc)
		nftnl_chain_free(nc);
	free(c);
	st->err = -ENOMEM;
	return MNL_CB_ERROR;
}

static int set_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rb_state *st = data;
	struct nftnl_set *ns = nftnl_set_alloc();
	struct ir_set *s = calloc(1, sizeof(*s));
	struct ir_table *t;

	if (!ns || !s || nftnl_set_nlmsg_parse(nlh, ns) < 0)
		goto err;
	t = find_table(st->rs, nftnl_set_get_str(ns, NFTNL_SET_TABLE));
	if (!t)
		goto err;
	s->nl = ns;
	s->anonymous = nftnl_set_get_u32(ns, NFTNL_SET_FLAGS) &
		       NFT_SET_ANONYMOUS;
	list_add_tail(&s->list, &t->sets);
	return MNL_CB_OK;
err:
	if (ns)
		nftnl_set_free(ns);
	free(s);
	st->err = -ENOMEM;
	return MNL_CB_ERROR;
}

static int elem_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nftnl_set_elems_nlmsg_parse(nlh, data) < 0)
		return MNL_CB_ERROR;
	return MNL_CB_OK;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rb_state *st = data;
	struct nftnl_rule *nr = nftnl_rule_alloc();
	struct ir_rule *r = calloc(1, sizeof(*r));
	struct ir_table *t;
	struct ir_chain *c;

	if (!nr || !r || nftnl_rule_nlmsg_parse(nlh, nr) < 0)
		goto err;
	t = find_table(st->rs, nftnl_rule_get_str(nr, NFTNL_RULE_TABLE));
	c = t ? ir_find_chain(t, nftnl_rule_get_str(nr, NFTNL_RULE_CHAIN)) :
		NULL;
	if (!c)
		goto err;
	r->nl = nr;
	list_add_tail(&r->list, &c->rules);
	return MNL_CB_OK;
err:
	if (nr)
		nftnl_rule_free(nr);
	free(r);
	st->err = -ENOMEM;
	return MNL_CB_ERROR;
}

static int obj_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rb_state *st = data;

	(void)nlh;
	st->n_objects++;
	return MNL_CB_OK;
}

static int dump(struct rb_state *st, uint16_t type,
		int (*cb)(const struct nlmsghdr *, void *))
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int ret;

	nlh = nftnl_nlmsg_build_hdr(buf, type, st->family, NLM_F_DUMP, 1);
	ret = nl_dump(st->nl, nlh, cb, st);
	return st->err ? : ret;
}

static int dump_elems(struct rb_state *st, struct nftnl_set *ns)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETSETELEM,
				    nftnl_set_get_u32(ns, NFTNL_SET_FAMILY),
				    NLM_F_DUMP, 2);
	nftnl_set_elems_nlmsg_build_payload(nlh, ns);
	return nl_dump(st->nl, nlh, elem_cb, ns);
}

int readback(struct cgfw_ctx *ctx, struct cgfw_ruleset *rs)
{
	return readback_family(ctx, rs, NFPROTO_UNSPEC);
}

int readback_family(struct cgfw_ctx *ctx, struct cgfw_ruleset *rs,
		    uint16_t family)
{
	struct rb_state st = { .family = family, .ctx = ctx, .rs = rs };
	struct ir_table *t;
	struct ir_set *s;
	int ret;

	ret = nl_open(ctx, &st.nl);
	if (ret)
		return ret;
	ret = dump(&st, NFT_MSG_GETTABLE, table_cb);
	ret = ret ? : dump(&st, NFT_MSG_GETCHAIN, chain_cb);
	ret = ret ? : dump(&st, NFT_MSG_GETSET, set_cb);
	ret = ret ? : dump(&st, NFT_MSG_GETRULE, rule_cb);
	ret = ret ? : dump(&st, NFT_MSG_GETOBJ, obj_cb);
	list_for_each_entry(t, &rs->tables, list) {
		list_for_each_entry(s, &t->sets, list) {
			if (ret)
				break;
			ret = dump_elems(&st, s->nl);
		}
	}
	mnl_socket_close(st.nl);
	if (ret) {
		ctx_err(ctx, "cannot read the compiled ruleset back: %s",
			strerror(-ret));
		return ret;
	}
	if (st.n_objects) {
		ctx_err_at(ctx, &rs->src, NULL,
			   "named stateful objects (counter, quota, limit, ct helper ... declared in a table) are not supported by cgfw yet; use anonymous ones in the rules ('counter', 'limit rate 10/second')");
		return -EOPNOTSUPP;
	}
	return 0;
}

void ir_table_free(struct ir_table *t)
{
	struct ir_chain *c, *cn;
	struct ir_rule *r, *rn;
	struct ir_set *s, *sn;

	if (!t)
		return;
	list_for_each_entry_safe(c, cn, &t->chains, list) {
		list_for_each_entry_safe(r, rn, &c->rules, list) {
			nftnl_rule_free(r->nl);
			free(r);
		}
		cgroup_release(&c->cgroup);
		nftnl_chain_free(c->nl);
		free(c->name);
		free(c);
	}
	list_for_each_entry_safe(s, sn, &t->sets, list) {
		nftnl_set_free(s->nl);
		free(s);
	}
	if (t->nl)
		nftnl_table_free(t->nl);
	free(t->name);
	free(t);
}
