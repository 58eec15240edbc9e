/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one JSON writer of the library: compact JSON into a strbuf, with
 * commas and escaping done here and nowhere else.
 */
#ifndef CGFW_BASE_JSON_H
#define CGFW_BASE_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"

#define CGFW_JSON_DEPTH 32

struct cgfw_json {
	struct strbuf *sb;
	unsigned int depth;
	bool first[CGFW_JSON_DEPTH];	/* nothing written yet at this level */
	bool after_key;
};

void cgfw_json_init(struct cgfw_json *j, struct strbuf *sb);
void cgfw_json_obj_open(struct cgfw_json *j);
void cgfw_json_obj_close(struct cgfw_json *j);
void cgfw_json_arr_open(struct cgfw_json *j);
void cgfw_json_arr_close(struct cgfw_json *j);
/* The key of the next value in an object. */
void cgfw_json_key(struct cgfw_json *j, const char *key);
void cgfw_json_str(struct cgfw_json *j, const char *s);
void cgfw_json_strn(struct cgfw_json *j, const char *s, size_t n);
void cgfw_json_u64(struct cgfw_json *j, uint64_t v);
void cgfw_json_s64(struct cgfw_json *j, int64_t v);
void cgfw_json_bool(struct cgfw_json *j, bool v);
void cgfw_json_null(struct cgfw_json *j);

/* key and value in one call */
static inline void cgfw_json_kv_str(struct cgfw_json *j, const char *k,
				    const char *v)
{
	cgfw_json_key(j, k);
	cgfw_json_str(j, v);
}

static inline void cgfw_json_kv_u64(struct cgfw_json *j, const char *k,
				    uint64_t v)
{
	cgfw_json_key(j, k);
	cgfw_json_u64(j, v);
}

static inline void cgfw_json_kv_s64(struct cgfw_json *j, const char *k,
				    int64_t v)
{
	cgfw_json_key(j, k);
	cgfw_json_s64(j, v);
}

static inline void cgfw_json_kv_bool(struct cgfw_json *j, const char *k,
				     bool v)
{
	cgfw_json_key(j, k);
	cgfw_json_bool(j, v);
}

#endif /* CGFW_BASE_JSON_H */
