// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The nft backend's two targets as backends: which tables are cgfw's,
 * applying in one batch, removing, probing (nft/nft.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "front/compile.h"
#include "nft/nft.h"

const struct nft_target cgfw_nft_emulated = {
	.backend = "nft-emulated", .family = NFPROTO_INET,
	.family_name = "inet", .prefix = "cgfw_",
	.dispatch = true,
};

const struct nft_target cgfw_nft_native = {
	.backend = "nft-native", .family = NFPROTO_CGROUP,
	.family_name = "cgroup", .prefix = "",
	.native = true,
};

/* ---- which tables are cgfw's ---- */

struct table_ud {
	const char *comment;
	const char *name;
	uint32_t format, with_bpf;
	uint64_t gen;
};

static int table_ud_cb(const struct nftnl_udata *attr, void *data)
{
	struct table_ud *u = data;
	const char *v = nftnl_udata_get(attr);
	uint8_t len = nftnl_udata_len(attr);
	bool strz = len && v[len - 1] == '\0';

	switch (nftnl_udata_type(attr)) {
	case 0:	/* NFTNL_UDATA_TABLE_COMMENT */
		if (strz)
			u->comment = v;
		break;
	case CGFW_UD_TABLE_FORMAT:
		if (len == 4)
			u->format = nftnl_udata_get_u32(attr);
		break;
	case CGFW_UD_TABLE_NAME:
		if (strz)
			u->name = v;
		break;
	case CGFW_UD_TABLE_GEN:
		if (len == 8)
			memcpy(&u->gen, v, 8);
		break;
	case CGFW_UD_TABLE_WITH_BPF:
		if (len == 4)
			u->with_bpf = nftnl_udata_get_u32(attr);
		break;
	}
	return 0;
}

static void table_ud(const struct nftnl_table *t, struct table_ud *u)
{
	const void *ud;
	uint32_t len;

	memset(u, 0, sizeof(*u));
	ud = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &len);
	if (ud)
		nftnl_udata_parse(ud, len, table_ud_cb, u);
}

/*
 * cgfw's: its userdata says so; or, made by cgfw before it kept TLVs, its
 * comment starts with "cgfw: " (such a table is replaced and removed as
 * cgfw's).
 */
bool cgfw_nft_owned(const struct nftnl_table *t, const struct nft_target *tg)
{
	const char *name = nftnl_table_get_str(t, NFTNL_TABLE_NAME);
	struct table_ud u;

	if (nftnl_table_get_u32(t, NFTNL_TABLE_FAMILY) != tg->family ||
	    strncmp(name, tg->prefix, strlen(tg->prefix)))
		return false;
	table_ud(t, &u);
	return u.format || (u.comment && !strncmp(u.comment,
						  CGFW_OWNER_COMMENT,
						  strlen(CGFW_OWNER_COMMENT)));
}

const char *cgfw_nft_user_name(const struct nftnl_table *t,
			       const struct nft_target *tg)
{
	return nftnl_table_get_str(t, NFTNL_TABLE_NAME) + strlen(tg->prefix);
}

void cgfw_nft_made_by(const struct nftnl_table *t, const struct nft_target *tg,
		      struct cgfw_apply_info *ai)
{
	struct table_ud u;

	table_ud(t, &u);
	ai->gen = u.gen;
	ai->nft_family = tg->family;
	ai->bpf = u.with_bpf;
}

struct tables {
	const struct nft_target *tg;
	char **owned, **others;	/* kernel names */
	size_t n_owned, n_others;
	struct cgfw_apply_info *made_by;
	int err;
};

static int push(char ***v, size_t *n, const char *s)
{
	char **p = realloc(*v, (*n + 1) * sizeof(**v));

	if (!p)
		return -ENOMEM;
	*v = p;
	p[*n] = strdup(s);
	if (!p[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int tables_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tables *ts = data;
	struct nftnl_table *t = nftnl_table_alloc();
	struct cgfw_apply_info *g;
	const char *name;

	if (!t || nftnl_table_nlmsg_parse(nlh, t) < 0) {
		ts->err = -ENOMEM;
		goto out;
	}
	name = nftnl_table_get_str(t, NFTNL_TABLE_NAME);
	if (!cgfw_nft_owned(t, ts->tg)) {
		ts->err = ts->err ? : push(&ts->others, &ts->n_others, name);
		goto out;
	}
	g = realloc(ts->made_by, (ts->n_owned + 1) * sizeof(*g));
	if (!g) {
		ts->err = -ENOMEM;
		goto out;
	}
	ts->made_by = g;
	cgfw_nft_made_by(t, ts->tg, &g[ts->n_owned]);
	ts->err = ts->err ? : push(&ts->owned, &ts->n_owned, name);
out:
	if (t)
		nftnl_table_free(t);
	return MNL_CB_OK;
}

static void tables_release(struct tables *ts)
{
	size_t i;

	for (i = 0; i < ts->n_owned; i++)
		free(ts->owned[i]);
	for (i = 0; i < ts->n_others; i++)
		free(ts->others[i]);
	free(ts->owned);
	free(ts->others);
	free(ts->made_by);
	memset(ts, 0, sizeof(*ts));
}

/* The tables of @tg's family: cgfw's and the others. */
static int list_tables(struct mnl_socket *nl, const struct nft_target *tg,
		       struct tables *ts)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int ret;

	memset(ts, 0, sizeof(*ts));
	ts->tg = tg;
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, tg->family,
				    NLM_F_DUMP, 1);
	ret = cgfw_nl_dump(nl, nlh, tables_cb, ts);
	return ts->err ? : ret;
}

static ssize_t find(char **v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return i;
	return -1;
}

/* ---- apply ---- */

struct staged {
	const struct nft_target *tg;
	struct cgfw_nl_batch nb;
	struct mnl_socket *nl;
	const struct cgfw_source *src;
};

static bool replace_owned(const char *kname, void *data)
{
	struct tables *ts = data;

	return find(ts->owned, ts->n_owned, kname) >= 0;
}

/* A table of that name that cgfw did not make is not replaced. */
static int check_others(struct cgfw_ctx *ctx, const struct nft_target *tg,
			const struct cgfw_ruleset *rs, struct tables *ts)
{
	const struct ir_table *t;
	char kname[NFT_NAME_MAXLEN + 8];

	list_for_each_entry(t, &rs->tables, list) {
		snprintf(kname, sizeof(kname), "%s%s", tg->prefix, t->name);
		if (find(ts->others, ts->n_others, kname) < 0)
			continue;
		ctx_err_at(ctx, &rs->src, &t->loc,
			   "table %s %s exists and was not made by cgfw, so cgfw will not replace it; rename table '%s' or delete that one",
			   tg->family_name, kname, t->name);
		return -EEXIST;
	}
	return 0;
}

static int nft_stage(struct cgfw_ctx *ctx, const struct nft_target *tg,
		     const struct cgfw_ruleset *rs,
		     const struct cgfw_apply_info *ai, void **priv)
{
	struct staged *st = calloc(1, sizeof(*st));
	struct tables ts;
	int ret;

	if (!st)
		return -ENOMEM;
	st->tg = tg;
	st->src = &rs->src;
	ret = cgfw_nl_open(ctx, &st->nl);
	if (ret) {
		free(st);
		return ret;
	}
	ret = list_tables(st->nl, tg, &ts);
	if (ret)
		ctx_err(ctx, "cannot list the nf_tables tables: %s",
			strerror(-ret));
	ret = ret ? : check_others(ctx, tg, rs, &ts);
	ret = ret ? : cgfw_nl_batch_init(&st->nb);
	ret = ret ? : cgfw_nft_build(ctx, tg, rs, replace_owned, &ts, ai,
				     &st->nb);
	tables_release(&ts);
	if (ret) {
		cgfw_nl_batch_release(&st->nb);
		mnl_socket_close(st->nl);
		free(st);
		return ret;
	}
	*priv = st;
	return 0;
}

static void nft_abort(void *priv)
{
	struct staged *st = priv;

	if (!st)
		return;
	cgfw_nl_batch_release(&st->nb);
	mnl_socket_close(st->nl);
	free(st);
}

static int nft_commit(struct cgfw_ctx *ctx, void *priv)
{
	struct staged *st = priv;
	int ret;

	ret = cgfw_nl_batch_commit(ctx, st->nl, &st->nb, st->src);
	nft_abort(st);
	return ret;
}

/* ---- remove ---- */

static int nft_remove(struct cgfw_ctx *ctx, const char *name,
		      const struct nft_target *tg)
{
	static const struct cgfw_source no_src = { .name = "cgfw" };
	char kname[NFT_NAME_MAXLEN + 8];
	struct cgfw_nl_batch nb;
	struct nftnl_table *nt;
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct tables ts;
	size_t i, n = 0;
	int ret;

	if (name)
		snprintf(kname, sizeof(kname), "%s%s", tg->prefix, name);
	ret = cgfw_nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = list_tables(nl, tg, &ts);
	ret = ret ? : cgfw_nl_batch_init(&nb);
	if (ret)
		goto out_nl;
	for (i = 0; i < ts.n_owned; i++) {
		if (name && strcmp(ts.owned[i], kname))
			continue;
		nt = nftnl_table_alloc();
		if (!nt) {
			ret = -ENOMEM;
			goto out;
		}
		nftnl_table_set_str(nt, NFTNL_TABLE_NAME, ts.owned[i]);
		nlh = cgfw_nl_batch_next(&nb, NFT_MSG_DELTABLE, tg->family, 0,
					 NULL, "the deletion of a table");
		if (nlh) {
			nftnl_table_nlmsg_build_payload(nlh, nt);
			cgfw_nl_batch_done(&nb);
		}
		nftnl_table_free(nt);
		n++;
	}
	if (!n)
		ret = name ? -ENOENT : 0;
	else
		ret = cgfw_nl_batch_commit(ctx, nl, &nb, &no_src);
out:
	cgfw_nl_batch_release(&nb);
out_nl:
	tables_release(&ts);
	mnl_socket_close(nl);
	return ret;
}

int cgfw_nft_generation(struct cgfw_ctx *ctx, const struct nft_target *tg,
			const char *name, uint64_t *gen)
{
	char kname[NFT_NAME_MAXLEN + 8];
	struct mnl_socket *nl;
	struct tables ts;
	ssize_t i;
	int ret;

	snprintf(kname, sizeof(kname), "%s%s", tg->prefix, name);
	ret = cgfw_nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = list_tables(nl, tg, &ts);
	mnl_socket_close(nl);
	i = ret ? -1 : find(ts.owned, ts.n_owned, kname);
	if (!ret && i < 0)
		ret = -ENOENT;
	if (!ret)
		*gen = ts.made_by[i].gen;
	tables_release(&ts);
	return ret;
}

static int nft_tables(struct cgfw_ctx *ctx, const struct nft_target *tg,
		      struct backend_table **out, size_t *n)
{
	struct backend_table *v;
	struct mnl_socket *nl;
	struct tables ts;
	size_t i;
	int ret;

	*out = NULL;
	*n = 0;
	ret = cgfw_nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = list_tables(nl, tg, &ts);
	mnl_socket_close(nl);
	v = ret ? NULL : calloc(ts.n_owned + 1, sizeof(*v));
	if (!ret && !v)
		ret = -ENOMEM;
	for (i = 0; !ret && i < ts.n_owned; i++) {
		v[i].name = strdup(ts.owned[i] + strlen(tg->prefix));
		v[i].made_by = ts.made_by[i];
		if (!v[i].name)
			ret = -ENOMEM;
		*n = i + 1;
	}
	tables_release(&ts);
	if (ret) {
		cgfw_backend_tables_free(v, *n);
		*n = 0;
		return ret;
	}
	*out = v;
	return 0;
}

/* ---- the set of an installed table, attributes only ---- */

static int nft_set_object(struct cgfw_ctx *ctx, const struct nft_target *tg,
			  const char *table, const char *set,
			  struct nftnl_set **out)
{
	struct cgfw_ruleset rs = { 0 };
	struct ir_table *t;
	struct ir_set *s;
	int ret;

	ir_init(&rs);
	ret = cgfw_nft_read_ir(ctx, tg, table, &rs);
	t = ret ? NULL : list_entry(rs.tables.next, struct ir_table, list);
	s = t ? ir_find_set(t, set) : NULL;
	if (!ret && (!s || s->anonymous))
		ret = -ENOENT;
	if (!ret) {
		*out = s->nl;
		s->nl = nftnl_set_alloc();	/* what ir_release frees */
		if (!s->nl)
			ret = -ENOMEM;
	}
	ir_release(&rs);
	return ret;
}

/* ---- probing ---- */

/*
 * Try a table of @family with one output chain and, if @socket_rule, the
 * rule "socket cgroupv2 level 0 == 1 accept", in a throwaway namespace.
 */
bool cgfw_nft_probe_table(struct cgfw_ctx *ctx, uint16_t family,
			  bool socket_rule)
{
	static const struct cgfw_source src = { .name = "probe" };
	struct nftnl_table *t = nftnl_table_alloc();
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *sk, *cmp;
	struct mnl_socket *nl = NULL;
	struct cgfw_nl_batch nb;
	struct nlmsghdr *nlh;
	uint64_t id = 1;
	bool ok = false;
	int saved;

	if (!t || !c || !r || cgfw_nl_batch_init(&nb))
		goto out_free;
	if (netns_enter_shadow(ctx, &saved))
		goto out_batch;
	if (cgfw_nl_open(ctx, &nl))
		goto out_ns;

	nftnl_table_set_str(t, NFTNL_TABLE_NAME, "probe");
	nlh = cgfw_nl_batch_next(&nb, NFT_MSG_NEWTABLE, family, NLM_F_CREATE,
				 NULL, NULL);
	if (nlh)
		nftnl_table_nlmsg_build_payload(nlh, t);
	cgfw_nl_batch_done(&nb);
	if (socket_rule) {
		nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, "probe");
		nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "out");
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
		nlh = cgfw_nl_batch_next(&nb, NFT_MSG_NEWCHAIN, family,
					 NLM_F_CREATE, NULL, NULL);
		if (nlh)
			nftnl_chain_nlmsg_build_payload(nlh, c);
		cgfw_nl_batch_done(&nb);

		sk = nftnl_expr_alloc("socket");
		cmp = nftnl_expr_alloc("cmp");
		if (!sk || !cmp) {
			if (sk)
				nftnl_expr_free(sk);
			if (cmp)
				nftnl_expr_free(cmp);
			goto out_ns;
		}
		nftnl_expr_set_u32(sk, NFTNL_EXPR_SOCKET_KEY,
				   NFT_SOCKET_CGROUPV2);
		nftnl_expr_set_u32(sk, NFTNL_EXPR_SOCKET_DREG, NFT_REG_1);
		nftnl_expr_set_u32(sk, NFTNL_EXPR_SOCKET_LEVEL, 0);
		nftnl_expr_set_u32(cmp, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
		nftnl_expr_set_u32(cmp, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
		nftnl_expr_set(cmp, NFTNL_EXPR_CMP_DATA, &id, sizeof(id));
		nftnl_rule_set_str(r, NFTNL_RULE_TABLE, "probe");
		nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, "out");
		nftnl_rule_add_expr(r, sk);
		nftnl_rule_add_expr(r, cmp);
		nlh = cgfw_nl_batch_next(&nb, NFT_MSG_NEWRULE, family,
					 NLM_F_CREATE | NLM_F_APPEND, NULL,
					 NULL);
		if (nlh)
			nftnl_rule_nlmsg_build_payload(nlh, r);
		cgfw_nl_batch_done(&nb);
	}
	ok = !cgfw_nl_batch_commit(ctx, nl, &nb, &src);
out_ns:
	if (nl)
		mnl_socket_close(nl);
	netns_leave_shadow(saved);
out_batch:
	cgfw_nl_batch_release(&nb);
out_free:
	if (t)
		nftnl_table_free(t);
	if (c)
		nftnl_chain_free(c);
	if (r)
		nftnl_rule_free(r);
	ctx_reset(ctx);	/* a failed probe is an answer, not an error */
	return ok;
}

/* ---- the two backends ---- */

static int nft_emulated_probe(struct cgfw_ctx *ctx)
{
	(void)ctx;	/* the kernel answers for nf_tables and socket */
	return 0;
}

static int nft_native_probe(struct cgfw_ctx *ctx)
{
	if (cgfw_nft_probe_table(ctx, NFPROTO_CGROUP, false))
		return 0;
	ctx_reset(ctx);
	ctx_err(ctx, "this kernel has no nf_tables cgroup family (kernel-patches/ adds it); use -b nft for the emulated target on stock kernels");
	return -EOPNOTSUPP;
}

static int any_check(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	(void)ctx;
	(void)rs;	/* nf_tables took it in the shadow */
	return 0;
}

#define DEFINE_TARGET_OPS(fn, tg, str)					\
static int fn##_stage(struct cgfw_ctx *ctx,				\
		      const struct cgfw_ruleset *rs,			\
		      const struct cgfw_apply_info *ai, void **priv)	\
{									\
	return nft_stage(ctx, &tg, rs, ai, priv);			\
}									\
static int fn##_remove(struct cgfw_ctx *ctx, const char *name)		\
{									\
	return nft_remove(ctx, name, &tg);				\
}									\
static int fn##_list(struct cgfw_ctx *ctx, const char *name,		\
		     struct cgfw_listing *l)				\
{									\
	return cgfw_nft_read(ctx, &tg, name, l);			\
}									\
static int fn##_set_object(struct cgfw_ctx *ctx, const char *table,	\
			   const char *set, struct nftnl_set **out)	\
{									\
	return nft_set_object(ctx, &tg, table, set, out);		\
}									\
static int fn##_update(struct cgfw_ctx *ctx, const struct upd_cmds *u)	\
{									\
	return cgfw_nft_update(ctx, &tg, u);				\
}									\
static int fn##_tables(struct cgfw_ctx *ctx,				\
		       struct backend_table **v, size_t *n)		\
{									\
	return nft_tables(ctx, &tg, v, n);				\
}									\
const struct backend_ops cgfw_backend_##fn = {				\
	.name = str,							\
	.probe = fn##_probe,						\
	.check = any_check,						\
	.stage = fn##_stage,						\
	.commit = nft_commit,						\
	.abort = nft_abort,						\
	.remove = fn##_remove,						\
	.list = fn##_list,						\
	.set_object = fn##_set_object,					\
	.update = fn##_update,						\
	.tables = fn##_tables,						\
}

DEFINE_TARGET_OPS(nft_emulated, cgfw_nft_emulated, "nft-emulated");
DEFINE_TARGET_OPS(nft_native, cgfw_nft_native, "nft-native");
