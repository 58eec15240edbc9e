// SPDX-License-Identifier: LGPL-2.1-or-later
/* The IR: finding things in it, and freeing it. */
#include <stdlib.h>

#include <libnftnl/chain.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>

#include "front/ir.h"

void cgfw_ir_init(struct cgfw_ruleset *rs)
{
	list_init(&rs->tables);
}

struct ir_table *cgfw_ir_find_table(const struct cgfw_ruleset *rs,
				    const char *name)
{
	struct ir_table *t;

	list_for_each_entry(t, &rs->tables, list)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

struct ir_chain *cgfw_ir_find_chain(const struct ir_table *t, const char *name)
{
	struct ir_chain *c;

	list_for_each_entry(c, &t->chains, list)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

const char *cgfw_ir_set_name(const struct ir_set *s)
{
	return nftnl_set_get_str(s->nl, NFTNL_SET_NAME);
}

struct ir_set *cgfw_ir_find_set(const struct ir_table *t, const char *name)
{
	struct ir_set *s;

	list_for_each_entry(s, &t->sets, list)
		if (!strcmp(cgfw_ir_set_name(s), name))
			return s;
	return NULL;
}

void cgfw_ir_table_free(struct ir_table *t)
{
	struct ir_chain *c, *cn;
	struct ir_rule *r, *rn;
	struct ir_set *s, *sn;
	struct ir_obj *o, *on;

	if (!t)
		return;
	list_for_each_entry_safe(c, cn, &t->chains, list) {
		list_for_each_entry_safe(r, rn, &c->rules, list) {
			nftnl_rule_free(r->nl);
			free(r->text);
			free(r);
		}
		cgfw_cgroup_release(&c->cgroup);
		nftnl_chain_free(c->nl);
		free(c->name);
		free(c);
	}
	list_for_each_entry_safe(s, sn, &t->sets, list) {
		nftnl_set_free(s->nl);
		free(s);
	}
	if (t->objs.next) {
		list_for_each_entry_safe(o, on, &t->objs, list) {
			nftnl_obj_free(o->nl);
			free(o);
		}
	}
	if (t->nl)
		nftnl_table_free(t->nl);
	free(t->name);
	free(t);
}

void cgfw_ir_release(struct cgfw_ruleset *rs)
{
	struct ir_table *t, *tn;

	if (!rs->tables.next)
		return;
	list_for_each_entry_safe(t, tn, &rs->tables, list) {
		list_del(&t->list);
		cgfw_ir_table_free(t);
	}
}
