// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The bpf backend: nft bytecode compiled to CGROUP_SKB programs
 * (DESIGN.md 2.3). Not built yet: every operation says so.
 */
#include "internal.h"

static int bpf_unavailable(struct cgfw_ctx *ctx)
{
	ctx_err(ctx, "the bpf backend is not built yet; use '-b nft' (the emulated nf_tables target works on this kernel)");
	return -EOPNOTSUPP;
}

static int bpf_apply(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	(void)rs;
	return bpf_unavailable(ctx);
}

/* Nothing of this backend can be installed, so there is nothing to find. */
static int bpf_remove(struct cgfw_ctx *ctx, const char *name)
{
	(void)ctx;
	return name ? -ENOENT : 0;
}

static int bpf_list(struct cgfw_ctx *ctx, const char *name,
		    struct cgfw_listing *l)
{
	(void)ctx;
	(void)name;
	(void)l;
	return 0;
}

const struct backend_ops bpf_backend = {
	.name = "bpf",
	.probe = bpf_unavailable,
	.apply = bpf_apply,
	.remove = bpf_remove,
	.list = bpf_list,
};
