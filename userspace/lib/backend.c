// SPDX-License-Identifier: LGPL-2.1-or-later
/* Choosing a backend, and the operations over all of them. */
#include <stdlib.h>

#include "backend.h"
#include "bpf/table.h"
#include "nft/nft.h"

/* Every backend that can hold tables, for delete, flush and list. */
static const struct backend_ops *const all_backends[] = {
	&nft_native_backend,
	&nft_emul_backend,
	&bpf_backend,
};

const struct backend_ops *const *backends_all(size_t *n)
{
	*n = ARRAY_SIZE(all_backends);
	return all_backends;
}

/* The nft backend's target: native where the kernel has the family. */
static const struct backend_ops *nft_target(struct cgfw_ctx *ctx)
{
	if (!nft_native_backend.probe(ctx))
		return &nft_native_backend;
	ctx_reset(ctx);
	return &nft_emul_backend;
}

/*
 * The backends that carry out @b, or -EOPNOTSUPP with the reason. "nft" is
 * the native cgroup family where the kernel has it, else the emulated
 * target. "auto" takes the native family first (the kernel runs exactly
 * the user's chains, where cgroup BPF runs), then bpf where the kernel
 * loads CGROUP_SKB programs and the compiler can do every rule, else the
 * emulated target.
 */
static int select_backends(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			   enum cgfw_backend b, const struct backend_ops **out,
			   size_t *n)
{
	const struct backend_ops *nft;

	*n = 0;
	switch (b) {
	case CGFW_BACKEND_AUTO:
		nft = nft_target(ctx);
		if (nft != &nft_native_backend && !bpf_backend.probe(ctx) &&
		    !bpf_check(ctx, rs)) {
			out[(*n)++] = &bpf_backend;
			return 0;
		}
		ctx_reset(ctx);
		out[(*n)++] = nft;
		return 0;
	case CGFW_BACKEND_NFT:
		nft = nft_target(ctx);
		out[(*n)++] = nft;
		return nft->probe(ctx);
	case CGFW_BACKEND_NFT_NATIVE:
		out[(*n)++] = &nft_native_backend;
		return nft_native_backend.probe(ctx);
	case CGFW_BACKEND_NFT_EMULATED:
		out[(*n)++] = &nft_emul_backend;
		return nft_emul_backend.probe(ctx);
	case CGFW_BACKEND_BPF:
		out[(*n)++] = &bpf_backend;
		return bpf_backend.probe(ctx);
	case CGFW_BACKEND_BOTH:
		/* refused as a whole if either cannot do every rule */
		nft = nft_target(ctx);
		out[(*n)++] = &bpf_backend;
		out[(*n)++] = nft;
		return nft->probe(ctx) ? :
		       bpf_backend.probe(ctx) ? : bpf_check(ctx, rs);
	}
	return -EINVAL;
}

/* After an apply: the same tables go from the backends not chosen. */
static int remove_elsewhere(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			    const struct backend_ops **chosen, size_t n)
{
	const struct ir_table *t;
	size_t i, j;
	int ret;

	for (i = 0; i < ARRAY_SIZE(all_backends); i++) {
		for (j = 0; j < n; j++)
			if (chosen[j] == all_backends[i])
				break;
		if (j < n)
			continue;
		list_for_each_entry(t, &rs->tables, list) {
			ret = all_backends[i]->remove(ctx, t->name);
			if (ret && ret != -ENOENT)
				return ret;
		}
	}
	return 0;
}

CGFW_API int cgfw_ruleset__apply(struct cgfw_ctx *ctx,
				 const struct cgfw_ruleset *rs,
				 const struct cgfw_apply_opts *opts)
{
	const struct backend_ops *be[ARRAY_SIZE(all_backends)];
	enum cgfw_backend b = CGFW_BACKEND_AUTO;
	size_t n, i;
	int ret;

	if (!ctx || !rs)
		return libcgfw_err(-EINVAL);
	if (opts && opts->sz >= offsetof(struct cgfw_apply_opts, backend) +
				       sizeof(opts->backend))
		b = opts->backend;
	ctx_reset(ctx);
	ret = select_backends(ctx, rs, b, be, &n);
	/*
	 * With two backends, both were checked first, so only a kernel
	 * refusal can stop the second after the first took effect.
	 */
	for (i = 0; !ret && i < n; i++)
		ret = be[i]->apply(ctx, rs);
	if (!ret)
		ret = remove_elsewhere(ctx, rs, be, n);
	return libcgfw_err(ret);
}

static int remove_all(struct cgfw_ctx *ctx, const char *name)
{
	bool found = false;
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(all_backends); i++) {
		ret = all_backends[i]->remove(ctx, name);
		if (ret == -ENOENT)
			continue;
		if (ret)
			return ret;
		found = true;
	}
	if (name && !found) {
		ctx_err(ctx, "cgfw installed no table '%s' in this network namespace; 'cgfw list' shows what is installed",
			name);
		return -ENOENT;
	}
	return 0;
}

CGFW_API int cgfw_table__delete(struct cgfw_ctx *ctx, const char *name)
{
	if (!ctx || !name)
		return libcgfw_err(-EINVAL);
	ctx_reset(ctx);
	return libcgfw_err(remove_all(ctx, name));
}

CGFW_API int cgfw_flush(struct cgfw_ctx *ctx)
{
	if (!ctx)
		return libcgfw_err(-EINVAL);
	ctx_reset(ctx);
	return libcgfw_err(remove_all(ctx, NULL));
}

int listing_add(struct cgfw_listing *l, struct inst_table *t)
{
	struct inst_table *v;

	v = realloc(l->tables, (l->n_tables + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->tables = v;
	v[l->n_tables++] = *t;
	return 0;
}

void inst_table_release(struct inst_table *t)
{
	size_t i;

	for (i = 0; i < t->n_chains; i++) {
		free(t->chains[i].name);
		free(t->chains[i].cgroup_path);
	}
	free(t->chains);
	free(t->name);
	free(t->kernel_name);
	free(t->nft_text);
	memset(t, 0, sizeof(*t));
}

CGFW_API void cgfw_listing__free(struct cgfw_listing *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n_tables; i++)
		inst_table_release(&l->tables[i]);
	free(l->tables);
	free(l);
}

CGFW_API int cgfw_listing__new(struct cgfw_ctx *ctx, const char *table,
			       struct cgfw_listing **out)
{
	struct cgfw_listing *l;
	size_t i;
	int ret = 0;

	if (!ctx || !out)
		return libcgfw_err(-EINVAL);
	ctx_reset(ctx);
	l = calloc(1, sizeof(*l));
	if (!l)
		return libcgfw_err(-ENOMEM);
	for (i = 0; !ret && i < ARRAY_SIZE(all_backends); i++)
		ret = all_backends[i]->list(ctx, table, l);
	if (!ret && table && !l->n_tables) {
		ctx_err(ctx, "cgfw installed no table '%s' in this network namespace; 'cgfw list' shows what is installed",
			table);
		ret = -ENOENT;
	}
	if (ret) {
		cgfw_listing__free(l);
		return libcgfw_err(ret);
	}
	*out = l;
	return 0;
}
