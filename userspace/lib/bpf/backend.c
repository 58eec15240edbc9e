// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The bpf backend's operations (backend.h), and the library's calls that
 * only the bpf backend has: its programs as assembly, as an ELF object,
 * or loaded and pinned for another tool to attach.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/desc.h"
#include "bpf/table.h"

/* A CGROUP_SKB program that passes everything: does the kernel load it? */
static int bpf_probe(struct cgfw_ctx *ctx)
{
	static const struct bpf_insn pass[] = {
		I_MOV64_IMM(BPF_REG_0, 1),
		I_EXIT(),
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "cgfw_probe", "GPL",
			       pass, ARRAY_SIZE(pass), NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd == -EPERM)
		cgfw_err(ctx, "loading BPF programs needs CAP_BPF and CAP_NET_ADMIN (or CAP_SYS_ADMIN); run cgfw as root");
	else
		cgfw_err(ctx, "this kernel does not load BPF_PROG_TYPE_CGROUP_SKB programs (%s); use '-b nft'",
			 strerror(-fd));
	return -EOPNOTSUPP;
}

int cgfw_bpf_compile_all(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			 struct bpf_table **out, size_t *n)
{
	const struct ir_table *t;
	struct bpf_table *bt;
	int ret = 0;

	*n = 0;
	list_for_each_entry(t, &rs->tables, list)
		(*n)++;
	bt = calloc(*n + 1, sizeof(*bt));
	if (!bt)
		return -ENOMEM;
	*n = 0;
	list_for_each_entry(t, &rs->tables, list) {
		ret = cgfw_bpf_name_ok(ctx, rs, t);
		ret = ret ? : cgfw_bpf_compile_table(ctx, rs, t, &bt[*n]);
		if (ret)
			break;
		(*n)++;
	}
	*out = bt;
	return ret;
}

void cgfw_bpf_release_all(struct bpf_table *bt, size_t n)
{
	size_t i;

	for (i = 0; bt && i < n; i++)
		cgfw_bpf_table_release(&bt[i]);
	free(bt);
}

/*
 * A check's compile, kept for the stage of the same call (an apply with
 * "auto" or "both" checks first): compiling 100,000 rules takes a second.
 */
struct compiled {
	const struct cgfw_ruleset *rs;
	struct bpf_table *bt;
	size_t n;
};

static void compiled_release(void *kept)
{
	struct compiled *c = kept;

	cgfw_bpf_release_all(c->bt, c->n);
	free(c);
}

/* What the compile said, held until it is known to have succeeded. */
struct said {
	struct {
		enum cgfw_log_level level;
		char *msg;
	} *m;
	size_t n;
	bool oom;
};

static void say_later(enum cgfw_log_level level, const char *msg, void *data)
{
	struct said *s = data;
	void *m = realloc(s->m, (s->n + 1) * sizeof(*s->m));

	if (!m) {
		s->oom = true;
		return;
	}
	s->m = m;
	s->m[s->n].level = level;
	s->m[s->n].msg = strdup(msg);
	if (s->m[s->n].msg)
		s->n++;
	else
		s->oom = true;
}

/*
 * Compile every table without touching the kernel: can bpf do it all?
 * What the compile warns of is said only if it succeeds (a refusal alone
 * explains a fallback to nf_tables), and the tables are kept for this
 * call's stage, which then does not compile again.
 */
int cgfw_bpf_check(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	cgfw_print_fn print = ctx->print;
	void *print_data = ctx->print_data;
	struct said said = {};
	struct compiled *c;
	size_t i;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->rs = rs;
	if (print) {
		ctx->print = say_later;
		ctx->print_data = &said;
	}
	ret = cgfw_bpf_compile_all(ctx, rs, &c->bt, &c->n);
	ctx->print = print;
	ctx->print_data = print_data;
	for (i = 0; i < said.n; i++) {
		if (!ret)
			print(said.m[i].level, said.m[i].msg, print_data);
		free(said.m[i].msg);
	}
	free(said.m);
	if (!ret && said.oom)
		cgfw_log(ctx, CGFW_LOG_WARN, "out of memory: a warning of the bpf backend's compile was lost");
	if (ret) {
		compiled_release(c);
		return ret;
	}
	cgfw_ctx_keep(ctx, c, compiled_release);
	return 0;
}

/* ---- apply: stage every table, then switch every table ---- */

struct staged {
	struct cgfw_ctx *ctx;
	char **names;
	bool *keeper;		/* names[i]'s conntrack keeper made now */
	size_t n;
	uint64_t gen;
};

static void staged_free(struct staged *st)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		free(st->names[i]);
	free(st->names);
	free(st->keeper);
	free(st);
}

/* Does table @name, as it runs now, read ct? (In doubt, yes.) */
static bool runs_ct(const char *name)
{
	struct desc d;
	bool ct;
	int ret = cgfw_bpf_running_desc(name, &d);

	if (ret)
		return ret != -ENOENT;
	ct = d.conntrack;
	cgfw_desc_release(&d);
	return ct;
}

/*
 * Delete the conntrack keepers (keeper.c) of tables that no longer read
 * ct, or are gone. What is left keeps conntrack on: nothing fails open,
 * so a failure here is no error of the command.
 */
static void tidy_keepers(struct cgfw_ctx *ctx)
{
	size_t mark = cgfw_err_mark(ctx), i;
	struct cgfw_keepers ks;

	if (!cgfw_bpf_keepers(ctx, &ks)) {
		for (i = 0; i < ks.n; i++)
			if (!runs_ct(ks.v[i]) && !cgfw_bpf_staged(ks.v[i]))
				cgfw_bpf_unkeep_ct(ctx, ks.v[i]);
		cgfw_bpf_keepers_release(&ks);
	}
	cgfw_err_drop(ctx, mark);
}

static void bpf_bury(struct cgfw_ctx *ctx)
{
	cgfw_bpf_bury();
	tidy_keepers(ctx);
}

/* The apply did not happen: the keepers it made go. */
static void unkeep(struct staged *st)
{
	size_t mark = cgfw_err_mark(st->ctx), i;

	for (i = 0; i < st->n; i++)
		if (st->keeper[i])
			cgfw_bpf_unkeep_ct(st->ctx, st->names[i]);
	cgfw_err_drop(st->ctx, mark);	/* the call's error is another */
}

static void bpf_abort(void *priv)
{
	struct staged *st = priv;
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->n; i++)
		cgfw_bpf_unstage(st->names[i]);
	cgfw_bpf_unmark();
	unkeep(st);
	staged_free(st);
}

/* The tables this call's check compiled for @rs, now the caller's. */
static bool take_compiled(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			  struct bpf_table **bt, size_t *n)
{
	struct compiled *c = cgfw_ctx_take(ctx, compiled_release);

	if (c && c->rs == rs) {
		*bt = c->bt;
		*n = c->n;
		free(c);
		return true;
	}
	if (c)
		compiled_release(c);
	return false;
}

/*
 * Everything compiled, loaded and verified, and pinned as each table's
 * next generation, before any link changes.
 */
static int bpf_stage(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		     const struct cgfw_apply_info *ai, void **priv)
{
	struct staged *st = calloc(1, sizeof(*st));
	struct bpf_table *bt = NULL;
	size_t n = 0, i;
	int ret;

	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->gen = ai->gen;
	ret = take_compiled(ctx, rs, &bt, &n) ? 0 :
	      cgfw_bpf_compile_all(ctx, rs, &bt, &n);
	ret = ret ? : cgfw_bpf_ensure_root(ctx);
	for (i = 0; !ret && i < n; i++)
		ret = cgfw_bpf_load(ctx, &bt[i], ai->gen, ai->nft_family);
	st->names = calloc(n + 1, sizeof(*st->names));
	st->keeper = calloc(n + 1, sizeof(*st->keeper));
	if (!ret && (!st->names || !st->keeper))
		ret = -ENOMEM;
	for (i = 0; !ret && i < n; i++) {
		ret = cgfw_bpf_stage(ctx, &bt[i], ai);
		if (ret)
			break;
		st->names[st->n] = strdup(bt[i].table->name);
		if (!st->names[st->n++])
			ret = -ENOMEM;
		/* conntrack on before any program that reads it runs */
		if (!ret && bt[i].conntrack)
			ret = cgfw_bpf_keep_ct(ctx, bt[i].table->name,
					       &rs->src, &bt[i].table->loc,
					       &st->keeper[st->n - 1]);
	}
	/* the pins hold what was loaded now */
	cgfw_bpf_release_all(bt, n);
	if (ret) {
		bpf_abort(st);
		return ret;
	}
	*priv = st;
	return 0;
}

/*
 * Switch every table's links to its staged generation, once the apply is
 * marked as committing (every backend has staged: a kill from here on is
 * finished). What the links ran is kept until bpf_settle(), so that
 * bpf_undo() can put it back; a failure puts it back at once.
 */
static int bpf_commit(struct cgfw_ctx *ctx, void *priv)
{
	struct staged *st = priv;
	size_t i, k;
	int ret;

	ret = cgfw_bpf_mark(ctx, st->gen);
	for (i = 0; !ret && i < st->n; i++)
		ret = cgfw_bpf_switch(ctx, st->names[i]);
	if (!ret)
		return 0;
	for (k = 0; k < st->n; k++) {
		if (k < i)
			cgfw_bpf_unswitch(st->names[k]);
		else
			cgfw_bpf_unstage(st->names[k]);
	}
	cgfw_bpf_unmark();
	unkeep(st);
	staged_free(st);
	return ret;
}

/* Another backend's commit failed: every link as it was before. */
static void bpf_undo(void *priv)
{
	struct staged *st = priv;
	size_t i;

	for (i = 0; i < st->n; i++)
		cgfw_bpf_unswitch(st->names[i]);
	cgfw_bpf_unmark();
	unkeep(st);
	staged_free(st);
}

/* The whole apply took effect: what undo needed goes, and old links. */
static void bpf_settle(void *priv)
{
	struct staged *st = priv;
	size_t i;

	for (i = 0; i < st->n; i++)
		cgfw_bpf_settle(st->names[i]);
	cgfw_bpf_unmark();
	/* the keepers of tables that read ct no more */
	tidy_keepers(st->ctx);
	staged_free(st);
}

/*
 * An interrupted apply of tables @names: switch each to its staged
 * generation (again: a link switched already stays) and settle, or put
 * every link back. If a switch fails (a cgroup was removed since), every
 * table is put back, as the apply itself would have done, and that is
 * said: an error would stop every later command at the same place.
 */
static int bpf_finish(struct cgfw_ctx *ctx, char *const *names, size_t n,
		      bool forward)
{
	const char *why;
	size_t i = 0;

	if (forward) {
		while (i < n && !cgfw_bpf_switch(ctx, names[i]))
			i++;
		if (i == n) {
			for (i = 0; i < n; i++)
				cgfw_bpf_settle(names[i]);
			cgfw_bpf_unmark();
			tidy_keepers(ctx);
			return 0;
		}
		why = ctx->err.buf ? ctx->err.buf : "";
		why += strncmp(why, "Error: ", 7) ? 0 : 7;
		cgfw_log(ctx, CGFW_LOG_WARN,
			 "cannot finish the apply of table '%s' (%.*s); rolling back the apply",
			 names[i], (int)strcspn(why, "\n"), why);
		cgfw_ctx_reset(ctx);
	}
	for (i = 0; i < n; i++)
		cgfw_bpf_unswitch(names[i]);
	cgfw_bpf_unmark();
	tidy_keepers(ctx);	/* those the apply had made */
	return 0;
}

const struct backend_ops cgfw_backend_bpf = {
	.name = "bpf",
	.probe = bpf_probe,
	.check = cgfw_bpf_check,
	.stage = bpf_stage,
	.commit = bpf_commit,
	.undo = bpf_undo,
	.settle = bpf_settle,
	.abort = bpf_abort,
	.remove = cgfw_bpf_remove,
	.set_aside = cgfw_bpf_set_aside,
	.set_aside_tables = cgfw_bpf_set_aside_tables,
	.bury = bpf_bury,
	.list = cgfw_bpf_list,
	.set_object = cgfw_bpf_set_object,
	.update = cgfw_bpf_update,
	.update_end = cgfw_bpf_update_end,
	.tables = cgfw_bpf_tables,
	.pending = cgfw_bpf_pending,
	.finish = bpf_finish,
	.pending_tables = cgfw_bpf_staged_tables,
};

/* ---- what only the bpf backend has ---- */

/* A call's text result: *@out gets @sb's text, or the error is returned. */
static int text_result(int ret, struct strbuf *sb, char **out)
{
	if (ret) {
		cgfw_sb_release(sb);
		return libcgfw_err(ret);
	}
	*out = cgfw_sb_detach(sb);
	return *out ? 0 : libcgfw_err(-ENOMEM);
}

CGFW_API int cgfw_ruleset__bpf_object(struct cgfw_ctx *ctx,
				      const struct cgfw_ruleset *rs,
				      const char *path, char **commands)
{
	struct bpf_table *bt = NULL;
	struct strbuf sb;
	size_t n;
	int ret;

	if (!ctx || !rs || !path || !commands)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	cgfw_sb_init(&sb);
	ret = cgfw_bpf_compile_all(ctx, rs, &bt, &n);
	ret = ret ? : cgfw_bpf_write_elf(ctx, bt, n, path, &sb);
	cgfw_bpf_release_all(bt, n);
	return text_result(ret, &sb, commands);
}

CGFW_API int cgfw_ruleset__bpf_pin(struct cgfw_ctx *ctx,
				   const struct cgfw_ruleset *rs,
				   const char *dir, char **pinned)
{
	struct bpf_table *bt = NULL;
	struct strbuf sb;
	size_t n, i;
	int ret;

	if (!ctx || !rs || !dir || !pinned)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	cgfw_sb_init(&sb);
	ret = cgfw_bpf_compile_all(ctx, rs, &bt, &n);
	for (i = 0; !ret && i < n; i++) {
		ret = cgfw_bpf_load(ctx, &bt[i], 0, 0);
		ret = ret ? : cgfw_bpf_pin_progs(ctx, &bt[i], dir, &sb);
	}
	cgfw_bpf_release_all(bt, n);
	return text_result(ret, &sb, pinned);
}

CGFW_API int cgfw_ruleset__bpf_asm(struct cgfw_ctx *ctx,
				   const struct cgfw_ruleset *rs, char **text)
{
	const struct ir_table *t;
	struct bpf_table bt;
	struct strbuf sb;
	size_t i;
	int ret = 0;

	if (!ctx || !rs || !text)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	cgfw_sb_init(&sb);
	list_for_each_entry(t, &rs->tables, list) {
		ret = cgfw_bpf_compile_table(ctx, rs, t, &bt);
		if (ret)
			break;
		for (i = 0; i < bt.n_maps; i++)
			cgfw_sb_addf(&sb, "; map %zu: %s, type %u, key %u, value %u, %u entries (%u filled)\n",
				     i, bt.maps[i].name, bt.maps[i].type,
				     bt.maps[i].key_size, bt.maps[i].value_size,
				     bt.maps[i].max_entries, bt.maps[i].n_elems);
		for (i = 0; i < bt.n_progs; i++) {
			cgfw_sb_addf(&sb, "\n; table %s: %s program for cgroup %s (id %llu), %zu instructions\n",
				     t->name, cgfw_dir_str(bt.progs[i].dir),
				     bt.progs[i].cgroup->path,
				     (unsigned long long)bt.progs[i].cgroup->id,
				     bt.progs[i].em.n);
			cgfw_em_dump(&bt.progs[i].em, &sb);
		}
		cgfw_bpf_table_release(&bt);
		cgfw_sb_adds(&sb, "\n");
	}
	return text_result(ret, &sb, text);
}
