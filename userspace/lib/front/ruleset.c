// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ruleset object: runs the front end (rewrite, compile in the shadow
 * namespace, read back) and binds the read-back chains to their cgroups.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>

#include "front/compile.h"
#include "front/include.h"
#include "front/ir.h"
#include "front/rewrite.h"

/*
 * Rule files are written by people, or generated with large sets (a
 * million addresses take some 20 MiB); anything larger is a mistake.
 */
#define CGFW_MAX_INPUT (256u << 20)

CGFW_API void cgfw_ruleset__free(struct cgfw_ruleset *rs)
{
	if (!rs)
		return;
	cgfw_ir_release(rs);
	cgfw_src_release(&rs->src);
	free(rs);
}

/* Give each named object of @t its declaration's place. */
static void place_objs(struct ir_table *t, const struct rw_result *rw)
{
	struct ir_obj *o;
	const char *name;
	size_t i;

	list_for_each_entry(o, &t->objs, list) {
		name = nftnl_obj_get_str(o->nl, NFTNL_OBJ_NAME);
		for (i = 0; i < rw->n_objs; i++)
			if (!strcmp(rw->objs[i].table, t->name) &&
			    !strcmp(rw->objs[i].name, name))
				o->loc = rw->objs[i].loc;
	}
}

/* Give each chain of @t its binding and its rules their source places. */
static int bind_table(struct cgfw_ctx *ctx, struct cgfw_ruleset *rs,
		      struct ir_table *t, const struct rw_result *rw,
		      bool allow_missing)
{
	struct rw_chain *rc;
	struct ir_chain *c;
	struct ir_rule *r;
	size_t n, i;
	int ret;

	list_for_each_entry(c, &t->chains, list) {
		rc = cgfw_rw_find_chain(rw, t->name, c->name);
		if (rc)
			c->loc = rc->loc;
		if (c->base) {
			if (!rc || !rc->bound) {
				cgfw_err_at(ctx, &rs->src, rc ? &rc->loc : NULL,
					    "base chain '%s' is not bound to a cgroup; write 'hook egress cgroup \"PATH\"' or 'hook ingress cgroup \"PATH\"'",
					    c->name);
				return -EINVAL;
			}
			c->dir = rc->dir;
			ret = cgfw_cgroup_resolve(ctx, &rs->src, &rc->cgroup_loc,
						  rc->cgroup_path, allow_missing,
						  &c->cgroup);
			if (ret)
				return ret;
		}
		if (!rc || rc->order_unknown)
			continue;
		n = 0;
		list_for_each_entry(r, &c->rules, list)
			n++;
		if (n != rc->n_rules)
			continue;	/* cannot pair them up: places unknown */
		i = 0;
		list_for_each_entry(r, &c->rules, list) {
			r->loc = rc->rules[i].loc;
			r->text = strdup(rc->rules[i++].text);
			if (!r->text)
				return -ENOMEM;
		}
	}
	return 0;
}

static int compile(struct cgfw_ctx *ctx, struct cgfw_ruleset *rs,
		   bool allow_missing)
{
	struct shadow_job job = { 0 };
	struct rw_result rw;
	struct rw_table *rt;
	struct ir_table *t;
	int ret;

	if (!rs->src.len) {
		cgfw_err_at(ctx, &rs->src, NULL,
			    "the input is empty; write 'table cgroup NAME { ... }' (see cgfw(8))");
		return -EINVAL;
	}
	ret = cgfw_src_check_text(ctx, &rs->src);
	ret = ret ? : cgfw_include_expand(ctx, &rs->src, CGFW_MAX_INPUT);
	if (ret)
		return ret;
	ret = cgfw_rewrite(ctx, &rs->src, &rw);
	if (ret)
		return ret;

	job.text = rw.text;
	job.len = rw.len;
	ret = cgfw_shadow_compile(ctx, &rs->src, &job, rs);
	rs->object_loc = rw.object_loc;	/* for a backend without them */
	if (ret)
		goto out;

	list_for_each_entry(t, &rs->tables, list) {
		rt = NULL;
		list_for_each_entry(rt, &rw.tables, list)
			if (!strcmp(rt->name, t->name))
				break;
		if (&rt->list != &rw.tables)
			t->loc = rt->loc;
		place_objs(t, &rw);
		ret = bind_table(ctx, rs, t, &rw, allow_missing);
		if (ret)
			goto out;
	}
out:
	cgfw_rw_result_release(&rw);
	return ret;
}

CGFW_API int cgfw_ruleset__compile(struct cgfw_ctx *ctx, const char *name,
				   const char *buf, size_t len,
				   const struct cgfw_compile_opts *opts,
				   struct cgfw_ruleset **out)
{
	struct cgfw_ruleset *rs;
	int ret;

	if (!ctx || !out || (!buf && len))
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	if (!CGFW_OPTS_VALID(ctx, opts, cgfw_compile_opts))
		return libcgfw_err(-EINVAL);
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return libcgfw_err(-ENOMEM);
	cgfw_ir_init(rs);
	rs->src.name = strdup(!name || !strcmp(name, "-") ? "<stdin>" : name);
	rs->src.text = malloc(len + 1);
	if (!rs->src.name || !rs->src.text) {
		cgfw_ruleset__free(rs);
		return libcgfw_err(-ENOMEM);
	}
	if (len)
		memcpy(rs->src.text, buf, len);
	rs->src.text[len] = '\0';
	rs->src.len = len;

	ret = compile(ctx, rs, CGFW_OPTS_GET(opts, allow_missing_cgroups,
					     false));
	if (ret) {
		cgfw_ruleset__free(rs);
		return libcgfw_err(ret);
	}
	*out = rs;
	return 0;
}

CGFW_API int cgfw_ruleset__compile_file(struct cgfw_ctx *ctx,
					const char *path,
					const struct cgfw_compile_opts *opts,
					struct cgfw_ruleset **out)
{
	struct strbuf sb;
	char chunk[65536];
	ssize_t n;
	int fd, ret;

	if (!ctx || !path || !out)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	if (!strcmp(path, "-")) {
		fd = STDIN_FILENO;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			cgfw_err(ctx, "cannot open %s: %s", path,
				 strerror(errno));
			return libcgfw_err(ret);
		}
	}
	cgfw_sb_init(&sb);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		if (sb.len + n > CGFW_MAX_INPUT) {
			cgfw_err(ctx, "%s is larger than %u MiB; a rule file that large is not supported, split it or use sets",
				 strcmp(path, "-") ? path : "<stdin>",
				 CGFW_MAX_INPUT >> 20);
			n = -1;
			errno = EFBIG;
			break;
		}
		cgfw_sb_addn(&sb, chunk, n);
	}
	ret = n < 0 ? -errno : sb.oom ? -ENOMEM : 0;
	if (n < 0 && errno != EFBIG)
		cgfw_err(ctx, "cannot read %s: %s", path, strerror(errno));
	if (fd != STDIN_FILENO)
		close(fd);
	if (!ret)
		ret = cgfw_ruleset__compile(ctx, path, sb.buf ? sb.buf : "",
					    sb.len, opts, out);
	cgfw_sb_release(&sb);
	return libcgfw_err(ret);
}

static int print_expr(struct nftnl_expr *e, void *data)
{
	struct strbuf *sb = data;
	char buf[4096];

	nftnl_expr_snprintf(buf, sizeof(buf), e, NFTNL_OUTPUT_DEFAULT, 0);
	cgfw_sb_addf(sb, "  [ %s %s]\n",
		     nftnl_expr_get_str(e, NFTNL_EXPR_NAME), buf);
	return 0;
}

/* The user's source line of @loc, trimmed, or "". */
static void add_src_line(struct strbuf *sb, const struct cgfw_source *src,
			 const struct cgfw_loc *loc)
{
	const char *p, *e;
	size_t len;

	p = cgfw_src_line(src, loc->line, &len);
	if (!p)
		return;
	e = p + len;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	cgfw_sb_addn(sb, p, e - p);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A set and its elements, one per line in the format of nft's
 * --debug=netlink, sorted: a hash set's dump order is not stable.
 */
static void add_set(struct strbuf *sb, const struct ir_table *t,
		    const struct nftnl_set *s)
{
	struct nftnl_set_elems_iter *it = nftnl_set_elems_iter_create(s);
	struct nftnl_set_elem *e;
	char **lines = NULL, **v, buf[4096];
	size_t n = 0, i;

	cgfw_sb_addf(sb, "set %s %s flags 0x%x\n", t->name,
		     nftnl_set_get_str(s, NFTNL_SET_NAME),
		     nftnl_set_get_u32(s, NFTNL_SET_FLAGS));
	while (it && (e = nftnl_set_elems_iter_next(it))) {
		nftnl_set_elem_snprintf(buf, sizeof(buf), e,
					NFTNL_OUTPUT_DEFAULT, 0);
		v = realloc(lines, (n + 1) * sizeof(*v));
		if (!v || cgfw_strdup(&v[n], buf)) {
			lines = v ? v : lines;
			break;
		}
		lines = v;
		n++;
	}
	if (it)
		nftnl_set_elems_iter_destroy(it);
	if (n)	/* an empty set has no lines */
		qsort(lines, n, sizeof(*lines), cmp_str);
	for (i = 0; i < n; i++) {
		cgfw_sb_addf(sb, "  [ %s ]\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	cgfw_sb_adds(sb, "\n");
}

CGFW_API int cgfw_ruleset__bytecode(const struct cgfw_ruleset *rs,
				    char **text)
{
	const struct ir_table *t;
	const struct ir_chain *c;
	const struct ir_rule *r;
	const struct ir_set *s;
	char at[CGFW_WHERE_MAX];
	struct strbuf sb;

	if (!rs || !text)
		return libcgfw_err(-EINVAL);
	cgfw_sb_init(&sb);
	list_for_each_entry(t, &rs->tables, list) {
		list_for_each_entry(s, &t->sets, list)
			add_set(&sb, t, s->nl);
		list_for_each_entry(c, &t->chains, list) {
			list_for_each_entry(r, &c->rules, list) {
				if (r->loc.line) {
					cgfw_sb_addf(&sb, "# %s: ",
						     cgfw_src_lines(&rs->src,
								    r->loc.line, 0,
								    at, sizeof(at)));
					add_src_line(&sb, &rs->src, &r->loc);
					cgfw_sb_adds(&sb, "\n");
				}
				cgfw_sb_addf(&sb, "cgroup %s %s\n", t->name,
					     c->name);
				nftnl_expr_foreach(r->nl, print_expr, &sb);
				cgfw_sb_adds(&sb, "\n");
			}
		}
	}
	*text = cgfw_sb_detach(&sb);
	return *text ? 0 : libcgfw_err(-ENOMEM);
}

/* ---- bindings by path ---- */

CGFW_API int cgfw_ruleset__rebind(struct cgfw_ctx *ctx,
				  struct cgfw_ruleset *rs)
{
	struct ir_table *t;
	struct ir_chain *c;
	struct stat st;
	uint64_t id;
	int changed = 0;

	if (!ctx || !rs)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	list_for_each_entry(t, &rs->tables, list) {
		list_for_each_entry(c, &t->chains, list) {
			if (!c->base)
				continue;
			/* a cgroup's id is its directory's inode number */
			id = !stat(c->cgroup.path, &st) && S_ISDIR(st.st_mode) ?
			     st.st_ino : 0;
			if (id != c->cgroup.id) {
				c->cgroup.id = id;
				changed++;
			}
		}
	}
	return changed;
}

CGFW_API size_t cgfw_ruleset__waiting(const struct cgfw_ruleset *rs)
{
	const struct ir_table *t;
	const struct ir_chain *c;
	size_t n = 0;

	if (!rs)
		return 0;
	list_for_each_entry(t, &rs->tables, list)
		list_for_each_entry(c, &t->chains, list)
			n += c->base && !c->cgroup.id;
	return n;
}

CGFW_API const char *cgfw_ruleset__cgroup(const struct cgfw_ruleset *rs,
					  size_t i)
{
	const struct ir_table *t;
	const struct ir_chain *c;

	if (!rs)
		return NULL;
	list_for_each_entry(t, &rs->tables, list)
		list_for_each_entry(c, &t->chains, list)
			if (c->base && !i--)
				return c->cgroup.path;
	return NULL;
}

CGFW_API const char *cgfw_ruleset__table(const struct cgfw_ruleset *rs,
					 size_t i)
{
	const struct ir_table *t;

	if (!rs)
		return NULL;
	list_for_each_entry(t, &rs->tables, list)
		if (!i--)
			return t->name;
	return NULL;
}
