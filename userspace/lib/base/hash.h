/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hashes of keys and their order, for the checks that elements are once. */
#ifndef CGFW_BASE_HASH_H
#define CGFW_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define CGFW_FNV1A_INIT 0xcbf29ce484222325ull

static inline uint64_t cgfw_fnv1a(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/* qsort()'s order of uint64_t */
static inline int cgfw_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif /* CGFW_BASE_HASH_H */
