/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Set keys and values as nft writes them, from bytes and nft datatypes. */
#ifndef CGFW_MODEL_DATATYPE_H
#define CGFW_MODEL_DATATYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/list.h"

/* nft's byte order of a set's key (the set's userdata) */
#define MODEL_HOST_ENDIAN 1
#define MODEL_BIG_ENDIAN 2
/*
 * Not nft's: every field in network order, as nft stores the keys of a
 * set of intervals of concatenations (host-order fields converted).
 */
#define MODEL_ALL_BIG_ENDIAN 0x100

/* One printed value: "192.0.2.1", "443", "0x0000002a", "\"eth0\"". */
struct model_value {
	char s[72];
	bool number;	/* a JSON number */
	bool quoted;	/* already in quotes (a string) */
};

/* The datatypes of a key type's fields, in order; 0: too many. */
size_t cgfw_model_type_fields(uint32_t type, uint32_t *out, size_t max);
/* nft's name of a datatype ("ipv4_addr"), or NULL. */
const char *cgfw_model_type_name(uint32_t type);
/*
 * The values of a key's fields. A key that cannot be split by its type
 * (an unknown field size) is one hexadecimal value. Returns their number.
 */
size_t cgfw_model_key_values(uint32_t type, uint32_t byteorder, const uint8_t *key,
			     uint32_t len, struct model_value *out, size_t max);
/*
 * The prefix length if [@lo, @hi] is one address prefix (one-field
 * ipv4_addr and ipv6_addr sets), else -1.
 */
int cgfw_model_prefix_len(uint32_t type, const uint8_t *lo, const uint8_t *hi,
			  uint32_t len);
/* The same for field @i of a concatenation's keys @lo and @hi. */
int cgfw_model_field_prefix_len(uint32_t type, const uint8_t *lo,
				const uint8_t *hi, uint32_t len, size_t i);
/* "accept", "drop", "jump" ... of an nf_tables verdict code. */
const char *cgfw_model_verdict_str(int32_t verdict);

#endif /* CGFW_MODEL_DATATYPE_H */
