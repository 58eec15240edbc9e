/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a backend offers (nft/target.c, bpf/backend.c) to the operations
 * over all of them (backend.c): one table of operations, and what an
 * apply leaves behind to say which apply it was.
 */
#ifndef CGFW_BACKEND_OPS_H
#define CGFW_BACKEND_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "front/ir.h"
#include "model/model.h"
#include "update_cmds.h"

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

/* backend_ops.update: none of the tables named is held here */
#define CGFW_NOT_HELD	1

struct backend_ops {
	const char *name;
	uint16_t nft_family;	/* an nf_tables target's family; 0: not one */
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
	/*
	 * Make the staged tables the ones that run. On failure nothing
	 * changed and priv is released; on success it is released too,
	 * unless the backend can undo: then undo or settle releases it.
	 */
	int (*commit)(struct cgfw_ctx *ctx, void *priv);
	/* Optional: put back what commit changed (a later commit failed). */
	void (*undo)(void *priv);
	/* With undo: the apply took effect; what undo needed goes. */
	void (*settle)(void *priv);
	/* Forget what was staged (not committed); priv is released. */
	void (*abort)(void *priv);
	/*
	 * @name NULL: every table of this backend (not asked of a backend
	 * with set_aside). -ENOENT: none found.
	 */
	int (*remove)(struct cgfw_ctx *ctx, const char *name);
	/*
	 * Optional: -EPERM, with the reason, if another process holds table
	 * @name (NULL: any table) of this backend, so that this one cannot
	 * change or remove it; asked before anything changes.
	 */
	int (*held)(struct cgfw_ctx *ctx, const char *name);
	/*
	 * Optional, for a delete that cannot remove a table in one step:
	 * set it aside in one (it still runs, and is not listed), as the
	 * mark that its delete has begun; bury() removes what is set aside,
	 * once the other backends have removed the same tables. A command
	 * killed in between is finished by the next (set_aside_tables;
	 * *@all: it was a flush, of every table of every backend).
	 */
	int (*set_aside)(struct cgfw_ctx *ctx, const char *name);
	char **(*set_aside_tables)(bool *all);
	void (*bury)(struct cgfw_ctx *ctx);
	int (*list)(struct cgfw_ctx *ctx, const char *name,
		    struct cgfw_listing *l);
	/*
	 * The set @set of table @table, attributes only, as the kernel has
	 * it (to compile elements against); -ENOENT: not here.
	 */
	int (*set_object)(struct cgfw_ctx *ctx, const char *table,
			  const char *set, struct nftnl_set **out);
	/*
	 * Element and rule changes to the tables it holds: 0, -errno, or
	 * CGFW_NOT_HELD if it holds none of them (an error of the change,
	 * -ENOENT included, is an error).
	 * A backend whose changes are not one transaction keeps what it
	 * changed in u->journal and has update_end(): @undo puts every
	 * change back (a failure of its own, or of a later backend), else
	 * the journal is dropped. Those backends update first.
	 */
	int (*update)(struct cgfw_ctx *ctx, struct upd_cmds *u);
	void (*update_end)(struct upd_cmds *u, bool undo);
	/* The tables it holds: a malloc()ed array. */
	int (*tables)(struct cgfw_ctx *ctx, struct backend_table **v,
		      size_t *n);
	/*
	 * An apply that was interrupted after staging @name (NULL if this
	 * backend never stages anything outside one transaction): 0 and
	 * what it was, or -ENOENT. *@begun: it had begun to commit (every
	 * backend had staged), so it is to be finished unless its nft part
	 * did not take effect.
	 */
	int (*pending)(struct cgfw_ctx *ctx, const char *name,
		       struct cgfw_apply_info *ai, bool *begun);
	/*
	 * Optional, for a backend whose commit is one transaction (the nft
	 * targets): the apply that made table @name, as the kernel has it;
	 * -ENOENT: the table is not there. Recovery asks it whether an
	 * apply's part here took effect.
	 */
	int (*generation)(struct cgfw_ctx *ctx, const char *name,
			  uint64_t *gen);
	/*
	 * Finish the tables @names of one apply (@forward), all or none
	 * (a table that cannot be finished puts back every one), or put
	 * them back.
	 */
	int (*finish)(struct cgfw_ctx *ctx, char *const *names, size_t n,
		      bool forward);
	/* The names of its tables with a pending apply (NULL-ended). */
	char **(*pending_tables)(void);
};

static inline void cgfw_backend_tables_free(struct backend_table *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

#endif /* CGFW_BACKEND_OPS_H */
