// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The operations over all backends: choosing the backends of an apply, the
 * apply itself as one transaction, and finishing one that was interrupted;
 * delete, flush and list. Every one of them holds cgfw's lock
 * (base/lock.h) from start to end.
 *
 * An apply stages every backend it uses first (all that can fail without
 * changing what runs), then switches the bpf programs (keeping what they
 * replace), then commits the nft table (one nf_tables transaction; if the
 * kernel refuses it, the bpf programs are put back), then lets go of the
 * old programs and removes the table from the backends it no longer uses. What each step leaves behind says
 * which apply made it (struct cgfw_apply_info, kept in the nft table's
 * userdata and in the bpf programs' description), so that the next
 * command, finding an apply that was killed on the way, finishes it or
 * rolls it back (recover()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <linux/netfilter.h>

#include "backend.h"
#include "base/lock.h"
#include "bpf/table.h"
#include "nft/nft.h"

/* Every backend that can hold tables, for delete, flush and list. */
static const struct backend_ops *const all_backends[] = {
	&cgfw_backend_nft_native,
	&cgfw_backend_nft_emulated,
	&cgfw_backend_bpf,
};

const struct backend_ops *const *cgfw_backends(size_t *n)
{
	*n = ARRAY_SIZE(all_backends);
	return all_backends;
}

/* ---- the lock ---- */

int cgfw_backend_lock(struct cgfw_ctx *ctx, struct cgfw_lock *l)
{
	return cgfw_lock(ctx, CGFW_PIN_ROOT, l);
}

/* ---- choosing ---- */

/* The nft backend's target: native where the kernel has the family. */
static const struct backend_ops *nft_target(struct cgfw_ctx *ctx)
{
	if (!cgfw_backend_nft_native.probe(ctx))
		return &cgfw_backend_nft_native;
	cgfw_ctx_reset(ctx);
	return &cgfw_backend_nft_emulated;
}

/*
 * The backends that carry out @b, or -EOPNOTSUPP with the reason. "nft" is
 * the native cgroup family where the kernel has it, else the emulated
 * target. "auto" takes the native family first (the kernel runs exactly
 * the user's chains, where cgroup BPF runs), then bpf where the kernel
 * loads CGROUP_SKB programs and the compiler can do every rule, else the
 * emulated target. Each backend chosen has checked the ruleset (which
 * says what a target does otherwise than the others), but the bpf backend
 * asked for alone: its stage compiles it anyway. The bpf backend's check
 * keeps what it compiled for the stage of the same call (bpf/backend.c).
 */
static int select_backends(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
			   enum cgfw_backend b, const struct backend_ops **out,
			   size_t *n)
{
	const struct backend_ops *nft, *bpf = &cgfw_backend_bpf;

	*n = 0;
	switch (b) {
	case CGFW_BACKEND_AUTO:
		/*
		 * a fallback to nf_tables is said (the emulated target passes
		 * packets it cannot tie to a socket), the rest at debug level
		 */
		nft = nft_target(ctx);
		if (nft->nft_family == NFPROTO_CGROUP) {
			cgfw_log(ctx, CGFW_LOG_DEBUG,
				 "backend auto: nft-native (this kernel has the nf_tables cgroup family)");
		} else if (bpf->probe(ctx)) {
			cgfw_log(ctx, CGFW_LOG_WARN,
				 "backend auto: %s (this kernel cannot load CGROUP_SKB programs)",
				 nft->name);
		} else if (bpf->check(ctx, rs)) {
			cgfw_log(ctx, CGFW_LOG_WARN,
				 "backend auto: %s, because the bpf backend cannot compile this ruleset: %.*s",
				 nft->name,
				 (int)strcspn(cgfw_ctx__error(ctx), "\n"),
				 cgfw_ctx__error(ctx));
		} else {
			cgfw_log(ctx, CGFW_LOG_DEBUG, "backend auto: bpf");
			out[(*n)++] = bpf;
			return 0;
		}
		cgfw_ctx_reset(ctx);
		out[(*n)++] = nft;
		return nft->check(ctx, rs);
	case CGFW_BACKEND_NFT:
		nft = nft_target(ctx);
		out[(*n)++] = nft;
		return nft->probe(ctx) ? : nft->check(ctx, rs);
	case CGFW_BACKEND_NFT_NATIVE:
		nft = &cgfw_backend_nft_native;
		out[(*n)++] = nft;
		return nft->probe(ctx) ? : nft->check(ctx, rs);
	case CGFW_BACKEND_NFT_EMULATED:
		nft = &cgfw_backend_nft_emulated;
		out[(*n)++] = nft;
		return nft->probe(ctx) ? : nft->check(ctx, rs);
	case CGFW_BACKEND_BPF:
		out[(*n)++] = bpf;
		return bpf->probe(ctx);
	case CGFW_BACKEND_BOTH:
		/* refused as a whole if either cannot do every rule */
		nft = nft_target(ctx);
		out[(*n)++] = nft;
		out[(*n)++] = bpf;
		return nft->probe(ctx) ? : bpf->probe(ctx) ? :
		       bpf->check(ctx, rs) ? : nft->check(ctx, rs);
	}
	cgfw_err(ctx, "unknown backend %d", b);
	return -EINVAL;
}

/* ---- what an apply leaves, and finishing it ---- */

/* Remove @name from the backends that the apply @ai did not use. */
static int remove_elsewhere(struct cgfw_ctx *ctx, const char *name,
			    const struct cgfw_apply_info *ai)
{
	const struct backend_ops *be;
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(all_backends); i++) {
		be = all_backends[i];
		if (be->nft_family ? be->nft_family == ai->nft_family : ai->bpf)
			continue;
		ret = be->remove(ctx, name);
		if (ret && ret != -ENOENT)
			return ret;
	}
	return 0;
}

/* Did the nft side of @ai (if it had one) take effect for @name? */
static bool nft_done(struct cgfw_ctx *ctx, const char *name,
		     const struct cgfw_apply_info *ai)
{
	const struct backend_ops *be;
	uint64_t gen;
	size_t i;

	if (!ai->nft_family)
		return true;
	for (i = 0; i < ARRAY_SIZE(all_backends); i++) {
		be = all_backends[i];
		if (be->nft_family == ai->nft_family && be->generation)
			return !be->generation(ctx, name, &gen) &&
			       gen == ai->gen;
	}
	return false;
}

/* The apply that made each table, newest per name. */
struct latest {
	struct backend_table *v;
	size_t n;
};

static int note_tables(struct cgfw_ctx *ctx, struct latest *lt)
{
	struct backend_table *v, *nv;
	size_t n, i, j, k;
	int ret;

	for (i = 0; i < ARRAY_SIZE(all_backends); i++) {
		ret = all_backends[i]->tables(ctx, &v, &n);
		if (ret == -EOPNOTSUPP || ret == -EPROTONOSUPPORT ||
		    ret == -EAFNOSUPPORT)
			continue;	/* a family this kernel lacks */
		if (ret)
			return ret;
		for (j = 0; j < n; j++) {
			for (k = 0; k < lt->n; k++)
				if (!strcmp(lt->v[k].name, v[j].name))
					break;
			if (k < lt->n) {
				if (v[j].made_by.gen > lt->v[k].made_by.gen)
					lt->v[k].made_by = v[j].made_by;
				continue;
			}
			nv = realloc(lt->v, (lt->n + 1) * sizeof(*nv));
			if (!nv) {
				cgfw_backend_tables_free(v, n);
				return -ENOMEM;
			}
			lt->v = nv;
			lt->v[lt->n] = v[j];
			v[j].name = NULL;
			lt->n++;
		}
		cgfw_backend_tables_free(v, n);
	}
	return 0;
}

/* Remove @name (NULL: every table) from the backends but @except. */
static int remove_others(struct cgfw_ctx *ctx, const char *name,
			 const struct backend_ops *except)
{
	size_t j;
	int ret = 0;

	for (j = 0; !ret && j < ARRAY_SIZE(all_backends); j++) {
		if (all_backends[j] == except)
			continue;
		ret = all_backends[j]->remove(ctx, name);
		if (ret == -ENOENT)
			ret = 0;
	}
	return ret;
}

/*
 * A delete or flush that was killed: what it set aside goes from every
 * backend; a flush goes on with what it did not reach.
 */
static int finish_deletes(struct cgfw_ctx *ctx)
{
	const struct backend_ops *be;
	char **names;
	size_t i, k;
	int ret = 0;
	bool all;

	for (i = 0; i < ARRAY_SIZE(all_backends); i++) {
		be = all_backends[i];
		if (!be->set_aside_tables)
			continue;
		names = be->set_aside_tables(&all);
		if (all) {
			cgfw_log(ctx, CGFW_LOG_WARN,
				 "a flush was interrupted; finishing it");
			ret = be->set_aside(ctx, NULL);
			ret = ret == -ENOENT ? 0 : ret;
			ret = ret ? : remove_others(ctx, NULL, be);
		}
		for (k = 0; names && names[k]; k++) {
			if (!all && !ret) {
				cgfw_log(ctx, CGFW_LOG_WARN,
					 "a delete of table '%s' was interrupted; finishing it",
					 names[k]);
				ret = remove_others(ctx, names[k], be);
			}
			free(names[k]);
		}
		free(names);
		if (!ret)
			be->bury(ctx);
	}
	return ret;
}

/* The pending tables of @be, finished apply by apply. */
static int finish_applies(struct cgfw_ctx *ctx, const struct backend_ops *be)
{
	char **names = be->pending_tables(), **group = NULL;
	struct pending {
		struct cgfw_apply_info ai;
		bool begun, done;
	} *p = NULL;
	size_t n = 0, k, j, m;
	int ret = 0;
	bool fwd;

	while (names && names[n])
		n++;
	if (names) {
		p = calloc(n + 1, sizeof(*p));
		group = calloc(n + 1, sizeof(*group));
	}
	if (!p || !group)
		ret = -ENOMEM;
	for (k = 0; !ret && k < n; k++) {
		/* -ENOENT: nothing pending; any other error is one */
		ret = be->pending(ctx, names[k], &p[k].ai, &p[k].begun);
		p[k].done = ret == -ENOENT;
		if (ret == -ENOENT)
			ret = 0;
		else if (ret)
			cgfw_err(ctx, "cannot read what the interrupted apply of table '%s' left: %s",
				 names[k], strerror(-ret));
	}
	for (k = 0; !ret && k < n; k++) {
		if (p[k].done)
			continue;
		/* its apply's tables, together */
		fwd = p[k].begun;
		for (j = k, m = 0; j < n; j++) {
			if (p[j].done || p[j].ai.gen != p[k].ai.gen)
				continue;
			p[j].done = true;
			group[m++] = names[j];
			fwd = fwd && nft_done(ctx, names[j], &p[j].ai);
		}
		for (j = 0; j < m; j++)
			cgfw_log(ctx, CGFW_LOG_WARN,
				 "an apply of table '%s' was interrupted; %s",
				 group[j], fwd ? "finishing it" : !p[k].begun ?
				 "rolling it back (it had not begun to commit)" :
				 "rolling it back (its nf_tables part did not take effect)");
		ret = be->finish(ctx, group, m, fwd);
	}
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	free(group);
	free(p);
	return ret;
}

/*
 * Finish what commands that were killed left undone: a delete's tables
 * set aside go from every backend; the staged bpf generations of an
 * apply are switched to if it had begun to commit (every backend had
 * staged) and its nft side took effect (or it had none), else every link
 * is put back as it was; then each table is removed from the backends
 * that its latest apply did not use.
 */
static int recover(struct cgfw_ctx *ctx)
{
	struct latest lt = { 0 };
	size_t i, k;
	int ret = finish_deletes(ctx);

	for (i = 0; !ret && i < ARRAY_SIZE(all_backends); i++)
		if (all_backends[i]->pending_tables)
			ret = finish_applies(ctx, all_backends[i]);
	ret = ret ? : note_tables(ctx, &lt);
	for (k = 0; !ret && k < lt.n; k++)
		ret = remove_elsewhere(ctx, lt.v[k].name, &lt.v[k].made_by);
	cgfw_backend_tables_free(lt.v, lt.n);
	if (ret && !ctx->err.len)
		cgfw_err(ctx, "cannot finish an interrupted apply: %s",
			 strerror(-ret));
	return ret;
}

/* Lock, and finish what an earlier command left undone. */
int cgfw_backend_begin(struct cgfw_ctx *ctx, struct cgfw_lock *l)
{
	int ret = cgfw_backend_lock(ctx, l);

	ret = ret ? : recover(ctx);
	if (ret)
		cgfw_unlock(l);
	return ret;
}

/* ---- apply ---- */

static uint64_t new_gen(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int apply(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		 const struct backend_ops **be, size_t n)
{
	void *priv[ARRAY_SIZE(all_backends)] = { NULL };
	struct cgfw_apply_info ai = { .gen = new_gen() };
	const struct ir_table *t;
	size_t i, k;
	int ret = 0;

	for (i = 0; i < n; i++) {
		if (be[i]->nft_family)
			ai.nft_family = be[i]->nft_family;
		else
			ai.bpf = true;
	}
	/* everything that can fail, before anything changes */
	list_for_each_entry(t, &rs->tables, list)
		for (i = 0; !ret && i < ARRAY_SIZE(all_backends); i++)
			if (all_backends[i]->held)
				ret = all_backends[i]->held(ctx, t->name);
	for (i = 0; !ret && i < n; i++)
		ret = be[i]->stage(ctx, rs, &ai, &priv[i]);
	if (ret) {
		while (i--)
			if (priv[i])
				be[i]->abort(priv[i]);
		return ret;
	}
	/*
	 * The backends that can undo their commit first, so that a failure
	 * of the last (nf_tables' one transaction) leaves everything as it
	 * was; a kill on the way is finished or put back by recover().
	 */
	for (i = 0; !ret && i < n; i++)
		ret = be[i]->commit(ctx, priv[i]);
	if (ret) {
		for (k = i; k < n; k++)
			be[k]->abort(priv[k]);
		for (k = i - 1; k-- > 0;)
			be[k]->undo(priv[k]);
		return ret;
	}
	for (i = 0; i < n; i++)
		if (be[i]->settle)
			be[i]->settle(priv[i]);
	list_for_each_entry(t, &rs->tables, list) {
		if (ret)
			break;
		ret = remove_elsewhere(ctx, t->name, &ai);
	}
	return ret;
}

/* Every bound chain has a cgroup at its path (see cgfw_ruleset__rebind). */
static int bound_everywhere(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs)
{
	const struct ir_table *t;
	const struct ir_chain *c;

	list_for_each_entry(t, &rs->tables, list) {
		list_for_each_entry(c, &t->chains, list) {
			if (!c->base || c->cgroup.id)
				continue;
			cgfw_err_at(ctx, &rs->src, &c->loc,
				    "chain '%s' of table '%s' is bound to %s, which does not exist now; create it, or let 'cgfw daemon' apply the table when it appears",
				    c->name, t->name, c->cgroup.path);
			return -ENOENT;
		}
	}
	return 0;
}

CGFW_API int cgfw_ruleset__apply(struct cgfw_ctx *ctx,
				 const struct cgfw_ruleset *rs,
				 const struct cgfw_apply_opts *opts)
{
	const struct backend_ops *be[ARRAY_SIZE(all_backends)];
	enum cgfw_backend b;
	struct cgfw_lock l;
	size_t n;
	int ret;

	if (!ctx || !rs)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	if (!CGFW_OPTS_VALID(ctx, opts, cgfw_apply_opts))
		return libcgfw_err(-EINVAL);
	b = CGFW_OPTS_GET(opts, backend, CGFW_BACKEND_AUTO);
	ret = bound_everywhere(ctx, rs);
	ret = ret ? : select_backends(ctx, rs, b, be, &n);
	ret = ret ? : cgfw_backend_begin(ctx, &l);
	if (ret)
		return libcgfw_err(ret);
	/* the order of the commits: those that can be undone first */
	if (n == 2 && !be[0]->undo) {
		const struct backend_ops *x = be[0];

		be[0] = be[1];
		be[1] = x;
	}
	ret = apply(ctx, rs, be, n);
	cgfw_unlock(&l);
	return libcgfw_err(ret);
}

CGFW_API int cgfw_ruleset__check(struct cgfw_ctx *ctx,
				 const struct cgfw_ruleset *rs,
				 const struct cgfw_apply_opts *opts)
{
	const struct backend_ops *be[ARRAY_SIZE(all_backends)];
	enum cgfw_backend b;
	size_t n;
	int ret;

	if (!ctx || !rs)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	if (!CGFW_OPTS_VALID(ctx, opts, cgfw_apply_opts))
		return libcgfw_err(-EINVAL);
	b = CGFW_OPTS_GET(opts, backend, CGFW_BACKEND_AUTO);
	ret = select_backends(ctx, rs, b, be, &n);
	if (!ret && b == CGFW_BACKEND_BPF)
		ret = be[0]->check(ctx, rs);
	return libcgfw_err(ret);
}

/* ---- delete, flush ---- */

/*
 * First the backends that set a table aside: that marks the delete as
 * begun, and if it is killed the next command finishes it (recover()).
 */
static int remove_all(struct cgfw_ctx *ctx, const char *name)
{
	const struct backend_ops *be;
	bool found = false;
	size_t i, pass;
	int ret;

	for (i = 0; i < ARRAY_SIZE(all_backends); i++) {
		ret = all_backends[i]->held ? all_backends[i]->held(ctx, name) :
					      0;
		if (ret)
			return ret;
	}
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < ARRAY_SIZE(all_backends); i++) {
			be = all_backends[i];
			if (pass == 0 && be->set_aside)
				ret = be->set_aside(ctx, name);
			else if (pass == 1 && !be->set_aside)
				ret = be->remove(ctx, name);
			else
				continue;
			if (ret == -ENOENT)
				continue;
			if (ret)
				return ret;
			found = true;
		}
	}
	for (i = 0; i < ARRAY_SIZE(all_backends); i++)
		if (all_backends[i]->bury)
			all_backends[i]->bury(ctx);
	if (name && !found) {
		cgfw_err(ctx, "cgfw installed no table '%s' in this network namespace; 'cgfw list' shows what is installed",
			 name);
		return -ENOENT;
	}
	return 0;
}

static int locked_remove(struct cgfw_ctx *ctx, const char *name)
{
	struct cgfw_lock l;
	int ret;

	ret = cgfw_backend_begin(ctx, &l);
	if (ret)
		return ret;
	ret = remove_all(ctx, name);
	cgfw_unlock(&l);
	return ret;
}

CGFW_API int cgfw_table__delete(struct cgfw_ctx *ctx, const char *name)
{
	if (!ctx || !name)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	return libcgfw_err(locked_remove(ctx, name));
}

CGFW_API int cgfw_flush(struct cgfw_ctx *ctx)
{
	if (!ctx)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	return libcgfw_err(locked_remove(ctx, NULL));
}

/* ---- list ---- */

CGFW_API int cgfw_listing__new(struct cgfw_ctx *ctx,
			       const struct cgfw_list_opts *opts,
			       struct cgfw_listing **out)
{
	const char *table;
	struct cgfw_listing *l;
	struct cgfw_lock lk;
	size_t i;
	int ret;

	if (!ctx || !out)
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	if (!CGFW_OPTS_VALID(ctx, opts, cgfw_list_opts))
		return libcgfw_err(-EINVAL);
	table = CGFW_OPTS_GET(opts, table, NULL);
	l = calloc(1, sizeof(*l));
	if (!l)
		return libcgfw_err(-ENOMEM);
	l->bindings_only = CGFW_OPTS_GET(opts, bindings_only, false);
	ret = cgfw_backend_begin(ctx, &lk);
	if (!ret) {
		for (i = 0; !ret && i < ARRAY_SIZE(all_backends); i++)
			ret = all_backends[i]->list(ctx, table, l);
		cgfw_unlock(&lk);
	}
	if (!ret && table && !l->n_tables) {
		cgfw_err(ctx, "cgfw installed no table '%s' in this network namespace; 'cgfw list' shows what is installed",
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

/* ---- backend names ---- */

static const char *const backend_names[] = {
	[CGFW_BACKEND_AUTO] = "auto",
	[CGFW_BACKEND_NFT] = "nft",
	[CGFW_BACKEND_BPF] = "bpf",
	[CGFW_BACKEND_BOTH] = "both",
	[CGFW_BACKEND_NFT_NATIVE] = "nft-native",
	[CGFW_BACKEND_NFT_EMULATED] = "nft-emulated",
};

_Static_assert(ARRAY_SIZE(backend_names) == CGFW_BACKEND_NFT_EMULATED + 1,
	       "every backend has a name");

CGFW_API int cgfw_backend__from_str(const char *s, enum cgfw_backend *out)
{
	size_t i;

	for (i = 0; s && out && i < ARRAY_SIZE(backend_names); i++) {
		if (!strcmp(s, backend_names[i])) {
			*out = i;
			return 0;
		}
	}
	return libcgfw_err(-EINVAL);
}

CGFW_API const char *cgfw_backend__str(enum cgfw_backend b)
{
	if ((size_t)b >= ARRAY_SIZE(backend_names))
		return NULL;
	return backend_names[b];
}
