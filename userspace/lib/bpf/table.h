/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bpf backend: for each table and each (cgroup, direction) it binds,
 * one BPF_PROG_TYPE_CGROUP_SKB program.
 *
 * compile/, what makes a table's programs:
 *	maps.c		a table's sets as BPF maps, its programs grouped
 *	codegen.c	nf_tables bytecode to BPF, through emit.c
 *	object.c	the table's BTF, and the programs as an ELF object
 * cls/, the classifier: runs of rules as a decision tree
 *	(docs/classifier.rst)
 * and here, what runs and reads what is installed:
 *	load.c		maps created and filled, the description, the
 *			programs loaded (the verifier's log mapped to rules)
 *	install.c	generations pinned in bpffs, attached with bpf_link,
 *			switched, recovered, removed
 *	read.c		what runs, back into the model
 *	update.c	named sets' maps changed in place
 *	expire.c	expired elements out of the sets' maps
 *	backend.c	the backend's operations and the library's bpf calls
 *
 * Program flavour: the context is a struct __sk_buff whose data starts at
 * the network header (no link layer); return 1 lets the packet pass, 0
 * drops it. r6 holds the context, r7 the nft family of the packet, r8 the
 * transport header offset (-1: none, as for a later fragment), r9 the layer
 * 4 protocol (-1: unknown); nft's 16 32-bit registers live on the stack.
 */
#ifndef CGFW_BPF_TABLE_H
#define CGFW_BPF_TABLE_H

#include <linux/netfilter/nf_tables.h>

#include "bpf/compile/emit.h"
#include "front/intervals.h"

#define CGFW_BPFFS	"/sys/fs/bpf"
#define CGFW_PIN_ROOT	CGFW_BPFFS "/cgfw"
/* the longest table name: "_gone-NAME" (bpf/install.c) within NAME_MAX */
#define CGFW_BPF_NAME_MAX	(255 - 6)

/* A map a program uses: a set of the table, counters, state, description. */
struct bpf_map_spec {
	char name[16];			/* BPF_OBJ_NAME_LEN */
	const struct ir_set *set;	/* NULL: not a set */
	uint32_t type;			/* BPF_MAP_TYPE_* */
	uint32_t key_size, value_size, max_entries, flags;
	void *keys, *values;		/* n_elems entries of each */
	uint32_t n_elems;
	uint32_t cap_elems;		/* room for, where a set fills it */
	bool inline_only;		/* compiled as comparisons: no map */
	/*
	 * intervals of concatenations: each element a box, key its first
	 * key and value its last; the programs compare with the boxes
	 * (codegen.c, gen_boxes()), the map is only what cgfw list reads
	 */
	bool boxes;		/* the value: the last key, then the data */
	/*
	 * a set with timeouts: each value's struct cgfw_elem_time is at
	 * this offset (0: none); armed: its expiries count from now
	 */
	uint32_t time_off;
	bool armed;
	/* a map's data (or { verdict, chain }) in each value */
	uint32_t data_off, data_size;
	bool spin_lock;			/* values start with a bpf_spin_lock */
	struct nftnl_expr *meter;	/* a meter's statement (codegen.h) */
	bool desc;			/* the description (bpf/desc.h) */
	/*
	 * an array of one element that the programs read in place
	 * (BPF_PSEUDO_MAP_VALUE): in an object, .rodata, which libbpf
	 * fills and freezes
	 */
	bool rodata;
	int fd;				/* -1 until created */
};

/*
 * The largest value of a set's element: 64 bytes of data, and times or
 * (intervals of concatenations) the last key.
 */
#define CGFW_BPF_VALUE_MAX	128

/*
 * The end of an element's value in a set with timeouts (flags timeout),
 * after its data or a meter's state: when it expires, and the timeout it
 * was given, which the listing shows when it is not the set's.
 */
struct cgfw_elem_time {
	uint64_t expires;	/* bpf_ktime_get_ns() (CLOCK_MONOTONIC); 0: never */
	uint64_t timeout;	/* ms; 0: none */
};

/*
 * The longest timeout counted (ms, about 146 years): now plus it in ns
 * stays within 64 bits; a longer one is this one.
 */
#define CGFW_TIMEOUT_MAX_MS	(UINT64_MAX / 4 / 1000000)

static inline uint64_t cgfw_timeout_ms(uint64_t ms)
{
	return ms < CGFW_TIMEOUT_MAX_MS ? ms : CGFW_TIMEOUT_MAX_MS;
}

/*
 * The size of the value of a set's map element (flags NFT_SET_*; a map's
 * data type and length) and, with timeouts, where its struct
 * cgfw_elem_time is (else 0).
 */
static inline uint32_t cgfw_bpf_value_size(uint32_t flags, uint32_t data_type,
					   uint32_t data_len,
					   uint32_t *time_off)
{
	uint32_t size = !(flags & NFT_SET_MAP) ? 1 :
			data_type == NFT_DATA_VERDICT ? 8 :
			(data_len + 3) / 4 * 4;

	*time_off = 0;
	if (!(flags & NFT_SET_TIMEOUT))
		return size;
	*time_off = (size + 7) / 8 * 8;
	return *time_off + sizeof(struct cgfw_elem_time);
}

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
	bool cls;			/* the classifier made some of it */
	size_t cls_map;			/* then its blob's map */
	bool no_cls;			/* compiled rule by rule */
	int fd;				/* loaded: -1 until then */
};

/* Everything the bpf backend makes of one table. */
struct bpf_table {
	const struct cgfw_ruleset *rs;
	const struct ir_table *table;
	struct bpf_map_spec *maps;
	size_t n_maps;
	size_t desc_map;		/* index of the description's map */
	/*
	 * quotas and limits: one slot each, however often inlined; named
	 * counters, quotas and limits one each, however often used
	 */
	struct bpf_state {
		size_t map;		/* SIZE_MAX: none yet */
		const void **exprs;	/* slot -> the expression */
		size_t n;
	} quotas, limits, counter_objs, numgens,
	  logs;			/* log statements: records lost, each */
	size_t log_ring;		/* their ring buffer; SIZE_MAX: none */
	bool conntrack;			/* reads ct: needs its keeper */
	struct bpf_prog_spec *progs;
	size_t n_progs;
};

/* ---- compiling (maps.c, codegen.c) ---- */

/* Compile @t into programs and map specifications; errors in ctx. */
int cgfw_bpf_compile_table(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			   const struct ir_table *t, struct bpf_table *out);
/*
 * @bt compiled again, from scratch, its program @k (and those that were)
 * rule by rule, without the classifier; what was loaded is closed.
 */
int cgfw_bpf_recompile(struct cgfw_ctx *ctx, struct bpf_table *bt, size_t k);
/* Every table of @rs compiled, or none (errors in ctx). */
int cgfw_bpf_compile_all(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			 struct bpf_table **out, size_t *n);
void cgfw_bpf_release_all(struct bpf_table *bt, size_t n);
/* Closes what was loaded too. */
void cgfw_bpf_table_release(struct bpf_table *bt);

/* A set's map: type, sizes, elements (@table NULL: no chains at hand). */
int cgfw_bpf_set_spec(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		      const struct cgfw_loc *loc, const struct ir_table *table,
		      const struct ir_set *set, struct bpf_map_spec *m);
/*
 * A set with timeouts: its elements' times made to count from now (once;
 * before the map is filled: cgfw_bpf_set_spec() gives the ms left).
 */
void cgfw_bpf_arm_timeouts(struct bpf_map_spec *m);
/* [@lo, @hi] as the prefixes of an LPM trie, each with @value. */
int cgfw_bpf_add_range(struct bpf_map_spec *m, cgfw_u128 lo, cgfw_u128 hi,
		       uint32_t klen, const uint8_t *value);

struct cgfw_bpf_ext;
/*
 * The program of @p, generated into p->em (codegen.c), with the
 * extension @ext (bpf/compile/codegen.h; NULL: rule by rule).
 */
int cgfw_bpf_generate(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		      struct bpf_table *bt, struct bpf_prog_spec *p,
		      const struct cgfw_bpf_ext *ext);

/* Can the bpf backend compile every table of @rs? (no kernel change) */
int cgfw_bpf_check(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs);

/* ---- the object (object.c) ---- */

struct btf;
/*
 * The BTF of @bt's maps (the ELF's .maps definitions, and the value type
 * of a limit's state with its bpf_spin_lock). *@limit_key and
 * @limit_value[0] get the key and value type ids of a limit's state,
 * @limit_value[1] the value's of a meter's limits in a set with timeouts.
 */
struct btf *cgfw_bpf_btf(const struct bpf_table *bt, size_t n_tables,
			 uint32_t *limit_key, uint32_t *limit_value,
			 int **map_var);
/* @n_tables compiled tables as one ELF object; map-filling commands. */
int cgfw_bpf_write_elf(struct cgfw_ctx *ctx, struct bpf_table *bts,
		       size_t n_tables, const char *path,
		       struct strbuf *commands);

/* ---- loading (load.c) ---- */

/*
 * Create and fill @bt's maps, write its description (generation @gen, of
 * an apply that had the nft family @with_nft too, or 0), and load its
 * programs: p->fd and each map's fd set; nothing attached. Errors, the
 * verifier's among them, into ctx with the rule's place.
 */
int cgfw_bpf_load(struct cgfw_ctx *ctx, struct bpf_table *bt, uint64_t gen,
		  uint32_t with_nft);
/* Does the table's name make a directory name? */
int cgfw_bpf_name_ok(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		     const struct ir_table *t);

/* ---- what is installed (install.c) ---- */

/* "link-egress-1234" for the program of @dir on cgroup @cgid */
void cgfw_bpf_key(char *buf, size_t size, const char *what, enum cgfw_dir dir,
		  uint64_t cgid);
/* Mount bpffs if needed and make the root of cgfw's pins. */
int cgfw_bpf_ensure_root(struct cgfw_ctx *ctx);
/*
 * Pin the loaded programs of @bt under its table's directory as the next
 * generation ("_next") of the apply @ai, atomically: the generation that
 * the next commit, or the next cgfw command after a crash, switches the
 * links to.
 */
int cgfw_bpf_stage(struct cgfw_ctx *ctx, const struct bpf_table *bt,
		   const struct cgfw_apply_info *ai);
/*
 * Mark the apply of generation @gen as begun to commit: from then on an
 * interrupted apply is finished, not rolled back (unless its nft part
 * did not take effect). One mark in the root for all its tables.
 */
int cgfw_bpf_mark(struct cgfw_ctx *ctx, uint64_t gen);
bool cgfw_bpf_marked(uint64_t gen);
/* Remove the marks, if no table is staged any more. */
void cgfw_bpf_unmark(void);
/*
 * Switch the links of table @name to its staged generation, keeping what
 * they ran; then settle (the links it no longer has removed, and what was
 * kept) or unswitch (every link as it was).
 */
int cgfw_bpf_switch(struct cgfw_ctx *ctx, const char *name);
void cgfw_bpf_settle(const char *name);
void cgfw_bpf_unswitch(const char *name);
/* Remove a pin; a link's is detached before this returns. */
void cgfw_bpf_unpin(const char *path);
/* Forget the staged generation of @name. */
void cgfw_bpf_unstage(const char *name);
/* Is there a staged generation of @name? */
bool cgfw_bpf_staged(const char *name);
/* The tables with a staged generation: a malloc()ed NULL-ended list. */
char **cgfw_bpf_staged_tables(void);
/*
 * The apply staged as the next generation of @name, and whether it had
 * begun to commit: -ENOENT if none.
 */
int cgfw_bpf_pending(struct cgfw_ctx *ctx, const char *name,
		     struct cgfw_apply_info *ai, bool *begun);
int cgfw_bpf_remove(struct cgfw_ctx *ctx, const char *name);
/* A delete: table @name (NULL: each) set aside, and removed for good. */
int cgfw_bpf_set_aside(struct cgfw_ctx *ctx, const char *name);
char **cgfw_bpf_set_aside_tables(bool *all);
void cgfw_bpf_bury(void);
/* The loaded programs of @bt, unattached, pinned in @dir. */
int cgfw_bpf_pin_progs(struct cgfw_ctx *ctx, const struct bpf_table *bt,
		       const char *dir, struct strbuf *pinned);

/* ---- reading what runs (read.c) ---- */

struct cgfw_listing;
struct nftnl_set;
struct desc;

int cgfw_bpf_list(struct cgfw_ctx *ctx, const char *name,
		  struct cgfw_listing *l);
/* ---- the conntrack keeper of a table that reads ct (keeper.c) ---- */

/* Make it, if it is not there (*@made: it was not). */
int cgfw_bpf_keep_ct(struct cgfw_ctx *ctx, const char *table,
		     const struct cgfw_source *src, const struct cgfw_loc *loc,
		     bool *made);
/* Delete it; one that another process holds is left. */
int cgfw_bpf_unkeep_ct(struct cgfw_ctx *ctx, const char *table);
/* 1 if it is there, 0 if not, or -errno. */
int cgfw_bpf_ct_kept(struct cgfw_ctx *ctx, const char *table);
/* The tables whose keepers are in this network namespace. */
struct cgfw_keepers {
	char **v;
	size_t n;
	int err;
};
int cgfw_bpf_keepers(struct cgfw_ctx *ctx, struct cgfw_keepers *ns);
void cgfw_bpf_keepers_release(struct cgfw_keepers *ns);

/* The description program @prog carries (bpf/desc.h); -ENOENT: none. */
int cgfw_bpf_prog_desc(int prog, struct desc *d);
/*
 * The description each program of table @name carries, and their links'
 * keys; the first that a program of the table runs with.
 */
int cgfw_bpf_running_desc(const char *name, struct desc *d);
/* The tables that run programs, and the apply that made them. */
int cgfw_bpf_tables(struct cgfw_ctx *ctx, struct backend_table **v,
		    size_t *n);
int cgfw_bpf_set_object(struct cgfw_ctx *ctx, const char *table,
			const char *set, struct nftnl_set **out);
/* The fd of map @id if a program of table @table uses it. */
int cgfw_bpf_table_map(const char *table, uint32_t id);

/* ---- updates (update.c) ---- */

int cgfw_bpf_update(struct cgfw_ctx *ctx, struct upd_cmds *u);
void cgfw_bpf_update_end(struct upd_cmds *u, bool undo);

/*
 * The map index a BPF_PSEUDO_MAP_FD or BPF_PSEUDO_MAP_VALUE load refers to
 * before loading.
 */
#define MAP_IDX_BIAS 0x40000000

#endif /* CGFW_BPF_TABLE_H */
