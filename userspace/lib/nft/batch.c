// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The batch that installs tables of the IR with nf_tables, for either
 * target (nft/nft.h), with cgfw's userdata on the table, the bound chains
 * and the rules.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "nft/nft.h"

#define NAME_MAX_LEN	(NFT_NAME_MAXLEN - 1)
#define SCRATCH_SIZE	65536	/* a rule in its netlink encoding */

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

struct anon_map {
	const char *name;	/* as read back, e.g. "__set0" */
	uint32_t id;		/* NFTA_SET_ID in this batch */
};

/* The batch being built. */
struct build {
	const struct nft_target *tg;
	struct cgfw_ctx *ctx;
	const struct cgfw_ruleset *rs;
	struct cgfw_nl_batch *nb;
	const struct cgfw_apply_info *ai;
	char kname[NFT_NAME_MAXLEN + 8];
	uint32_t table_flags;		/* of the tables made */
	bool take;			/* take over the tables kept */
	const struct ir_table *old;	/* the table replaced, if kept */
	struct kept {
		const struct ir_chain *now, *old;
	} *kept;			/* its base chains kept */
	size_t n_kept;
	struct anon_map *anon;
	size_t n_anon;
	uint32_t next_set_id;
	char *scratch;
	int err;
};

/* Keep the first error of the batch being built. */
static void build_error(struct build *b, int err)
{
	if (err && !b->err)
		b->err = err;
}

/* ---- userdata ---- */

/*
 * The TLV puts, bounded here: libnftnl 1.2.4's nftnl_udata_put() compares
 * a value's length with the buffer's whole size, not with the room left,
 * and writes past the buffer instead of refusing. Each returns false and
 * adds nothing when the TLV does not fit.
 */
static bool ud_put(struct nftnl_udata_buf *ud, uint8_t type, uint32_t len,
		   const void *value)
{
	if (len > UINT8_MAX ||
	    nftnl_udata_buf_len(ud) + 2 + len > NFT_USERDATA_MAXLEN)
		return false;
	return nftnl_udata_put(ud, type, len, value);
}

static bool ud_put_strz(struct nftnl_udata_buf *ud, uint8_t type,
			const char *s)
{
	return ud_put(ud, type, strlen(s) + 1, s);
}

static bool ud_put_u32(struct nftnl_udata_buf *ud, uint8_t type, uint32_t v)
{
	return ud_put(ud, type, sizeof(v), &v);
}

/* A userdata buffer holding the TLVs of @data (an object's own), if any. */
static struct nftnl_udata_buf *udata_from(const void *data, uint32_t len)
{
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFT_USERDATA_MAXLEN);
	const uint8_t *p = data, *end = p ? p + len : NULL;

	if (!ud)
		return NULL;
	for (; p && p + 2 <= end && p + 2 + p[1] <= end; p += 2 + p[1])
		if (p[0] < CGFW_UD_TABLE_FORMAT)	/* not ours: keep */
			ud_put(ud, p[0], p[1], p + 2);
	return ud;
}

static bool put_u64(struct nftnl_udata_buf *ud, uint8_t type, uint64_t v)
{
	return ud_put(ud, type, sizeof(v), &v);
}

/* ---- names ---- */

static int kernel_table_name(struct build *b, const struct ir_table *t)
{
	if ((size_t)snprintf(b->kname, sizeof(b->kname), "%s%s",
			     b->tg->prefix, t->name) >= sizeof(b->kname) ||
	    strlen(b->kname) > NAME_MAX_LEN) {
		cgfw_err_at(b->ctx, &b->rs->src, &t->loc,
			    "table name '%s' is too long; use at most %zu characters",
			    t->name, NAME_MAX_LEN - strlen(b->tg->prefix));
		return -ENAMETOOLONG;
	}
	return 0;
}

static int check_names(struct build *b, const struct ir_table *t)
{
	const struct ir_chain *c;

	list_for_each_entry(c, &t->chains, list) {
		if (!strncmp(c->name, CGFW_CHAIN_PREFIX,
			     strlen(CGFW_CHAIN_PREFIX))) {
			cgfw_err_at(b->ctx, &b->rs->src, &c->loc,
				    "chain names starting with '%s' are cgfw's own; rename chain '%s'",
				    CGFW_CHAIN_PREFIX, c->name);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- tables, chains, sets ---- */

/*
 * A deletion in the table: its rules (@type DELRULE, every chain's), a
 * chain (DELCHAIN, @name) or a set (DELSET, @name).
 */
static void emit_del(struct build *b, uint16_t type, const char *name,
		     const char *what)
{
	struct nlmsghdr *nlh;

	nlh = cgfw_nl_batch_next(b->nb, type, b->tg->family, 0, NULL, what);
	if (!nlh)
		return;
	/* NFTA_RULE_TABLE, NFTA_CHAIN_TABLE and NFTA_SET_TABLE are 1 */
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, b->kname);
	if (type == NFT_MSG_DELCHAIN)
		mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, name);
	else if (type == NFT_MSG_DELSET)
		mnl_attr_put_strz(nlh, NFTA_SET_NAME, name);
	cgfw_nl_batch_done(b->nb);
}

/* Is @c of the old table (@old) or of the new one kept? */
static bool is_kept(const struct build *b, const struct ir_chain *c, bool old)
{
	size_t i;

	for (i = 0; i < b->n_kept; i++)
		if ((old ? b->kept[i].old : b->kept[i].now) == c)
			return true;
	return false;
}

/* A named object of the table replaced, deleted (its rules are already). */
static void emit_del_obj(struct build *b, const struct ir_obj *o)
{
	struct nlmsghdr *nlh;

	nlh = cgfw_nl_batch_next(b->nb, NFT_MSG_DELOBJ, b->tg->family, 0, NULL,
				 "the replacement of a named object");
	if (!nlh)
		return;
	mnl_attr_put_strz(nlh, NFTA_OBJ_TABLE, b->kname);
	mnl_attr_put_strz(nlh, NFTA_OBJ_NAME,
			  nftnl_obj_get_str(o->nl, NFTNL_OBJ_NAME));
	mnl_attr_put_u32(nlh, NFTA_OBJ_TYPE,
			 htonl(nftnl_obj_get_u32(o->nl, NFTNL_OBJ_TYPE)));
	cgfw_nl_batch_done(b->nb);
}

/*
 * The table kept (nf_tables_updtable cannot change its userdata, so it is
 * left as it is): every rule of it deleted, every named set (anonymous
 * ones go with their rules) and named object, every chain but the base
 * chains kept.
 */
static void emit_clear(struct build *b)
{
	const struct ir_chain *c;
	const struct ir_set *s;
	const struct ir_obj *o;

	/* NFTA_RULE_TABLE is NFTA_TABLE_NAME: no chain, every chain's rules */
	emit_del(b, NFT_MSG_DELRULE, NULL, "the rules of the table");
	list_for_each_entry(s, &b->old->sets, list)
		if (!s->anonymous)
			emit_del(b, NFT_MSG_DELSET,
				 nftnl_set_get_str(s->nl, NFTNL_SET_NAME),
				 "the replacement of a set");
	list_for_each_entry(o, &b->old->objs, list)
		emit_del_obj(b, o);
	list_for_each_entry(c, &b->old->chains, list)
		if (!is_kept(b, c, true))
			emit_del(b, NFT_MSG_DELCHAIN, c->name,
				 "the replacement of a chain");
}

/* One message about table @nt into the batch. */
static void table_msg(struct build *b, struct nftnl_table *nt, uint16_t type,
		      uint16_t flags, const struct cgfw_loc *loc,
		      const char *what)
{
	struct nlmsghdr *nlh;

	nlh = cgfw_nl_batch_next(b->nb, type, b->tg->family, flags, loc, what);
	if (nlh) {
		nftnl_table_nlmsg_build_payload(nlh, nt);
		cgfw_nl_batch_done(b->nb);
	}
}

/* Table @t: made, made again (@replace: its old version deleted), or kept. */
static void emit_table(struct build *b, const struct ir_table *t,
		       bool replace)
{
	struct nftnl_table *nt = nftnl_table_alloc();
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFT_USERDATA_MAXLEN);
	char comment[NFT_NAME_MAXLEN + 32];

	if (!nt || !ud) {
		build_error(b, -ENOMEM);
		goto out;
	}
	nftnl_table_set_str(nt, NFTNL_TABLE_NAME, b->kname);
	if (b->old) {
		/* ours already, or no one's: then ours (nf_tables_updtable) */
		if (b->take) {
			nftnl_table_set_u32(nt, NFTNL_TABLE_FLAGS,
					    CGFW_TABLE_HELD);
			table_msg(b, nt, NFT_MSG_NEWTABLE, 0, &t->loc,
				  "taking over the table");
		}
		emit_clear(b);
		goto out;
	}
	if (replace)
		table_msg(b, nt, NFT_MSG_DELTABLE, 0, &t->loc,
			  "the replacement of the table");
	/* for people: who made it; for cgfw: the TLVs */
	snprintf(comment, sizeof(comment),
		 CGFW_OWNER_COMMENT "table cgroup %s", t->name);
	if (!ud_put_u32(ud, CGFW_UD_TABLE_FORMAT, CGFW_UD_FORMAT) ||
	    !ud_put_strz(ud, CGFW_UD_TABLE_NAME, t->name)) {
		/* the name's TLV and the format's: 2+1 and 2+4 */
		cgfw_err_at(b->ctx, &b->rs->src, &t->loc,
			    "table name '%.40s...' (%zu characters) is too long for cgfw to record beside the table in nf_tables; use at most %d characters",
			    t->name, strlen(t->name),
			    NFT_USERDATA_MAXLEN - 3 - 6);
		build_error(b, -ENAMETOOLONG);
		goto out;
	}
	ud_put_strz(ud, 0 /* NFTNL_UDATA_TABLE_COMMENT */, comment); /* if it fits */
	nftnl_table_set_data(nt, NFTNL_TABLE_USERDATA, nftnl_udata_buf_data(ud),
			     nftnl_udata_buf_len(ud));
	if (b->table_flags)
		nftnl_table_set_u32(nt, NFTNL_TABLE_FLAGS, b->table_flags);
	table_msg(b, nt, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL, &t->loc,
		  "the table");
out:
	if (ud)
		nftnl_udata_buf_free(ud);
	if (nt)
		nftnl_table_free(nt);
}

/* chain cgfw_apply { comment "cgfw: apply G" }, with the apply's TLVs */
static void emit_apply_chain(struct build *b, const struct ir_table *t)
{
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFT_USERDATA_MAXLEN);
	char text[96];
	struct nlmsghdr *nlh;

	if (!ud) {
		build_error(b, -ENOMEM);
		return;
	}
	snprintf(text, sizeof(text), "cgfw: made by apply %" PRIu64 "%s",
		 b->ai->gen, b->ai->bpf ? ", with bpf" : "");
	put_u64(ud, CGFW_UD_APPLY_GEN, b->ai->gen);
	ud_put_u32(ud, CGFW_UD_APPLY_WITH_BPF, b->ai->bpf);
	ud_put_strz(ud, 0 /* NFTNL_UDATA_CHAIN_COMMENT */, text);
	nlh = cgfw_nl_batch_next(b->nb, NFT_MSG_NEWCHAIN, b->tg->family,
				 NLM_F_CREATE | NLM_F_EXCL, &t->loc,
				 "cgfw's record of the apply");
	if (nlh) {
		mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, b->kname);
		mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, CGFW_APPLY_CHAIN);
		mnl_attr_put(nlh, NFTA_CHAIN_USERDATA, nftnl_udata_buf_len(ud),
			     nftnl_udata_buf_data(ud));
		cgfw_nl_batch_done(b->nb);
	}
	nftnl_udata_buf_free(ud);
}

/* A regular chain: the user's @c under @name (its comment kept). */
static void emit_chain(struct build *b, const struct ir_chain *c,
		       const char *name)
{
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct nlmsghdr *nlh;
	const void *ud;
	uint32_t udlen;

	if (!nc) {
		build_error(b, -ENOMEM);
		return;
	}
	nftnl_chain_set_str(nc, NFTNL_CHAIN_TABLE, b->kname);
	nftnl_chain_set_str(nc, NFTNL_CHAIN_NAME, name);
	ud = nftnl_chain_get_data(c->nl, NFTNL_CHAIN_USERDATA, &udlen);
	if (ud && !strcmp(name, c->name))
		nftnl_chain_set_data(nc, NFTNL_CHAIN_USERDATA, ud, udlen);
	nlh = cgfw_nl_batch_next(b->nb, NFT_MSG_NEWCHAIN, b->tg->family,
				 NLM_F_CREATE | NLM_F_EXCL, &c->loc,
				 "the chain");
	if (nlh) {
		nftnl_chain_nlmsg_build_payload(nlh, nc);
		cgfw_nl_batch_done(b->nb);
	}
	nftnl_chain_free(nc);
}

static uint32_t anon_id(const struct build *b, const char *name)
{
	size_t i;

	for (i = 0; name && i < b->n_anon; i++)
		if (!strcmp(b->anon[i].name, name))
			return b->anon[i].id;
	return 0;
}

/*
 * A set and its elements, built from the IR's set. libnftnl exports no set
 * clone, so the batch's names (table, "__set%d" for an anonymous set, the
 * set id) are put on the IR's set while its messages are built, and taken
 * off again before this returns: the compiled ruleset is left as it was.
 */
static void emit_set(struct build *b, const struct ir_set *s)
{
	struct nftnl_set *ns = (struct nftnl_set *)s->nl;
	struct nftnl_set_elems_iter *it;
	char *table = NULL, *name = NULL;
	struct anon_map *am;
	struct nlmsghdr *nlh;
	int more;

	table = strdup(nftnl_set_get_str(ns, NFTNL_SET_TABLE));
	name = strdup(nftnl_set_get_str(ns, NFTNL_SET_NAME));
	am = realloc(b->anon, (b->n_anon + 1) * sizeof(*am));
	if (!table || !name || !am) {
		free(am);
		build_error(b, -ENOMEM);
		goto out;
	}
	b->anon = am;
	b->next_set_id++;
	if (s->anonymous) {
		/* rules refer to it by this batch's id (fix_expr) */
		am[b->n_anon].name = nftnl_set_get_str(s->nl, NFTNL_SET_NAME);
		am[b->n_anon].id = b->next_set_id;
		b->n_anon++;
	}

	nftnl_set_set_str(ns, NFTNL_SET_TABLE, b->kname);
	nftnl_set_set_u32(ns, NFTNL_SET_ID, b->next_set_id);
	if (s->anonymous)
		nftnl_set_set_str(ns, NFTNL_SET_NAME, "__set%d");
	nlh = cgfw_nl_batch_next(b->nb, NFT_MSG_NEWSET, b->tg->family,
				 NLM_F_CREATE | NLM_F_EXCL, NULL, "a set");
	if (nlh) {
		nftnl_set_nlmsg_build_payload(nlh, ns);
		cgfw_nl_batch_done(b->nb);
	}
	it = nftnl_set_elems_iter_create(ns);
	if (!it) {
		build_error(b, -ENOMEM);
		goto restore;
	}
	/* elements in as many messages as they need */
	while (nftnl_set_elems_iter_cur(it)) {
		nlh = cgfw_nl_batch_next(b->nb, NFT_MSG_NEWSETELEM,
					 b->tg->family,
					 NLM_F_CREATE | NLM_F_EXCL, NULL,
					 "the elements of a set");
		if (!nlh)
			break;
		more = nftnl_set_elems_nlmsg_build_payload_iter(nlh, it);
		cgfw_nl_batch_done(b->nb);
		if (more <= 0)
			break;
	}
	nftnl_set_elems_iter_destroy(it);
restore:
	nftnl_set_set_str(ns, NFTNL_SET_TABLE, table);
	nftnl_set_set_str(ns, NFTNL_SET_NAME, name);
	nftnl_set_unset(ns, NFTNL_SET_ID);
	if (s->anonymous)	/* the map must not point at freed names */
		b->anon[b->n_anon - 1].name = nftnl_set_get_str(ns,
								NFTNL_SET_NAME);
out:
	free(table);
	free(name);
}

/*
 * A named object, built from the IR's as emit_set() does a set: the
 * batch's table put on it while its message is built, then taken off (its
 * handle and use count, if read back, the kernel ignores in a new one). A
 * quota read back used up carries NFT_QUOTA_F_DEPLETED, which the kernel
 * refuses in a new one (it is depleted again by its first packet).
 */
static void emit_obj(struct build *b, const struct ir_obj *o)
{
	struct nftnl_obj *no = o->nl;
	uint32_t qflags = 0;
	struct nlmsghdr *nlh;
	char *table;

	table = strdup(nftnl_obj_get_str(no, NFTNL_OBJ_TABLE));
	if (!table) {
		build_error(b, -ENOMEM);
		return;
	}
	if (nftnl_obj_get_u32(no, NFTNL_OBJ_TYPE) == NFT_OBJECT_QUOTA &&
	    nftnl_obj_is_set(no, NFTNL_OBJ_QUOTA_FLAGS)) {
		qflags = nftnl_obj_get_u32(no, NFTNL_OBJ_QUOTA_FLAGS);
		nftnl_obj_set_u32(no, NFTNL_OBJ_QUOTA_FLAGS,
				  qflags & ~NFT_QUOTA_F_DEPLETED);
	}
	nftnl_obj_set_str(no, NFTNL_OBJ_TABLE, b->kname);
	nlh = cgfw_nl_batch_next(b->nb, NFT_MSG_NEWOBJ, b->tg->family,
				 NLM_F_CREATE | NLM_F_EXCL, NULL,
				 "a named object");
	if (nlh) {
		nftnl_obj_nlmsg_build_payload(nlh, no);
		cgfw_nl_batch_done(b->nb);
	}
	nftnl_obj_set_str(no, NFTNL_OBJ_TABLE, table);
	if (qflags)
		nftnl_obj_set_u32(no, NFTNL_OBJ_QUOTA_FLAGS, qflags);
	free(table);
}

/* ---- rules ---- */

/* The expressions that name a set, and their attributes. */
static const struct set_ref {
	const char *expr;
	uint16_t attr;		/* NFTA_*: the name in the netlink encoding */
	uint16_t set, id;	/* NFTNL_EXPR_*: name, set id */
} set_refs[] = {
	{ "lookup", NFTA_LOOKUP_SET, NFTNL_EXPR_LOOKUP_SET,
	  NFTNL_EXPR_LOOKUP_SET_ID },
	{ "dynset", NFTA_DYNSET_SET_NAME, NFTNL_EXPR_DYNSET_SET_NAME,
	  NFTNL_EXPR_DYNSET_SET_ID },
	{ "objref", NFTA_OBJREF_SET_NAME, NFTNL_EXPR_OBJREF_SET_NAME,
	  NFTNL_EXPR_OBJREF_SET_ID },
};

#define ANON_NAME "__set%d"	/* the kernel names it; the id binds it */
#define MAX_REFS 128	/* NFT_RULE_MAXEXPRS */

/* The ids of a rule's references to this batch's anonymous sets. */
struct refs {
	struct build *b;
	uint32_t id[MAX_REFS];	/* by the expression's position; 0: none */
	size_t n;
};

/*
 * In a rule's netlink encoding, the name of an anonymous set it refers to
 * becomes "__set%d" (any kernel name "__setN" has the room): the rule then
 * binds to this batch's set by its id; and a dynset's timeout of 0 goes.
 * (Done on the encoding because libnftnl 1.2.4 leaks a set name that is
 * set twice, and exports no nftnl_expr_unset().)
 */
static void rename_refs(struct nlmsghdr *nlh, struct refs *rf)
{
	struct nlattr *a, *le, *x, *d, *name, *data;
	const struct set_ref *ref;
	size_t k;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_RULE_EXPRESSIONS)
			continue;
		mnl_attr_for_each_nested(le, a) {
			if (rf->n == MAX_REFS)
				return;
			name = data = NULL;
			mnl_attr_for_each_nested(x, le) {
				if (mnl_attr_get_type(x) == NFTA_EXPR_NAME)
					name = x;
				else if (mnl_attr_get_type(x) == NFTA_EXPR_DATA)
					data = x;
			}
			rf->id[rf->n] = 0;
			for (k = 0, ref = NULL; name && k < ARRAY_SIZE(set_refs);
			     k++)
				if (!strcmp(mnl_attr_get_str(name),
					    set_refs[k].expr))
					ref = &set_refs[k];
			if (!ref || !data) {
				rf->n++;
				continue;
			}
			mnl_attr_for_each_nested(d, data) {
				/*
				 * a dynset carries its timeout even without one
				 * (dumps always put it, the batch's copy follows
				 * them), and the kernel refuses a timeout, even 0,
				 * on a set without timeouts: 0 becomes padding
				 */
				if (!strcmp(ref->expr, "dynset") &&
				    mnl_attr_get_type(d) == NFTA_DYNSET_TIMEOUT &&
				    mnl_attr_get_payload_len(d) == 8 &&
				    !mnl_attr_get_u64(d))
					d->nla_type = NFTA_DYNSET_PAD;
				if (mnl_attr_get_type(d) != ref->attr)
					continue;
				rf->id[rf->n] = anon_id(rf->b,
							mnl_attr_get_str(d));
				if (rf->id[rf->n] &&
				    (size_t)MNL_ALIGN(d->nla_len) >=
				    MNL_ATTR_HDRLEN + sizeof(ANON_NAME)) {
					memcpy(mnl_attr_get_payload(d), ANON_NAME,
					       sizeof(ANON_NAME));
					d->nla_len = MNL_ATTR_HDRLEN +
						     sizeof(ANON_NAME);
				}
			}
			rf->n++;
		}
	}
}

struct fix {
	const struct refs *rf;
	size_t i;
};

/*
 * Make an expression read back fit to be sent again: the id of the
 * anonymous set it refers to (rename_refs()), and no "depleted" flag on a
 * quota, which dumps report and NEWRULE refuses (EINVAL); the consumed
 * bytes come capped at the quota, so the copy is depleted from its first
 * packet.
 */
static int fix_expr(struct nftnl_expr *e, void *data)
{
	struct fix *f = data;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	uint32_t id = f->i < f->rf->n ? f->rf->id[f->i] : 0;
	size_t i;

	f->i++;
	for (i = 0; id && i < ARRAY_SIZE(set_refs); i++)
		if (!strcmp(name, set_refs[i].expr))
			nftnl_expr_set_u32(e, set_refs[i].id, id);
	if (!strcmp(name, "quota"))
		nftnl_expr_set_u32(e, NFTNL_EXPR_QUOTA_FLAGS,
				   nftnl_expr_get_u32(e, NFTNL_EXPR_QUOTA_FLAGS) &
				   ~NFT_QUOTA_F_DEPLETED);
	return 0;
}

/* A private copy of a rule, through its netlink encoding, fit to send. */
static struct nftnl_rule *rule_clone(struct build *b,
				     const struct nftnl_rule *r)
{
	struct nftnl_rule *copy = nftnl_rule_alloc();
	struct refs rf = { .b = b };
	struct fix f = { .rf = &rf };
	struct nlmsghdr *nlh, *named = NULL;
	const struct nlmsghdr *parsed;

	if (!copy)
		return NULL;
	nlh = nftnl_nlmsg_build_hdr(b->scratch, NFT_MSG_NEWRULE,
				    NFPROTO_INET, 0, 0);
	nftnl_rule_nlmsg_build_payload(nlh, (struct nftnl_rule *)r);
	if (nlh->nlmsg_len > SCRATCH_SIZE)
		goto err;
	rename_refs(nlh, &rf);
	parsed = cgfw_rule_names_ended(nlh, &named);
	if (!parsed || nftnl_rule_nlmsg_parse(parsed, copy) < 0)
		goto err;
	free(named);
	nftnl_expr_foreach(copy, fix_expr, &f);
	return copy;
err:
	free(named);
	nftnl_rule_free(copy);
	return NULL;
}

static void emit_nl_rule(struct build *b, struct nftnl_rule *r,
			 const struct cgfw_loc *loc)
{
	struct nlmsghdr *nlh;

	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, b->kname);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, b->tg->family);
	nftnl_rule_unset(r, NFTNL_RULE_HANDLE);
	nftnl_rule_unset(r, NFTNL_RULE_POSITION);
	nlh = cgfw_nl_batch_next(b->nb, NFT_MSG_NEWRULE, b->tg->family,
				 NLM_F_CREATE | NLM_F_APPEND, loc, "the rule");
	if (nlh) {
		nftnl_rule_nlmsg_build_payload(nlh, r);
		cgfw_nl_batch_done(b->nb);
	}
}

/* How much of @s fits in @room bytes without cutting a UTF-8 character. */
static size_t fit_utf8(const char *s, size_t room)
{
	size_t n = strlen(s);

	if (n <= room)
		return n;
	n = room;
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/*
 * The rule's userdata: the user's comment, and the rule's text; what does
 * not fit of the text is cut, and its length kept.
 */
static void rule_udata(struct build *b, struct nftnl_rule *r,
		       const char *text)
{
	const void *old;
	uint32_t len, room;
	struct nftnl_udata_buf *ud;
	size_t n;
	char *cut;

	old = nftnl_rule_get_data(r, NFTNL_RULE_USERDATA, &len);
	ud = udata_from(old, old ? len : 0);
	if (!ud) {
		build_error(b, -ENOMEM);
		return;
	}
	if (text) {
		/* room for the text's TLV, its NUL, and the length's TLV */
		room = NFT_USERDATA_MAXLEN - nftnl_udata_buf_len(ud);
		n = room > 2 + 1 + 2 + 4 ? fit_utf8(text, room - 3) : 0;
		if (n < strlen(text))
			n = room > 2 + 1 + 6 ? fit_utf8(text, room - 3 - 6) : 0;
		cut = strndup(text, n);
		if (!cut) {
			build_error(b, -ENOMEM);
		} else if (n) {
			ud_put_strz(ud, CGFW_UD_RULE_TEXT, cut);
			if (n < strlen(text))
				ud_put_u32(ud, CGFW_UD_RULE_TEXT_LEN,
						    strlen(text));
		}
		free(cut);
	}
	if (nftnl_udata_buf_len(ud))
		nftnl_rule_set_data(r, NFTNL_RULE_USERDATA,
				    nftnl_udata_buf_data(ud),
				    nftnl_udata_buf_len(ud));
	nftnl_udata_buf_free(ud);
}

static void emit_rules(struct build *b, const struct ir_chain *c)
{
	const struct ir_rule *r;
	struct nftnl_rule *copy;

	list_for_each_entry(r, &c->rules, list) {
		copy = rule_clone(b, r->nl);
		if (!copy) {
			build_error(b, -ENOMEM);
			return;
		}
		rule_udata(b, copy, r->text);
		emit_nl_rule(b, copy, r->loc.line ? &r->loc : &c->loc);
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

/* ---- the emulation's chains ---- */

/* chain cgfw_run_C { jump C; counter <policy> } */
static void emit_run_chain_rules(struct build *b, const struct ir_chain *c)
{
	struct nftnl_rule *jump = nftnl_rule_alloc();
	struct nftnl_rule *pol = nftnl_rule_alloc();
	struct nftnl_expr *j = verdict_expr(NFT_JUMP, c->name);
	struct nftnl_expr *cnt = nftnl_expr_alloc("counter");
	struct nftnl_expr *v = verdict_expr(c->policy, NULL);
	char name[NFT_NAME_MAXLEN + 16];

	if (!jump || !pol || !j || !cnt || !v) {
		build_error(b, -ENOMEM);
		free_rule(jump);
		free_rule(pol);
		free_expr(j);
		free_expr(cnt);
		free_expr(v);
		return;
	}
	snprintf(name, sizeof(name), CGFW_RUN_PREFIX "%s", c->name);
	nftnl_rule_set_str(jump, NFTNL_RULE_CHAIN, name);
	nftnl_rule_add_expr(jump, j);
	emit_nl_rule(b, jump, &c->loc);
	nftnl_rule_set_str(pol, NFTNL_RULE_CHAIN, name);
	nftnl_rule_add_expr(pol, cnt);
	nftnl_rule_add_expr(pol, v);
	emit_nl_rule(b, pol, &c->loc);
	nftnl_rule_free(jump);
	nftnl_rule_free(pol);
}

/*
 * The binding of a bound chain, as TLVs added to @ud; and, for people
 * reading nft's listing, a comment if it still fits. No room left by the
 * user's comment is an error at the chain.
 */
static int binding_udata(struct build *b, const struct ir_chain *c,
			 struct nftnl_udata_buf *ud, bool name, bool comment)
{
	char text[NFT_USERDATA_MAXLEN];

	/*
	 * not the policy: a chain kept by a re-apply can change it; the
	 * path if it fits (a TLV holds 255 bytes), else its length, and
	 * the reader finds the cgroup by its id
	 */
	if ((name && !ud_put_strz(ud, CGFW_UD_CHAIN_NAME, c->name)) ||
	    !ud_put_u32(ud, CGFW_UD_CHAIN_DIR, c->dir) ||
	    !put_u64(ud, CGFW_UD_CHAIN_CGROUP_ID, c->cgroup.id) ||
	    (!ud_put_strz(ud, CGFW_UD_CHAIN_CGROUP_PATH, c->cgroup.path) &&
	     !ud_put_u32(ud, CGFW_UD_CHAIN_CGROUP_PATH_LEN,
			 strlen(c->cgroup.path)))) {
		cgfw_err_at(b->ctx, &b->rs->src, &c->loc,
			    "chain '%s' leaves no room beside its comment for cgfw's record of its binding in nf_tables (%d bytes in all); shorten the comment",
			    c->name, NFT_USERDATA_MAXLEN);
		return -ENAMETOOLONG;
	}
	if (comment) {
		snprintf(text, sizeof(text), "cgfw: %s of cgroup %s, chain %s",
			 cgfw_dir_str(c->dir), c->cgroup.path, c->name);
		ud_put_strz(ud, 0 /* NFTNL_UDATA_CHAIN_COMMENT */,
				     text);	/* if it fits */
	}
	return 0;
}

/*
 * chain cgfw_hook_C: output|input, "socket cgroupv2 level L == id goto C";
 * the chain's rule only if the chain is @kept.
 */
static void emit_dispatch(struct build *b, const struct ir_chain *c,
			  bool kept)
{
	char name[NFT_NAME_MAXLEN + 16];
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFT_USERDATA_MAXLEN);
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *sk = nftnl_expr_alloc("socket");
	struct nftnl_expr *cmp = nftnl_expr_alloc("cmp");
	struct nftnl_expr *v;
	struct nlmsghdr *nlh;
	uint64_t id = c->cgroup.id;

	snprintf(name, sizeof(name), CGFW_RUN_PREFIX "%s", c->name);
	v = verdict_expr(NFT_GOTO, name);
	if (!ud || !nc || !r || !sk || !cmp || !v) {
		build_error(b, -ENOMEM);
		goto out;
	}
	snprintf(name, sizeof(name), CGFW_HOOK_PREFIX "%s", c->name);
	if (strlen(name) > NAME_MAX_LEN) {
		cgfw_err_at(b->ctx, &b->rs->src, &c->loc,
			    "chain name '%s' is too long for the emulated target; use at most %zu characters",
			    c->name, NAME_MAX_LEN - strlen(CGFW_HOOK_PREFIX));
		build_error(b, -ENAMETOOLONG);
		goto out;
	}
	build_error(b, binding_udata(b, c, ud, true, true));
	if (b->err)
		goto out;
	if (kept)
		goto rule;
	nftnl_chain_set_str(nc, NFTNL_CHAIN_TABLE, b->kname);
	nftnl_chain_set_str(nc, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_str(nc, NFTNL_CHAIN_TYPE, "filter");
	nftnl_chain_set_u32(nc, NFTNL_CHAIN_HOOKNUM,
			    c->dir == CGFW_EGRESS ? NF_INET_LOCAL_OUT :
						    NF_INET_LOCAL_IN);
	nftnl_chain_set_s32(nc, NFTNL_CHAIN_PRIO, c->priority);
	nftnl_chain_set_u32(nc, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	nftnl_chain_set_data(nc, NFTNL_CHAIN_USERDATA, nftnl_udata_buf_data(ud),
			     nftnl_udata_buf_len(ud));
	nlh = cgfw_nl_batch_next(b->nb, NFT_MSG_NEWCHAIN, NFPROTO_INET,
				 NLM_F_CREATE | NLM_F_EXCL, &c->loc,
				 "the hook of the chain");
	if (!nlh)
		goto out;
	nftnl_chain_nlmsg_build_payload(nlh, nc);
	cgfw_nl_batch_done(b->nb);
rule:
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
	emit_nl_rule(b, r, &c->loc);
out:
	if (ud)
		nftnl_udata_buf_free(ud);
	free_chain(nc);
	free_rule(r);
	free_expr(sk);
	free_expr(cmp);
	free_expr(v);
}

/* ---- the native target's chains ---- */

/* The userdata of bound chain @c's base chain; NULL: an error, in @b. */
static struct nftnl_udata_buf *base_udata(struct build *b,
					  const struct ir_chain *c)
{
	struct nftnl_udata_buf *ud;
	const void *old = NULL;
	uint32_t len = 0;

	/*
	 * the native chain keeps the user's comment; the emulation's hook
	 * chain is cgfw's, with the user's chain name and a comment
	 */
	if (b->tg->native)
		old = nftnl_chain_get_data(c->nl, NFTNL_CHAIN_USERDATA, &len);
	ud = udata_from(old, old ? len : 0);
	if (!ud) {
		build_error(b, -ENOMEM);
		return NULL;
	}
	build_error(b, binding_udata(b, c, ud, b->tg->dispatch,
				     b->tg->dispatch));
	if (b->err) {
		nftnl_udata_buf_free(ud);
		return NULL;
	}
	return ud;
}

/*
 * The base chain of the table being replaced that can stay for bound
 * chain @c: the same name, hook, priority, cgroup and userdata (nf_tables
 * cannot change a chain's hook or userdata; it can change its policy).
 * NULL: none.
 */
static const struct ir_chain *keepable(struct build *b,
				       const struct ir_chain *c)
{
	char name[NFT_NAME_MAXLEN + 16];
	const struct ir_chain *o;
	struct nftnl_udata_buf *ud;
	uint32_t hooknum, len = 0;
	const void *oud;
	bool same;

	if (b->tg->native) {
		snprintf(name, sizeof(name), "%s", c->name);
		hooknum = c->dir == CGFW_EGRESS ? NF_CGROUP_EGRESS :
						  NF_CGROUP_INGRESS;
	} else {
		snprintf(name, sizeof(name), CGFW_HOOK_PREFIX "%s", c->name);
		hooknum = c->dir == CGFW_EGRESS ? NF_INET_LOCAL_OUT :
						  NF_INET_LOCAL_IN;
	}
	o = cgfw_ir_find_chain(b->old, name);
	if (!o || !o->base)
		return NULL;
	ud = base_udata(b, c);
	if (!ud)
		return NULL;
	oud = nftnl_chain_get_data(o->nl, NFTNL_CHAIN_USERDATA, &len);
	same = nftnl_chain_get_u32(o->nl, NFTNL_CHAIN_HOOKNUM) == hooknum &&
	       o->priority == c->priority &&
	       (!b->tg->native || o->cgroup.id == c->cgroup.id) &&
	       oud && len == nftnl_udata_buf_len(ud) &&
	       !memcmp(oud, nftnl_udata_buf_data(ud), len);
	nftnl_udata_buf_free(ud);
	return same ? o : NULL;
}

/*
 * A bound chain of the native target: a base chain with the cgroup's id,
 * built with libmnl (libnftnl 1.2.4 does not know NFTA_HOOK_CGROUP_ID).
 * A chain kept gets its policy, and its counters set to zero as a new
 * one starts.
 */
static void emit_base_chain(struct build *b, const struct ir_chain *c,
			    bool kept)
{
	struct nftnl_udata_buf *ud = NULL;
	struct nlattr *hook, *counters;
	struct nlmsghdr *nlh;

	if (!kept) {
		ud = base_udata(b, c);
		if (!ud)
			return;
	}
	nlh = cgfw_nl_batch_next(b->nb, NFT_MSG_NEWCHAIN, b->tg->family,
				 kept ? 0 : NLM_F_CREATE | NLM_F_EXCL, &c->loc,
				 "the chain");
	if (!nlh)
		goto out;
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, b->kname);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, c->name);
	/* base chain counters count what reaches the policy */
	counters = mnl_attr_nest_start(nlh, NFTA_CHAIN_COUNTERS);
	mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS, 0);
	mnl_attr_put_u64(nlh, NFTA_COUNTER_BYTES, 0);
	mnl_attr_nest_end(nlh, counters);
	mnl_attr_put_u32(nlh, NFTA_CHAIN_POLICY, htonl(c->policy));
	if (kept) {
		cgfw_nl_batch_done(b->nb);
		goto out;
	}
	hook = mnl_attr_nest_start(nlh, NFTA_CHAIN_HOOK);
	mnl_attr_put_u32(nlh, NFTA_HOOK_HOOKNUM,
			 htonl(c->dir == CGFW_EGRESS ? NF_CGROUP_EGRESS :
						       NF_CGROUP_INGRESS));
	mnl_attr_put_u32(nlh, NFTA_HOOK_PRIORITY, htonl(c->priority));
	mnl_attr_put_u64(nlh, NFTA_HOOK_CGROUP_ID, htobe64(c->cgroup.id));
	mnl_attr_nest_end(nlh, hook);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TYPE, "filter");
	mnl_attr_put(nlh, NFTA_CHAIN_USERDATA, nftnl_udata_buf_len(ud),
		     nftnl_udata_buf_data(ud));
	cgfw_nl_batch_done(b->nb);
out:
	if (ud)
		nftnl_udata_buf_free(ud);
}

/* ---- a table, and a ruleset ---- */

/* Which base chains of the table replaced (@b->old) stay. */
static int find_kept(struct build *b, const struct ir_table *t)
{
	const struct ir_chain *c, *o;
	size_t n = 0;

	list_for_each_entry(c, &t->chains, list)
		n++;
	b->n_kept = 0;
	b->kept = calloc(n + 1, sizeof(*b->kept));
	if (!b->kept) {
		build_error(b, -ENOMEM);
		return -ENOMEM;
	}
	list_for_each_entry(c, &t->chains, list) {
		o = c->base ? keepable(b, c) : NULL;
		if (o)
			b->kept[b->n_kept++] = (struct kept){ c, o };
	}
	return b->err;
}

/*
 * Table @t: made, or made again in place of @old (@replace: an owned
 * table without cgfw_apply, from an older cgfw, is deleted first).
 */
static void emit_ir_table(struct build *b, const struct ir_table *t,
			  const struct ir_table *old, bool replace)
{
	bool dispatch = b->tg->dispatch;
	char run[NFT_NAME_MAXLEN + 16];
	const struct ir_chain *c;
	const struct ir_set *s;
	const struct ir_obj *o;

	b->n_anon = 0;	/* anonymous set names are per table */
	b->old = old;
	if (old && find_kept(b, t))
		return;
	emit_table(b, t, replace);
	emit_apply_chain(b, t);
	/* chains first: verdict maps and jumps refer to them */
	list_for_each_entry(c, &t->chains, list) {
		if (c->base && b->tg->native) {
			emit_base_chain(b, c, is_kept(b, c, false));
			continue;
		}
		emit_chain(b, c, c->name);
		if (c->base && dispatch) {
			snprintf(run, sizeof(run), CGFW_RUN_PREFIX "%s",
				 c->name);
			emit_chain(b, c, run);
		}
	}
	/* objects before sets: a map's elements may name them */
	list_for_each_entry(o, &t->objs, list)
		emit_obj(b, o);
	list_for_each_entry(s, &t->sets, list)
		emit_set(b, s);
	list_for_each_entry(c, &t->chains, list) {
		emit_rules(b, c);
		if (c->base && dispatch)
			emit_run_chain_rules(b, c);
	}
	list_for_each_entry(c, &t->chains, list)
		if (c->base && dispatch)
			emit_dispatch(b, c, is_kept(b, c, false));
}

static const struct ir_table *find_table(const struct cgfw_ruleset *rs,
					 const char *name)
{
	const struct ir_table *t;

	list_for_each_entry(t, &rs->tables, list)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

int cgfw_nft_build(struct cgfw_ctx *ctx, const struct nft_target *tg,
		   const struct cgfw_ruleset *rs,
		   const struct cgfw_ruleset *installed,
		   const struct cgfw_apply_info *ai, struct cgfw_nl_batch *nb)
{
	struct build b = {
		.tg = tg, .ctx = ctx, .rs = rs, .nb = nb, .ai = ai,
	};
	const struct ir_table *t, *old;
	bool keep;
	int ret = 0;

	if (cgfw_nft_can_hold(ctx, tg->family)) {
		b.table_flags = CGFW_TABLE_HELD;
		b.take = ctx->hold_tables;
	}
	b.scratch = malloc(SCRATCH_SIZE);
	if (!b.scratch)
		return -ENOMEM;
	list_for_each_entry(t, &rs->tables, list) {
		ret = kernel_table_name(&b, t);
		ret = ret ? : check_names(&b, t);
		if (ret)
			break;
		old = installed ? find_table(installed, b.kname) : NULL;
		/*
		 * kept, unless made by a cgfw before cgfw_apply, or not
		 * persistent where it could be (only a new table can be; a
		 * persistent one has no owner once its owner is gone)
		 */
		keep = old && cgfw_ir_find_chain(old, CGFW_APPLY_CHAIN) &&
		       (!b.table_flags ||
			nftnl_table_get_u32(old->nl, NFTNL_TABLE_FLAGS) &
			CGFW_TABLE_F_PERSIST);
		emit_ir_table(&b, t, keep ? old : NULL, old != NULL);
		free(b.kept);
		b.kept = NULL;
		b.n_kept = 0;
		ret = b.err ? : nb->err;
		if (ret)
			break;
	}
	if (ret && !ctx->err.len)
		cgfw_err(ctx, "cannot build the nf_tables batch: %s",
			 strerror(-ret));
	free(b.scratch);
	free(b.anon);
	return ret;
}

/* ---- rule commands (cgfw update) ---- */

static const struct nft_target shadow_tg = {
	.backend = "shadow", .family = NFPROTO_INET, .family_name = "inet",
	.prefix = "",
};

int cgfw_nft_build_shadow(struct cgfw_ctx *ctx, const struct ir_table *inst,
			  const char *name, struct cgfw_nl_batch *nb)
{
	struct build b = { .tg = &shadow_tg, .ctx = ctx, .nb = nb };
	const struct ir_chain *c;
	const struct ir_set *s;
	const struct ir_obj *o;
	struct nlmsghdr *nlh;

	snprintf(b.kname, sizeof(b.kname), "%s", name);
	nlh = cgfw_nl_batch_next(nb, NFT_MSG_NEWTABLE, NFPROTO_INET,
				 NLM_F_CREATE, NULL, "the table");
	if (nlh) {
		mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, name);
		cgfw_nl_batch_done(nb);
	}
	list_for_each_entry(c, &inst->chains, list)
		emit_chain(&b, c, c->name);
	list_for_each_entry(o, &inst->objs, list)
		emit_obj(&b, o);
	list_for_each_entry(s, &inst->sets, list)
		if (!s->anonymous)
			emit_set(&b, s);
	free(b.anon);
	return b.err ? : nb->err;
}

/* Where each chain's next compiled rule is. */
struct rule_cursor {
	const struct ir_chain *chain;
	const struct list_head *at;
};

/* The next rule nft compiled for chain @name of @shadow; NULL: none. */
static const struct ir_rule *next_compiled(struct rule_cursor *cur, size_t n,
					   const struct ir_table *shadow,
					   const char *name)
{
	const struct ir_chain *c;
	size_t i;

	for (i = 0; i < n && cur[i].chain; i++)
		if (!strcmp(cur[i].chain->name, name))
			break;
	if (i == n)
		return NULL;
	if (!cur[i].chain) {
		c = cgfw_ir_find_chain(shadow, name);
		if (!c)
			return NULL;
		cur[i].chain = c;
		cur[i].at = &c->rules;
	}
	cur[i].at = cur[i].at->next;
	if (cur[i].at == &cur[i].chain->rules)
		return NULL;
	return list_entry(cur[i].at, struct ir_rule, list);
}

static const char *const rule_cmd_what[] = {
	[RW_RULE_ADD] = "the rule, or the rule it is placed after",
	[RW_RULE_INSERT] = "the rule, or the rule it is placed before",
	[RW_RULE_REPLACE] = "the rule, or the handle of the rule it replaces",
	[RW_RULE_DELETE] = "the deletion of the rule with that handle",
	[RW_CHAIN_FLUSH] = "the flush of the chain",
};

/* One rule command into @b's batch; @r: its statements, as compiled. */
static void emit_rule_cmd(struct build *b, const struct rw_rule_cmd *rc,
			  const struct ir_rule *r)
{
	uint16_t type = NFT_MSG_NEWRULE, flags = NLM_F_CREATE;
	uint64_t ref = rc->ref ? strtoull(rc->ref, NULL, 10) : 0;
	struct nftnl_rule *nr;
	struct nlmsghdr *nlh;

	nr = r ? rule_clone(b, r->nl) : nftnl_rule_alloc();
	if (!nr) {
		build_error(b, -ENOMEM);
		return;
	}
	if (r)
		rule_udata(b, nr, rc->text);
	nftnl_rule_set_str(nr, NFTNL_RULE_TABLE, b->kname);
	nftnl_rule_set_str(nr, NFTNL_RULE_CHAIN, rc->chain);
	nftnl_rule_set_u32(nr, NFTNL_RULE_FAMILY, b->tg->family);
	nftnl_rule_unset(nr, NFTNL_RULE_HANDLE);
	nftnl_rule_unset(nr, NFTNL_RULE_POSITION);
	switch (rc->op) {
	case RW_RULE_ADD:
		flags |= NLM_F_APPEND;
		/* fall through */
	case RW_RULE_INSERT:
		if (ref)	/* 0: none, as nft takes it */
			nftnl_rule_set_u64(nr, NFTNL_RULE_POSITION, ref);
		break;
	case RW_RULE_REPLACE:
		flags = NLM_F_REPLACE;
		nftnl_rule_set_u64(nr, NFTNL_RULE_HANDLE, ref);
		break;
	case RW_RULE_DELETE:
		nftnl_rule_set_u64(nr, NFTNL_RULE_HANDLE, ref);
		/* fall through */
	case RW_CHAIN_FLUSH:
		type = NFT_MSG_DELRULE;
		flags = 0;
		break;
	}
	nlh = cgfw_nl_batch_next(b->nb, type, b->tg->family, flags,
				 r ? &rc->text_loc : &rc->loc,
				 rule_cmd_what[rc->op]);
	if (nlh) {
		nftnl_rule_nlmsg_build_payload(nlh, nr);
		cgfw_nl_batch_done(b->nb);
	}
	nftnl_rule_free(nr);
}

int cgfw_nft_build_rule_cmds(struct cgfw_ctx *ctx, const struct nft_target *tg,
			     const struct rw_result *rw, const char *table,
			     const struct ir_table *shadow,
			     struct cgfw_nl_batch *nb, uint32_t *set_id)
{
	struct build b = {
		.tg = tg, .ctx = ctx, .nb = nb, .next_set_id = *set_id,
	};
	const struct rw_rule_cmd *rc;
	struct rule_cursor *cur;
	const struct ir_rule *r;
	const struct ir_chain *c;
	const struct ir_set *s;
	size_t n = 0;

	snprintf(b.kname, sizeof(b.kname), "%s%s", tg->prefix, table);
	list_for_each_entry(c, &shadow->chains, list)
		n++;
	cur = calloc(n + 1, sizeof(*cur));
	b.scratch = malloc(SCRATCH_SIZE);
	if (!cur || !b.scratch) {
		free(cur);
		free(b.scratch);
		return -ENOMEM;
	}
	/* the anonymous sets of the new rules, first */
	list_for_each_entry(s, &shadow->sets, list)
		if (s->anonymous)
			emit_set(&b, s);
	list_for_each_entry(rc, &rw->rule_cmds, list) {
		if (b.err || strcmp(rc->table, table))
			continue;
		r = NULL;
		if (rc->text) {
			r = next_compiled(cur, n, shadow, rc->chain);
			if (!r) {
				build_error(&b, -EPROTO);
				break;
			}
		}
		emit_rule_cmd(&b, rc, r);
	}
	if (b.err == -EPROTO)
		cgfw_err(ctx, "nft compiled fewer rules for table '%s' than its commands have; nothing was changed",
			 table);
	*set_id = b.next_set_id;
	free(cur);
	free(b.scratch);
	free(b.anon);
	return b.err ? : nb->err;
}
