// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The conntrack keeper of a bpf table whose programs read ct
 * (compile/ct.c): nf_conntrack tracks a network namespace only while a
 * netfilter user holds it (nf_ct_netns_get()), and a CGROUP_SKB program
 * is none. A ct expression is, from the moment its rule is made until it
 * is deleted, in a chain without a hook as well as in one with. So the
 * table NAME has beside it
 *
 *	table inet cgfw-ct-NAME { chain keep { ct state != 0 } }
 *
 * with the comment "cgfw: keeps connection tracking on for bpf table
 * NAME" (only a table with it is taken for a keeper). It is made before
 * an apply switches any link to the programs that need it, held like the
 * nft targets' tables (nft/nft.h: owned and persistent, so that "nft
 * flush ruleset" passes it by while cgfw daemon holds it), and deleted
 * once no program of the table reads ct any more (backend.c,
 * tidy_keepers()): a kill in between leaves conntrack on, never off.
 * "cgfw list" says when the keeper of a table that needs one is gone
 * (bpf/read.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "bpf/table.h"
#include "nl/netlink.h"

#define KEEPER_PREFIX	"cgfw-ct-"
#define KEEPER_CHAIN	"keep"
/* its comment, which tells it from a table of that name of another's */
#define KEEPER_COMMENT	"cgfw: keeps connection tracking on for bpf table "
/* NFT_TABLE_F_OWNER | NFT_TABLE_F_PERSIST (Linux 6.9), as nft/nft.h */
#define KEEPER_HELD	(NFT_TABLE_F_OWNER | 0x4)

static int keeper_name(char *buf, size_t size, const char *table)
{
	return (size_t)snprintf(buf, size, KEEPER_PREFIX "%s", table) < size &&
	       strlen(buf) < NFT_TABLE_MAXNAMELEN ? 0 : -ENAMETOOLONG;
}

/* Does table @t carry a keeper's comment? */
static bool is_keeper(const struct nftnl_table *t)
{
	const struct nftnl_udata *a;
	uint32_t len = 0;
	const void *ud = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &len);

	if (!ud)
		return false;
	nftnl_udata_for_each_data(ud, len, a) {
		if (nftnl_udata_type(a) == 0 /* NFTNL_UDATA_TABLE_COMMENT */ &&
		    nftnl_udata_len(a) > strlen(KEEPER_COMMENT) &&
		    !strncmp(nftnl_udata_get(a), KEEPER_COMMENT,
			     strlen(KEEPER_COMMENT)))
			return true;
	}
	return false;
}

static int keeper_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct cgfw_keepers *ns = data;
	const char *name;
	char **v;

	if (!t || nftnl_table_nlmsg_parse(nlh, t) < 0) {
		ns->err = t ? -EINVAL : -ENOMEM;
		goto out;
	}
	name = nftnl_table_get_str(t, NFTNL_TABLE_NAME);
	if (!name || strncmp(name, KEEPER_PREFIX, strlen(KEEPER_PREFIX)) ||
	    !is_keeper(t))
		goto out;
	v = realloc(ns->v, (ns->n + 1) * sizeof(*v));
	if (!v) {
		ns->err = -ENOMEM;
		goto out;
	}
	ns->v = v;
	v[ns->n] = strdup(name + strlen(KEEPER_PREFIX));
	if (!v[ns->n])
		ns->err = -ENOMEM;
	else
		ns->n++;
out:
	if (t)
		nftnl_table_free(t);
	return MNL_CB_OK;
}

void cgfw_bpf_keepers_release(struct cgfw_keepers *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
}

int cgfw_bpf_keepers(struct cgfw_ctx *ctx, struct cgfw_keepers *ns)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	int ret;

	memset(ns, 0, sizeof(*ns));
	ret = cgfw_nl_open(ctx, &nl);
	if (ret)
		return ret;
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, NFPROTO_INET,
				    NLM_F_DUMP, 1);
	ret = cgfw_nl_dump(nl, nlh, keeper_cb, ns);
	mnl_socket_close(nl);
	ret = ret ? : ns->err;
	if (ret)
		cgfw_bpf_keepers_release(ns);
	return ret;
}

int cgfw_bpf_ct_kept(struct cgfw_ctx *ctx, const char *table)
{
	struct cgfw_keepers ns;
	size_t i;
	int ret = cgfw_bpf_keepers(ctx, &ns);

	for (i = 0; !ret && i < ns.n; i++)
		if (!strcmp(ns.v[i], table))
			ret = 1;
	if (ret >= 0)
		cgfw_bpf_keepers_release(&ns);
	return ret;
}

/* Message @type of @obj (built by @build) into @nb. */
#define PUT(nb, type, flags, build, obj)				\
	do {								\
		struct nlmsghdr *_h = cgfw_nl_batch_next(nb, type,	\
			NFPROTO_INET, flags, NULL, "the conntrack keeper"); \
		if (_h) {						\
			build(_h, obj);					\
			cgfw_nl_batch_done(nb);				\
		}							\
	} while (0)

/* The keeper's table, chain and rule into @nb. */
static int keeper_batch(struct cgfw_nl_batch *nb, const char *kname,
			uint32_t flags)
{
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFT_USERDATA_MAXLEN);
	struct nftnl_table *t = nftnl_table_alloc();
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *e = nftnl_expr_alloc("ct");
	char comment[NFT_USERDATA_MAXLEN];
	uint32_t zero = 0;
	int ret = -ENOMEM;

	if (!ud || !t || !c || !r || !e)
		goto out;
	snprintf(comment, sizeof(comment), KEEPER_COMMENT "%s",
		 kname + strlen(KEEPER_PREFIX));
	if (!nftnl_udata_put_strz(ud, 0 /* NFTNL_UDATA_TABLE_COMMENT */,
				  comment)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, kname);
	nftnl_table_set_data(t, NFTNL_TABLE_USERDATA, nftnl_udata_buf_data(ud),
			     nftnl_udata_buf_len(ud));
	if (flags)
		nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, flags);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, kname);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, KEEPER_CHAIN);
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, kname);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, KEEPER_CHAIN);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	/* "ct state != 0", every packet: for people who list it */
	e = nftnl_expr_alloc("cmp");
	if (!e)
		goto out;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_NEQ);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, &zero, sizeof(zero));
	nftnl_rule_add_expr(r, e);
	e = NULL;
	PUT(nb, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL,
	    nftnl_table_nlmsg_build_payload, t);
	PUT(nb, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL,
	    nftnl_chain_nlmsg_build_payload, c);
	PUT(nb, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
	    nftnl_rule_nlmsg_build_payload, r);
	ret = nb->err;
out:
	if (e)
		nftnl_expr_free(e);
	if (r)
		nftnl_rule_free(r);
	if (c)
		nftnl_chain_free(c);
	if (t)
		nftnl_table_free(t);
	if (ud)
		nftnl_udata_buf_free(ud);
	return ret;
}

static int send_keeper(struct cgfw_ctx *ctx, const char *kname,
		       uint32_t flags)
{
	struct cgfw_nl_batch nb;
	struct mnl_socket *nl;
	int ret;

	ret = cgfw_nl_writer(ctx, &nl);
	if (ret)
		return ret;
	ret = cgfw_nl_batch_init(&nb);
	ret = ret ? : keeper_batch(&nb, kname, flags);
	ret = ret ? : cgfw_nl_batch_commit(ctx, nl, &nb, NULL);
	cgfw_nl_batch_release(&nb);
	cgfw_nl_writer_close(ctx, nl);
	return ret;
}

/*
 * A context that holds its tables (cgfw daemon) takes over a keeper that
 * no one holds, as the nft targets take over their tables; one that
 * another process holds, or a kernel that cannot hold, is left as it is.
 */
static void take_keeper(struct cgfw_ctx *ctx, const char *kname)
{
	struct nftnl_table *t = nftnl_table_alloc();
	size_t mark = cgfw_err_mark(ctx);
	struct cgfw_nl_batch nb;
	struct mnl_socket *nl;

	if (!t)
		return;
	if (!cgfw_nl_writer(ctx, &nl)) {
		if (!cgfw_nl_batch_init(&nb)) {
			nftnl_table_set_str(t, NFTNL_TABLE_NAME, kname);
			nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, KEEPER_HELD);
			PUT(&nb, NFT_MSG_NEWTABLE, 0,
			    nftnl_table_nlmsg_build_payload, t);
			cgfw_nl_batch_commit(ctx, nl, &nb, NULL);
			cgfw_nl_batch_release(&nb);
		}
		cgfw_nl_writer_close(ctx, nl);
	}
	cgfw_err_drop(ctx, mark);
	nftnl_table_free(t);
}

int cgfw_bpf_keep_ct(struct cgfw_ctx *ctx, const char *table,
		     const struct cgfw_source *src, const struct cgfw_loc *loc,
		     bool *made)
{
	char kname[NFT_TABLE_MAXNAMELEN + 16];
	size_t mark = cgfw_err_mark(ctx);
	int ret;

	*made = false;
	ret = keeper_name(kname, sizeof(kname), table);
	if (ret) {
		cgfw_err_at(ctx, src, loc, "table name '%s' is too long for its conntrack keeper (table inet %s...); use a shorter name",
			 table, KEEPER_PREFIX);
		return ret;
	}
	ret = cgfw_bpf_ct_kept(ctx, table);
	if (ret < 0) {
		cgfw_err_at(ctx, src, loc, "cannot read the nf_tables tables, to find the conntrack keeper of table '%s': %s",
			 table, strerror(-ret));
		return ret;
	}
	if (ret > 0 && ctx->hold_tables)
		take_keeper(ctx, kname);
	if (ret)
		return 0;
	ret = send_keeper(ctx, kname, KEEPER_HELD);
	if (ret == -EOPNOTSUPP || ret == -EINVAL) {	/* before Linux 6.9 */
		cgfw_err_drop(ctx, mark);
		ret = send_keeper(ctx, kname, 0);
	}
	if (ret == -EEXIST) {
		cgfw_err_drop(ctx, mark);
		cgfw_err_at(ctx, src, loc, "cannot make table inet %s, which keeps connection tracking on for the ct rules of table '%s': a table of that name that cgfw did not make is there; delete it, or rename table '%s'",
			 kname, table, table);
	} else if (ret) {
		cgfw_err_at(ctx, src, loc, "cannot make table inet %s, which keeps connection tracking on for the ct rules of table '%s': %s",
			 kname, table, strerror(-ret));
	}
	if (ret)
		return ret;
	*made = true;
	return 0;
}

int cgfw_bpf_unkeep_ct(struct cgfw_ctx *ctx, const char *table)
{
	char kname[NFT_TABLE_MAXNAMELEN + 16];
	struct nftnl_table *t = nftnl_table_alloc();
	size_t mark = cgfw_err_mark(ctx);
	struct cgfw_nl_batch nb;
	struct mnl_socket *nl = NULL;
	int ret;

	ret = t ? keeper_name(kname, sizeof(kname), table) : -ENOMEM;
	ret = ret ? : cgfw_nl_writer(ctx, &nl);
	ret = ret ? : cgfw_nl_batch_init(&nb);
	if (ret)
		goto out;
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, kname);
	PUT(&nb, NFT_MSG_DELTABLE, 0, nftnl_table_nlmsg_build_payload, t);
	ret = cgfw_nl_batch_commit(ctx, nl, &nb, NULL);
	cgfw_nl_batch_release(&nb);
	if (ret == -EPERM)	/* conntrack stays on: nothing fails open */
		cgfw_log(ctx, CGFW_LOG_INFO,
			 "table inet %s, the conntrack keeper of table '%s', is held by another process (cgfw daemon): it stays until that process lets it go",
			 kname, table);
	if (ret == -ENOENT || ret == -EPERM) {
		cgfw_err_drop(ctx, mark);
		ret = 0;
	}
out:
	if (nl)
		cgfw_nl_writer_close(ctx, nl);
	if (t)
		nftnl_table_free(t);
	return ret;
}
