// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The bpf backend's operations: nft bytecode compiled to CGROUP_SKB
 * programs (bpf/codegen.c), loaded and attached (bpf/load.c).
 * libbpf's own messages are silenced: errors reach the caller through the
 * context, with the verifier's log where it has one.
 */
#include <stdio.h>
#include <stdlib.h>

#include <bpf/libbpf.h>

#include "bpf/table.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int bpf_probe(struct cgfw_ctx *ctx)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	int ret = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SKB, NULL);

	libbpf_set_print(old);
	if (ret > 0)
		return 0;
	ctx_err(ctx, "this kernel does not load BPF_PROG_TYPE_CGROUP_SKB programs (or cgfw lacks CAP_BPF/CAP_SYS_ADMIN); use '-b nft'");
	return -EOPNOTSUPP;
}

/* Compile every table without touching the kernel: can bpf do it all? */
int bpf_check(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	const struct ir_table *t;
	struct bpf_table bt;
	int ret = 0;

	list_for_each_entry(t, &rs->tables, list) {
		ret = bpf_table_compile(ctx, rs, t, &bt);
		if (ret)
			break;
		bpf_table_release(&bt);
	}
	return ret;
}

/* Every table compiled before the first is loaded: all can be done. */
static int bpf_apply(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	const struct ir_table *t;
	struct bpf_table *bt;
	size_t n = 0, i;
	int ret = 0;

	list_for_each_entry(t, &rs->tables, list)
		n++;
	bt = calloc(n + 1, sizeof(*bt));
	if (!bt)
		return -ENOMEM;
	i = 0;
	list_for_each_entry(t, &rs->tables, list) {
		ret = bpf_table_name_ok(ctx, rs, t);
		ret = ret ? : bpf_table_compile(ctx, rs, t, &bt[i]);
		if (ret)
			break;
		i++;
	}
	for (i = 0; !ret && i < n; i++)
		ret = bpf_table_apply(ctx, &bt[i]);
	for (i = 0; i < n; i++)
		bpf_table_release(&bt[i]);
	free(bt);
	libbpf_set_print(old);
	return ret;
}

static int bpf_remove(struct cgfw_ctx *ctx, const char *name)
{
	return bpf_table_remove(ctx, name);
}

static int bpf_list_tables(struct cgfw_ctx *ctx, const char *name,
			   struct cgfw_listing *l)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	int ret = bpf_list(ctx, name, l);

	libbpf_set_print(old);
	return ret;
}

const struct backend_ops bpf_backend = {
	.name = "bpf",
	.probe = bpf_probe,
	.apply = bpf_apply,
	.remove = bpf_remove,
	.list = bpf_list_tables,
	.set_decl = bpf_set_decl,
	.update = bpf_update,
};

/* Every table compiled, or none. */
static int compile_all(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
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
		ret = bpf_table_compile(ctx, rs, t, &bt[*n]);
		if (ret)
			break;
		(*n)++;
	}
	*out = bt;
	return ret;
}

static void release_all(struct bpf_table *bt, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		bpf_table_release(&bt[i]);
	free(bt);
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
	ctx_reset(ctx);
	sb_init(&sb);
	ret = compile_all(ctx, rs, &bt, &n);
	ret = ret ? : bpf_tables_write_elf(ctx, bt, n, path, &sb);
	release_all(bt, n);
	if (ret) {
		sb_release(&sb);
		return libcgfw_err(ret);
	}
	*commands = sb_detach(&sb);
	return *commands ? 0 : libcgfw_err(-ENOMEM);
}

CGFW_API int cgfw_ruleset__bpf_pin(struct cgfw_ctx *ctx,
				   const struct cgfw_ruleset *rs,
				   const char *dir, char **pinned)
{
	libbpf_print_fn_t old;
	struct bpf_table *bt = NULL;
	struct strbuf sb;
	size_t n, i;
	int ret;

	if (!ctx || !rs || !dir || !pinned)
		return libcgfw_err(-EINVAL);
	ctx_reset(ctx);
	old = libbpf_set_print(quiet);
	sb_init(&sb);
	ret = compile_all(ctx, rs, &bt, &n);
	for (i = 0; !ret && i < n; i++)
		ret = bpf_table_pin(ctx, &bt[i], dir, &sb);
	release_all(bt, n);
	libbpf_set_print(old);
	if (ret) {
		sb_release(&sb);
		return libcgfw_err(ret);
	}
	*pinned = sb_detach(&sb);
	return *pinned ? 0 : libcgfw_err(-ENOMEM);
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
	ctx_reset(ctx);
	sb_init(&sb);
	list_for_each_entry(t, &rs->tables, list) {
		ret = bpf_table_compile(ctx, rs, t, &bt);
		if (ret)
			break;
		for (i = 0; i < bt.n_maps; i++)
			sb_addf(&sb, "; map %zu: %s, type %u, key %u, value %u, %u entries (%u filled)\n",
				i, bt.maps[i].name, bt.maps[i].type,
				bt.maps[i].key_size, bt.maps[i].value_size,
				bt.maps[i].max_entries, bt.maps[i].n_elems);
		for (i = 0; i < bt.n_progs; i++) {
			sb_addf(&sb, "\n; table %s: %s program for cgroup %s (id %llu), %zu instructions\n",
				t->name, cgfw_dir_str(bt.progs[i].dir),
				bt.progs[i].cgroup->path,
				(unsigned long long)bt.progs[i].cgroup->id,
				bt.progs[i].em.n);
			em_dump(&bt.progs[i].em, &sb);
		}
		bpf_table_release(&bt);
		sb_adds(&sb, "\n");
	}
	if (ret) {
		sb_release(&sb);
		return libcgfw_err(ret);
	}
	*text = sb_detach(&sb);
	return *text ? 0 : libcgfw_err(-ENOMEM);
}
