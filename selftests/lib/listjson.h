/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading "cgfw list -j" in the tests: the objects of its "nftables" array
 * (libnftables-json(5)), each flattened into "key.key.key" = value, so a
 * test asks for "rule.cgfw.counter.packets" of the third rule of a chain.
 * A small recursive reader of the JSON that cgfw writes; not a general
 * parser (no unicode escapes, numbers kept as text).
 */
#ifndef CGFW_LISTJSON_H
#define CGFW_LISTJSON_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jfield {
	char key[128];
	char val[512];
};

struct jobj {
	struct jfield *f;
	size_t n;
};

struct jreader {
	const char *p;
	struct jobj *objs;
	size_t n_objs;
	int err;
};

static inline void j_ws(struct jreader *r)
{
	while (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r')
		r->p++;
}

static inline void j_str(struct jreader *r, char *out, size_t size)
{
	size_t n = 0;

	if (*r->p != '"') {
		r->err = -1;
		return;
	}
	for (r->p++; *r->p && *r->p != '"'; r->p++) {
		char c = *r->p;

		if (c == '\\' && r->p[1]) {
			c = *++r->p;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
		}
		if (n + 1 < size)
			out[n++] = c;
	}
	out[n] = '\0';
	if (*r->p == '"')
		r->p++;
	else
		r->err = -1;
}

static inline void j_add(struct jreader *r, const char *key, const char *val)
{
	struct jobj *o = &r->objs[r->n_objs - 1];
	struct jfield *f = realloc(o->f, (o->n + 1) * sizeof(*f));

	if (!f) {
		r->err = -1;
		return;
	}
	o->f = f;
	snprintf(f[o->n].key, sizeof(f[o->n].key), "%s", key);
	snprintf(f[o->n].val, sizeof(f[o->n].val), "%s", val);
	o->n++;
}

/* A value at @path; @record: inside an element of "nftables". */
static inline void j_value(struct jreader *r, const char *path, int depth,
		    bool record)
{
	char key[128], sub[256], buf[512];
	size_t i = 0, n;

	j_ws(r);
	if (r->err || depth > 32) {
		r->err = -1;
		return;
	}
	if (*r->p == '{' || *r->p == '[') {
		char close = *r->p == '{' ? '}' : ']';
		bool obj = *r->p == '{';

		r->p++;
		for (j_ws(r); *r->p && *r->p != close && !r->err; i++) {
			if (obj) {
				j_str(r, key, sizeof(key));
				j_ws(r);
				if (*r->p++ != ':')
					r->err = -1;
			} else {
				snprintf(key, sizeof(key), "%zu", i);
			}
			snprintf(sub, sizeof(sub), "%s%s%s", path,
				 *path ? "." : "", key);
			/* the elements of the top array are the objects */
			if (!record && !obj && !strcmp(path, "nftables")) {
				struct jobj *v = realloc(r->objs,
					(r->n_objs + 1) * sizeof(*v));

				if (!v) {
					r->err = -1;
					return;
				}
				r->objs = v;
				memset(&v[r->n_objs++], 0, sizeof(*v));
				j_value(r, "", depth + 1, true);
			} else {
				j_value(r, sub, depth + 1, record);
			}
			j_ws(r);
			if (*r->p == ',')
				r->p++;
			j_ws(r);
		}
		if (*r->p == close)
			r->p++;
		else
			r->err = -1;
		return;
	}
	if (*r->p == '"') {
		j_str(r, buf, sizeof(buf));
	} else {
		for (n = 0; *r->p && !strchr(",}] \n\t", *r->p); r->p++)
			if (n + 1 < sizeof(buf))
				buf[n++] = *r->p;
		buf[n] = '\0';
	}
	if (record && !r->err)
		j_add(r, path, buf);
}

/* The objects of "nftables" in @json; 0, or -1 if it is not such JSON. */
static inline int jobjs_read(const char *json, struct jobj **out, size_t *n)
{
	struct jreader r = { .p = json };

	j_value(&r, "", 0, false);
	*out = r.objs;
	*n = r.n_objs;
	return r.err;
}

static inline void jobjs_free(struct jobj *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].f);
	free(v);
}

/* The value of @key in @o, or NULL. */
static const char *jget(const struct jobj *o, const char *key)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (!strcmp(o->f[i].key, key))
			return o->f[i].val;
	return NULL;
}

static inline bool jis(const struct jobj *o, const char *key, const char *val)
{
	const char *v = jget(o, key);

	return v && !strcmp(v, val);
}

#endif /* CGFW_LISTJSON_H */
