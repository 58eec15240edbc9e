/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backends behind one table of operations (nft/target.c,
 * bpf/backend.c), and what the operations over all of them share.
 *
 * An apply is a transaction over one or two backends: each first stages
 * what it will install (everything that can fail without changing what
 * runs: compiling, loading, the verifier), then commits it. backend.c
 * orders the commits and records the transaction where the next cgfw
 * command finds it, so that an apply that was killed is finished or
 * rolled back (docs/design.rst, "Trust").
 */
#ifndef CGFW_BACKEND_H
#define CGFW_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "front/ir.h"
#include "model/model.h"
#include "update.h"

struct nftnl_set;

/* What an apply installs: its generation, and in which backends. */
struct cgfw_apply_info {
	uint64_t gen;		/* CLOCK_REALTIME ns: later applies are larger */
	uint16_t nft_family;	/* the nft target's family, or 0 */
	bool bpf;		/* the bpf backend too */
};

/* A table a backend holds, and the apply that made it. */
struct backend_table {
	char *name;
	struct cgfw_apply_info made_by;
};

struct backend_ops {
	const char *name;
	/* 0 if usable here, else -EOPNOTSUPP with the reason in ctx. */
	int (*probe)(struct cgfw_ctx *ctx);
	/* Can it hold every table of @rs? Nothing is loaded. */
	int (*check)(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs);
	/*
	 * Everything short of changing what runs, for the apply @ai:
	 * *@priv is what commit and abort take.
	 */
	int (*stage)(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		     const struct cgfw_apply_info *ai, void **priv);
	/* Make the staged tables the ones that run; priv is released. */
	int (*commit)(struct cgfw_ctx *ctx, void *priv);
	/* Forget what was staged; priv is released. */
	void (*abort)(void *priv);
	/* @name NULL: every table of this backend. -ENOENT: none found. */
	int (*remove)(struct cgfw_ctx *ctx, const char *name);
	int (*list)(struct cgfw_ctx *ctx, const char *name,
		    struct cgfw_listing *l);
	/*
	 * The set @set of table @table, attributes only, as the kernel has
	 * it (to compile elements against); -ENOENT: not here.
	 */
	int (*set_object)(struct cgfw_ctx *ctx, const char *table,
			  const char *set, struct nftnl_set **out);
	/* Element changes to the tables it holds; -ENOENT: none of them. */
	int (*update)(struct cgfw_ctx *ctx, const struct upd_cmds *u);
	/* The tables it holds: a malloc()ed array. */
	int (*tables)(struct cgfw_ctx *ctx, struct backend_table **v,
		      size_t *n);
	/*
	 * An apply that was interrupted after staging @name (NULL if this
	 * backend never stages anything outside one transaction): 0 and
	 * what it was, or -ENOENT.
	 */
	int (*pending)(struct cgfw_ctx *ctx, const char *name,
		       struct cgfw_apply_info *ai);
	/* Finish it (@forward) or forget it. */
	int (*finish)(struct cgfw_ctx *ctx, const char *name, bool forward);
	/* The names of its tables with a pending apply (NULL-ended). */
	char **(*pending_tables)(void);
};

void cgfw_backend_tables_free(struct backend_table *v, size_t n);

struct cgfw_lock;
/* cgfw's lock: of this network namespace, and of its pins in bpffs. */
int cgfw_backend_lock(struct cgfw_ctx *ctx, struct cgfw_lock *l);
/* The lock, and an interrupted apply finished: how every command starts. */
int cgfw_backend_begin(struct cgfw_ctx *ctx, struct cgfw_lock *l);

extern const struct backend_ops cgfw_backend_nft_emulated;
extern const struct backend_ops cgfw_backend_nft_native;
extern const struct backend_ops cgfw_backend_bpf;

/* Every backend that can hold tables: for list, delete, flush, update. */
const struct backend_ops *const *cgfw_backends(size_t *n);

#endif /* CGFW_BACKEND_H */
