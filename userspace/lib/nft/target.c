// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The nft backend (DESIGN.md 2.2), with its two targets.
 *
 * Native, on kernels with the cgroup table family (kernel-patches/): table
 * "cgroup web" is table web of family cgroup, and each bound chain is a
 * base chain with the cgroup's id on its hook (NFTA_HOOK_CGROUP_ID), at
 * the points where cgroup BPF programs run. Nothing is added to the
 * user's chains.
 *
 * Emulated, for other kernels: table "cgroup web" becomes "inet cgfw_web".
 * Each chain bound to a cgroup becomes a regular chain holding the user's
 * rules, a base chain on output (egress) or input (ingress), at the user's
 * priority, that matches the socket's cgroup once per packet, and a chain
 * that runs the user's chain and then its policy:
 *
 *	chain cgfw_hook_egress {
 *		type filter hook output priority 0; policy accept;
 *		comment "cgfw egress cgroup /sys/fs/cgroup/web chain egress ...";
 *		socket cgroupv2 level 1 == <id of web> goto cgfw_run_egress
 *	}
 *	chain cgfw_run_egress { jump egress; counter drop }
 *	chain egress { <the user's rules> }
 *
 * However the user's chain ends (its end, "return", or the end of a chain
 * it went to with "goto"), nft comes back to cgfw_run_egress and applies
 * the policy, as it would in a base chain. Everything goes to the kernel
 * in one batch, which deletes the previous version of the table too: all
 * or nothing.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <limits.h>
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
#include <linux/netfilter/nfnetlink.h>
#include <nftables/libnftables.h>

#include "backend.h"
#include "front/compile.h"
#include "nft/nft.h"
#include "nl/netlink.h"

#define CHAIN_PREFIX	"cgfw_"		/* reserved for the chains below */
#define HOOK_PREFIX	"cgfw_hook_"	/* the base chain of a bound chain */
#define RUN_PREFIX	"cgfw_run_"	/* runs it, then its policy */
#define OWNER_MARK	"cgfw: "	/* table comment of our tables */
#define NAME_MAX_LEN	(NFT_NAME_MAXLEN - 1)

/* Where a backend of this file puts tables. */
struct nft_target {
	const char *backend;	/* as "cgfw list" names it */
	uint16_t family;
	const char *family_name;
	const char *prefix;	/* of the kernel's table names */
	bool native;		/* cgroup family: base chains bound by id */
	bool dispatch;		/* bound chains run from cgfw_hook_C chains */
};

static const struct nft_target emul_target = {
	.backend = "nft-emulated", .family = NFPROTO_INET,
	.family_name = "inet", .prefix = "cgfw_",
	.dispatch = true,
};

static const struct nft_target native_target = {
	.backend = "nft-native", .family = NFPROTO_CGROUP,
	.family_name = "cgroup", .prefix = "",
	.native = true,
};

/* Tables cgfw renders for nft to print (native_render) */
static const struct nft_target render_target = {
	.backend = "render", .family = NFPROTO_INET,
	.family_name = "inet", .prefix = "",
};

/* libnftnl's destructors do not take NULL */
#define DEFINE_NULL_SAFE_FREE(type)				\
	static inline void free_##type(struct nftnl_##type *p)	\
	{							\
		if (p)						\
			nftnl_##type##_free(p);			\
	}
DEFINE_NULL_SAFE_FREE(chain)
DEFINE_NULL_SAFE_FREE(rule)
DEFINE_NULL_SAFE_FREE(expr)

static int kernel_table_name(struct cgfw_ctx *ctx, const struct nft_target *tg,
			     const struct ir_table *t,
			     const struct cgfw_source *src, char *buf,
			     size_t size)
{
	if ((size_t)snprintf(buf, size, "%s%s", tg->prefix, t->name) >= size ||
	    strlen(buf) > NAME_MAX_LEN) {
		ctx_err_at(ctx, src, &t->loc,
			   "table name '%s' is too long; use at most %zu characters",
			   t->name, NAME_MAX_LEN - strlen(tg->prefix));
		return -ENAMETOOLONG;
	}
	return 0;
}

/* ---- reading what is installed ---- */

struct owned {
	char *kname;
	char *comment;
};

struct owned_list {
	const struct nft_target *tg;
	struct owned *v;
	size_t n;
	int err;
};

static const char *udata_comment(const void *data, uint32_t len)
{
	const struct nftnl_udata *attr;

	nftnl_udata_for_each_data(data, len, attr) {
		if (nftnl_udata_type(attr) == 0 && nftnl_udata_len(attr) &&
		    ((const char *)nftnl_udata_get(attr))
			    [nftnl_udata_len(attr) - 1] == '\0')
			return nftnl_udata_get(attr);
	}
	return NULL;
}

static int owned_cb(const struct nlmsghdr *nlh, void *data)
{
	struct owned_list *ol = data;
	struct nftnl_table *t = nftnl_table_alloc();
	const char *name, *comment = NULL;
	const void *ud;
	uint32_t udlen;
	struct owned *v;

	if (!t || nftnl_table_nlmsg_parse(nlh, t) < 0)
		goto out;
	name = nftnl_table_get_str(t, NFTNL_TABLE_NAME);
	if (nftnl_table_get_u32(t, NFTNL_TABLE_FAMILY) != ol->tg->family ||
	    strncmp(name, ol->tg->prefix, strlen(ol->tg->prefix)))
		goto out;
	ud = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &udlen);
	if (ud)
		comment = udata_comment(ud, udlen);
	if (!comment || strncmp(comment, OWNER_MARK, strlen(OWNER_MARK)))
		goto out;	/* a table cgfw did not make */
	v = realloc(ol->v, (ol->n + 1) * sizeof(*v));
	if (!v) {
		ol->err = -ENOMEM;
		goto out;
	}
	ol->v = v;
	v[ol->n].kname = strdup(name);
	v[ol->n].comment = strdup(comment);
	if (!v[ol->n].kname || !v[ol->n].comment)
		ol->err = -ENOMEM;
	ol->n++;
out:
	if (t)
		nftnl_table_free(t);
	return MNL_CB_OK;
}

static void owned_release(struct owned_list *ol)
{
	size_t i;

	for (i = 0; i < ol->n; i++) {
		free(ol->v[i].kname);
		free(ol->v[i].comment);
	}
	free(ol->v);
	memset(ol, 0, sizeof(*ol));
}

/* The cgfw tables of this network namespace. */
static int owned_tables(struct mnl_socket *nl, const struct nft_target *tg,
			struct owned_list *ol)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int ret;

	memset(ol, 0, sizeof(*ol));
	ol->tg = tg;
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, tg->family,
				    NLM_F_DUMP, 1);
	ret = nl_dump(nl, nlh, owned_cb, ol);
	return ol->err ? : ret;
}

static bool owned_has(const struct owned_list *ol, const char *kname)
{
	size_t i;

	for (i = 0; i < ol->n; i++)
		if (!strcmp(ol->v[i].kname, kname))
			return true;
	return false;
}

/* Is there a table @kname at all (ours or not)? */
static int table_exists(struct mnl_socket *nl, const struct nft_target *tg,
			const char *kname)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;
	int ret;

	if (!t)
		return -ENOMEM;
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, kname);
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, tg->family,
				    NLM_F_ACK, 1);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	ret = nl_dump(nl, nlh, NULL, NULL);
	if (!ret)
		return 1;
	return ret == -ENOENT ? 0 : ret;
}

/* ---- building the batch ---- */

static int set_comment(void *obj, int attr,
		       int (*setter)(void *, uint16_t, const void *, uint32_t),
		       const char *comment)
{
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFT_USERDATA_MAXLEN);
	int ret = 0;

	if (!ud)
		return -ENOMEM;
	if (!nftnl_udata_put_strz(ud, 0, comment))
		ret = -E2BIG;
	else
		setter(obj, attr, nftnl_udata_buf_data(ud),
		       nftnl_udata_buf_len(ud));
	nftnl_udata_buf_free(ud);
	return ret;
}

static int table_setter(void *o, uint16_t a, const void *d, uint32_t l)
{
	return nftnl_table_set_data(o, a, d, l);
}

static int chain_setter(void *o, uint16_t a, const void *d, uint32_t l)
{
	return nftnl_chain_set_data(o, a, d, l);
}

struct anon_map {
	const char *name;	/* as read back, e.g. "__set0" */
	uint32_t id;		/* NFTA_SET_ID in this batch */
};

struct emit {
	const struct nft_target *tg;
	struct cgfw_ctx *ctx;
	const struct cgfw_ruleset *rs;
	struct nl_batch nb;
	char kname[NFT_NAME_MAXLEN + 8];
	struct anon_map *anon;
	size_t n_anon;
	uint32_t next_set_id;
	char *scratch;		/* for cloning rules: 64 KiB */
	int err;
};

#define SCRATCH_SIZE 65536

/* Keep the first error of the batch being built. */
static void emit_error(struct emit *em, int err)
{
	if (err && !em->err)
		em->err = err;
}


static uint32_t anon_id(const struct emit *em, const char *name)
{
	size_t i;

	for (i = 0; name && i < em->n_anon; i++)
		if (!strcmp(em->anon[i].name, name))
			return em->anon[i].id;
	return 0;
}

static void emit_table(struct emit *em, const struct ir_table *t, bool del)
{
	struct nftnl_table *nt = nftnl_table_alloc();
	struct nlmsghdr *nlh;
	char comment[NFT_NAME_MAXLEN + 32];

	if (!nt) {
		emit_error(em, -ENOMEM);
		return;
	}
	nftnl_table_set_str(nt, NFTNL_TABLE_NAME, em->kname);
	if (del) {
		nlh = nl_batch_next(&em->nb, NFT_MSG_DELTABLE, em->tg->family,
				    0, &t->loc, "the replacement of the table");
		if (nlh) {
			nftnl_table_nlmsg_build_payload(nlh, nt);
			nl_batch_done(&em->nb);
		}
	}
	snprintf(comment, sizeof(comment), OWNER_MARK "table cgroup %s",
		 t->name);
	emit_error(em, set_comment(nt, NFTNL_TABLE_USERDATA, table_setter,
				   comment));
	nlh = nl_batch_next(&em->nb, NFT_MSG_NEWTABLE, em->tg->family,
			    NLM_F_CREATE | NLM_F_EXCL, &t->loc, "the table");
	if (nlh) {
		nftnl_table_nlmsg_build_payload(nlh, nt);
		nl_batch_done(&em->nb);
	}
	nftnl_table_free(nt);
}

/* A regular chain: the user's @c under @name (its comment kept). */
static void emit_chain(struct emit *em, const struct ir_chain *c,
		       const char *name)
{
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct nlmsghdr *nlh;
	const void *ud;
	uint32_t udlen;

	if (!nc) {
		emit_error(em, -ENOMEM);
		return;
	}
	nftnl_chain_set_str(nc, NFTNL_CHAIN_TABLE, em->kname);
	nftnl_chain_set_str(nc, NFTNL_CHAIN_NAME, name);
	ud = nftnl_chain_get_data(c->nl, NFTNL_CHAIN_USERDATA, &udlen);
	if (ud && !strcmp(name, c->name))
		nftnl_chain_set_data(nc, NFTNL_CHAIN_USERDATA, ud, udlen);
	nlh = nl_batch_next(&em->nb, NFT_MSG_NEWCHAIN, em->tg->family,
			    NLM_F_CREATE | NLM_F_EXCL, &c->loc, "the chain");
	if (nlh) {
		nftnl_chain_nlmsg_build_payload(nlh, nc);
		nl_batch_done(&em->nb);
	}
	nftnl_chain_free(nc);
}

/*
 * A set and its elements, built from the IR's set. libnftnl exports no set
 * clone, so the batch's names (table, "__set%d" for an anonymous set, the
 * set id) are put on the IR's set while its messages are built, and taken
 * off again before this returns: the compiled ruleset is left as it was.
 */
static void emit_set(struct emit *em, const struct ir_set *s)
{
	struct nftnl_set *ns = (struct nftnl_set *)s->nl;
	struct nftnl_set_elems_iter *it;
	char *table = NULL, *name = NULL;
	struct anon_map *am;
	struct nlmsghdr *nlh;
	int more;

	table = strdup(nftnl_set_get_str(ns, NFTNL_SET_TABLE));
	name = strdup(nftnl_set_get_str(ns, NFTNL_SET_NAME));
	am = realloc(em->anon, (em->n_anon + 1) * sizeof(*am));
	if (!table || !name || !am) {
		free(am);
		emit_error(em, -ENOMEM);
		goto out;
	}
	em->anon = am;
	em->next_set_id++;
	if (s->anonymous) {
		/* rules refer to it by this batch's id (fix_expr) */
		am[em->n_anon].name = nftnl_set_get_str(s->nl, NFTNL_SET_NAME);
		am[em->n_anon].id = em->next_set_id;
		em->n_anon++;
	}

	nftnl_set_set_str(ns, NFTNL_SET_TABLE, em->kname);
	nftnl_set_set_u32(ns, NFTNL_SET_ID, em->next_set_id);
	if (s->anonymous)
		nftnl_set_set_str(ns, NFTNL_SET_NAME, "__set%d");
	nlh = nl_batch_next(&em->nb, NFT_MSG_NEWSET, em->tg->family,
			    NLM_F_CREATE | NLM_F_EXCL, NULL, "a set");
	if (nlh) {
		nftnl_set_nlmsg_build_payload(nlh, ns);
		nl_batch_done(&em->nb);
	}
	it = nftnl_set_elems_iter_create(ns);
	if (!it) {
		emit_error(em, -ENOMEM);
		goto restore;
	}
	/* elements in as many messages as they need */
	while (nftnl_set_elems_iter_cur(it)) {
		nlh = nl_batch_next(&em->nb, NFT_MSG_NEWSETELEM, em->tg->family,
				    NLM_F_CREATE | NLM_F_EXCL, NULL,
				    "the elements of a set");
		if (!nlh)
			break;
		more = nftnl_set_elems_nlmsg_build_payload_iter(nlh, it);
		nl_batch_done(&em->nb);
		if (more <= 0)
			break;
	}
	nftnl_set_elems_iter_destroy(it);
restore:
	nftnl_set_set_str(ns, NFTNL_SET_TABLE, table);
	nftnl_set_set_str(ns, NFTNL_SET_NAME, name);
	nftnl_set_unset(ns, NFTNL_SET_ID);
	if (s->anonymous)	/* the map must not point at freed names */
		em->anon[em->n_anon - 1].name = nftnl_set_get_str(ns,
							NFTNL_SET_NAME);
out:
	free(table);
	free(name);
}

/*
 * Make an expression read from the kernel fit to be sent back: point set
 * references at this batch's sets, and drop a quota's "depleted" flag,
 * which dumps report and NEWRULE refuses (EINVAL); the consumed bytes
 * come capped at the quota, so the copy is depleted from its first packet.
 */
static int fix_expr(struct nftnl_expr *e, void *data)
{
	struct emit *em = data;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	uint32_t id;

	if (!strcmp(name, "lookup")) {
		id = anon_id(em, nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET));
		if (id) {
			nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, "__set%d");
			nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, id);
		}
	} else if (!strcmp(name, "dynset")) {
		id = anon_id(em,
			     nftnl_expr_get_str(e, NFTNL_EXPR_DYNSET_SET_NAME));
		if (id) {
			nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME,
					   "__set%d");
			nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SET_ID, id);
		}
	} else if (!strcmp(name, "objref") &&
		   nftnl_expr_is_set(e, NFTNL_EXPR_OBJREF_SET_NAME)) {
		id = anon_id(em,
			     nftnl_expr_get_str(e, NFTNL_EXPR_OBJREF_SET_NAME));
		if (id) {
			nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_SET_NAME,
					   "__set%d");
			nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_SET_ID, id);
		}
	} else if (!strcmp(name, "quota")) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_QUOTA_FLAGS,
				   nftnl_expr_get_u32(e, NFTNL_EXPR_QUOTA_FLAGS) &
				   ~NFT_QUOTA_F_DEPLETED);
	}
	return 0;
}

/* A private copy of a rule: through its own netlink encoding. */
static struct nftnl_rule *rule_clone(struct emit *em,
				     const struct nftnl_rule *r)
{
	struct nftnl_rule *copy = nftnl_rule_alloc();
	struct nlmsghdr *nlh;

	if (!copy)
		return NULL;
	nlh = nftnl_nlmsg_build_hdr(em->scratch, NFT_MSG_NEWRULE,
				    NFPROTO_INET, 0, 0);
	nftnl_rule_nlmsg_build_payload(nlh, (struct nftnl_rule *)r);
	if (nlh->nlmsg_len > SCRATCH_SIZE ||
	    nftnl_rule_nlmsg_parse(nlh, copy) < 0) {
		nftnl_rule_free(copy);
		return NULL;
	}
	return copy;
}

static void emit_nl_rule(struct emit *em, struct nftnl_rule *r,
			 const struct cgfw_loc *loc)
{
	struct nlmsghdr *nlh;

	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, em->kname);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, em->tg->family);
	nftnl_rule_unset(r, NFTNL_RULE_HANDLE);
	nftnl_rule_unset(r, NFTNL_RULE_POSITION);
	nlh = nl_batch_next(&em->nb, NFT_MSG_NEWRULE, em->tg->family,
			    NLM_F_CREATE | NLM_F_APPEND, loc, "the rule");
	if (nlh) {
		nftnl_rule_nlmsg_build_payload(nlh, r);
		nl_batch_done(&em->nb);
	}
}

static void emit_rules(struct emit *em, const struct ir_chain *c)
{
	const struct ir_rule *r;
	struct nftnl_rule *copy;

	list_for_each_entry(r, &c->rules, list) {
		copy = rule_clone(em, r->nl);
		if (!copy) {
			emit_error(em, -ENOMEM);
			return;
		}
		nftnl_expr_foreach(copy, fix_expr, em);
		emit_nl_rule(em, copy, r->loc.line ? &r->loc : &c->loc);
		nftnl_rule_free(copy);
	}
}

static struct nftnl_expr *verdict_expr(uint32_t verdict, const char *chain)
{
	struct nftnl_expr *e = nftnl_expr_alloc("immediate");

	if (!e)
		return NULL;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, verdict);
	if (chain)
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
	return e;
}

/* chain cgfw_run_C { jump C; counter <policy> } */
static void emit_run_chain_rules(struct emit *em, const struct ir_chain *c)
{
	struct nftnl_rule *jump = nftnl_rule_alloc();
	struct nftnl_rule *pol = nftnl_rule_alloc();
	struct nftnl_expr *j = verdict_expr(NFT_JUMP, c->name);
	struct nftnl_expr *cnt = nftnl_expr_alloc("counter");
	struct nftnl_expr *v = verdict_expr(c->policy, NULL);
	char name[NFT_NAME_MAXLEN + 16];

	if (!jump || !pol || !j || !cnt || !v) {
		emit_error(em, -ENOMEM);
		free_rule(jump);
		free_rule(pol);
		free_expr(j);
		free_expr(cnt);
		free_expr(v);
		return;
	}
	snprintf(name, sizeof(name), RUN_PREFIX "%s", c->name);
	nftnl_rule_set_str(jump, NFTNL_RULE_CHAIN, name);
	nftnl_rule_add_expr(jump, j);
	emit_nl_rule(em, jump, &c->loc);
	nftnl_rule_set_str(pol, NFTNL_RULE_CHAIN, name);
	nftnl_rule_add_expr(pol, cnt);
	nftnl_rule_add_expr(pol, v);
	emit_nl_rule(em, pol, &c->loc);
	nftnl_rule_free(jump);
	nftnl_rule_free(pol);
}

/* chain cgfw_hook_C: output|input, "socket cgroupv2 level L == id goto C" */
static void emit_dispatch(struct emit *em, const struct ir_chain *c)
{
	char name[NFT_NAME_MAXLEN + 16], comment[NFT_USERDATA_MAXLEN];
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *sk = nftnl_expr_alloc("socket");
	struct nftnl_expr *cmp = nftnl_expr_alloc("cmp");
	struct nftnl_expr *v;
	struct nlmsghdr *nlh;
	uint64_t id = c->cgroup.id;

	snprintf(name, sizeof(name), RUN_PREFIX "%s", c->name);
	v = verdict_expr(NFT_GOTO, name);
	if (!nc || !r || !sk || !cmp || !v) {
		emit_error(em, -ENOMEM);
		goto out;
	}
	snprintf(name, sizeof(name), HOOK_PREFIX "%s", c->name);
	if ((size_t)snprintf(comment, sizeof(comment),
			     "cgfw %s cgroup %s chain %s policy %s",
			     cgfw_dir_str(c->dir), c->cgroup.path, c->name,
			     c->policy == NF_DROP ? "drop" : "accept") >=
		    sizeof(comment) - 4 ||
	    strlen(name) > NAME_MAX_LEN) {
		ctx_err_at(em->ctx, &em->rs->src, &c->loc,
			   "chain name '%s' or cgroup path '%s' is too long to record; shorten it",
			   c->name, c->cgroup.path);
		emit_error(em, -ENAMETOOLONG);
		goto out;
	}
	nftnl_chain_set_str(nc, NFTNL_CHAIN_TABLE, em->kname);
	nftnl_chain_set_str(nc, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_str(nc, NFTNL_CHAIN_TYPE, "filter");
	nftnl_chain_set_u32(nc, NFTNL_CHAIN_HOOKNUM,
			    c->dir == CGFW_EGRESS ? NF_INET_LOCAL_OUT :
						    NF_INET_LOCAL_IN);
	nftnl_chain_set_s32(nc, NFTNL_CHAIN_PRIO, c->priority);
	nftnl_chain_set_u32(nc, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	emit_error(em, set_comment(nc, NFTNL_CHAIN_USERDATA, chain_setter,
				   comment));
	nlh = nl_batch_next(&em->nb, NFT_MSG_NEWCHAIN, NFPROTO_INET,
			    NLM_F_CREATE | NLM_F_EXCL, &c->loc,
			    "the hook of the chain");
	if (!nlh)
		goto out;
	nftnl_chain_nlmsg_build_payload(nlh, nc);
	nl_batch_done(&em->nb);

	nftnl_expr_set_u32(sk, NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_CGROUPV2);
	nftnl_expr_set_u32(sk, NFTNL_EXPR_SOCKET_DREG, NFT_REG_1);
	nftnl_expr_set_u32(sk, NFTNL_EXPR_SOCKET_LEVEL, c->cgroup.level);
	nftnl_expr_set_u32(cmp, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(cmp, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
	nftnl_expr_set(cmp, NFTNL_EXPR_CMP_DATA, &id, sizeof(id));
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, name);
	nftnl_rule_add_expr(r, sk);
	nftnl_rule_add_expr(r, cmp);
	nftnl_rule_add_expr(r, v);
	sk = cmp = v = NULL;
	emit_nl_rule(em, r, &c->loc);
out:
	free_chain(nc);
	free_rule(r);
	free_expr(sk);
	free_expr(cmp);
	free_expr(v);
}

/* A bound chain of the native target: a base chain with the cgroup's id. */
static void emit_base_chain(struct emit *em, const struct ir_chain *c)
{
	struct nlattr *hook, *counters;
	struct nlmsghdr *nlh;
	const void *ud;
	uint32_t udlen;

	nlh = nl_batch_next(&em->nb, NFT_MSG_NEWCHAIN, em->tg->family,
			    NLM_F_CREATE | NLM_F_EXCL, &c->loc, "the chain");
	if (!nlh)
		return;
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, em->kname);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, c->name);
	hook = mnl_attr_nest_start(nlh, NFTA_CHAIN_HOOK);
	mnl_attr_put_u32(nlh, NFTA_HOOK_HOOKNUM,
			 htonl(c->dir == CGFW_EGRESS ? NF_CGROUP_EGRESS :
						       NF_CGROUP_INGRESS));
	mnl_attr_put_u32(nlh, NFTA_HOOK_PRIORITY, htonl(c->priority));
	mnl_attr_put_u64(nlh, NFTA_HOOK_CGROUP_ID, htobe64(c->cgroup.id));
	mnl_attr_nest_end(nlh, hook);
	mnl_attr_put_u32(nlh, NFTA_CHAIN_POLICY, htonl(c->policy));
	/* base chain counters count what reaches the policy */
	counters = mnl_attr_nest_start(nlh, NFTA_CHAIN_COUNTERS);
	mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS, 0);
	mnl_attr_put_u64(nlh, NFTA_COUNTER_BYTES, 0);
	mnl_attr_nest_end(nlh, counters);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TYPE, "filter");
	ud = nftnl_chain_get_data(c->nl, NFTNL_CHAIN_USERDATA, &udlen);
	if (ud)
		mnl_attr_put(nlh, NFTA_CHAIN_USERDATA, udlen, ud);
	nl_batch_done(&em->nb);
}

static int check_names(struct emit *em, const struct ir_table *t)
{
	const struct ir_chain *c;

	if (!em->tg->dispatch)
		return 0;
	list_for_each_entry(c, &t->chains, list) {
		if (!strncmp(c->name, CHAIN_PREFIX, strlen(CHAIN_PREFIX))) {
			ctx_err_at(em->ctx, &em->rs->src, &c->loc,
				   "chain names starting with '%s' are cgfw's own; rename chain '%s'",
				   CHAIN_PREFIX, c->name);
			return -EINVAL;
		}
	}
	return 0;
}

static void emit_ir_table(struct emit *em, const struct ir_table *t,
			  bool replace)
{
	bool dispatch = em->tg->dispatch;
	const struct ir_chain *c;
	const struct ir_set *s;

	em->n_anon = 0;	/* anonymous set names are per table */
	emit_table(em, t, replace);
	/* chains first: verdict maps and jumps refer to them */
	list_for_each_entry(c, &t->chains, list) {
		if (c->base && em->tg->native) {
			emit_base_chain(em, c);
			continue;
		}
		emit_chain(em, c, c->name);
		if (c->base && dispatch) {
			char run[NFT_NAME_MAXLEN + 16];

			snprintf(run, sizeof(run), RUN_PREFIX "%s", c->name);
			emit_chain(em, c, run);
		}
	}
	list_for_each_entry(s, &t->sets, list)
		emit_set(em, s);
	list_for_each_entry(c, &t->chains, list) {
		emit_rules(em, c);
		if (c->base && dispatch)
			emit_run_chain_rules(em, c);
	}
	list_for_each_entry(c, &t->chains, list)
		if (c->base && dispatch)
			emit_dispatch(em, c);
}

/* Build the tables of @rs for @tg into @em's batch. */
static int emit_ruleset(struct emit *em, struct mnl_socket *nl,
			const struct owned_list *ol)
{
	const struct cgfw_ruleset *rs = em->rs;
	const struct ir_table *t;
	bool mine;
	int ret;

	em->scratch = malloc(SCRATCH_SIZE);
	ret = em->scratch ? nl_batch_init(&em->nb) : -ENOMEM;
	if (ret)
		return ret;
	list_for_each_entry(t, &rs->tables, list) {
		ret = kernel_table_name(em->ctx, em->tg, t, &rs->src, em->kname,
					sizeof(em->kname));
		ret = ret ? : check_names(em, t);
		if (ret)
			return ret;
		mine = ol && owned_has(ol, em->kname);
		if (ol && !mine && table_exists(nl, em->tg, em->kname) > 0) {
			ctx_err_at(em->ctx, &rs->src, &t->loc,
				   "table %s %s exists and was not made by cgfw, so cgfw will not replace it; rename table '%s' or delete that one",
				   em->tg->native ? "cgroup" : "inet", em->kname,
				   t->name);
			return -EEXIST;
		}
		emit_ir_table(em, t, mine);
		if (em->err)
			break;
	}
	ret = em->err;
	if (ret && !em->ctx->err.len)
		ctx_err(em->ctx, "cannot build the nf_tables batch: %s",
			strerror(-ret));
	return ret;
}

static void emit_release(struct emit *em)
{
	nl_batch_release(&em->nb);
	free(em->scratch);
	free(em->anon);
}

static int nft_apply(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		     const struct nft_target *tg)
{
	struct emit em = { .tg = tg, .ctx = ctx, .rs = rs };
	struct mnl_socket *nl;
	struct owned_list ol;
	int ret;

	ret = nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = owned_tables(nl, tg, &ol);
	if (ret) {
		ctx_err(ctx, "cannot list the nf_tables tables: %s",
			strerror(-ret));
		goto out_nl;
	}
	ret = emit_ruleset(&em, nl, &ol);
	ret = ret ? : nl_batch_commit(ctx, nl, &em.nb, &rs->src);
	emit_release(&em);
	owned_release(&ol);
out_nl:
	mnl_socket_close(nl);
	return ret;
}

static int nft_remove(struct cgfw_ctx *ctx, const char *name,
		      const struct nft_target *tg)
{
	static const struct cgfw_source no_src = { .name = "cgfw" };
	char kname[NFT_NAME_MAXLEN + 8];
	struct nftnl_table *nt;
	struct nlmsghdr *nlh;
	struct mnl_socket *nl;
	struct owned_list ol;
	struct nl_batch nb;
	size_t i, n = 0;
	int ret;

	if (name)
		snprintf(kname, sizeof(kname), "%s%s", tg->prefix, name);
	ret = nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = owned_tables(nl, tg, &ol);
	ret = ret ? : nl_batch_init(&nb);
	if (ret)
		goto out_nl;
	for (i = 0; i < ol.n; i++) {
		if (name && strcmp(ol.v[i].kname, kname))
			continue;
		nt = nftnl_table_alloc();
		if (!nt) {
			ret = -ENOMEM;
			goto out;
		}
		nftnl_table_set_str(nt, NFTNL_TABLE_NAME, ol.v[i].kname);
		nlh = nl_batch_next(&nb, NFT_MSG_DELTABLE, tg->family, 0,
				    NULL, "the deletion of a table");
		if (nlh) {
			nftnl_table_nlmsg_build_payload(nlh, nt);
			nl_batch_done(&nb);
		}
		nftnl_table_free(nt);
		n++;
	}
	if (!n)
		ret = name ? -ENOENT : 0;
	else
		ret = nl_batch_commit(ctx, nl, &nb, &no_src);
out:
	nl_batch_release(&nb);
out_nl:
	owned_release(&ol);
	mnl_socket_close(nl);
	return ret;
}

/* ---- listing ---- */

struct chain_dump {
	const char *kname;
	struct inst_table *t;
	int err;
};

/* "cgfw egress cgroup PATH chain NAME policy drop" */
static int parse_hook_comment(const char *s, struct inst_chain *c)
{
	const char *p, *q, *pol;

	if (!strncmp(s, "cgfw egress cgroup ", 19))
		c->dir = CGFW_EGRESS;
	else if (!strncmp(s, "cgfw ingress cgroup ", 20))
		c->dir = CGFW_INGRESS;
	else
		return -EINVAL;
	p = strstr(s, " cgroup ") + 8;
	/* the path may hold blanks: the chain is after the last " chain " */
	for (q = NULL, pol = p; (pol = strstr(pol, " chain ")); pol++)
		q = pol;
	pol = q ? strstr(q, " policy ") : NULL;
	if (!q || !pol)
		return -EINVAL;
	c->cgroup_path = strndup(p, q - p);
	c->name = strndup(q + 7, pol - (q + 7));
	c->policy = !strcmp(pol + 8, "drop") ? NF_DROP : NF_ACCEPT;
	c->base = true;
	return c->cgroup_path && c->name ? 0 : -ENOMEM;
}

static int chain_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct chain_dump *cd = data;
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct inst_chain ic = { 0 }, *v;
	const char *comment;
	const void *ud;
	uint32_t udlen;

	if (!nc || nftnl_chain_nlmsg_parse(nlh, nc) < 0)
		goto out;
	if (strcmp(nftnl_chain_get_str(nc, NFTNL_CHAIN_TABLE), cd->kname) ||
	    !nftnl_chain_is_set(nc, NFTNL_CHAIN_HOOKNUM))
		goto out;
	ud = nftnl_chain_get_data(nc, NFTNL_CHAIN_USERDATA, &udlen);
	comment = ud ? udata_comment(ud, udlen) : NULL;
	if (!comment || parse_hook_comment(comment, &ic)) {
		free(ic.name);
		free(ic.cgroup_path);
		goto out;
	}
	ic.priority = nftnl_chain_get_s32(nc, NFTNL_CHAIN_PRIO);
	v = realloc(cd->t->chains, (cd->t->n_chains + 1) * sizeof(*v));
	if (!v) {
		cd->err = -ENOMEM;
		free(ic.name);
		free(ic.cgroup_path);
		goto out;
	}
	cd->t->chains = v;
	v[cd->t->n_chains++] = ic;
out:
	free_chain(nc);
	return MNL_CB_OK;
}

/*
 * The printer takes the last rule of a bound chain as its policy: move the
 * policy rule of cgfw_run_C (its last line) to the end of chain C.
 */
static int fold_policy(char **text, const char *chain)
{
	char head[NFT_NAME_MAXLEN + 32], *t = *text, *run, *pol, *pol_end;
	char *c, *c_end, *out;
	size_t plen;

	snprintf(head, sizeof(head), "\tchain " RUN_PREFIX "%s {\n", chain);
	run = strstr(t, head);
	snprintf(head, sizeof(head), "\tchain %s {\n", chain);
	c = strstr(t, head);
	if (!run || !c)
		return 0;
	pol_end = strstr(run, "\n\t}\n");	/* end of the last rule */
	c_end = strstr(c, "\n\t}\n");
	if (!pol_end || !c_end)
		return 0;
	for (pol = pol_end; pol > run && pol[-1] != '\n'; pol--)
		;
	plen = pol_end - pol + 1;
	out = malloc(strlen(t) + plen + 1);
	if (!out)
		return -ENOMEM;
	/* up to the end of chain C's last line, the policy, the rest */
	memcpy(out, t, c_end + 1 - t);
	memcpy(out + (c_end + 1 - t), pol, plen);
	strcpy(out + (c_end + 1 - t) + plen, c_end + 1);
	free(t);
	*text = out;
	return 0;
}

/* nft's text of the installed table @kname, with live counters */
typedef int (*table_text_fn)(struct cgfw_ctx *ctx, const char *kname,
			     char **text);

/*
 * cgfw list for the tables of @tg: their bound chains from a chain dump
 * (@chain_cb fills a struct chain_dump), their text from @table_text.
 */
static int nft_list(struct cgfw_ctx *ctx, const char *name,
		    struct cgfw_listing *l, const struct nft_target *tg,
		    mnl_cb_t chain_cb, table_text_fn table_text)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct inst_table t;
	struct chain_dump cd;
	struct nlmsghdr *nlh;
	struct mnl_socket *nl;
	struct owned_list ol;
	const char *uname;
	size_t i, j;
	int ret;

	ret = nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = owned_tables(nl, tg, &ol);
	for (i = 0; !ret && i < ol.n; i++) {
		uname = ol.v[i].kname + strlen(tg->prefix);
		if (name && strcmp(name, uname))
			continue;
		memset(&t, 0, sizeof(t));
		t.backend = tg->backend;
		/* the emulation runs a chain's policy as a rule */
		t.policy_rule = tg->dispatch;
		t.name = strdup(uname);
		if (asprintf(&t.kernel_name, "%s %s", tg->family_name,
			     ol.v[i].kname) < 0)
			t.kernel_name = NULL;
		ret = t.name && t.kernel_name ? 0 : -ENOMEM;
		cd = (struct chain_dump){ .kname = ol.v[i].kname, .t = &t };
		if (!ret) {
			nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETCHAIN,
						    tg->family, NLM_F_DUMP, 1);
			ret = nl_dump(nl, nlh, chain_cb, &cd);
			ret = cd.err ? : ret;
		}
		ret = ret ? : table_text(ctx, ol.v[i].kname, &t.nft_text);
		for (j = 0; !ret && tg->dispatch && j < t.n_chains; j++)
			ret = fold_policy(&t.nft_text, t.chains[j].name);
		ret = ret ? : listing_add(l, &t);
		if (ret)
			inst_table_release(&t);
	}
	if (ret)
		ctx_err(ctx, "cannot read the installed tables: %s",
			strerror(-ret));
	owned_release(&ol);
	mnl_socket_close(nl);
	return ret;
}

/* The declaration of set @set of the user's table @table, as nft prints it */
static int nft_set_decl(struct cgfw_ctx *ctx, const char *table,
			const char *set, char **decl,
			const struct nft_target *tg, table_text_fn table_text)
{
	char kname[NFT_NAME_MAXLEN + 8], *listing = NULL;
	struct mnl_socket *nl;
	struct owned_list ol;
	int ret;

	snprintf(kname, sizeof(kname), "%s%s", tg->prefix, table);
	ret = nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = owned_tables(nl, tg, &ol);
	mnl_socket_close(nl);
	if (!ret && !owned_has(&ol, kname))
		ret = -ENOENT;
	owned_release(&ol);
	ret = ret ? : table_text(ctx, kname, &listing);
	if (ret)
		return ret;
	/* the text is nft's "table inet KNAME { ... }" */
	*decl = set_decl_from_listing(listing, kname, set);
	free(listing);
	return *decl ? 0 : -ENOENT;
}

static int emul_table_text(struct cgfw_ctx *ctx, const char *kname,
			   char **text)
{
	char cmd[NFT_NAME_MAXLEN + 32];

	(void)ctx;
	/* nft's own listing: nft syntax with live counters */
	snprintf(cmd, sizeof(cmd), "list table inet %s", kname);
	return nft_list_text(cmd, text);
}

static int emul_list(struct cgfw_ctx *ctx, const char *name,
		     struct cgfw_listing *l)
{
	return nft_list(ctx, name, l, &emul_target, chain_dump_cb,
			emul_table_text);
}

static int emul_set_decl(struct cgfw_ctx *ctx, const char *table,
			 const char *set, char **decl)
{
	return nft_set_decl(ctx, table, set, decl, &emul_target,
			    emul_table_text);
}

/*
 * The user's element commands, on the tables this backend holds, through
 * nft itself (which merges and checks intervals): one transaction.
 */
static int emul_update(struct cgfw_ctx *ctx, const struct upd_cmds *u)
{
	const struct rw_elem_cmd *c, *first = NULL;
	char kname[NFT_NAME_MAXLEN + 8];
	struct mnl_socket *nl;
	struct owned_list ol;
	struct nft_ctx *nft;
	struct strbuf sb;
	int ret;

	ret = nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = owned_tables(nl, &emul_target, &ol);
	mnl_socket_close(nl);
	if (ret)
		return ret;
	sb_init(&sb);
	list_for_each_entry(c, &u->rw.elem_cmds, list) {
		snprintf(kname, sizeof(kname), "%s%s", emul_target.prefix,
			 c->table);
		if (!owned_has(&ol, kname))
			continue;
		first = first ? : c;
		sb_addf(&sb, "%s element inet %s %s%.*s\n",
			c->del ? "delete" : "add", kname, c->set,
			(int)(c->end - c->rest), u->rw.text + c->rest);
	}
	owned_release(&ol);
	if (!first) {
		sb_release(&sb);
		return -ENOENT;
	}
	nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!nft || sb.oom) {
		if (nft)
			nft_ctx_free(nft);
		sb_release(&sb);
		return -ENOMEM;
	}
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	if (nft_run_cmd_from_buffer(nft, sb.buf)) {
		const char *err = nft_ctx_get_error_buffer(nft);

		ctx_err_at(ctx, &u->src, &first->loc,
			   "nf_tables refused the update: %.*s; nothing was changed",
			   (int)strcspn(err, "\n"), err);
		ret = -EINVAL;
	}
	nft_ctx_free(nft);
	sb_release(&sb);
	return ret;
}

/* The kernel answers for nf_tables and the socket expression. */
static int emul_probe(struct cgfw_ctx *ctx)
{
	(void)ctx;
	return 0;
}

static int emul_apply(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	return nft_apply(ctx, rs, &emul_target);
}

static int emul_remove(struct cgfw_ctx *ctx, const char *name)
{
	return nft_remove(ctx, name, &emul_target);
}

const struct backend_ops nft_emul_backend = {
	.name = "nft-emulated",
	.probe = emul_probe,
	.apply = emul_apply,
	.remove = emul_remove,
	.list = emul_list,
	.set_decl = emul_set_decl,
	.update = emul_update,
};

/* ---- the native target ---- */

static int native_probe(struct cgfw_ctx *ctx)
{
	if (nft_probe_table(ctx, NFPROTO_CGROUP, false))
		return 0;
	ctx_reset(ctx);
	ctx_err(ctx, "this kernel has no nf_tables cgroup family (kernel-patches/ adds it); use -b nft for the emulated target on stock kernels");
	return -EOPNOTSUPP;
}

static int native_apply(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	return nft_apply(ctx, rs, &native_target);
}

static int native_remove(struct cgfw_ctx *ctx, const char *name)
{
	return nft_remove(ctx, name, &native_target);
}

/* What a native base chain says of itself. */
struct native_hook {
	uint32_t hooknum, policy;
	int32_t prio;
	uint64_t cgroup_id;
	bool base, counted;
	uint64_t packets, bytes;
};

static int native_counters_cb(const struct nlattr *a, void *data)
{
	struct native_hook *h = data;

	if (mnl_attr_validate(a, MNL_TYPE_U64) < 0)
		return MNL_CB_OK;
	if (mnl_attr_get_type(a) == NFTA_COUNTER_PACKETS)
		h->packets = be64toh(mnl_attr_get_u64(a));
	else if (mnl_attr_get_type(a) == NFTA_COUNTER_BYTES)
		h->bytes = be64toh(mnl_attr_get_u64(a));
	h->counted = true;
	return MNL_CB_OK;
}

static int native_hook_cb(const struct nlattr *a, void *data)
{
	struct native_hook *h = data;

	switch (mnl_attr_get_type(a)) {
	case NFTA_HOOK_HOOKNUM:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0) {
			h->hooknum = ntohl(mnl_attr_get_u32(a));
			h->base = true;
		}
		break;
	case NFTA_HOOK_PRIORITY:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			h->prio = ntohl(mnl_attr_get_u32(a));
		break;
	case NFTA_HOOK_CGROUP_ID:
		if (mnl_attr_validate(a, MNL_TYPE_U64) >= 0)
			h->cgroup_id = be64toh(mnl_attr_get_u64(a));
		break;
	}
	return MNL_CB_OK;
}

static int native_chain_attr_cb(const struct nlattr *a, void *data)
{
	struct native_hook *h = data;

	if (mnl_attr_get_type(a) == NFTA_CHAIN_HOOK)
		mnl_attr_parse_nested(a, native_hook_cb, h);
	else if (mnl_attr_get_type(a) == NFTA_CHAIN_COUNTERS)
		mnl_attr_parse_nested(a, native_counters_cb, h);
	else if (mnl_attr_get_type(a) == NFTA_CHAIN_POLICY &&
		 mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
		h->policy = ntohl(mnl_attr_get_u32(a));
	return MNL_CB_OK;
}

static int native_chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct chain_dump *cd = data;
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct native_hook h = { .policy = NF_ACCEPT };
	struct inst_chain ic = { 0 }, *v;

	if (!nc || nftnl_chain_nlmsg_parse(nlh, nc) < 0)
		goto out;
	if (strcmp(nftnl_chain_get_str(nc, NFTNL_CHAIN_TABLE), cd->kname))
		goto out;
	mnl_attr_parse(nlh, sizeof(struct nfgenmsg), native_chain_attr_cb, &h);
	if (!h.base)
		goto out;
	ic.base = true;
	ic.dir = h.hooknum == NF_CGROUP_INGRESS ? CGFW_INGRESS : CGFW_EGRESS;
	ic.priority = h.prio;
	ic.policy = h.policy;
	ic.policy_counted = h.counted;
	ic.policy_packets = h.packets;
	ic.policy_bytes = h.bytes;
	ic.name = strdup(nftnl_chain_get_str(nc, NFTNL_CHAIN_NAME));
	ic.cgroup_path = cgroup_path_of_id(h.cgroup_id);
	v = ic.name && ic.cgroup_path ?
	    realloc(cd->t->chains, (cd->t->n_chains + 1) * sizeof(*v)) : NULL;
	if (!v) {
		cd->err = -ENOMEM;
		free(ic.name);
		free(ic.cgroup_path);
		goto out;
	}
	cd->t->chains = v;
	v[cd->t->n_chains++] = ic;
out:
	free_chain(nc);
	return MNL_CB_OK;
}

/*
 * nft cannot print a cgroup family table, but it prints the same table of
 * family inet: read the native tables back, put them (chains unbound,
 * counters as they are) into a shadow namespace and let nft list one.
 */
static int native_render(struct cgfw_ctx *ctx, const char *kname,
			 char **text)
{
	static const struct cgfw_source src = { .name = "cgfw list" };
	struct cgfw_ruleset rs = { .src = src };
	struct emit em = { .tg = &render_target, .ctx = ctx, .rs = &rs };
	char cmd[NFT_NAME_MAXLEN + 32];
	struct ir_table *t, *tn;
	struct mnl_socket *nl;
	int saved, ret;

	list_init(&rs.tables);
	ret = readback_family(ctx, &rs, NFPROTO_CGROUP);
	/* only the table asked for */
	list_for_each_entry_safe(t, tn, &rs.tables, list) {
		if (strcmp(t->name, kname)) {
			list_del(&t->list);
			ir_table_free(t);
		}
	}
	ret = ret ? : netns_enter_shadow(ctx, &saved);
	if (ret)
		goto out;
	ret = nl_open(ctx, &nl);
	if (!ret) {
		ret = emit_ruleset(&em, nl, NULL);
		ret = ret ? : nl_batch_commit(ctx, nl, &em.nb, &rs.src);
		mnl_socket_close(nl);
	}
	snprintf(cmd, sizeof(cmd), "list table inet %s", kname);
	ret = ret ? : nft_list_text(cmd, text);
	netns_leave_shadow(saved);
out:
	emit_release(&em);
	list_for_each_entry_safe(t, tn, &rs.tables, list) {
		list_del(&t->list);
		ir_table_free(t);
	}
	return ret;
}

static int native_list(struct cgfw_ctx *ctx, const char *name,
		       struct cgfw_listing *l)
{
	return nft_list(ctx, name, l, &native_target, native_chain_cb,
			native_render);
}

static int native_set_decl(struct cgfw_ctx *ctx, const char *table,
			   const char *set, char **decl)
{
	return nft_set_decl(ctx, table, set, decl, &native_target,
			    native_render);
}

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
 * The elements of @from as a native set takes them, next to the ones it
 * has: in ascending order (the kernel checks each interval end against
 * what is there; the dump that nft's elements come from is in descending
 * order), and without the interval end at key 0 that nft puts before an
 * interval that does not start there, which the set already has. (nft
 * itself merges intervals; the emulated target goes through it.)
 */
static struct nftnl_set *native_elems(struct nftnl_set *from,
				      const char *table, const char *set)
{
	static const uint16_t attrs[] = {
		NFTNL_SET_ELEM_KEY, NFTNL_SET_ELEM_KEY_END,
		NFTNL_SET_ELEM_FLAGS, NFTNL_SET_ELEM_DATA,
		NFTNL_SET_ELEM_VERDICT, NFTNL_SET_ELEM_CHAIN,
		NFTNL_SET_ELEM_OBJREF, NFTNL_SET_ELEM_USERDATA,
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

/* The elements nft compiled, into the native sets: one transaction. */
static int native_update(struct cgfw_ctx *ctx, const struct upd_cmds *u)
{
	const struct upd_set *us;
	struct nftnl_set_elems_iter *it;
	struct nftnl_set *v[2], *elems;
	int more;
	struct mnl_socket *nl;
	struct owned_list ol;
	struct nlmsghdr *nlh;
	struct nl_batch nb;
	size_t n = 0, i;
	int ret;

	ret = nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = owned_tables(nl, &native_target, &ol);
	ret = ret ? : nl_batch_init(&nb);
	if (ret)
		goto out_nl;
	list_for_each_entry(us, &u->sets, list) {
		if (!owned_has(&ol, us->table))
			continue;
		v[0] = us->del;
		v[1] = us->add;
		for (i = 0; i < 2; i++) {
			if (!v[i])
				continue;
			elems = native_elems(v[i], us->table, us->set);
			it = elems ? nftnl_set_elems_iter_create(elems) : NULL;
			if (!it) {
				if (elems)
					nftnl_set_free(elems);
				ret = -ENOMEM;
				goto out;
			}
			/* as many messages as the elements need, maybe none */
			while (nftnl_set_elems_iter_cur(it)) {
				nlh = nl_batch_next(&nb, i ? NFT_MSG_NEWSETELEM :
							     NFT_MSG_DELSETELEM,
						    NFPROTO_CGROUP,
						    i ? NLM_F_CREATE : 0,
						    us->loc, "the elements");
				if (!nlh)
					break;
				more = nftnl_set_elems_nlmsg_build_payload_iter(nlh,
										it);
				nl_batch_done(&nb);
				if (more <= 0)
					break;
			}
			nftnl_set_elems_iter_destroy(it);
			nftnl_set_free(elems);
		}
		n++;
	}
	ret = n ? nl_batch_commit(ctx, nl, &nb, &u->src) : -ENOENT;
out:
	nl_batch_release(&nb);
out_nl:
	owned_release(&ol);
	mnl_socket_close(nl);
	return ret;
}

const struct backend_ops nft_native_backend = {
	.name = "nft-native",
	.probe = native_probe,
	.apply = native_apply,
	.remove = native_remove,
	.list = native_list,
	.set_decl = native_set_decl,
	.update = native_update,
};
