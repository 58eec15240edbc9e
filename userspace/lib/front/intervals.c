// SPDX-License-Identifier: LGPL-2.1-or-later
/* Pairing the start and end elements of nf_tables interval sets. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/set.h>
#include <linux/netfilter/nf_tables.h>

#include "front/intervals.h"

cgfw_u128 cgfw_be_get(const uint8_t *b, uint32_t n)
{
	cgfw_u128 v = 0;
	uint32_t i;

	for (i = 0; i < n && i < 16; i++)
		v = v << 8 | b[i];
	return v;
}

void cgfw_be_put(uint8_t *b, uint32_t n, cgfw_u128 v)
{
	uint32_t i;

	for (i = n; i--; v >>= 8)
		b[i] = v & 0xff;
}

/* nftnl_set_elem_get_u32() crashes on an attribute that is not there */
static uint32_t elem_flags(struct nftnl_set_elem *e)
{
	uint32_t v = 0, len;
	const void *p = nftnl_set_elem_get(e, NFTNL_SET_ELEM_FLAGS, &len);

	if (p && len >= sizeof(v))
		memcpy(&v, p, sizeof(v));
	return v;
}

struct bound {
	const uint8_t *key;
	bool end;
	struct nftnl_set_elem *elem;
};

/* By key; an end before a start at the same key: it closes the one before. */
static int cmp_bound(const void *a, const void *b, void *klen)
{
	const struct bound *x = a, *y = b;
	int c = memcmp(x->key, y->key, *(uint32_t *)klen);

	return c ? c : (int)y->end - (int)x->end;
}

int cgfw_set_elems(const struct nftnl_set *s, cgfw_elem_fn fn, void *data)
{
	uint32_t klen = nftnl_set_get_u32(s, NFTNL_SET_KEY_LEN), len, elen;
	bool interval = nftnl_set_get_u32(s, NFTNL_SET_FLAGS) &
			NFT_SET_INTERVAL;
	struct nftnl_set_elems_iter *it;
	struct bound *b = NULL, *nb;
	struct nftnl_set_elem *e;
	const uint8_t *key, *kend;
	uint8_t last[16];
	size_t n = 0, cap = 0, i;
	int ret = 0;

	it = nftnl_set_elems_iter_create(s);
	if (!it)
		return -ENOMEM;
	while (!ret && (e = nftnl_set_elems_iter_next(it))) {
		if (elem_flags(e) & NFT_SET_ELEM_CATCHALL) {
			ret = fn(NULL, NULL, klen, e, data);
			continue;
		}
		key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);
		if (!key || len != klen) {
			ret = -EINVAL;
			break;
		}
		kend = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY_END, &elen);
		if (!interval || (kend && elen == klen)) {
			/* one key, or an interval with its last key */
			ret = fn(key, interval ? kend : NULL, klen, e, data);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			nb = realloc(b, cap * sizeof(*b));
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			b = nb;
		}
		b[n].key = key;
		b[n].end = elem_flags(e) & NFT_SET_ELEM_INTERVAL_END;
		b[n].elem = e;
		n++;
	}
	if (!ret && n && klen > sizeof(last))
		ret = -EINVAL;
	if (!ret && n)
		qsort_r(b, n, sizeof(*b), cmp_bound, &klen);
	for (i = 0; !ret && i < n; i++) {
		if (b[i].end)
			continue;	/* an end without a start: nothing */
		if (i + 1 < n && b[i + 1].end) {
			cgfw_u128 hi = cgfw_be_get(b[i + 1].key, klen);

			if (!hi)
				continue;
			cgfw_be_put(last, klen, hi - 1);
		} else {
			memset(last, 0xff, klen);	/* to the largest key */
		}
		ret = fn(b[i].key, last, klen, b[i].elem, data);
	}
	free(b);
	nftnl_set_elems_iter_destroy(it);
	return ret;
}

bool cgfw_set_fields(const struct nftnl_set *s, const uint8_t **len,
		     uint32_t *n)
{
	uint32_t klen = nftnl_set_get_u32(s, NFTNL_SET_KEY_LEN), i, sum = 0;
	const uint8_t *f;
	uint32_t k = 0;

	f = nftnl_set_is_set(s, NFTNL_SET_DESC_CONCAT) ?
	    nftnl_set_get_data(s, NFTNL_SET_DESC_CONCAT, &k) : NULL;
	for (i = 0; f && i < k; i++) {
		if (!f[i] || f[i] > 16)
			return false;
		sum += (f[i] + 3) / 4 * 4;
	}
	if (!f || !k || sum != klen)
		return false;
	if (len)
		*len = f;
	if (n)
		*n = k;
	return true;
}
