/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bpf backend (DESIGN.md 2.3): for each table and each (cgroup,
 * direction) it binds, one BPF_PROG_TYPE_CGROUP_SKB program.
 *
 * Program flavour: the context is a struct __sk_buff whose data starts at
 * the network header (no link layer); return 1 lets the packet pass, 0
 * drops it. r6 holds the context, r7 the nft family of the packet, r8 the
 * transport header offset (-1: none, as for a later fragment), r9 the layer
 * 4 protocol (-1: unknown); nft's 16 32-bit registers live on the stack.
 */
#ifndef CGFW_BPF_TABLE_H
#define CGFW_BPF_TABLE_H

#include "bpf/emit.h"

/* A map a program uses: a set of the table, or the counters. */
struct bpf_map_spec {
	char name[16];			/* BPF_OBJ_NAME_LEN */
	const struct ir_set *set;	/* NULL: the counters */
	uint32_t type;			/* BPF_MAP_TYPE_* */
	uint32_t key_size, value_size, max_entries, flags;
	void *keys, *values;		/* n_elems entries of each */
	uint32_t n_elems;
	bool inline_only;		/* compiled as comparisons: no map */
	bool spin_lock;			/* values start with a bpf_spin_lock */
	int fd;				/* -1 until created */
};

/* Which rule a counter slot counts for (rule NULL: the chain's policy). */
struct bpf_slot {
	const struct ir_chain *chain;
	const struct ir_rule *rule;
};

struct bpf_prog_spec {
	const struct ir_table *table;
	enum cgfw_dir dir;
	const struct cgfw_cgroup *cgroup;
	const struct ir_chain **chains;	/* bound here, by priority */
	size_t n_chains;
	struct emitter em;
	struct bpf_slot *slots;		/* counters map: one per slot */
	size_t n_slots;
	size_t counters_map;		/* index in the table's maps */
};

/* Everything the bpf backend makes of one table. */
struct bpf_table {
	const struct cgfw_ruleset *rs;
	const struct ir_table *table;
	struct bpf_map_spec *maps;
	size_t n_maps;
	/* quotas and limits: one slot each, however often inlined */
	struct bpf_state {
		size_t map;		/* SIZE_MAX: none yet */
		const void **exprs;	/* slot -> the expression */
		size_t n;
	} quotas, limits;
	struct bpf_prog_spec *progs;
	size_t n_progs;
};

/* Can the bpf backend compile every table of @rs? (no kernel change) */
int bpf_check(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs);

/* Compile @t into programs and map specifications; errors in ctx. */
int bpf_table_compile(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		      const struct ir_table *t, struct bpf_table *out);
void bpf_table_release(struct bpf_table *bt);

/* A set's map: type, sizes, elements (@table NULL: no chains at hand). */
int bpf_set_spec(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		 const struct cgfw_loc *loc, const struct ir_table *table,
		 const struct ir_set *set, struct bpf_map_spec *m);

/* The program of @p, generated into p->em (codegen.c). */
int bpf_prog_generate(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		      struct bpf_table *bt, struct bpf_prog_spec *p);

/*
 * Load, attach and pin a compiled table (which it releases); remove one
 * (NULL: all); list (load.c).
 */
int bpf_table_name_ok(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		      const struct ir_table *t);
int bpf_table_apply(struct cgfw_ctx *ctx, struct bpf_table *compiled);
int bpf_set_decl(struct cgfw_ctx *ctx, const char *table, const char *set,
		 char **decl);
int bpf_update(struct cgfw_ctx *ctx, const struct upd_cmds *u);
int bpf_table_remove(struct cgfw_ctx *ctx, const char *name);
int bpf_list(struct cgfw_ctx *ctx, const char *name, struct cgfw_listing *l);

/* @n_tables compiled tables as one ELF object; map-filling commands (elf.c) */
int bpf_tables_write_elf(struct cgfw_ctx *ctx, struct bpf_table *bts,
			 size_t n_tables, const char *path,
			 struct strbuf *commands);
/* Load a compiled table's programs, unattached, pinned in @dir (load.c) */
int bpf_table_pin(struct cgfw_ctx *ctx, struct bpf_table *bt, const char *dir,
		  struct strbuf *pinned);

/* The map index a BPF_PSEUDO_MAP_FD load refers to before loading. */
#define MAP_IDX_BIAS 0x40000000

#endif /* CGFW_BPF_TABLE_H */
