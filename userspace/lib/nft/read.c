// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The tables of the nft targets, read back from the kernel (netlink dumps
 * parsed by libnftnl, front/readback.c) into the model: cgfw's userdata
 * says what each table, bound chain and rule is; counters, quotas and set
 * elements are the kernel's own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "front/readback.h"
#include "nft/nft.h"

struct want {
	const struct nft_target *tg;
	const char *name;	/* the user's, or NULL for all */
};

static bool want_table(const struct nftnl_table *t, void *data)
{
	const struct want *w = data;

	return cgfw_nft_owned(t, w->tg) &&
	       (!w->name || !strcmp(cgfw_nft_user_name(t, w->tg), w->name));
}

/* Tables with their rules and set elements if @full, else without. */
static int read_ir(struct cgfw_ctx *ctx, const struct nft_target *tg,
		   const char *name, bool full, struct cgfw_ruleset *out)
{
	struct want w = { .tg = tg, .name = name };
	struct readback_opts ro = {
		.family = tg->family, .want = want_table, .data = &w,
		.no_elems = !full, .no_rules = !full,
	};

	return cgfw_readback(ctx, out, &ro);
}

int cgfw_nft_read_ir(struct cgfw_ctx *ctx, const struct nft_target *tg,
		     const char *name, bool full, struct cgfw_ruleset *out)
{
	int ret = read_ir(ctx, tg, name, full, out);

	if (!ret && list_empty(&out->tables))
		ret = -ENOENT;
	return ret;
}

int cgfw_nft_read_installed(struct cgfw_ctx *ctx, const struct nft_target *tg,
			    struct cgfw_ruleset *out)
{
	struct want w = { .tg = tg };
	struct readback_opts ro = {
		.family = tg->family, .want = want_table, .data = &w,
		.no_elems = true, .no_rules = true,
	};

	return cgfw_readback(ctx, out, &ro);
}

/* ---- userdata ---- */

struct chain_ud {
	const char *name, *path;
	uint32_t dir, policy;
	uint64_t id;
	bool bound;
	bool by_id;	/* the path did not fit: found by the id */
	char *found;	/* then, the path found (chain_ud_release()) */
};

static int chain_ud_cb(const struct nftnl_udata *attr, void *data)
{
	struct chain_ud *u = data;
	const char *v = nftnl_udata_get(attr);
	uint8_t len = nftnl_udata_len(attr);
	bool strz = len && v[len - 1] == '\0';

	switch (nftnl_udata_type(attr)) {
	case CGFW_UD_CHAIN_NAME:
		if (strz)
			u->name = v;
		break;
	case CGFW_UD_CHAIN_DIR:
		if (len == 4)
			u->dir = nftnl_udata_get_u32(attr);
		break;
	case CGFW_UD_CHAIN_POLICY:
		if (len == 4)
			u->policy = nftnl_udata_get_u32(attr);
		break;
	case CGFW_UD_CHAIN_CGROUP_PATH:
		if (strz)
			u->path = v;
		u->bound = u->path != NULL;
		break;
	case CGFW_UD_CHAIN_CGROUP_PATH_LEN:
		u->by_id = u->bound = true;
		break;
	case CGFW_UD_CHAIN_CGROUP_ID:
		if (len == 8)
			memcpy(&u->id, v, 8);
		break;
	}
	return 0;
}

static void chain_ud(const struct nftnl_chain *c, struct chain_ud *u)
{
	const void *ud;
	uint32_t len;

	memset(u, 0, sizeof(*u));
	ud = nftnl_chain_get_data(c, NFTNL_CHAIN_USERDATA, &len);
	if (ud)
		nftnl_udata_parse(ud, len, chain_ud_cb, u);
	if (!u->path && u->by_id) {
		/* where the cgroup is now; if it was removed, a note */
		u->found = cgfw_cgroup_path_of_id(u->id);
		u->path = u->found;
	}
}

static void chain_ud_release(struct chain_ud *u)
{
	free(u->found);
}

struct rule_ud {
	const char *text;
	uint32_t len;	/* the whole text's, when cut */
};

static int rule_ud_cb(const struct nftnl_udata *attr, void *data)
{
	struct rule_ud *u = data;
	const char *v = nftnl_udata_get(attr);
	uint8_t len = nftnl_udata_len(attr);

	if (nftnl_udata_type(attr) == CGFW_UD_RULE_TEXT && len &&
	    v[len - 1] == '\0')
		u->text = v;
	else if (nftnl_udata_type(attr) == CGFW_UD_RULE_TEXT_LEN && len == 4)
		u->len = nftnl_udata_get_u32(attr);
	return 0;
}

/* ---- rules ---- */

static int rule_expr(struct nftnl_expr *e, void *data)
{
	struct model_rule *mr = data;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	if (!strcmp(name, "counter") && !mr->counter.present) {
		mr->counter.present = true;
		mr->counter.packets = nftnl_expr_get_u64(e,
							 NFTNL_EXPR_CTR_PACKETS);
		mr->counter.bytes = nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_BYTES);
	} else if (!strcmp(name, "quota") && !mr->has_quota) {
		mr->has_quota = true;
		mr->quota_used = nftnl_expr_get_u64(e,
						    NFTNL_EXPR_QUOTA_CONSUMED);
	}
	return 0;
}

static int add_rule(struct model_chain *mc, const struct ir_rule *r)
{
	struct model_rule *mr = cgfw_model_add_rule(mc);
	struct rule_ud u = { 0 };
	const void *ud;
	uint32_t len;

	if (!mr)
		return -ENOMEM;
	ud = nftnl_rule_get_data(r->nl, NFTNL_RULE_USERDATA, &len);
	if (ud)
		nftnl_udata_parse(ud, len, rule_ud_cb, &u);
	if (cgfw_strdup(&mr->text, u.text))
		return -ENOMEM;
	mr->text_cut = u.len > strlen(u.text ? u.text : "");
	mr->handle = nftnl_rule_get_u64(r->nl, NFTNL_RULE_HANDLE);
	nftnl_expr_foreach(r->nl, rule_expr, mr);
	return 0;
}

static int add_rules(struct model_chain *mc, const struct ir_chain *c)
{
	const struct ir_rule *r;
	int ret = 0;

	list_for_each_entry(r, &c->rules, list) {
		ret = add_rule(mc, r);
		if (ret)
			break;
	}
	return ret;
}

/* ---- chains ---- */

static void bind_from(struct model_chain *mc, const struct chain_ud *u)
{
	mc->base = true;
	mc->dir = u->dir == CGFW_INGRESS ? CGFW_INGRESS : CGFW_EGRESS;
	mc->policy = u->policy;
	mc->cgroup_id = u->id;
	mc->binding = cgfw_model_binding_of(u->path, u->id);
}

/* The verdict of an immediate expression into @data (a uint32_t). */
static int verdict_of(struct nftnl_expr *e, void *data)
{
	if (!strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "immediate") &&
	    nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT))
		*(uint32_t *)data = nftnl_expr_get_u32(e,
						       NFTNL_EXPR_IMM_VERDICT);
	return 0;
}

/* The emulation: the user's chain, bound by cgfw_hook_C, policy in run. */
static int emulated_chain(struct model_table *mt, const struct ir_table *t,
			  const struct ir_chain *c)
{
	char name[NFT_NAME_MAXLEN + 16];
	struct model_chain *mc;
	const struct ir_chain *hook, *run;
	const struct ir_rule *pol;
	struct model_rule tmp = { 0 };
	struct chain_ud u;

	mc = cgfw_model_add_chain(mt);
	if (!mc || cgfw_strdup(&mc->name, c->name))
		return -ENOMEM;
	mc->handle = nftnl_chain_get_u64(c->nl, NFTNL_CHAIN_HANDLE);
	snprintf(name, sizeof(name), CGFW_HOOK_PREFIX "%s", c->name);
	hook = cgfw_ir_find_chain(t, name);
	if (hook) {
		chain_ud(hook->nl, &u);
		mc->priority = hook->priority;
		if (u.bound) {
			bind_from(mc, &u);
			mc->cgroup_path = strdup(u.path ? u.path : "");
		}
		chain_ud_release(&u);
		if (u.bound && !mc->cgroup_path)
			return -ENOMEM;
		snprintf(name, sizeof(name), CGFW_RUN_PREFIX "%s", c->name);
		run = cgfw_ir_find_chain(t, name);
		if (run && !list_empty(&run->rules)) {
			/* the last rule: counter <policy> */
			pol = list_entry(run->rules.prev, struct ir_rule, list);
			nftnl_expr_foreach(pol->nl, rule_expr, &tmp);
			mc->policy_counter = tmp.counter;
			nftnl_expr_foreach(pol->nl, verdict_of, &mc->policy);
		}
	}
	return add_rules(mc, c);
}

static int native_chain(struct model_table *mt, const struct ir_chain *c)
{
	struct model_chain *mc = cgfw_model_add_chain(mt);
	struct chain_ud u;

	if (!mc || cgfw_strdup(&mc->name, c->name))
		return -ENOMEM;
	mc->handle = nftnl_chain_get_u64(c->nl, NFTNL_CHAIN_HANDLE);
	if (c->base) {
		chain_ud(c->nl, &u);
		mc->base = true;
		mc->dir = nftnl_chain_get_u32(c->nl, NFTNL_CHAIN_HOOKNUM) ==
			  NF_CGROUP_INGRESS ? CGFW_INGRESS : CGFW_EGRESS;
		mc->priority = c->priority;
		mc->policy = c->policy;
		mc->cgroup_id = c->cgroup.id;
		mc->binding = cgfw_model_binding_of(u.path, c->cgroup.id);
		mc->cgroup_path = strdup(u.path ? u.path : "");
		chain_ud_release(&u);
		if (!mc->cgroup_path)
			return -ENOMEM;
		mc->policy_counter = (struct model_counter){
			.present = true,
			.packets = c->packets, .bytes = c->bytes,
		};
	}
	return add_rules(mc, c);
}

/* A named object's type and live values into the model. */
static int add_obj(struct model_table *mt, struct nftnl_obj *no)
{
	struct model_obj *mo = cgfw_model_add_obj(mt);

	if (!mo || cgfw_strdup(&mo->name, nftnl_obj_get_str(no,
							    NFTNL_OBJ_NAME)))
		return -ENOMEM;
	mo->handle = nftnl_obj_get_u64(no, NFTNL_OBJ_HANDLE);
	mo->type = nftnl_obj_get_u32(no, NFTNL_OBJ_TYPE);
	switch (mo->type) {
	case NFT_OBJECT_COUNTER:
		mo->counter.packets = nftnl_obj_get_u64(no, NFTNL_OBJ_CTR_PKTS);
		mo->counter.bytes = nftnl_obj_get_u64(no, NFTNL_OBJ_CTR_BYTES);
		break;
	case NFT_OBJECT_QUOTA:
		mo->quota.bytes = nftnl_obj_get_u64(no, NFTNL_OBJ_QUOTA_BYTES);
		mo->quota.used = nftnl_obj_get_u64(no,
						   NFTNL_OBJ_QUOTA_CONSUMED);
		mo->quota.over = nftnl_obj_get_u32(no, NFTNL_OBJ_QUOTA_FLAGS) &
				 NFT_QUOTA_F_INV;
		break;
	case NFT_OBJECT_LIMIT:
		mo->limit.rate = nftnl_obj_get_u64(no, NFTNL_OBJ_LIMIT_RATE);
		mo->limit.unit = nftnl_obj_get_u64(no, NFTNL_OBJ_LIMIT_UNIT);
		mo->limit.burst = nftnl_obj_get_u32(no, NFTNL_OBJ_LIMIT_BURST);
		mo->limit.bytes = nftnl_obj_get_u32(no, NFTNL_OBJ_LIMIT_TYPE) ==
				  NFT_LIMIT_PKT_BYTES;
		mo->limit.over = nftnl_obj_get_u32(no, NFTNL_OBJ_LIMIT_FLAGS) &
				 NFT_LIMIT_F_INV;
		break;
	}
	return 0;
}

static int to_model(const struct nft_target *tg, const struct ir_table *t,
		    struct cgfw_listing *l)
{
	const struct ir_obj *o;
	struct model_table *mt = cgfw_model_add_table(l);
	struct cgfw_apply_info ai;
	const struct ir_chain *c;
	const struct ir_set *s;
	int ret = 0;

	if (!mt)
		return -ENOMEM;
	mt->backend = tg->backend;
	mt->name = strdup(cgfw_nft_user_name(t->nl, tg));
	if (asprintf(&mt->kernel_name, "%s %s", tg->family_name,
		     t->name) < 0)
		mt->kernel_name = NULL;
	if (!mt->name || !mt->kernel_name)
		return -ENOMEM;
	mt->handle = nftnl_table_get_u64(t->nl, NFTNL_TABLE_HANDLE);
	c = cgfw_ir_find_chain(t, CGFW_APPLY_CHAIN);
	cgfw_nft_made_by(t->nl, tg, c ? c->nl : NULL, &ai);
	mt->generation = ai.gen;
	if (!mt->generation &&
	    cgfw_strdup(&mt->note,
			"made by an older cgfw, which did not record its bindings and rules: apply it again"))
		return -ENOMEM;
	list_for_each_entry(o, &t->objs, list) {
		ret = add_obj(mt, o->nl);
		if (ret)
			return ret;
	}
	list_for_each_entry(s, &t->sets, list) {
		if (s->anonymous)
			continue;
		struct model_set *ms = cgfw_model_add_set(mt);

		if (!ms)
			return -ENOMEM;
		ret = cgfw_model_set_from_nftnl(ms, s->nl);
		if (ret)
			return ret;
	}
	list_for_each_entry(c, &t->chains, list) {
		if (!strncmp(c->name, CGFW_CHAIN_PREFIX,
			     strlen(CGFW_CHAIN_PREFIX)))
			continue;	/* cgfw's own */
		if (tg->native)
			ret = native_chain(mt, c);
		else
			ret = emulated_chain(mt, t, c);
		if (ret)
			return ret;
	}
	return 0;
}

int cgfw_nft_read(struct cgfw_ctx *ctx, const struct nft_target *tg,
		  const char *name, struct cgfw_listing *l)
{
	struct cgfw_ruleset rs = { 0 };
	struct ir_table *t;
	int ret;

	cgfw_ir_init(&rs);
	ret = read_ir(ctx, tg, name, !l->bindings_only, &rs);
	list_for_each_entry(t, &rs.tables, list) {
		if (ret)
			break;
		ret = to_model(tg, t, l);
	}
	cgfw_ir_release(&rs);
	if (ret && !ctx->err.len)
		cgfw_err(ctx, "cannot read the installed %s tables: %s",
			 tg->backend, strerror(-ret));
	return ret;
}
