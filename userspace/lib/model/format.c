// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The model printed: in nft syntax (what "cgfw list" shows, fit to be
 * applied again), or as JSON in the schema of "nft -j list ruleset"
 * (libnftables-json(5)) with cgfw's additions under the key "cgfw".
 *
 * Rules are shown as the user wrote them, with the live values of their
 * counters and quotas put in where nft would print them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "base/ctx.h"
#include "base/json.h"
#include "model/datatype.h"
#include "model/model.h"

#define MAX_FIELDS 8

/* ---- the text of a rule, with its counter and quota filled in ---- */

static bool word_char(char c)
{
	return c && !strchr(" \t\r\n{};\"#,", c);
}

/* The next word of @s from @*pos, skipping strings; its length. */
static size_t next_word(const char *s, size_t *pos)
{
	size_t i = *pos, n;

	for (;;) {
		while (s[i] && !word_char(s[i]) && s[i] != '"')
			i++;
		if (s[i] != '"')
			break;
		for (i++; s[i] && s[i] != '"'; i++)
			;
		if (s[i])
			i++;
	}
	for (n = 0; word_char(s[i + n]); n++)
		;
	*pos = i;
	return n;
}

static bool word_is(const char *s, size_t n, const char *w)
{
	return n == strlen(w) && !memcmp(s, w, n);
}

/*
 * @text with "packets N bytes M" after its "counter" (replacing numbers
 * the user gave) and "used N bytes" after its quota.
 */
static void rule_text(struct strbuf *sb, const struct model_rule *r)
{
	const char *t = r->text;
	size_t pos = 0, at = 0, n, p2, n2;
	bool counted = false, quoted = false;

	while ((n = next_word(t, &pos))) {
		if (!counted && r->counter.present &&
		    word_is(t + pos, n, "counter")) {
			cgfw_sb_addn(sb, t + at, pos + n - at);
			cgfw_sb_addf(sb, " packets %" PRIu64 " bytes %" PRIu64,
				     r->counter.packets, r->counter.bytes);
			at = pos += n;
			/* the user's own "packets N bytes M": replaced */
			p2 = pos;
			n2 = next_word(t, &p2);
			if (word_is(t + p2, n2, "packets")) {
				p2 += n2;
				n2 = next_word(t, &p2);	/* N */
				p2 += n2;
				n2 = next_word(t, &p2);
				if (word_is(t + p2, n2, "bytes")) {
					p2 += n2;
					n2 = next_word(t, &p2);
					at = pos = p2 + n2;
				}
			}
			counted = true;
			continue;
		}
		if (!quoted && r->has_quota && word_is(t + pos, n, "quota")) {
			/* quota [over|until] N [unit] ["used" N unit] */
			pos += n;
			n = next_word(t, &pos);
			if (word_is(t + pos, n, "over") ||
			    word_is(t + pos, n, "until")) {
				pos += n;
				n = next_word(t, &pos);
			}
			pos += n;	/* the amount */
			p2 = pos;
			n2 = next_word(t, &p2);
			if ((word_is(t + p2, n2, "bytes") ||
			     word_is(t + p2, n2, "kbytes") ||
			     word_is(t + p2, n2, "mbytes") ||
			     word_is(t + p2, n2, "gbytes")))
				pos = p2 + n2;
			cgfw_sb_addn(sb, t + at, pos - at);
			cgfw_sb_addf(sb, " used %" PRIu64 " bytes", r->quota_used);
			at = pos;
			quoted = true;
			continue;
		}
		pos += n;
	}
	cgfw_sb_adds(sb, t + at);
	if (r->counter.present && !counted)
		cgfw_sb_addf(sb, " # counter packets %" PRIu64 " bytes %" PRIu64,
			     r->counter.packets, r->counter.bytes);
}

/* ---- keys, intervals and values ---- */

static void text_values(struct strbuf *sb, const struct model_value *v,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cgfw_sb_addf(sb, "%s%s", i ? " . " : "", v[i].s);
}

static void json_value(struct cgfw_json *j, const struct model_value *v)
{
	if (v->number)
		cgfw_json_u64(j, strtoull(v->s, NULL, 10));
	else if (v->quoted)
		cgfw_json_strn(j, v->s + 1, strlen(v->s) - 2);
	else
		cgfw_json_str(j, v->s);
}

static void json_values(struct cgfw_json *j, const struct model_value *v,
			size_t n)
{
	size_t i;

	if (n == 1) {
		json_value(j, v);
		return;
	}
	cgfw_json_obj_open(j);
	cgfw_json_key(j, "concat");
	cgfw_json_arr_open(j);
	for (i = 0; i < n; i++)
		json_value(j, &v[i]);
	cgfw_json_arr_close(j);
	cgfw_json_obj_close(j);
}

/* A key, or an interval [key, key_end], in text or as JSON. */
static void print_key(struct strbuf *sb, struct cgfw_json *j,
		      const struct model_set *s, const struct model_elem *e)
{
	struct model_value lo[MAX_FIELDS], hi[MAX_FIELDS];
	uint32_t fields[MAX_FIELDS], order = s->key_byteorder;
	size_t n, m, i;
	int plen;

	if (!e->key) {
		if (j)
			cgfw_json_str(j, "*");
		else
			cgfw_sb_adds(sb, "*");
		return;
	}
	/* intervals of concatenations: nft stores every field big-endian */
	if (s->flags & NFT_SET_INTERVAL &&
	    cgfw_model_type_fields(s->key_type, fields, MAX_FIELDS) > 1)
		order = MODEL_ALL_BIG_ENDIAN;
	n = cgfw_model_key_values(s->key_type, order, e->key,
				  s->key_len, lo, MAX_FIELDS);
	if (!e->key_end || !memcmp(e->key, e->key_end, s->key_len)) {
		if (j)
			json_values(j, lo, n);
		else
			text_values(sb, lo, n);
		return;
	}
	plen = cgfw_model_prefix_len(s->key_type, e->key, e->key_end, s->key_len);
	if (plen >= 0) {
		if (j) {
			cgfw_json_obj_open(j);
			cgfw_json_key(j, "prefix");
			cgfw_json_obj_open(j);
			cgfw_json_kv_str(j, "addr", lo[0].s);
			cgfw_json_kv_u64(j, "len", plen);
			cgfw_json_obj_close(j);
			cgfw_json_obj_close(j);
		} else {
			cgfw_sb_addf(sb, "%s/%d", lo[0].s, plen);
		}
		return;
	}
	m = cgfw_model_key_values(s->key_type, order, e->key_end,
				  s->key_len, hi, MAX_FIELDS);
	if (m != n)
		n = m = 1;	/* print the whole keys */
	if (j && n == 1) {
		cgfw_json_obj_open(j);
		cgfw_json_key(j, "range");
		cgfw_json_arr_open(j);
		json_value(j, &lo[0]);
		json_value(j, &hi[0]);
		cgfw_json_arr_close(j);
		cgfw_json_obj_close(j);
		return;
	}
	if (j)
		cgfw_json_obj_open(j), cgfw_json_key(j, "concat"),
		cgfw_json_arr_open(j);
	for (i = 0; i < n; i++) {
		bool same = !strcmp(lo[i].s, hi[i].s);

		plen = same || n == 1 ? -1 :
		       cgfw_model_field_prefix_len(s->key_type, e->key,
						   e->key_end, s->key_len, i);
		if (j && plen >= 0) {
			cgfw_json_obj_open(j);
			cgfw_json_key(j, "prefix");
			cgfw_json_obj_open(j);
			cgfw_json_kv_str(j, "addr", lo[i].s);
			cgfw_json_kv_u64(j, "len", plen);
			cgfw_json_obj_close(j);
			cgfw_json_obj_close(j);
		} else if (plen >= 0) {
			cgfw_sb_addf(sb, "%s%s/%d", i ? " . " : "", lo[i].s,
				     plen);
		} else if (j && same) {
			json_value(j, &lo[i]);
		} else if (j) {
			cgfw_json_obj_open(j);
			cgfw_json_key(j, "range");
			cgfw_json_arr_open(j);
			json_value(j, &lo[i]);
			json_value(j, &hi[i]);
			cgfw_json_arr_close(j);
			cgfw_json_obj_close(j);
		} else if (same) {
			cgfw_sb_addf(sb, "%s%s", i ? " . " : "", lo[i].s);
		} else {
			cgfw_sb_addf(sb, "%s%s-%s", i ? " . " : "", lo[i].s,
				     hi[i].s);
		}
	}
	if (j)
		cgfw_json_arr_close(j), cgfw_json_obj_close(j);
}

static void print_data(struct strbuf *sb, struct cgfw_json *j,
		       const struct model_set *s, const struct model_elem *e)
{
	struct model_value v[MAX_FIELDS];
	const char *verdict;
	size_t n;

	if (s->data_type == NFT_DATA_VERDICT) {
		verdict = cgfw_model_verdict_str(e->verdict);
		if (!j) {
			cgfw_sb_addf(sb, " : %s%s%s", verdict, e->chain ? " " : "",
				     e->chain ? e->chain : "");
			return;
		}
		cgfw_json_obj_open(j);
		cgfw_json_key(j, verdict);
		if (e->chain) {
			cgfw_json_obj_open(j);
			cgfw_json_kv_str(j, "target", e->chain);
			cgfw_json_obj_close(j);
		} else {
			cgfw_json_null(j);
		}
		cgfw_json_obj_close(j);
		return;
	}
	if (!e->data)
		return;
	n = cgfw_model_key_values(s->data_type, 0, e->data, s->data_len, v,
				  MAX_FIELDS);
	if (j) {
		json_values(j, v, n);
		return;
	}
	cgfw_sb_adds(sb, " : ");
	text_values(sb, v, n);
}

static bool is_map(const struct model_set *s)
{
	return s->flags & NFT_SET_MAP;
}

/* "ipv4_addr . inet_service", or NULL if a field's type is unknown */
static void type_text(struct strbuf *sb, uint32_t type, bool *known)
{
	uint32_t f[MAX_FIELDS];
	size_t n = cgfw_model_type_fields(type, f, MAX_FIELDS), i;
	const char *name;

	for (i = 0; i < n; i++) {
		name = cgfw_model_type_name(f[i]);
		if (!name) {
			*known = false;
			cgfw_sb_addf(sb, "%s<nft datatype %u>", i ? " . " : "",
				     f[i]);
			continue;
		}
		cgfw_sb_addf(sb, "%s%s", i ? " . " : "", name);
	}
}

static const struct {
	uint32_t flag;
	const char *name;
} set_flags[] = {
	/* nft's order (set_print_declaration()) */
	{ NFT_SET_CONSTANT, "constant" },
	{ NFT_SET_EVAL, "dynamic" },
	{ NFT_SET_INTERVAL, "interval" },
	{ NFT_SET_TIMEOUT, "timeout" },
};

/* ---- named objects ---- */

static const char *obj_type_str(uint32_t type)
{
	static const char *const names[] = {
		[NFT_OBJECT_COUNTER] = "counter", [NFT_OBJECT_QUOTA] = "quota",
		[NFT_OBJECT_CT_HELPER] = "ct helper",
		[NFT_OBJECT_LIMIT] = "limit", [NFT_OBJECT_CONNLIMIT] = "connlimit",
		[NFT_OBJECT_TUNNEL] = "tunnel",
		[NFT_OBJECT_CT_TIMEOUT] = "ct timeout",
		[NFT_OBJECT_SECMARK] = "secmark",
		[NFT_OBJECT_CT_EXPECT] = "ct expectation",
		[NFT_OBJECT_SYNPROXY] = "synproxy",
	};

	return type < ARRAY_SIZE(names) && names[type] ? names[type] :
	       "object";
}

/* Bytes as nft writes them: the largest unit that divides them. */
static void text_bytes(struct strbuf *sb, uint64_t v)
{
	if (v && !(v % (1 << 20)))
		cgfw_sb_addf(sb, "%" PRIu64 " mbytes", v >> 20);
	else if (v && !(v % 1024))
		cgfw_sb_addf(sb, "%" PRIu64 " kbytes", v >> 10);
	else
		cgfw_sb_addf(sb, "%" PRIu64 " bytes", v);
}

static const char *per_str(uint64_t seconds)
{
	switch (seconds) {
	case 1: return "second";
	case 60: return "minute";
	case 3600: return "hour";
	case 86400: return "day";
	case 604800: return "week";
	}
	return NULL;
}

/* " # handle N" after an opening brace or a rule, with -a, as nft -a */
static void text_handle(struct strbuf *sb, bool handles, uint64_t handle)
{
	if (handles && handle)
		cgfw_sb_addf(sb, " # handle %" PRIu64, handle);
}

static void text_obj(struct strbuf *sb, const struct model_obj *o,
		     bool handles)
{
	const char *per;

	if (o->type != NFT_OBJECT_COUNTER && o->type != NFT_OBJECT_QUOTA &&
	    o->type != NFT_OBJECT_LIMIT) {	/* a comment: still nft syntax */
		cgfw_sb_addf(sb, "\t# %s %s: installed (cgfw shows the values of counters, quotas and limits)",
			     obj_type_str(o->type), o->name);
		text_handle(sb, handles, o->handle);
		cgfw_sb_adds(sb, "\n");
		return;
	}
	cgfw_sb_addf(sb, "\t%s %s {", obj_type_str(o->type), o->name);
	text_handle(sb, handles, o->handle);
	cgfw_sb_adds(sb, "\n\t\t");
	switch (o->type) {
	case NFT_OBJECT_COUNTER:
		cgfw_sb_addf(sb, "packets %" PRIu64 " bytes %" PRIu64,
			     o->counter.packets, o->counter.bytes);
		break;
	case NFT_OBJECT_QUOTA:
		cgfw_sb_adds(sb, o->quota.over ? "over " : "");
		text_bytes(sb, o->quota.bytes);
		cgfw_sb_adds(sb, " used ");
		text_bytes(sb, o->quota.used);
		break;
	case NFT_OBJECT_LIMIT:
		per = per_str(o->limit.unit);
		cgfw_sb_addf(sb, "rate %s%" PRIu64 "%s/", o->limit.over ?
			     "over " : "", o->limit.rate,
			     o->limit.bytes ? " bytes" : "");
		if (per)
			cgfw_sb_adds(sb, per);
		else
			cgfw_sb_addf(sb, "%" PRIu64 "s", o->limit.unit);
		cgfw_sb_addf(sb, " burst %" PRIu64 " %s", o->limit.burst,
			     o->limit.bytes ? "bytes" : "packets");
		break;
	}
	cgfw_sb_adds(sb, "\n\t}\n");
}

/* A time in ms as nft writes it (time_print()): 1d2h3m4s500ms */
static void text_time(struct strbuf *sb, uint64_t ms)
{
	static const struct {
		uint64_t ms;
		const char *unit;
	} units[] = {
		{ 86400000, "d" }, { 3600000, "h" }, { 60000, "m" },
		{ 1000, "s" }, { 1, "ms" },
	};
	size_t i;

	if (!ms)
		cgfw_sb_adds(sb, "0s");
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (ms / units[i].ms)
			cgfw_sb_addf(sb, "%" PRIu64 "%s", ms / units[i].ms,
				     units[i].unit);
		ms %= units[i].ms;
	}
}

/* An element's " timeout 1m expires 58s", as nft lists them */
static void text_elem_times(struct strbuf *sb, const struct model_elem *e)
{
	if (e->timeout) {
		cgfw_sb_adds(sb, " timeout ");
		text_time(sb, e->timeout);
	}
	if (e->expires) {
		cgfw_sb_adds(sb, " expires ");
		text_time(sb, e->expires);
	}
}

static void text_set(struct strbuf *sb, const struct model_set *s,
		     bool handles)
{
	bool known = true, any = false;
	uint32_t flags;
	size_t i;

	cgfw_sb_addf(sb, "\t%s %s {", is_map(s) ? "map" : "set", s->name);
	text_handle(sb, handles, s->handle);
	cgfw_sb_adds(sb, "\n\t\ttype ");
	type_text(sb, s->key_type, &known);
	if (is_map(s)) {
		cgfw_sb_adds(sb, " : ");
		if (s->data_type == NFT_DATA_VERDICT)
			cgfw_sb_adds(sb, "verdict");
		else
			type_text(sb, s->data_type, &known);
	}
	cgfw_sb_adds(sb, "\n");
	flags = s->flags & (NFT_SET_CONSTANT | NFT_SET_EVAL |
			    NFT_SET_INTERVAL | NFT_SET_TIMEOUT);
	if (s->timeout && flags == NFT_SET_TIMEOUT)
		flags = 0;	/* as nft: the timeout line says it */
	for (i = 0; i < ARRAY_SIZE(set_flags); i++) {
		if (!(flags & set_flags[i].flag))
			continue;
		cgfw_sb_addf(sb, "%s%s", any ? "," : "\t\tflags ",
			     set_flags[i].name);
		any = true;
	}
	if (any)
		cgfw_sb_adds(sb, "\n");
	if (s->timeout) {
		cgfw_sb_adds(sb, "\t\ttimeout ");
		text_time(sb, s->timeout);
		cgfw_sb_adds(sb, "\n");
	}
	if (!known)
		cgfw_sb_adds(sb, "\t\t# cgfw does not know a type of this set: its values are shown in hexadecimal\n");
	if (s->where)
		cgfw_sb_addf(sb, "\t\t# %zu elements, %s\n", s->n_elems, s->where);
	if (s->n_elems) {
		cgfw_sb_adds(sb, "\t\telements = { ");
		for (i = 0; i < s->n_elems; i++) {
			if (i)
				cgfw_sb_adds(sb, i % 4 ? ", " : ",\n\t\t\t     ");
			print_key(sb, NULL, s, &s->elems[i]);
			text_elem_times(sb, &s->elems[i]);
			if (is_map(s))
				print_data(sb, NULL, s, &s->elems[i]);
		}
		cgfw_sb_adds(sb, " }\n");
	}
	cgfw_sb_adds(sb, "\t}\n");
}

static const char *policy_str(uint32_t policy)
{
	return policy == NF_DROP ? "drop" : "accept";
}

static void text_binding(struct strbuf *sb, const struct model_chain *c)
{
	switch (c->binding) {
	case MODEL_BOUND:
		cgfw_sb_addf(sb, " # bound to cgroup id %" PRIu64, c->cgroup_id);
		break;
	case MODEL_STALE:
		cgfw_sb_addf(sb, " # STALE: bound to cgroup id %" PRIu64 ", which is no longer at this path; nothing here is filtered by this chain",
			     c->cgroup_id);
		break;
	case MODEL_WAITING:
		cgfw_sb_adds(sb, " # WAITING: the cgroup does not exist yet");
		break;
	}
}

static void text_chain(struct strbuf *sb, const struct model_chain *c,
		       bool handles)
{
	size_t i;

	cgfw_sb_addf(sb, "\tchain %s {", c->name);
	text_handle(sb, handles, c->handle);
	cgfw_sb_adds(sb, "\n");
	if (c->base) {
		cgfw_sb_addf(sb, "\t\ttype filter hook %s cgroup \"%s\" priority %d; policy %s;",
			     cgfw_dir_str(c->dir), c->cgroup_path, c->priority,
			     policy_str(c->policy));
		text_binding(sb, c);
		cgfw_sb_adds(sb, "\n");
	}
	for (i = 0; i < c->n_rules; i++) {
		const struct model_rule *r = &c->rules[i];

		cgfw_sb_adds(sb, "\t\t");
		if (r->text)
			rule_text(sb, r);
		else
			cgfw_sb_adds(sb, "# a rule whose text cgfw does not know (it was added with insert, replace or a position)");
		if (r->text_cut)
			cgfw_sb_adds(sb, " ... # only the start of this rule's text was kept (nf_tables keeps 256 bytes of a rule's userdata)");
		text_handle(sb, handles, r->handle);
		cgfw_sb_adds(sb, "\n");
	}
	if (c->base && c->policy_counter.present)
		cgfw_sb_addf(sb, "\t\t# policy %s: %" PRIu64 " packets, %" PRIu64 " bytes\n",
			     policy_str(c->policy), c->policy_counter.packets,
			     c->policy_counter.bytes);
	cgfw_sb_adds(sb, "\t}\n");
}

/* ", 1.4 MiB in the kernel, 912 bytes a rule", when the backend knows */
static void text_memory(struct strbuf *sb, const struct model_table *t)
{
	size_t i, n = 0;

	if (!t->memory)
		return;
	for (i = 0; i < t->n_chains; i++)
		n += t->chains[i].n_rules;
	if (t->memory >= 1 << 20)
		cgfw_sb_addf(sb, ", %.1f MiB in the kernel",
			     t->memory / 1048576.0);
	else
		cgfw_sb_addf(sb, ", %" PRIu64 " KiB in the kernel",
			     (t->memory + 1023) >> 10);
	if (n)
		cgfw_sb_addf(sb, ", %" PRIu64 " bytes a rule", t->memory / n);
}

static void text_table(struct strbuf *sb, const struct model_table *t,
		       bool handles)
{
	size_t i;
	bool first = true;

	cgfw_sb_addf(sb, "table cgroup %s {\t# backend %s, as %s", t->name,
		     t->backend, t->kernel_name);
	text_memory(sb, t);
	if (handles && t->handle)
		cgfw_sb_addf(sb, ", handle %" PRIu64, t->handle);
	cgfw_sb_adds(sb, "\n");
	if (t->note)
		cgfw_sb_addf(sb, "\t# %s\n", t->note);
	if (t->logs)
		cgfw_sb_addf(sb, "\t# log records lost: %llu (cgfw daemon reads them into the kernel log)\n",
			     (unsigned long long)t->log_lost);
	for (i = 0; i < t->n_objs; i++, first = false) {
		if (!first)
			cgfw_sb_adds(sb, "\n");
		text_obj(sb, &t->objs[i], handles);
	}
	for (i = 0; i < t->n_sets; i++, first = false) {
		if (!first)
			cgfw_sb_adds(sb, "\n");
		text_set(sb, &t->sets[i], handles);
	}
	for (i = 0; i < t->n_chains; i++, first = false) {
		if (!first)
			cgfw_sb_adds(sb, "\n");
		text_chain(sb, &t->chains[i], handles);
	}
	cgfw_sb_adds(sb, "}\n");
}

/* ---- JSON ---- */

static void json_counter(struct cgfw_json *j, const char *key,
			 const struct model_counter *c)
{
	cgfw_json_key(j, key);
	cgfw_json_obj_open(j);
	cgfw_json_kv_u64(j, "packets", c->packets);
	cgfw_json_kv_u64(j, "bytes", c->bytes);
	cgfw_json_obj_close(j);
}

/* "family", "table" and "name" (or "chain") of an object */
static void json_names(struct cgfw_json *j, const struct model_table *t)
{
	cgfw_json_kv_str(j, "family", "cgroup");
	cgfw_json_kv_str(j, "table", t->name);
}

static void json_type(struct cgfw_json *j, uint32_t type)
{
	uint32_t f[MAX_FIELDS];
	size_t n = cgfw_model_type_fields(type, f, MAX_FIELDS), i;
	const char *name;
	char buf[32];

	if (n > 1)
		cgfw_json_arr_open(j);
	for (i = 0; i < n; i++) {
		name = cgfw_model_type_name(f[i]);
		snprintf(buf, sizeof(buf), "%u", f[i]);
		cgfw_json_str(j, name ? name : buf);
	}
	if (n > 1)
		cgfw_json_arr_close(j);
}

/* As nft -j writes them: { "counter": { ..., "packets": N, ... } } */
static void json_obj(struct cgfw_json *j, const struct model_table *t,
		     const struct model_obj *o)
{
	const char *per;

	cgfw_json_obj_open(j);
	cgfw_json_key(j, obj_type_str(o->type));
	cgfw_json_obj_open(j);
	json_names(j, t);
	cgfw_json_kv_str(j, "name", o->name);
	if (o->handle)
		cgfw_json_kv_u64(j, "handle", o->handle);
	switch (o->type) {
	case NFT_OBJECT_COUNTER:
		cgfw_json_kv_u64(j, "packets", o->counter.packets);
		cgfw_json_kv_u64(j, "bytes", o->counter.bytes);
		break;
	case NFT_OBJECT_QUOTA:
		cgfw_json_kv_u64(j, "bytes", o->quota.bytes);
		cgfw_json_kv_u64(j, "used", o->quota.used);
		cgfw_json_kv_bool(j, "inv", o->quota.over);
		break;
	case NFT_OBJECT_LIMIT:
		per = per_str(o->limit.unit);
		cgfw_json_kv_u64(j, "rate", o->limit.rate);
		if (per)
			cgfw_json_kv_str(j, "per", per);
		else
			cgfw_json_kv_u64(j, "per_seconds", o->limit.unit);
		cgfw_json_kv_u64(j, "burst", o->limit.burst);
		if (o->limit.bytes)
			cgfw_json_kv_str(j, "rate_unit", "bytes");
		cgfw_json_kv_bool(j, "inv", o->limit.over);
		break;
	}
	cgfw_json_obj_close(j);
	cgfw_json_obj_close(j);
}

/*
 * An element's key; with a timeout, as nft -j writes it:
 * { "elem": { "val": KEY, "timeout": s, "expires": s } }
 */
static void json_elem_key(struct cgfw_json *j, const struct model_set *s,
			  const struct model_elem *e)
{
	if (!e->timeout && !e->expires) {
		print_key(NULL, j, s, e);
		return;
	}
	cgfw_json_obj_open(j);
	cgfw_json_key(j, "elem");
	cgfw_json_obj_open(j);
	cgfw_json_key(j, "val");
	print_key(NULL, j, s, e);
	if (e->timeout)
		cgfw_json_kv_u64(j, "timeout", e->timeout / 1000);
	if (e->expires)
		cgfw_json_kv_u64(j, "expires", e->expires / 1000);
	cgfw_json_obj_close(j);
	cgfw_json_obj_close(j);
}

static void json_set(struct cgfw_json *j, const struct model_table *t,
		     const struct model_set *s)
{
	size_t i;
	bool any = false;

	cgfw_json_obj_open(j);
	cgfw_json_key(j, is_map(s) ? "map" : "set");
	cgfw_json_obj_open(j);
	json_names(j, t);
	cgfw_json_kv_str(j, "name", s->name);
	if (s->handle)
		cgfw_json_kv_u64(j, "handle", s->handle);
	cgfw_json_key(j, "type");
	json_type(j, s->key_type);
	if (is_map(s)) {
		cgfw_json_key(j, "map");
		if (s->data_type == NFT_DATA_VERDICT)
			cgfw_json_str(j, "verdict");
		else
			json_type(j, s->data_type);
	}
	for (i = 0; i < ARRAY_SIZE(set_flags); i++) {
		if (!(s->flags & set_flags[i].flag))
			continue;
		if (!any)
			cgfw_json_key(j, "flags"), cgfw_json_arr_open(j);
		cgfw_json_str(j, set_flags[i].name);
		any = true;
	}
	if (any)
		cgfw_json_arr_close(j);
	if (s->timeout)
		cgfw_json_kv_u64(j, "timeout", s->timeout / 1000);
	if (s->n_elems) {
		cgfw_json_key(j, "elem");
		cgfw_json_arr_open(j);
		for (i = 0; i < s->n_elems; i++) {
			if (is_map(s))
				cgfw_json_arr_open(j);
			json_elem_key(j, s, &s->elems[i]);
			if (is_map(s)) {
				print_data(NULL, j, s, &s->elems[i]);
				cgfw_json_arr_close(j);
			}
		}
		cgfw_json_arr_close(j);
	}
	if (s->where) {
		cgfw_json_key(j, "cgfw");
		cgfw_json_obj_open(j);
		cgfw_json_kv_str(j, "map", s->where);
		if (s->capacity)
			cgfw_json_kv_u64(j, "capacity", s->capacity);
		cgfw_json_obj_close(j);
	}
	cgfw_json_obj_close(j);
	cgfw_json_obj_close(j);
}

static void json_chain(struct cgfw_json *j, const struct model_table *t,
		       const struct model_chain *c)
{
	cgfw_json_obj_open(j);
	cgfw_json_key(j, "chain");
	cgfw_json_obj_open(j);
	json_names(j, t);
	cgfw_json_kv_str(j, "name", c->name);
	if (c->handle)
		cgfw_json_kv_u64(j, "handle", c->handle);
	if (c->base) {
		cgfw_json_kv_str(j, "type", "filter");
		cgfw_json_kv_str(j, "hook", cgfw_dir_str(c->dir));
		cgfw_json_kv_str(j, "cgroup", c->cgroup_path);
		cgfw_json_kv_s64(j, "prio", c->priority);
		cgfw_json_kv_str(j, "policy", policy_str(c->policy));
		cgfw_json_key(j, "cgfw");
		cgfw_json_obj_open(j);
		cgfw_json_kv_u64(j, "cgroup_id", c->cgroup_id);
		cgfw_json_kv_str(j, "binding", cgfw_model_binding_str(c->binding));
		if (c->policy_counter.present)
			json_counter(j, "policy_counter", &c->policy_counter);
		cgfw_json_obj_close(j);
	}
	cgfw_json_obj_close(j);
	cgfw_json_obj_close(j);
}

static void json_rule(struct cgfw_json *j, const struct model_table *t,
		      const struct model_chain *c, const struct model_rule *r)
{
	cgfw_json_obj_open(j);
	cgfw_json_key(j, "rule");
	cgfw_json_obj_open(j);
	json_names(j, t);
	cgfw_json_kv_str(j, "chain", c->name);
	if (r->handle)
		cgfw_json_kv_u64(j, "handle", r->handle);
	/* no "expr": cgfw keeps the rule's text, not nft's expression tree */
	cgfw_json_key(j, "cgfw");
	cgfw_json_obj_open(j);
	if (r->text)
		cgfw_json_kv_str(j, "text", r->text);
	else
		cgfw_json_null(j);
	if (r->text_cut)
		cgfw_json_kv_bool(j, "text_cut", true);
	if (r->counter.present)
		json_counter(j, "counter", &r->counter);
	if (r->has_quota)
		cgfw_json_kv_u64(j, "quota_used", r->quota_used);
	cgfw_json_obj_close(j);
	cgfw_json_obj_close(j);
	cgfw_json_obj_close(j);
}

static void json_table(struct cgfw_json *j, const struct model_table *t)
{
	size_t i, k;

	cgfw_json_obj_open(j);
	cgfw_json_key(j, "table");
	cgfw_json_obj_open(j);
	cgfw_json_kv_str(j, "family", "cgroup");
	cgfw_json_kv_str(j, "name", t->name);
	if (t->handle)
		cgfw_json_kv_u64(j, "handle", t->handle);
	cgfw_json_key(j, "cgfw");
	cgfw_json_obj_open(j);
	cgfw_json_kv_str(j, "backend", t->backend);
	cgfw_json_kv_str(j, "installed_as", t->kernel_name);
	if (t->generation)
		cgfw_json_kv_u64(j, "generation", t->generation);
	if (t->memory)
		cgfw_json_kv_u64(j, "memory", t->memory);
	if (t->note)
		cgfw_json_kv_str(j, "note", t->note);
	if (t->logs)
		cgfw_json_kv_u64(j, "log_records_lost", t->log_lost);
	cgfw_json_obj_close(j);
	cgfw_json_obj_close(j);
	cgfw_json_obj_close(j);
	for (i = 0; i < t->n_objs; i++)
		json_obj(j, t, &t->objs[i]);
	for (i = 0; i < t->n_sets; i++)
		json_set(j, t, &t->sets[i]);
	for (i = 0; i < t->n_chains; i++)
		json_chain(j, t, &t->chains[i]);
	for (i = 0; i < t->n_chains; i++)
		for (k = 0; k < t->chains[i].n_rules; k++)
			json_rule(j, t, &t->chains[i], &t->chains[i].rules[k]);
}

CGFW_API size_t cgfw_listing__unbound(const struct cgfw_listing *l)
{
	size_t i, k, n = 0;

	for (i = 0; l && i < l->n_tables; i++) {
		n += l->tables[i].degraded;
		for (k = 0; k < l->tables[i].n_chains; k++)
			n += l->tables[i].chains[k].base &&
			     l->tables[i].chains[k].binding != MODEL_BOUND;
	}
	return n;
}

CGFW_API int cgfw_listing__format(const struct cgfw_listing *l,
				  const struct cgfw_format_opts *opts,
				  char **text)
{
	struct cgfw_json j;
	struct strbuf sb;
	bool json;
	size_t i;

	if (!l || !text || !CGFW_OPTS_VALID(NULL, opts, cgfw_format_opts))
		return libcgfw_err(-EINVAL);
	json = CGFW_OPTS_GET(opts, json, false);
	cgfw_sb_init(&sb);
	if (json) {
		cgfw_json_init(&j, &sb);
		cgfw_json_obj_open(&j);
		cgfw_json_key(&j, "nftables");
		cgfw_json_arr_open(&j);
		cgfw_json_obj_open(&j);
		cgfw_json_key(&j, "metainfo");
		cgfw_json_obj_open(&j);
		cgfw_json_kv_str(&j, "version", CGFW_VERSION);
		cgfw_json_kv_str(&j, "release_name", "cgfw");
		cgfw_json_kv_u64(&j, "json_schema_version", 1);
		cgfw_json_obj_close(&j);
		cgfw_json_obj_close(&j);
		for (i = 0; i < l->n_tables; i++)
			json_table(&j, &l->tables[i]);
		cgfw_json_arr_close(&j);
		cgfw_json_obj_close(&j);
		cgfw_sb_adds(&sb, "\n");
	} else {
		for (i = 0; i < l->n_tables; i++) {
			if (i)
				cgfw_sb_adds(&sb, "\n");
			text_table(&sb, &l->tables[i],
				   CGFW_OPTS_GET(opts, handles, false));
		}
	}
	*text = cgfw_sb_detach(&sb);
	return *text ? 0 : libcgfw_err(-ENOMEM);
}
