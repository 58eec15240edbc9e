// SPDX-License-Identifier: LGPL-2.1-or-later
/* The JSON writer (base/json.h). */
#include <inttypes.h>

#include "base/json.h"

void cgfw_json_init(struct cgfw_json *j, struct strbuf *sb)
{
	*j = (struct cgfw_json){ .sb = sb };
	j->first[0] = true;
}

/* Before a value: the comma that separates it from the one before. */
static void value_start(struct cgfw_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		cgfw_sb_adds(j->sb, ",");
	j->first[j->depth] = false;
}

static void nest_open(struct cgfw_json *j, const char *c)
{
	value_start(j);
	cgfw_sb_adds(j->sb, c);
	if (j->depth + 1 < CGFW_JSON_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void nest_close(struct cgfw_json *j, const char *c)
{
	if (j->depth)
		j->depth--;
	cgfw_sb_adds(j->sb, c);
}

void cgfw_json_obj_open(struct cgfw_json *j)
{
	nest_open(j, "{");
}

void cgfw_json_obj_close(struct cgfw_json *j)
{
	nest_close(j, "}");
}

void cgfw_json_arr_open(struct cgfw_json *j)
{
	nest_open(j, "[");
}

void cgfw_json_arr_close(struct cgfw_json *j)
{
	nest_close(j, "]");
}

static void quoted(struct strbuf *sb, const char *s, size_t n)
{
	size_t i;

	cgfw_sb_adds(sb, "\"");
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			cgfw_sb_addf(sb, "\\%c", c);
		else if (c == '\n')
			cgfw_sb_adds(sb, "\\n");
		else if (c == '\t')
			cgfw_sb_adds(sb, "\\t");
		else if (c < 0x20 || c == 0x7f)
			cgfw_sb_addf(sb, "\\u%04x", c);
		else
			cgfw_sb_addn(sb, (const char *)&c, 1);
	}
	cgfw_sb_adds(sb, "\"");
}

void cgfw_json_key(struct cgfw_json *j, const char *key)
{
	value_start(j);
	quoted(j->sb, key, strlen(key));
	cgfw_sb_adds(j->sb, ":");
	j->after_key = true;
}

void cgfw_json_strn(struct cgfw_json *j, const char *s, size_t n)
{
	value_start(j);
	quoted(j->sb, s, n);
}

void cgfw_json_str(struct cgfw_json *j, const char *s)
{
	cgfw_json_strn(j, s, strlen(s));
}

void cgfw_json_u64(struct cgfw_json *j, uint64_t v)
{
	value_start(j);
	cgfw_sb_addf(j->sb, "%" PRIu64, v);
}

void cgfw_json_s64(struct cgfw_json *j, int64_t v)
{
	value_start(j);
	cgfw_sb_addf(j->sb, "%" PRId64, v);
}

void cgfw_json_bool(struct cgfw_json *j, bool v)
{
	value_start(j);
	cgfw_sb_adds(j->sb, v ? "true" : "false");
}

void cgfw_json_null(struct cgfw_json *j)
{
	value_start(j);
	cgfw_sb_adds(j->sb, "null");
}
