// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Update: "add element" and "delete element" on the named sets of tables
 * cgfw installed, in place: the nft set in one batch, the bpf backend's
 * map without reloading its programs. And nft's rule commands (add,
 * insert, replace and delete rule, flush chain) on the tables of the nft
 * targets, in the same batch (nft/update.c); the bpf backend, whose rules
 * are its programs, refuses them.
 *
 * The elements are compiled by nft in a shadow namespace (in a child
 * process, front/compile.c) where the sets are made again from their
 * attributes as the backend holding the table has them (key type, length,
 * flags, nft's own userdata such as typeof): their bytes are exactly
 * nft's, intervals and concatenations included.
 */
#include <stdio.h>
#include <stdlib.h>

#include <libmnl/libmnl.h>
#include <libnftnl/set.h>
#include <linux/netlink.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "backend.h"
#include "base/lock.h"
#include "front/compile.h"
#include "nl/netlink.h"
#include "update_cmds.h"

static struct upd_set *find_set(struct upd_cmds *u, const char *table,
				const char *set)
{
	struct upd_set *s;

	list_for_each_entry(s, &u->sets, list)
		if (!strcmp(s->table, table) && !strcmp(s->set, set))
			return s;
	return NULL;
}

static void note_loc(struct upd_set *s, const struct rw_elem_cmd *c)
{
	const struct cgfw_loc **loc = c->del ? &s->del_loc : &s->add_loc;

	if (!*loc)
		*loc = &c->loc;
}

/* The sets the commands name, each with its attributes. */
static int collect_sets(struct cgfw_ctx *ctx, struct upd_cmds *u)
{
	const struct backend_ops *const *be;
	struct rw_elem_cmd *c;
	struct upd_set *s;
	size_t i, n;
	int ret;

	be = cgfw_backends(&n);
	list_for_each_entry(c, &u->rw.elem_cmds, list) {
		s = find_set(u, c->table, c->set);
		if (s) {
			note_loc(s, c);
			continue;
		}
		s = calloc(1, sizeof(*s));
		if (!s || cgfw_strdup(&s->table, c->table) ||
		    cgfw_strdup(&s->set, c->set)) {
			if (s)
				free(s->table);
			free(s);
			return -ENOMEM;
		}
		s->loc = &c->loc;
		note_loc(s, c);
		list_add_tail(&s->list, &u->sets);
		ret = -ENOENT;
		for (i = 0; ret == -ENOENT && i < n; i++)
			ret = be[i]->set_object(ctx, s->table, s->set,
						&s->obj);
		if (ret == -ENOENT)
			cgfw_err_at(ctx, &u->src, &c->loc,
				    "cgfw installed no table '%s' with a set '%s'; 'cgfw list %s' shows what it has",
				    c->table, c->set, c->table);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The user's text with only the commands of one kind (@del), deletes
 * turned into adds: compiled against an empty set, they give the bytes.
 */
static char *pass_text(const struct upd_cmds *u, bool del)
{
	char *t = malloc(u->rw.len + 1);
	const struct rw_elem_cmd *c;
	const struct rw_rule_cmd *rc;

	if (!t)
		return NULL;
	memcpy(t, u->rw.text, u->rw.len + 1);
	list_for_each_entry(rc, &u->rw.rule_cmds, list)
		cgfw_rw_blank(t, rc->start, rc->end);
	list_for_each_entry(c, &u->rw.elem_cmds, list) {
		if (c->del != del)
			cgfw_rw_blank(t, c->start, c->end);
		else if (del)
			memcpy(t + c->start, "add   ", 6);	/* "delete" */
	}
	return t;
}

/*
 * The chains that the element commands of @table jump or go to (verdict
 * maps), made empty in the shadow so that nft takes the elements; the
 * table's own chains of those names take them when the update commits.
 */
static void shadow_chains(const struct upd_cmds *u, const char *table,
			  struct cgfw_nl_batch *nb)
{
	const struct rw_elem_cmd *c;
	const char *p, *end, *w;
	struct nlmsghdr *nlh;
	char name[NFT_NAME_MAXLEN];
	size_t n;

	list_for_each_entry(c, &u->rw.elem_cmds, list) {
		if (strcmp(c->table, table))
			continue;
		end = u->rw.text + c->end;
		for (p = u->rw.text + c->rest; p < end; p++) {
			if (end - p < 6 ||
			    (strncmp(p, "jump", 4) && strncmp(p, "goto", 4)) ||
			    (p > u->rw.text && !memchr(" \t\n:{,", p[-1], 6)) ||
			    (p[4] != ' ' && p[4] != '\t'))
				continue;
			for (w = p + 4; w < end && strchr(" \t", *w); w++)
				;
			if (w < end && *w == '"') {
				for (n = 1; w + n < end && w[n] != '"'; n++)
					;
				snprintf(name, sizeof(name), "%.*s",
					 (int)(n - 1), w + 1);
			} else {
				n = strcspn(w, " \t\n,}");
				if (w + n > end)
					n = end - w;
				snprintf(name, sizeof(name), "%.*s", (int)n, w);
			}
			if (!*name)
				continue;	/* nft says what is wrong */
			nlh = cgfw_nl_batch_next(nb, NFT_MSG_NEWCHAIN,
						 NFPROTO_INET, NLM_F_CREATE,
						 NULL, NULL);
			if (!nlh)
				return;
			mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, table);
			mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, name);
			cgfw_nl_batch_done(nb);
		}
	}
}

/*
 * In the shadow: table inet TABLE and its sets, empty, as installed, and
 * the chains its verdict-map elements name.
 */
static int setup_batch(const struct upd_cmds *u, struct cgfw_nl_batch *nb)
{
	struct nftnl_table *t;
	struct nlmsghdr *nlh;
	struct upd_set *s, *p;
	uint32_t id = 0;
	char *name;
	int ret;

	ret = cgfw_nl_batch_init(nb);
	list_for_each_entry(s, &u->sets, list) {
		if (ret)
			break;
		/* the table, once */
		list_for_each_entry(p, &u->sets, list)
			if (p == s || !strcmp(p->table, s->table))
				break;
		if (p == s) {
			t = nftnl_table_alloc();
			if (!t)
				return -ENOMEM;
			nftnl_table_set_str(t, NFTNL_TABLE_NAME, s->table);
			nlh = cgfw_nl_batch_next(nb, NFT_MSG_NEWTABLE,
						 NFPROTO_INET, NLM_F_CREATE,
						 NULL, NULL);
			if (nlh) {
				nftnl_table_nlmsg_build_payload(nlh, t);
				cgfw_nl_batch_done(nb);
			}
			nftnl_table_free(t);
			shadow_chains(u, s->table, nb);
		}
		/* the set under the user's names, in family inet */
		name = strdup(nftnl_set_get_str(s->obj, NFTNL_SET_TABLE));
		if (!name)
			return -ENOMEM;
		nftnl_set_set_str(s->obj, NFTNL_SET_TABLE, s->table);
		nftnl_set_unset(s->obj, NFTNL_SET_HANDLE);
		nftnl_set_set_u32(s->obj, NFTNL_SET_FAMILY, NFPROTO_INET);
		nftnl_set_set_u32(s->obj, NFTNL_SET_ID, ++id);	/* required */
		nlh = cgfw_nl_batch_next(nb, NFT_MSG_NEWSET, NFPROTO_INET,
					 NLM_F_CREATE, NULL, NULL);
		if (nlh) {
			nftnl_set_nlmsg_build_payload(nlh, s->obj);
			cgfw_nl_batch_done(nb);
		}
		nftnl_set_set_str(s->obj, NFTNL_SET_TABLE, name);
		free(name);
		ret = nb->err;
	}
	return ret;
}

static int compile_pass(struct cgfw_ctx *ctx, struct upd_cmds *u, bool del)
{
	struct cgfw_ruleset rs = { .src = u->src };
	struct shadow_job job = { .len = u->rw.len };
	const struct rw_elem_cmd *c;
	struct cgfw_nl_batch nb = { 0 };
	struct ir_table *t;
	struct ir_set *is;
	struct upd_set *s;
	char *text = NULL;
	bool any = false;
	int ret;

	list_for_each_entry(c, &u->rw.elem_cmds, list)
		any |= c->del == del;
	if (!any)
		return 0;
	cgfw_ir_init(&rs);
	ret = setup_batch(u, &nb);
	text = ret ? NULL : pass_text(u, del);
	if (!ret && !text)
		ret = -ENOMEM;
	job.setup = &nb;
	job.text = text;
	ret = ret ? : cgfw_shadow_compile(ctx, &u->src, &job, &rs);
	/* each set's elements go to the update */
	list_for_each_entry(t, &rs.tables, list) {
		if (ret)
			break;
		list_for_each_entry(is, &t->sets, list) {
			s = find_set(u, t->name, cgfw_ir_set_name(is));
			if (!s)
				continue;
			if (del)
				s->del = is->nl;
			else
				s->add = is->nl;
			is->nl = nftnl_set_alloc();	/* what is freed */
			if (!is->nl)
				ret = -ENOMEM;
		}
	}
	cgfw_ir_release(&rs);
	cgfw_nl_batch_release(&nb);
	free(text);
	return ret;
}

/* The place of the first command naming table @name, or NULL. */
static const struct cgfw_loc *named(const struct upd_cmds *u,
				    const char *name)
{
	const struct cgfw_loc *at = NULL;
	const struct rw_rule_cmd *rc;
	const struct rw_elem_cmd *ec;

	list_for_each_entry(rc, &u->rw.rule_cmds, list)
		if (!strcmp(rc->table, name)) {
			at = &rc->loc;
			break;
		}
	list_for_each_entry(ec, &u->rw.elem_cmds, list)
		if (!strcmp(ec->table, name)) {
			if (!at || ec->loc.line < at->line)
				at = &ec->loc;
			break;
		}
	return at;
}

/*
 * The tables the commands name, and the backends holding them: at most
 * one nft target (each commits a transaction of its own, so two could
 * not change together); the tables held into *@held (malloc()ed).
 */
static int holders(struct cgfw_ctx *ctx, const struct upd_cmds *u,
		   struct backend_table **held, size_t *n_held)
{
	const struct backend_ops *const *be, *nft = NULL;
	struct backend_table *v, *nh;
	const struct cgfw_loc *at;
	const char *first = NULL;
	size_t i, j, n, nv;
	int ret = 0;

	be = cgfw_backends(&n);
	for (i = 0; !ret && i < n; i++) {
		ret = be[i]->tables(ctx, &v, &nv);
		if (ret == -EOPNOTSUPP || ret == -EPROTONOSUPPORT ||
		    ret == -EAFNOSUPPORT) {
			ret = 0;
			continue;	/* a family this kernel lacks */
		}
		for (j = 0; !ret && j < nv; j++) {
			at = named(u, v[j].name);
			if (!at)
				continue;
			if (be[i]->nft_family && nft && nft != be[i]) {
				cgfw_err_at(ctx, &u->src, at,
					    "table '%s' is held by %s and table '%s' by %s, which cannot change in one transaction: update them in two files",
					    first, nft->name, v[j].name,
					    be[i]->name);
				ret = -EINVAL;
				break;
			}
			if (be[i]->nft_family && !nft) {
				nft = be[i];
				first = v[j].name;	/* moved to *held below */
			}
			nh = realloc(*held, (*n_held + 1) * sizeof(*nh));
			if (!nh) {
				ret = -ENOMEM;
				break;
			}
			*held = nh;
			nh[(*n_held)++] = v[j];
			v[j].name = NULL;	/* now *held's */
		}
		cgfw_backend_tables_free(v, nv);
	}
	return ret;
}

static bool is_number(const char *s)
{
	if (!s || !*s)
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	return !*s;
}

/* What nft would refuse in a rule command, or cgfw cannot do, said here. */
static int check_rule_cmd(struct cgfw_ctx *ctx, const struct upd_cmds *u,
			  const struct rw_rule_cmd *rc)
{
	bool by_handle = rc->op == RW_RULE_REPLACE || rc->op == RW_RULE_DELETE;
	bool stmts = rc->op != RW_RULE_DELETE && rc->op != RW_CHAIN_FLUSH;
	const char *cmd = rc->op == RW_CHAIN_FLUSH ? "flush chain" :
			  rc->op == RW_RULE_DELETE ? "delete rule" :
			  rc->op == RW_RULE_REPLACE ? "replace rule" : "rule";

	if (!strncmp(rc->chain, "cgfw_", 5)) {
		cgfw_err_at(ctx, &u->src, &rc->loc,
			    "chain names starting with 'cgfw_' are cgfw's own; name a chain of the table");
		return -EINVAL;
	}
	if (rc->ref_word && !strcmp(rc->ref_word, "index")) {
		cgfw_err_at(ctx, &u->src, &rc->ref_loc,
			    "'index' is not taken here: place the rule by a neighbour's handle ('position N'); 'cgfw list -a %s' shows them",
			    rc->table);
		return -EINVAL;
	}
	if (rc->ref_word && (!is_number(rc->ref) ||
			     (by_handle && strcmp(rc->ref_word, "handle")) ||
			     rc->op == RW_CHAIN_FLUSH)) {
		cgfw_err_at(ctx, &u->src, &rc->ref_loc,
			    rc->op == RW_CHAIN_FLUSH ?
			    "'flush chain' takes no '%s'" :
			    "expected '%s' and a handle (a number); 'cgfw list -a TABLE' shows them",
			    by_handle ? "handle" : rc->ref_word);
		return -EINVAL;
	}
	if (by_handle && !rc->ref_word) {
		cgfw_err_at(ctx, &u->src, &rc->loc,
			    "'%s' needs the rule's handle: '%s cgroup %s %s handle N'; 'cgfw list -a %s' shows them",
			    cmd, cmd, rc->table, rc->chain, rc->table);
		return -EINVAL;
	}
	if (stmts != !!rc->text) {
		cgfw_err_at(ctx, &u->src, rc->text ? &rc->text_loc : &rc->loc,
			    stmts ? "the %s has no statements" :
				    "'%s' takes nothing after the chain and handle",
			    cmd);
		return -EINVAL;
	}
	return 0;
}

/*
 * The rule commands, checked; their tables must be installed, and the
 * tables named held by one nft target at most.
 */
static int check_rule_cmds(struct cgfw_ctx *ctx, const struct upd_cmds *u)
{
	struct backend_table *held = NULL;
	const struct rw_rule_cmd *rc;
	size_t i, n_held = 0;
	int ret = 0;

	list_for_each_entry(rc, &u->rw.rule_cmds, list) {
		ret = check_rule_cmd(ctx, u, rc);
		if (ret)
			return ret;
	}
	ret = holders(ctx, u, &held, &n_held);
	list_for_each_entry(rc, &u->rw.rule_cmds, list) {
		if (ret)
			break;
		for (i = 0; i < n_held && strcmp(held[i].name, rc->table); i++)
			;
		if (i == n_held) {
			cgfw_err_at(ctx, &u->src, &rc->loc,
				    "cgfw installed no table '%s'; 'cgfw list' shows what it has",
				    rc->table);
			ret = -ENOENT;
		}
	}
	cgfw_backend_tables_free(held, n_held);
	return ret;
}

static bool ends(struct nftnl_set_elem *e)
{
	return nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS) &&
	       nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS) &
	       NFT_SET_ELEM_INTERVAL_END;
}

/*
 * Has @set an element whose key (and key end) are @e's? An interval's end,
 * without a key end, is an element of its own (and nft puts one at 0
 * before a first interval): intervals are compared by their starts.
 */
static bool has_elem(struct nftnl_set *set, struct nftnl_set_elem *e)
{
	struct nftnl_set_elems_iter *it = nftnl_set_elems_iter_create(set);
	struct nftnl_set_elem *o;
	uint32_t kl = 0, ol = 0, el = 0, oel = 0;
	const void *k, *ok, *ke, *oke;
	bool found = false;

	k = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &kl);
	ke = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY_END, &el);
	while (it && !found && (o = nftnl_set_elems_iter_next(it))) {
		ok = nftnl_set_elem_get(o, NFTNL_SET_ELEM_KEY, &ol);
		oke = nftnl_set_elem_get(o, NFTNL_SET_ELEM_KEY_END, &oel);
		found = !ends(o) && k && ok && kl == ol &&
			!memcmp(k, ok, kl) && el == oel &&
			(!el || !memcmp(ke, oke, el));
	}
	if (it)
		nftnl_set_elems_iter_destroy(it);
	return found;
}

/*
 * nft runs a file's commands in order; an update sends each set's
 * deletions before its additions. The two agree unless one element is
 * both added and deleted: that is refused, at the first delete.
 */
static int check_both(struct cgfw_ctx *ctx, const struct upd_cmds *u)
{
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;
	const struct upd_set *s;
	bool both = false;

	list_for_each_entry(s, &u->sets, list) {
		if (!s->add || !s->del)
			continue;
		it = nftnl_set_elems_iter_create(s->del);
		if (!it)
			return -ENOMEM;
		while (!both && (e = nftnl_set_elems_iter_next(it)))
			both = !ends(e) && has_elem(s->add, e);
		nftnl_set_elems_iter_destroy(it);
		if (both) {
			cgfw_err_at(ctx, &u->src, s->del_loc,
				    "an element of set '%s' is both added and deleted in this update, which cgfw cannot do in the order nft would (deletions go first); put them in two updates",
				    s->set);
			return -EINVAL;
		}
	}
	return 0;
}

static void release(struct upd_cmds *u)
{
	struct upd_set *s, *sn;

	if (u->sets.next) {
		list_for_each_entry_safe(s, sn, &u->sets, list) {
			free(s->table);
			free(s->set);
			if (s->obj)
				nftnl_set_free(s->obj);
			if (s->add)
				nftnl_set_free(s->add);
			if (s->del)
				nftnl_set_free(s->del);
			free(s);
		}
	}
	cgfw_rw_result_release(&u->rw);
	free(u->src.name);
	free(u->src.text);
}

/*
 * Under the lock: the sets, the elements, and every backend's part, all
 * or nothing: the backends whose changes are
 * not one transaction (update_end) first, each keeping what it changed;
 * if any part fails, those are put back.
 */
static int update(struct cgfw_ctx *ctx, struct upd_cmds *u)
{
	const struct backend_ops *const *be, *order[8];
	bool found = false;
	size_t i, n, k = 0;
	int ret;

	ret = check_rule_cmds(ctx, u);
	ret = ret ? : collect_sets(ctx, u);
	ret = ret ? : compile_pass(ctx, u, false);
	ret = ret ? : compile_pass(ctx, u, true);
	ret = ret ? : check_both(ctx, u);
	be = cgfw_backends(&n);
	for (i = 0; i < n && k < 8; i++)
		if (be[i]->update_end)
			order[k++] = be[i];
	for (i = 0; i < n && k < 8; i++)
		if (!be[i]->update_end)
			order[k++] = be[i];
	for (i = 0; !ret && i < k; i++) {
		ret = order[i]->update(ctx, u);
		found |= !ret;
		if (ret == CGFW_NOT_HELD)
			ret = 0;
	}
	if (!ret && !found) {
		cgfw_err(ctx, "the tables named were removed while updating them");
		ret = -ENOENT;
	}
	for (i = 0; i < k; i++)
		if (order[i]->update_end)
			order[i]->update_end(u, ret != 0);
	if (ret && !ctx->err.len)
		cgfw_err(ctx, "the update failed: %s", strerror(-ret));
	if (ret)
		cgfw_sb_addf(&ctx->err, "nothing was changed\n");
	return ret;
}

CGFW_API int cgfw_update(struct cgfw_ctx *ctx, const char *name,
			 const char *buf, size_t len,
			 const struct cgfw_update_opts *opts)
{
	struct upd_cmds u = { 0 };
	struct cgfw_lock l;
	int ret;

	if (!ctx || (!buf && len))
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	if (!CGFW_OPTS_VALID(ctx, opts, cgfw_update_opts))
		return libcgfw_err(-EINVAL);
	list_init(&u.sets);
	u.src.name = strdup(!name || !strcmp(name, "-") ? "<stdin>" : name);
	u.src.text = malloc(len + 1);
	if (!u.src.name || !u.src.text) {
		release(&u);
		return libcgfw_err(-ENOMEM);
	}
	if (len)
		memcpy(u.src.text, buf, len);
	u.src.text[len] = '\0';
	u.src.len = len;

	ret = cgfw_rewrite(ctx, &u.src, &u.rw);
	if (ret)
		goto out;
	if (u.rw.has_other) {
		cgfw_err_at(ctx, &u.src, &u.rw.other_loc,
			    "cgfw update takes element commands ('add element', 'delete element') and rule commands ('add rule', 'insert rule', 'replace rule', 'delete rule', 'flush chain'); tables, chains, sets and objects go through 'cgfw apply'");
		ret = -EINVAL;
		goto out;
	}
	ret = cgfw_backend_begin(ctx, &l);
	if (ret)
		goto out;
	ret = update(ctx, &u);
	cgfw_unlock(&l);
out:
	release(&u);
	return libcgfw_err(ret);
}
