// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Update: "add element" and "delete element" on the named sets of tables
 * cgfw installed, in place: the nft set in one batch, the bpf backend's
 * map without reloading its programs.
 *
 * The elements are compiled by nft, against the set's own declaration (as
 * the backend holding the table keeps it), in a shadow namespace: their
 * bytes are exactly nft's, intervals and concatenations included.
 */
#include <stdio.h>
#include <stdlib.h>

#include <libnftnl/set.h>
#include <nftables/libnftables.h>

#include "backend.h"
#include "front/compile.h"
#include "update.h"


/*
 * "set S { type ipv4_addr; flags interval; }" from nft's listing of a
 * table (@table's name as listed), without its elements. NULL if absent.
 */
char *set_decl_from_listing(const char *listing, const char *table,
			    const char *set)
{
	char head[300], *out = NULL;
	const char *p, *e, *tend;
	struct strbuf sb;
	int depth = 0;

	snprintf(head, sizeof(head), "table inet %s {\n", table);
	listing = strstr(listing, head);
	if (!listing)
		return NULL;
	tend = strstr(listing, "\n}\n");
	snprintf(head, sizeof(head), "\tset %s {\n", set);
	p = strstr(listing, head);
	if (!p || (tend && p > tend)) {
		snprintf(head, sizeof(head), "\tmap %s {\n", set);
		p = strstr(listing, head);
	}
	if (!p || (tend && p > tend))
		return NULL;
	sb_init(&sb);
	sb_addn(&sb, p + 1, strlen(head) - 2);	/* "set S {" */
	for (p += strlen(head); *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, '\n');
		while (p < e && (*p == '\t' || *p == ' '))
			p++;
		if (!depth && e - p == 1 && *p == '}')
			break;
		if (!depth && !strncmp(p, "elements = {", 12))
			depth = 1;	/* up to its closing brace */
		if (depth) {
			const char *c;

			for (c = p + (depth == 1 && !strncmp(p, "elements", 8) ?
				      12 : 0); c < e; c++)
				depth += *c == '{' ? 1 : *c == '}' ? -1 : 0;
			continue;
		}
		if (e > p) {
			sb_adds(&sb, " ");
			sb_addn(&sb, p, e - p);
			sb_adds(&sb, ";");
		}
	}
	sb_adds(&sb, " }");
	out = sb_detach(&sb);
	return out;
}

static struct upd_set *find_set(struct upd_cmds *u, const char *table,
				const char *set)
{
	struct upd_set *s;

	list_for_each_entry(s, &u->sets, list)
		if (!strcmp(s->table, table) && !strcmp(s->set, set))
			return s;
	return NULL;
}

/* The sets the commands name, each with its declaration. */
static int collect_sets(struct cgfw_ctx *ctx, struct upd_cmds *u)
{
	const struct backend_ops *const *be;
	struct rw_elem_cmd *c;
	struct upd_set *s;
	size_t i, n;
	int ret;

	be = backends_all(&n);
	list_for_each_entry(c, &u->rw.elem_cmds, list) {
		if (find_set(u, c->table, c->set))
			continue;
		s = calloc(1, sizeof(*s));
		if (!s || !(s->table = strdup(c->table)) ||
		    !(s->set = strdup(c->set))) {
			if (s)
				free(s->table);
			free(s);
			return -ENOMEM;
		}
		s->loc = &c->loc;
		list_add_tail(&s->list, &u->sets);
		ret = -ENOENT;
		for (i = 0; ret == -ENOENT && i < n; i++)
			ret = be[i]->set_decl(ctx, s->table, s->set, &s->decl);
		if (ret == -ENOENT)
			ctx_err_at(ctx, &u->src, &c->loc,
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
	size_t i;

	if (!t)
		return NULL;
	memcpy(t, u->rw.text, u->rw.len + 1);
	list_for_each_entry(c, &u->rw.elem_cmds, list) {
		if (c->del != del) {
			for (i = c->start; i < c->end; i++)
				if (t[i] != '\n')
					t[i] = ' ';
		} else if (del) {
			memcpy(t + c->start, "add   ", 6);	/* "delete" */
		}
	}
	return t;
}

static int compile_pass(struct cgfw_ctx *ctx, struct upd_cmds *u, bool del)
{
	struct cgfw_ruleset rs = { .src = u->src };
	const struct rw_elem_cmd *c;
	struct ir_table *t, *tn;
	struct ir_set *is;
	struct upd_set *s;
	struct strbuf decls;
	struct nft_ctx *nft;
	char *text;
	bool any = false;
	int ret, saved;

	list_for_each_entry(c, &u->rw.elem_cmds, list)
		any |= c->del == del;
	if (!any)
		return 0;
	sb_init(&decls);
	list_for_each_entry(s, &u->sets, list)
		sb_addf(&decls, "table inet %s {\n%s\n}\n", s->table, s->decl);
	text = pass_text(u, del);
	if (!text || decls.oom) {
		free(text);
		sb_release(&decls);
		return -ENOMEM;
	}
	list_init(&rs.tables);
	ret = netns_enter_shadow(ctx, &saved);
	if (ret)
		goto out;
	nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!nft) {
		ret = -ENOMEM;
	} else {
		nft_ctx_buffer_output(nft);
		nft_ctx_buffer_error(nft);
		if (nft_run_cmd_from_buffer(nft, decls.buf)) {
			ctx_err_at(ctx, &u->src, NULL,
				   "cannot declare the sets again to compile the elements: %s",
				   nft_ctx_get_error_buffer(nft));
			ret = -EINVAL;
		}
		nft_ctx_free(nft);
	}
	ret = ret ? : nft_compile_text(ctx, &u->src, text, u->rw.len);
	ret = ret ? : readback(ctx, &rs);
	netns_leave_shadow(saved);
	if (ret)
		goto out;
	/* each set's elements go to the update */
	list_for_each_entry(t, &rs.tables, list) {
		list_for_each_entry(is, &t->sets, list) {
			s = find_set(u, t->name,
				     nftnl_set_get_str(is->nl, NFTNL_SET_NAME));
			if (!s)
				continue;
			if (del)
				s->del = is->nl;
			else
				s->add = is->nl;
			is->nl = nftnl_set_alloc();	/* what ir_table_free frees */
		}
	}
out:
	list_for_each_entry_safe(t, tn, &rs.tables, list)
		ir_table_free(t);
	free(text);
	sb_release(&decls);
	return ret;
}

static void release(struct upd_cmds *u)
{
	struct upd_set *s, *sn;

	if (u->sets.next) {
		list_for_each_entry_safe(s, sn, &u->sets, list) {
			free(s->table);
			free(s->set);
			free(s->decl);
			if (s->add)
				nftnl_set_free(s->add);
			if (s->del)
				nftnl_set_free(s->del);
			free(s);
		}
	}
	rw_result_release(&u->rw);
	free(u->src.name);
	free(u->src.text);
}

CGFW_API int cgfw_update(struct cgfw_ctx *ctx, const char *name,
			 const char *buf, size_t len)
{
	const struct backend_ops *const *be;
	struct upd_cmds u = { 0 };
	bool found = false;
	size_t i, n;
	int ret;

	if (!ctx || (!buf && len))
		return libcgfw_err(-EINVAL);
	ctx_reset(ctx);
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

	ret = rewrite(ctx, &u.src, &u.rw);
	if (ret)
		goto out;
	if (u.rw.has_other) {
		ctx_err_at(ctx, &u.src, &u.rw.other_loc,
			   "cgfw update takes 'add element' and 'delete element' commands only; tables, chains and rules go through 'cgfw apply'");
		ret = -EINVAL;
		goto out;
	}
	ret = collect_sets(ctx, &u);
	ret = ret ? : compile_pass(ctx, &u, false);
	ret = ret ? : compile_pass(ctx, &u, true);
	/* every backend that holds a table takes its changes */
	be = backends_all(&n);
	for (i = 0; !ret && i < n; i++) {
		ret = be[i]->update(ctx, &u);
		found |= !ret;
		if (ret == -ENOENT)
			ret = 0;
	}
	if (!ret && !found)
		ret = -ENOENT;	/* collect_sets found them: a race */
out:
	release(&u);
	return libcgfw_err(ret);
}
