// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * "cgfw update" for the nft targets: the elements nft compiled in the
 * shadow namespace (update.c), deleted from and added to the installed
 * sets, and the rule commands, their statements compiled here against
 * the installed table, in one batch.
 */
#include <stdio.h>
#include <stdlib.h>

#include <libmnl/libmnl.h>
#include <libnftnl/set.h>
#include <linux/netfilter/nf_tables.h>

#include "front/compile.h"
#include "nft/nft.h"

static bool zero_key(const void *key, uint32_t len)
{
	const uint8_t *k = key;

	while (len--)
		if (*k++)
			return false;
	return true;
}

static int elem_key_cmp(const void *a, const void *b)
{
	struct nftnl_set_elem *x = *(struct nftnl_set_elem *const *)a;
	struct nftnl_set_elem *y = *(struct nftnl_set_elem *const *)b;
	uint32_t xl = 0, yl = 0, xf = 0, yf = 0;
	const void *xk = nftnl_set_elem_get(x, NFTNL_SET_ELEM_KEY, &xl);
	const void *yk = nftnl_set_elem_get(y, NFTNL_SET_ELEM_KEY, &yl);
	int c = memcmp(xk, yk, xl < yl ? xl : yl);

	if (c)
		return c;
	if (nftnl_set_elem_is_set(x, NFTNL_SET_ELEM_FLAGS))
		xf = nftnl_set_elem_get_u32(x, NFTNL_SET_ELEM_FLAGS);
	if (nftnl_set_elem_is_set(y, NFTNL_SET_ELEM_FLAGS))
		yf = nftnl_set_elem_get_u32(y, NFTNL_SET_ELEM_FLAGS);
	return (int)(xf & NFT_SET_ELEM_INTERVAL_END) -
	       (int)(yf & NFT_SET_ELEM_INTERVAL_END);
}

/*
 * The elements of @from as an installed set takes them, next to the ones
 * it has: in ascending order (the kernel checks each interval end against
 * what is there; the dump that nft's elements come from is in descending
 * order), and without the interval end at key 0 that nft puts before an
 * interval that does not start there, which the set already has.
 */
static struct nftnl_set *kernel_elems(struct nftnl_set *from,
				      const char *table, const char *set)
{
	static const uint16_t attrs[] = {
		NFTNL_SET_ELEM_KEY, NFTNL_SET_ELEM_KEY_END,
		NFTNL_SET_ELEM_FLAGS, NFTNL_SET_ELEM_DATA,
		NFTNL_SET_ELEM_VERDICT, NFTNL_SET_ELEM_CHAIN,
		NFTNL_SET_ELEM_OBJREF, NFTNL_SET_ELEM_USERDATA,
		NFTNL_SET_ELEM_TIMEOUT, NFTNL_SET_ELEM_EXPIRATION,
	};
	struct nftnl_set *to = nftnl_set_alloc();
	struct nftnl_set_elem *e, *c, **v = NULL, **nv;
	struct nftnl_set_elems_iter *it;
	size_t i, j, n = 0;
	uint32_t len, flags;
	const void *key, *val;

	it = to ? nftnl_set_elems_iter_create(from) : NULL;
	if (!it)
		goto err;
	while ((e = nftnl_set_elems_iter_next(it))) {
		flags = nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS) ?
			nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS) : 0;
		key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);
		if (!key || ((flags & NFT_SET_ELEM_INTERVAL_END) &&
			     zero_key(key, len)))
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			goto err_it;
		v = nv;
		v[n++] = e;
	}
	if (n)
		qsort(v, n, sizeof(*v), elem_key_cmp);
	nftnl_set_set_str(to, NFTNL_SET_TABLE, table);
	nftnl_set_set_str(to, NFTNL_SET_NAME, set);
	for (i = 0; i < n; i++) {
		c = nftnl_set_elem_alloc();
		if (!c)
			goto err_it;
		for (j = 0; j < ARRAY_SIZE(attrs); j++) {
			if (!nftnl_set_elem_is_set(v[i], attrs[j]))
				continue;
			val = nftnl_set_elem_get(v[i], attrs[j], &len);
			nftnl_set_elem_set(c, attrs[j], val, len);
		}
		nftnl_set_elem_add(to, c);
	}
	free(v);
	nftnl_set_elems_iter_destroy(it);
	return to;
err_it:
	free(v);
	nftnl_set_elems_iter_destroy(it);
err:
	if (to)
		nftnl_set_free(to);
	return NULL;
}

/*
 * The statements of table @table's rule commands, compiled by nft in a
 * shadow made from the installed table (@inst, read here): into @out.
 */
static int compile_rules(struct cgfw_ctx *ctx, const struct nft_target *tg,
			 const struct upd_cmds *u, const char *table,
			 struct cgfw_ruleset *inst, struct cgfw_ruleset *out)
{
	struct shadow_job job = { .len = u->rw.len };
	const struct rw_rule_cmd *rc;
	struct cgfw_nl_batch nb = { 0 };
	const struct ir_table *it;
	bool any = false;
	int ret;

	ret = cgfw_nft_read_ir(ctx, tg, table, false, inst);
	if (ret)
		return ret;
	it = list_entry(inst->tables.next, struct ir_table, list);
	list_for_each_entry(rc, &u->rw.rule_cmds, list) {
		if (strcmp(rc->table, table))
			continue;
		if (!cgfw_ir_find_chain(it, rc->chain)) {
			cgfw_err_at(ctx, &u->src, &rc->loc,
				    "table '%s' has no chain '%s'; chains are made by 'cgfw apply'",
				    table, rc->chain);
			return -ENOENT;
		}
		any |= rc->text != NULL;
	}
	if (!any)
		return 0;
	ret = cgfw_nl_batch_init(&nb);
	ret = ret ? : cgfw_nft_build_shadow(ctx, it, table, &nb);
	job.setup = &nb;
	job.text = ret ? NULL : cgfw_rw_rules_text(&u->rw, table);
	if (!ret && !job.text)
		ret = -ENOMEM;
	ret = ret ? : cgfw_shadow_compile(ctx, &u->src, &job, out);
	free((char *)job.text);
	cgfw_nl_batch_release(&nb);
	return ret;
}

/* The rule commands for table @table into @nb. */
static int rule_cmds(struct cgfw_ctx *ctx, const struct nft_target *tg,
		     const struct upd_cmds *u, const char *table,
		     struct cgfw_nl_batch *nb, uint32_t *set_id)
{
	struct cgfw_ruleset inst = { .src = u->src }, shadow = { .src = u->src };
	struct ir_table none = { 0 };	/* no statements: nothing compiled */
	const struct ir_table *st;
	int ret;

	cgfw_ir_init(&inst);
	cgfw_ir_init(&shadow);
	list_init(&none.chains);
	list_init(&none.sets);
	list_init(&none.objs);
	ret = compile_rules(ctx, tg, u, table, &inst, &shadow);
	st = ret ? NULL : cgfw_ir_find_table(&shadow, table);
	ret = ret ? : cgfw_nft_build_rule_cmds(ctx, tg, &u->rw, table,
					       st ? st : &none, nb, set_id);
	cgfw_ir_release(&inst);
	cgfw_ir_release(&shadow);
	return ret;
}

/* Is @rc the first rule command naming its table? */
static bool first_of_table(const struct upd_cmds *u,
			   const struct rw_rule_cmd *rc)
{
	const struct rw_rule_cmd *p;

	list_for_each_entry(p, &u->rw.rule_cmds, list)
		if (p == rc || !strcmp(p->table, rc->table))
			break;
	return p == rc;
}

/* The elements nft compiled, into the sets of @tg's tables: one batch. */
int cgfw_nft_update(struct cgfw_ctx *ctx, const struct nft_target *tg,
		    const struct upd_cmds *u)
{
	char kname[NFT_NAME_MAXLEN + 8];
	struct nftnl_set_elems_iter *it;
	struct nftnl_set *v[2], *elems;
	const struct rw_rule_cmd *rc;
	const struct upd_set *us;
	struct cgfw_nl_batch nb;
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	uint32_t set_id = 0;	/* anonymous sets' ids, across tables */
	size_t n = 0, i;
	uint64_t gen;
	int more, ret;

	ret = cgfw_nl_writer(ctx, &nl);
	if (ret)
		return ret;
	ret = cgfw_nl_batch_init(&nb);
	if (ret)
		goto out_nl;
	list_for_each_entry(us, &u->sets, list) {
		/* only the tables this target holds */
		if (cgfw_nft_generation(ctx, tg, us->table, &gen))
			continue;
		snprintf(kname, sizeof(kname), "%s%s", tg->prefix, us->table);
		v[0] = us->del;
		v[1] = us->add;
		for (i = 0; i < 2; i++) {
			if (!v[i])
				continue;
			elems = kernel_elems(v[i], kname, us->set);
			it = elems ? nftnl_set_elems_iter_create(elems) : NULL;
			if (!it) {
				if (elems)
					nftnl_set_free(elems);
				ret = -ENOMEM;
				goto out;
			}
			/* as many messages as the elements need, maybe none */
			while (nftnl_set_elems_iter_cur(it)) {
				nlh = cgfw_nl_batch_next(&nb,
							 i ? NFT_MSG_NEWSETELEM :
					    NFT_MSG_DELSETELEM,
					tg->family, i ? NLM_F_CREATE : 0,
					i ? us->add_loc : us->del_loc,
					"the elements");
				if (!nlh)
					break;
				more = nftnl_set_elems_nlmsg_build_payload_iter(
					nlh, it);
				cgfw_nl_batch_done(&nb);
				if (more <= 0)
					break;
			}
			nftnl_set_elems_iter_destroy(it);
			nftnl_set_free(elems);
		}
		n++;
	}
	/* then the rule commands, table by table */
	list_for_each_entry(rc, &u->rw.rule_cmds, list) {
		if (!first_of_table(u, rc) ||
		    cgfw_nft_generation(ctx, tg, rc->table, &gen))
			continue;
		cgfw_ctx_reset(ctx);
		ret = rule_cmds(ctx, tg, u, rc->table, &nb, &set_id);
		if (ret)
			goto out;
		n++;
	}
	cgfw_ctx_reset(ctx);	/* a table not held here is no error */
	ret = n ? cgfw_nl_batch_commit(ctx, nl, &nb, &u->src) : CGFW_NOT_HELD;
	cgfw_nft_held_hint(ctx, ret);
out:
	cgfw_nl_batch_release(&nb);
out_nl:
	cgfw_nl_writer_close(ctx, nl);
	return ret;
}
