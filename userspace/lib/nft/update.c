// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * "cgfw update" for the nft targets: the elements nft compiled in the
 * shadow namespace (update.c), deleted from and added to the installed
 * sets in one batch.
 */
#include <stdio.h>
#include <stdlib.h>

#include <libmnl/libmnl.h>
#include <libnftnl/set.h>
#include <linux/netfilter/nf_tables.h>

#include "nft/nft.h"

static bool zero_key(const void *key, uint32_t len)
{
	const uint8_t *k = key;

	while (len--)
		if (*k++)
			return false;
	return true;
}

static int elem_key_cmp(const void *a, const void *b)
{
	struct nftnl_set_elem *x = *(struct nftnl_set_elem *const *)a;
	struct nftnl_set_elem *y = *(struct nftnl_set_elem *const *)b;
	uint32_t xl = 0, yl = 0, xf = 0, yf = 0;
	const void *xk = nftnl_set_elem_get(x, NFTNL_SET_ELEM_KEY, &xl);
	const void *yk = nftnl_set_elem_get(y, NFTNL_SET_ELEM_KEY, &yl);
	int c = memcmp(xk, yk, xl < yl ? xl : yl);

	if (c)
		return c;
	if (nftnl_set_elem_is_set(x, NFTNL_SET_ELEM_FLAGS))
		xf = nftnl_set_elem_get_u32(x, NFTNL_SET_ELEM_FLAGS);
	if (nftnl_set_elem_is_set(y, NFTNL_SET_ELEM_FLAGS))
		yf = nftnl_set_elem_get_u32(y, NFTNL_SET_ELEM_FLAGS);
	return (int)(xf & NFT_SET_ELEM_INTERVAL_END) -
	       (int)(yf & NFT_SET_ELEM_INTERVAL_END);
}

/*
 * The elements of @from as an installed set takes them, next to the ones
 * it has: in ascending order (the kernel checks each interval end against
 * what is there; the dump that nft's elements come from is in descending
 * order), and without the interval end at key 0 that nft puts before an
 * interval that does not start there, which the set already has.
 */
static struct nftnl_set *kernel_elems(struct nftnl_set *from,
				      const char *table, const char *set)
{
	static const uint16_t attrs[] = {
		NFTNL_SET_ELEM_KEY, NFTNL_SET_ELEM_KEY_END,
		NFTNL_SET_ELEM_FLAGS, NFTNL_SET_ELEM_DATA,
		NFTNL_SET_ELEM_VERDICT, NFTNL_SET_ELEM_CHAIN,
		NFTNL_SET_ELEM_OBJREF, NFTNL_SET_ELEM_USERDATA,
		NFTNL_SET_ELEM_TIMEOUT, NFTNL_SET_ELEM_EXPIRATION,
	};
	struct nftnl_set *to = nftnl_set_alloc();
	struct nftnl_set_elem *e, *c, **v = NULL, **nv;
	struct nftnl_set_elems_iter *it;
	size_t i, j, n = 0;
	uint32_t len, flags;
	const void *key, *val;

	it = to ? nftnl_set_elems_iter_create(from) : NULL;
	if (!it)
		goto err;
	while ((e = nftnl_set_elems_iter_next(it))) {
		flags = nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS) ?
			nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS) : 0;
		key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);
		if (!key || ((flags & NFT_SET_ELEM_INTERVAL_END) &&
			     zero_key(key, len)))
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			goto err_it;
		v = nv;
		v[n++] = e;
	}
	if (n)
		qsort(v, n, sizeof(*v), elem_key_cmp);
	nftnl_set_set_str(to, NFTNL_SET_TABLE, table);
	nftnl_set_set_str(to, NFTNL_SET_NAME, set);
	for (i = 0; i < n; i++) {
		c = nftnl_set_elem_alloc();
		if (!c)
			goto err_it;
		for (j = 0; j < ARRAY_SIZE(attrs); j++) {
			if (!nftnl_set_elem_is_set(v[i], attrs[j]))
				continue;
			val = nftnl_set_elem_get(v[i], attrs[j], &len);
			nftnl_set_elem_set(c, attrs[j], val, len);
		}
		nftnl_set_elem_add(to, c);
	}
	free(v);
	nftnl_set_elems_iter_destroy(it);
	return to;
err_it:
	free(v);
	nftnl_set_elems_iter_destroy(it);
err:
	if (to)
		nftnl_set_free(to);
	return NULL;
}

/* The elements nft compiled, into the sets of @tg's tables: one batch. */
int cgfw_nft_update(struct cgfw_ctx *ctx, const struct nft_target *tg,
		    const struct upd_cmds *u)
{
	char kname[NFT_NAME_MAXLEN + 8];
	struct nftnl_set_elems_iter *it;
	struct nftnl_set *v[2], *elems;
	const struct upd_set *us;
	struct cgfw_nl_batch nb;
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	size_t n = 0, i;
	uint64_t gen;
	int more, ret;

	ret = cgfw_nl_writer(ctx, &nl);
	if (ret)
		return ret;
	ret = cgfw_nl_batch_init(&nb);
	if (ret)
		goto out_nl;
	list_for_each_entry(us, &u->sets, list) {
		/* only the tables this target holds */
		if (cgfw_nft_generation(ctx, tg, us->table, &gen))
			continue;
		snprintf(kname, sizeof(kname), "%s%s", tg->prefix, us->table);
		v[0] = us->del;
		v[1] = us->add;
		for (i = 0; i < 2; i++) {
			if (!v[i])
				continue;
			elems = kernel_elems(v[i], kname, us->set);
			it = elems ? nftnl_set_elems_iter_create(elems) : NULL;
			if (!it) {
				if (elems)
					nftnl_set_free(elems);
				ret = -ENOMEM;
				goto out;
			}
			/* as many messages as the elements need, maybe none */
			while (nftnl_set_elems_iter_cur(it)) {
				nlh = cgfw_nl_batch_next(&nb,
							 i ? NFT_MSG_NEWSETELEM :
					    NFT_MSG_DELSETELEM,
					tg->family, i ? NLM_F_CREATE : 0,
					us->loc, "the elements");
				if (!nlh)
					break;
				more = nftnl_set_elems_nlmsg_build_payload_iter(
					nlh, it);
				cgfw_nl_batch_done(&nb);
				if (more <= 0)
					break;
			}
			nftnl_set_elems_iter_destroy(it);
			nftnl_set_free(elems);
		}
		n++;
	}
	cgfw_ctx_reset(ctx);	/* a table not held here is no error */
	ret = n ? cgfw_nl_batch_commit(ctx, nl, &nb, &u->src) : -ENOENT;
	cgfw_nft_held_hint(ctx, ret);
out:
	cgfw_nl_batch_release(&nb);
out_nl:
	cgfw_nl_writer_close(ctx, nl);
	return ret;
}
