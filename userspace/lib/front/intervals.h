/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The elements of an nf_tables set, intervals paired up. */
#ifndef CGFW_FRONT_INTERVALS_H
#define CGFW_FRONT_INTERVALS_H

#include <stdbool.h>
#include <stdint.h>

struct nftnl_set;
struct nftnl_set_elem;

/*
 * Called once per element of a set: @key and its length; @last, the last
 * key of an interval (inclusive), or NULL for a single key; @elem, the
 * element that holds the value (a map's data or verdict). @key NULL: the
 * catch-all element.
 */
typedef int (*cgfw_elem_fn)(const uint8_t *key, const uint8_t *last,
			    uint32_t len, struct nftnl_set_elem *elem,
			    void *data);

/*
 * Walk the elements of @s. nf_tables keeps an interval [a, b] of a
 * one-field set as a start element a and an end element b + 1 (flagged
 * NFT_SET_ELEM_INTERVAL_END), an open end running to the largest key;
 * concatenations keep their last key in NFTA_SET_ELEM_KEY_END.
 * Returns the first non-zero return of @fn, -ENOMEM, or -EINVAL for an
 * element whose key does not have the set's length.
 */
int cgfw_set_elems(const struct nftnl_set *s, cgfw_elem_fn fn, void *data);

/*
 * The fields of a set whose key is a concatenation: their lengths in
 * bytes (each in a 4-byte multiple of the key, as nft's registers hold
 * them). False if the set does not give them, they do not make its key,
 * or one is longer than 16 bytes.
 */
bool cgfw_set_fields(const struct nftnl_set *s, const uint8_t **len,
		     uint32_t *n);

/* Big-endian arithmetic on keys of up to 16 bytes. */
typedef unsigned __int128 cgfw_u128;
cgfw_u128 cgfw_be_get(const uint8_t *b, uint32_t n);
void cgfw_be_put(uint8_t *b, uint32_t n, cgfw_u128 v);

#endif /* CGFW_FRONT_INTERVALS_H */
