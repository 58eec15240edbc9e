// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The nft backend's two targets as backends (nft/nft.h): applying in one
 * batch, removing, and the operations over their tables.
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

/* ---- apply ---- */

struct staged {
	struct cgfw_ctx *ctx;
	const struct nft_target *tg;
	struct cgfw_nl_batch nb;
	struct mnl_socket *nl;
	const struct cgfw_source *src;
};

/* A table of that name that cgfw did not make is not replaced. */
static int check_others(struct cgfw_ctx *ctx, const struct nft_target *tg,
			const struct cgfw_ruleset *rs, struct nft_tables *ts)
{
	const struct ir_table *t;
	char kname[NFT_NAME_MAXLEN + 8];

	list_for_each_entry(t, &rs->tables, list) {
		snprintf(kname, sizeof(kname), "%s%s", tg->prefix, t->name);
		if (cgfw_nft_find(ts->others, ts->n_others, kname) < 0)
			continue;
		cgfw_err_at(ctx, &rs->src, &t->loc,
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
	struct cgfw_ruleset installed = { 0 };
	struct nft_tables ts;
	int ret;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->tg = tg;
	st->src = &rs->src;
	ret = cgfw_nl_writer(ctx, &st->nl);
	if (ret) {
		free(st);
		return ret;
	}
	ret = cgfw_nft_list_tables(st->nl, tg, &ts);
	if (ret)
		cgfw_err(ctx, "cannot list the nf_tables tables: %s",
			 strerror(-ret));
	ret = ret ? : check_others(ctx, tg, rs, &ts);
	cgfw_ir_init(&installed);
	/* what is replaced: its chains and sets, to keep its base chains */
	if (!ret && ts.n_owned)
		ret = cgfw_nft_read_installed(ctx, tg, &installed);
	ret = ret ? : cgfw_nl_batch_init(&st->nb);
	ret = ret ? : cgfw_nft_build(ctx, tg, rs, &installed, ai, &st->nb);
	cgfw_ir_release(&installed);
	cgfw_nft_tables_release(&ts);
	if (ret) {
		cgfw_nl_batch_release(&st->nb);
		cgfw_nl_writer_close(ctx, st->nl);
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
	cgfw_nl_writer_close(st->ctx, st->nl);
	free(st);
}

static int nft_commit(struct cgfw_ctx *ctx, void *priv)
{
	struct staged *st = priv;
	int ret;

	ret = cgfw_nl_batch_commit(ctx, st->nl, &st->nb, st->src);
	cgfw_nft_held_hint(ctx, ret);
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
	struct nft_tables ts;
	size_t i, n = 0;
	int ret;

	if (name)
		snprintf(kname, sizeof(kname), "%s%s", tg->prefix, name);
	ret = cgfw_nl_writer(ctx, &nl);
	if (ret)
		return ret;
	ret = cgfw_nft_list_tables(nl, tg, &ts);
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
	cgfw_nft_held_hint(ctx, ret);
out:
	cgfw_nl_batch_release(&nb);
out_nl:
	cgfw_nft_tables_release(&ts);
	cgfw_nl_writer_close(ctx, nl);
	return ret;
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

	cgfw_ir_init(&rs);
	ret = cgfw_nft_read_ir(ctx, tg, table, false, &rs);
	t = ret ? NULL : list_entry(rs.tables.next, struct ir_table, list);
	s = t ? cgfw_ir_find_set(t, set) : NULL;
	if (!ret && (!s || s->anonymous))
		ret = -ENOENT;
	if (!ret) {
		*out = s->nl;
		s->nl = nftnl_set_alloc();	/* what ir_release frees */
		if (!s->nl)
			ret = -ENOMEM;
	}
	cgfw_ir_release(&rs);
	return ret;
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
	cgfw_ctx_reset(ctx);
	cgfw_err(ctx, "this kernel has no nf_tables cgroup family (kernel-patches/ adds it); use -b nft for the emulated target on stock kernels");
	return -EOPNOTSUPP;
}

/*
 * nf_tables took the ruleset in the shadow already. What cgfw does not
 * carry yet is refused here: a map to named objects ("type ipv4_addr :
 * counter"), which it would list as a plain set and could not update.
 */
static int any_check(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	const struct ir_table *t;
	const struct ir_set *s;

	list_for_each_entry(t, &rs->tables, list) {
		list_for_each_entry(s, &t->sets, list) {
			if (!(nftnl_set_get_u32(s->nl, NFTNL_SET_FLAGS) &
			      NFT_SET_OBJECT))
				continue;
			cgfw_err_at(ctx, &rs->src, &t->loc,
				    "map '%s' of table '%s' maps to named objects, which cgfw does not carry yet; name the object in the rule instead (counter name \"c1\")",
				    cgfw_ir_set_name(s), t->name);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* Does rule @r load the TCP flags (payload @th + 13, one byte)? */
static bool loads_tcp_flags(const struct ir_rule *r)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r->nl);
	struct nftnl_expr *e;
	bool found = false;

	while (it && !found && (e = nftnl_expr_iter_next(it)))
		found = !strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME),
				"payload") &&
			nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE) ==
			NFT_PAYLOAD_TRANSPORT_HEADER &&
			nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET) == 13 &&
			nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN) == 1;
	if (it)
		nftnl_expr_iter_destroy(it);
	return found;
}

/* Mark in @seen the chains @r jumps or goes to (a verdict map: all). */
static bool mark_targets(const struct ir_table *t, const struct ir_rule *r,
			 bool *seen)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r->nl);
	const struct ir_chain *c;
	struct nftnl_expr *e;
	const char *name;
	bool more = false;
	size_t i;

	while (it && (e = nftnl_expr_iter_next(it))) {
		name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
		if (!strcmp(name, "lookup") &&
		    nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_DREG) &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_DREG) ==
		    NFT_REG_VERDICT)
			name = NULL;	/* a verdict map: any chain */
		else if (strcmp(name, "immediate") ||
			 !nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN))
			continue;
		else
			name = nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN);
		i = 0;
		list_for_each_entry(c, &t->chains, list) {
			if (!seen[i] && !c->base &&
			    (!name || !strcmp(c->name, name)))
				seen[i] = more = true;
			i++;
		}
	}
	if (it)
		nftnl_expr_iter_destroy(it);
	return more;
}

/*
 * The first rule of @t, in the base chains of direction @dir and the
 * chains they reach, for which @pred holds; or NULL.
 */
static const struct ir_rule *
reached_rule(const struct ir_table *t, enum cgfw_dir dir,
	     bool (*pred)(const struct ir_rule *r))
{
	const struct ir_rule *r, *found = NULL;
	const struct ir_chain *c;
	bool *seen, more = true;
	size_t n = 0, i;

	list_for_each_entry(c, &t->chains, list)
		n++;
	seen = calloc(n + 1, sizeof(*seen));
	if (!seen)
		return NULL;
	i = 0;
	list_for_each_entry(c, &t->chains, list)
		seen[i++] = c->base && c->dir == dir;
	while (more) {	/* and the chains those reach */
		more = false;
		i = 0;
		list_for_each_entry(c, &t->chains, list) {
			if (seen[i++])
				list_for_each_entry(r, &c->rules, list)
					more |= mark_targets(t, r, seen);
		}
	}
	i = 0;
	list_for_each_entry(c, &t->chains, list) {
		if (seen[i++] && !found)
			list_for_each_entry(r, &c->rules, list)
				if (!found && pred(r))
					found = r;
	}
	free(seen);
	return found;
}

/*
 * Say @what at the first rule of each table, in the chains that direction
 * @dir reaches, for which @pred holds.
 */
static void warn_reached(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			 enum cgfw_dir dir,
			 bool (*pred)(const struct ir_rule *r), const char *what)
{
	const struct ir_table *t;
	const struct ir_rule *r;
	char at[CGFW_WHERE_MAX];

	list_for_each_entry(t, &rs->tables, list) {
		r = reached_rule(t, dir, pred);
		if (r)
			cgfw_log(ctx, CGFW_LOG_WARN, "%s: %s",
				 cgfw_src_lines(&rs->src, r->loc.line, 0, at,
						sizeof(at)), what);
	}
}

/*
 * An ingress chain with policy drop: the packets the emulated target
 * cannot tie to a socket of the cgroup pass it (docs/cgfw.8.rst,
 * LIMITATIONS), where the other backends drop them. Said at the chain.
 */
static void warn_untied(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	const struct ir_table *t;
	const struct ir_chain *c;
	char at[CGFW_WHERE_MAX];

	list_for_each_entry(t, &rs->tables, list)
		list_for_each_entry(c, &t->chains, list)
			if (c->base && c->dir == CGFW_INGRESS &&
			    c->policy == NF_DROP)
				cgfw_log(ctx, CGFW_LOG_WARN,
					 "%s: chain '%s' drops at ingress what its rules do not accept, but the emulated target (inet, socket cgroupv2) cannot tie some packets to a socket: ICMP echo replies, raw and SCTP sockets' packets, the third packet of a TCP handshake and segments of TIME_WAIT connections pass it whatever its policy (the bpf backend and the native family see them)",
					 cgfw_src_lines(&rs->src, c->loc.line,
							0, at, sizeof(at)),
					 c->name);
}

/*
 * What the emulated target does otherwise than the other backends is
 * said. A listening socket's SYN-ACK is sent from a request socket, which
 * socket cgroupv2 does not tie to the listener's cgroup: at egress it
 * passes the chains of that cgroup, where the native family and the bpf
 * backend run them (the CGROUP_SKB hook runs for the listener). A rule on
 * TCP flags at egress is where that is meant: said once a table, at the
 * first one. At ingress, a policy drop lets what is not tied through.
 */
static int emulated_check(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	int ret = any_check(ctx, rs);

	if (ret)
		return ret;
	warn_reached(ctx, rs, CGFW_EGRESS, loads_tcp_flags,
		     "the emulated target (inet, socket cgroupv2) does not see the SYN-ACK that a listening socket of the cgroup sends (it leaves from a request socket, which socket cgroupv2 does not tie to the cgroup): a rule on TCP flags at egress matches it with the native family and the bpf backend, not here");
	warn_untied(ctx, rs);
	return 0;
}

/* Does rule @r hold an expression named @name? */
static bool has_expr(const struct ir_rule *r, const char *name)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r->nl);
	struct nftnl_expr *e;
	bool found = false;

	while (it && !found && (e = nftnl_expr_iter_next(it)))
		found = !strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), name);
	if (it)
		nftnl_expr_iter_destroy(it);
	return found;
}

static bool uses_ct(const struct ir_rule *r)
{
	return has_expr(r, "ct");
}

/*
 * The native family runs where CGROUP_SKB programs do, and the kernel has
 * no reject there: said at the rule, with the target that has one, rather
 * than left to the kernel's refusal of the batch. At ingress the receive
 * paths have dropped the packet's conntrack entry before the socket's
 * filter runs, so a ct expression there finds none: a rule on ct state
 * never matches an established connection. Said once a table, at the
 * first such rule, as the emulated target's difference is.
 */
static int native_check(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	const struct ir_table *t;
	const struct ir_chain *c;
	const struct ir_rule *r;
	int ret = any_check(ctx, rs);

	list_for_each_entry(t, &rs->tables, list) {
		list_for_each_entry(c, &t->chains, list) {
			list_for_each_entry(r, &c->rules, list) {
				if (ret || !has_expr(r, "reject"))
					continue;
				cgfw_err_at(ctx, &rs->src, &r->loc,
					    "the kernel's cgroup family has no reject; use '-b nft-emulated' (inet hooks, which can send the reset or ICMP error) or drop");
				ret = -EOPNOTSUPP;
			}
		}
	}
	if (!ret)
		warn_reached(ctx, rs, CGFW_INGRESS, uses_ct,
			     "the native family sees no connection tracking at ingress (the kernel drops it before the socket's filter, where the family runs): ct finds no connection here, so every packet is ct state invalid and none is established; the emulated target (-b nft-emulated) runs at the input hook, where it does");
	return ret;
}

#define DEFINE_TARGET_OPS(fn, tg, fam, str, chk)				\
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
static int fn##_update(struct cgfw_ctx *ctx, struct upd_cmds *u)		\
{									\
	return cgfw_nft_update(ctx, &tg, u);				\
}									\
static int fn##_held(struct cgfw_ctx *ctx, const char *name)		\
{									\
	return cgfw_nft_held(ctx, &tg, name);				\
}									\
static int fn##_tables(struct cgfw_ctx *ctx,				\
		       struct backend_table **v, size_t *n)		\
{									\
	return cgfw_nft_tables(ctx, &tg, v, n);				\
}									\
static int fn##_generation(struct cgfw_ctx *ctx, const char *name,	\
			   uint64_t *gen)				\
{									\
	return cgfw_nft_generation(ctx, &tg, name, gen);		\
}									\
const struct backend_ops cgfw_backend_##fn = {				\
	.name = str,							\
	.nft_family = fam,						\
	.probe = fn##_probe,						\
	.check = chk,							\
	.stage = fn##_stage,						\
	.commit = nft_commit,						\
	.abort = nft_abort,						\
	.remove = fn##_remove,						\
	.held = fn##_held,						\
	.list = fn##_list,						\
	.set_object = fn##_set_object,					\
	.update = fn##_update,						\
	.tables = fn##_tables,						\
	.generation = fn##_generation,					\
}

DEFINE_TARGET_OPS(nft_emulated, cgfw_nft_emulated, NFPROTO_INET,
		  "nft-emulated", emulated_check);
DEFINE_TARGET_OPS(nft_native, cgfw_nft_native, NFPROTO_CGROUP, "nft-native",
		  native_check);

