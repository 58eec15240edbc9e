/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The backends behind one table of operations. */
#ifndef CGFW_BACKEND_H
#define CGFW_BACKEND_H

#include "front/ir.h"
#include "model/model.h"
#include "update.h"

struct backend_ops {
	const char *name;
	/* 0 if usable here, else -EOPNOTSUPP with the reason in ctx. */
	int (*probe)(struct cgfw_ctx *ctx);
	int (*apply)(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs);
	/* @names NULL: every table of this backend. -ENOENT: none found. */
	int (*remove)(struct cgfw_ctx *ctx, const char *name);
	int (*list)(struct cgfw_ctx *ctx, const char *name,
		    struct cgfw_listing *l);
	/* The declaration of set @set of table @table; -ENOENT: not here. */
	int (*set_decl)(struct cgfw_ctx *ctx, const char *table,
			const char *set, char **decl);
	/* Element changes to the tables it holds; -ENOENT: none of them. */
	int (*update)(struct cgfw_ctx *ctx, const struct upd_cmds *u);
};

extern const struct backend_ops nft_emul_backend;
extern const struct backend_ops nft_native_backend;
extern const struct backend_ops bpf_backend;

/* Every backend that can hold tables: for list, delete, flush, update. */
const struct backend_ops *const *backends_all(size_t *n);

#endif /* CGFW_BACKEND_H */
