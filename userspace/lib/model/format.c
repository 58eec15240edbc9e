// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Printing what is installed, in nft syntax or as JSON, from one walker:
 * every p_*() call prints its text form or its JSON form (the iproute2
 * print_string(PRINT_ANY, ...) idea), so the two cannot drift apart.
 *
 * The rules themselves are nft's own listing of the kernel table (with live
 * counters); the emulation's plumbing (the cgfw_* chains) is hidden, and
 * the last rule of a bound chain, its policy with a counter, is folded back
 * into the chain's "type filter hook egress cgroup ..." line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <linux/netfilter.h>

#include "model/model.h"

struct printer {
	struct strbuf *sb;
	bool json;
	bool need_comma;
};

static void p_key(struct printer *p, const char *key)
{
	if (p->need_comma)
		sb_adds(p->sb, ",");
	p->need_comma = false;
	if (key)
		sb_addf(p->sb, "\"%s\":", key);
}

static void json_str(struct strbuf *sb, const char *s)
{
	sb_adds(sb, "\"");
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			sb_addf(sb, "\\%c", c);
		else if (c == '\n')
			sb_adds(sb, "\\n");
		else if (c == '\t')
			sb_adds(sb, "\\t");
		else if (c < 0x20)
			sb_addf(sb, "\\u%04x", c);
		else
			sb_addn(sb, (const char *)&c, 1);
	}
	sb_adds(sb, "\"");
}

/* Open an object (JSON) and print @text (nft syntax). */
static void p_open(struct printer *p, const char *key, const char *text)
{
	if (p->json) {
		p_key(p, key);
		sb_adds(p->sb, "{");
	} else if (text) {
		sb_adds(p->sb, text);
	}
}

static void p_close(struct printer *p, const char *text)
{
	if (p->json) {
		sb_adds(p->sb, "}");
		p->need_comma = true;
	} else if (text) {
		sb_adds(p->sb, text);
	}
}

static void p_array(struct printer *p, const char *key)
{
	if (p->json) {
		p_key(p, key);
		sb_adds(p->sb, "[");
	}
}

static void p_array_end(struct printer *p)
{
	if (p->json) {
		sb_adds(p->sb, "]");
		p->need_comma = true;
	}
}

static void p_str(struct printer *p, const char *key, const char *fmt,
		  const char *val)
{
	if (p->json) {
		p_key(p, key);
		json_str(p->sb, val);
		p->need_comma = true;
	} else if (fmt) {
		sb_addf(p->sb, fmt, val);
	}
}

static void p_int(struct printer *p, const char *key, const char *fmt,
		  long long val)
{
	if (p->json) {
		p_key(p, key);
		sb_addf(p->sb, "%lld", val);
		p->need_comma = true;
	} else if (fmt) {
		sb_addf(p->sb, fmt, val);
	}
}

/* ---- nft's listing, line by line ---- */

struct line {
	const char *s;
	size_t len;
};

static bool next_line(const char **pos, struct line *l)
{
	const char *e;

	if (!**pos)
		return false;
	e = strchrnul(*pos, '\n');
	l->s = *pos;
	l->len = e - *pos;
	*pos = *e ? e + 1 : e;
	return true;
}

static bool starts(const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);

	return l->len >= n && !memcmp(l->s, prefix, n);
}

static char *line_dup(const struct line *l, size_t skip)
{
	return strndup(l->s + skip, l->len > skip ? l->len - skip : 0);
}

static void p_counter(struct printer *p, const char *key, const char *rule)
{
	unsigned long long pk, by;
	const char *c = strstr(rule, "counter packets ");

	if (!c || sscanf(c, "counter packets %llu bytes %llu", &pk, &by) != 2)
		return;
	p_open(p, key, NULL);
	p_int(p, "packets", NULL, pk);
	p_int(p, "bytes", NULL, by);
	p_close(p, NULL);
}

static const struct inst_chain *bound_chain(const struct inst_table *t,
					    const char *name)
{
	size_t i;

	for (i = 0; i < t->n_chains; i++)
		if (!strcmp(t->chains[i].name, name))
			return &t->chains[i];
	return NULL;
}

/* "\tchain NAME {" ... "\t}", or "\tset NAME {" ... "\t}" */
static char *block_name(const struct line *l, const char *kw)
{
	size_t n = strlen(kw);

	if (l->len < n + 3 || memcmp(l->s, kw, n) ||
	    l->s[l->len - 1] != '{')
		return NULL;
	return strndup(l->s + n, l->len - n - 2);
}

static void print_chain(struct printer *p, const struct inst_table *t,
			const char *name, const char **pos)
{
	const struct inst_chain *ic = bound_chain(t, name);
	char **rules = NULL, *comment = NULL, buf[64];
	size_t n = 0, i, n_user;
	struct line l;

	/* collect the chain's lines: an optional comment, then rules */
	while (next_line(pos, &l) && !starts(&l, "\t}")) {
		if (starts(&l, "\t\tcomment ") && !n && !comment) {
			comment = line_dup(&l, 2);
			continue;
		}
		if (starts(&l, "\t\ttype "))
			continue;	/* a base chain we did not make */
		char **v = realloc(rules, (n + 1) * sizeof(*v));

		if (!v)
			break;
		rules = v;
		rules[n++] = line_dup(&l, 2);
	}
	/* the emulation's last rule of a bound chain is its policy */
	n_user = ic && t->policy_rule && n ? n - 1 : n;

	p_open(p, NULL, NULL);
	p_str(p, "name", "\tchain %s {\n", name);
	if (comment)
		p_str(p, "comment", "\t\t%s\n", comment);
	if (ic) {
		p_str(p, "hook", "\t\ttype filter hook %s", cgfw_dir_str(ic->dir));
		p_str(p, "cgroup", " cgroup \"%s\"", ic->cgroup_path);
		p_int(p, "priority", " priority %lld;", ic->priority);
		p_str(p, "policy", " policy %s;\n",
		      ic->policy == NF_DROP ? "drop" : "accept");
	}
	p_array(p, "rules");
	for (i = 0; i < n_user; i++) {
		p_open(p, NULL, NULL);
		p_str(p, "nft", "\t\t%s\n", rules[i] ? rules[i] : "");
		if (rules[i])
			p_counter(p, "counter", rules[i]);
		p_close(p, NULL);
	}
	p_array_end(p);
	if (ic && ic->policy_counted) {
		if (!p->json)
			sb_addf(p->sb, "\t\t# policy %s: %llu packets, %llu bytes\n",
				ic->policy == NF_DROP ? "drop" : "accept",
				(unsigned long long)ic->policy_packets,
				(unsigned long long)ic->policy_bytes);
		p_open(p, "policy_counter", NULL);
		p_int(p, "packets", NULL, ic->policy_packets);
		p_int(p, "bytes", NULL, ic->policy_bytes);
		p_close(p, NULL);
	} else if (ic && t->policy_rule && n && rules[n - 1]) {
		unsigned long long pk, by;
		const char *c = strstr(rules[n - 1], "counter packets ");

		if (c && sscanf(c, "counter packets %llu bytes %llu", &pk,
				&by) == 2 && !p->json) {
			snprintf(buf, sizeof(buf), "%llu packets, %llu bytes",
				 pk, by);
			sb_addf(p->sb, "\t\t# policy %s: %s\n",
				ic->policy == NF_DROP ? "drop" : "accept", buf);
		}
		p_counter(p, "policy_counter", rules[n - 1]);
	}
	p_close(p, "\t}\n");

	for (i = 0; i < n; i++)
		free(rules[i]);
	free(rules);
	free(comment);
}

static void print_table(struct printer *p, const struct inst_table *t)
{
	const char *pos = t->nft_text ? t->nft_text : "";
	bool first = true;
	struct strbuf sets, setblock;
	struct printer sp;
	char *name;
	struct line l;

	p_open(p, NULL, NULL);
	p_str(p, "name", "table cgroup %s {", t->name);
	p_str(p, "family", NULL, "cgroup");
	p_str(p, "backend", "\t# backend %s,", t->backend);
	p_str(p, "installed_as", " as %s\n", t->kernel_name);

	/* sets first (nft lists them before chains), then chains */
	sb_init(&sets);
	/* JSON keeps sets apart; text prints them where nft did */
	sp = (struct printer){ .sb = p->json ? &sets : p->sb, .json = p->json };
	p_array(p, "chains");
	next_line(&pos, &l);	/* "table inet cgfw_x {" */
	while (next_line(&pos, &l)) {
		if (starts(&l, "\tcomment \"cgfw: "))
			continue;
		if ((name = block_name(&l, "\tchain "))) {
			if (!strncmp(name, "cgfw_", 5)) {	/* plumbing */
				while (next_line(&pos, &l) &&
				       !starts(&l, "\t}"))
					;
			} else {
				if (!first && !p->json)
					sb_adds(p->sb, "\n");
				first = false;
				print_chain(p, t, name, &pos);
			}
			free(name);
			continue;
		}
		if ((name = block_name(&l, "\tset ")) ||
		    (name = block_name(&l, "\tmap "))) {
			sb_init(&setblock);
			sb_addn(&setblock, l.s, l.len);
			sb_adds(&setblock, "\n");
			while (next_line(&pos, &l)) {
				sb_addn(&setblock, l.s, l.len);
				sb_adds(&setblock, "\n");
				if (starts(&l, "\t}"))
					break;
			}
			if (!first && !p->json)
				sb_adds(p->sb, "\n");
			first = false;
			p_open(&sp, NULL, NULL);
			p_str(&sp, "name", NULL, name);
			p_str(&sp, "nft", "%s",
			      setblock.buf ? setblock.buf : "");
			p_close(&sp, NULL);
			sb_release(&setblock);
			free(name);
		}
	}
	p_array_end(p);
	if (p->json) {
		p_key(p, "sets");
		sb_adds(p->sb, "[");
		if (sets.buf)
			sb_adds(p->sb, sets.buf);
		sb_adds(p->sb, "]");
		p->need_comma = true;
	}
	p_close(p, "}\n");
	sb_release(&sets);
}

CGFW_API int cgfw_listing__format(const struct cgfw_listing *l, bool json,
				  char **text)
{
	struct strbuf sb;
	struct printer p = { .sb = &sb, .json = json };
	size_t i;

	if (!l || !text)
		return libcgfw_err(-EINVAL);
	sb_init(&sb);
	p_open(&p, NULL, NULL);
	p_array(&p, "tables");
	for (i = 0; i < l->n_tables; i++) {
		if (i && !json)
			sb_adds(&sb, "\n");
		print_table(&p, &l->tables[i]);
	}
	p_array_end(&p);
	p_close(&p, NULL);
	if (json)
		sb_adds(&sb, "\n");
	*text = sb_detach(&sb);
	return *text ? 0 : libcgfw_err(-ENOMEM);
}
