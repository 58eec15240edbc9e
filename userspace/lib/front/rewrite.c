// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rewrite: the first stage of the front end (docs/design.rst).
 *
 * nft does not know the cgroup family. A small tokenizer (words, strings,
 * comments, braces, statement ends) walks the file's block structure and
 *  - turns "table cgroup NAME" (and "add rule cgroup ...") into inet,
 *  - turns "hook egress cgroup \"P\"" into "hook output" and
 *    "hook ingress cgroup \"P\"" into "hook input",
 *  - records each chain's binding and where each of its rules starts.
 * Replacements are padded with blanks to the length of what they replace,
 * so every line and column of the output matches the user's file, and nft's
 * own error locations point at the user's text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "front/rewrite.h"

enum tok_type {
	T_EOF,
	T_WORD,
	T_STRING,
	T_NL,
	T_SEMI,
	T_LBRACE,
	T_RBRACE,
};

struct token {
	enum tok_type type;
	size_t off, len;
	struct cgfw_loc loc;
};

struct lexer {
	struct cgfw_ctx *ctx;
	const struct cgfw_source *src;
	char *out;			/* the rewritten copy */
	size_t pos;
	unsigned int line, col;
	struct token peeked;
	bool has_peeked;
	size_t last_end;		/* end of the last word, string or brace */
	int err;
	struct rw_result *res;
};

static void lex_error(struct lexer *lx, const struct cgfw_loc *loc,
		      const char *fmt, ...) __printf(3, 4);

static void lex_error(struct lexer *lx, const struct cgfw_loc *loc,
		      const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cgfw_err_at(lx->ctx, lx->src, loc, "%s", msg);
	if (!lx->err)
		lx->err = -EINVAL;
}

static bool is_word_char(char c)
{
	return c && !strchr(" \t\r\n{};\"#", c);
}

static void advance(struct lexer *lx, size_t n)
{
	while (n--) {
		if (lx->src->text[lx->pos] == '\n') {
			lx->line++;
			lx->col = 1;
		} else {
			lx->col++;
		}
		lx->pos++;
	}
}

static struct token lex_raw(struct lexer *lx)
{
	const char *s = lx->src->text;
	struct token t = { .type = T_EOF };
	size_t n;

	/* a UTF-8 byte-order mark at the start: blanks */
	if (!lx->pos && lx->src->len >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) {
		memset(lx->out, ' ', 3);
		advance(lx, 3);
	}
	for (;;) {
		char c = s[lx->pos];

		if (c == ' ' || c == '\t' || c == '\r') {
			advance(lx, 1);
		} else if (c == '\\' && s[lx->pos + 1] == '\n') {
			advance(lx, 2);	/* line continuation */
		} else if (c == '#') {
			while (s[lx->pos] && s[lx->pos] != '\n')
				advance(lx, 1);
		} else {
			break;
		}
	}
	t.off = lx->pos;
	t.loc.line = lx->line;
	t.loc.col = lx->col;

	switch (s[lx->pos]) {
	case '\0':
		return t;
	case '\n':
	case ';':
	case '{':
	case '}':
		t.type = s[lx->pos] == '\n' ? T_NL : s[lx->pos] == ';' ? T_SEMI :
			 s[lx->pos] == '{' ? T_LBRACE : T_RBRACE;
		n = 1;
		break;
	case '"':
		t.type = T_STRING;
		for (n = 1; s[t.off + n] && s[t.off + n] != '"' &&
		     s[t.off + n] != '\n'; n++)
			;
		if (s[t.off + n] != '"') {
			t.loc.col_end = t.loc.col;
			lex_error(lx, &t.loc,
				  "unterminated string; close it with \" on the same line");
		} else {
			n++;
		}
		break;
	default:
		t.type = T_WORD;
		for (n = 0; is_word_char(s[t.off + n]); n++)
			;
		break;
	}
	t.len = n;
	t.loc.col_end = t.loc.col + (n ? n - 1 : 0);
	advance(lx, n);
	return t;
}

static struct token next(struct lexer *lx)
{
	struct token t;

	if (lx->has_peeked) {
		lx->has_peeked = false;
		t = lx->peeked;
	} else {
		t = lex_raw(lx);
	}
	if (t.type != T_NL && t.type != T_SEMI && t.type != T_EOF)
		lx->last_end = t.off + t.len;
	return t;
}

static struct token peek(struct lexer *lx)
{
	if (!lx->has_peeked) {
		lx->peeked = lex_raw(lx);
		lx->has_peeked = true;
	}
	return lx->peeked;
}

static bool tok_is(const struct lexer *lx, const struct token *t,
		   const char *word)
{
	return t->type == T_WORD && t->len == strlen(word) &&
	       !memcmp(lx->src->text + t->off, word, t->len);
}

/* A name token (word or quoted string) as a new string, quotes removed. */
static char *tok_name(const struct lexer *lx, const struct token *t)
{
	const char *p = lx->src->text + t->off;
	size_t n = t->len;

	if (t->type == T_STRING && n >= 2) {
		p++;
		n -= 2;
	}
	return strndup(p, n);
}

/* Replace a token's text in the output, padded with blanks. */
static void replace(struct lexer *lx, const struct token *t, const char *with)
{
	size_t n = strlen(with);

	memset(lx->out + t->off, ' ', t->len);
	memcpy(lx->out + t->off, with, n < t->len ? n : t->len);
}

static void blank(struct lexer *lx, const struct token *t)
{
	memset(lx->out + t->off, ' ', t->len);
}

/* Skip to the end of the statement: a newline or ';' outside braces. */
static void skip_statement(struct lexer *lx)
{
	int depth = 0;
	struct token t;

	for (;;) {
		t = peek(lx);
		switch (t.type) {
		case T_EOF:
			return;
		case T_NL:
		case T_SEMI:
			next(lx);
			if (!depth)
				return;
			break;
		case T_LBRACE:
			next(lx);
			depth++;
			break;
		case T_RBRACE:
			if (!depth)
				return;	/* closes the enclosing block */
			next(lx);
			depth--;
			break;
		default:
			next(lx);
			break;
		}
	}
}

static const char *const families[] = {
	"ip", "ip6", "inet", "arp", "bridge", "netdev", "cgroup",
};

static bool is_family(const struct lexer *lx, const struct token *t)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(families); i++)
		if (tok_is(lx, t, families[i]))
			return true;
	return false;
}

static struct rw_table *find_table(struct rw_result *res, const char *name)
{
	struct rw_table *t;

	list_for_each_entry(t, &res->tables, list)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

struct rw_chain *cgfw_rw_find_chain(const struct rw_result *rw, const char *table,
				    const char *chain)
{
	struct rw_chain *c;

	list_for_each_entry(c, &rw->chains, list)
		if (!strcmp(c->table, table) && !strcmp(c->name, chain))
			return c;
	return NULL;
}

static struct rw_chain *get_chain(struct lexer *lx, const char *table,
				  const struct token *name_tok)
{
	struct rw_chain *c;
	char *name = tok_name(lx, name_tok);

	if (!name) {
		lx->err = -ENOMEM;
		return NULL;
	}
	c = cgfw_rw_find_chain(lx->res, table, name);
	if (c) {
		free(name);
		return c;
	}
	c = calloc(1, sizeof(*c));
	if (!c || cgfw_strdup(&c->table, table)) {
		free(c);
		free(name);
		lx->err = -ENOMEM;
		return NULL;
	}
	c->name = name;
	c->loc = name_tok->loc;
	list_add_tail(&c->list, &lx->res->chains);
	return c;
}

/*
 * A rule's text from @start to @end of the input, on one line: comments
 * dropped, and line breaks and runs of blanks outside strings made one
 * blank.
 */
static char *rule_text(const char *s, size_t start, size_t end)
{
	char *out = malloc(end - start + 1), *o = out;
	bool blank = false;
	size_t i;

	if (!out)
		return NULL;
	for (i = start; i < end; i++) {
		char c = s[i];

		if (c == '"') {
			if (blank && o > out)
				*o++ = ' ';
			blank = false;
			*o++ = c;
			for (i++; i < end && s[i] != '"'; i++)
				*o++ = s[i];
			if (i < end)
				*o++ = '"';
			continue;
		}
		if (c == '#') {
			while (i + 1 < end && s[i + 1] != '\n')
				i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
		    (c == '\\' && i + 1 < end && s[i + 1] == '\n')) {
			blank = true;
			continue;
		}
		if (blank && o > out)
			*o++ = ' ';
		blank = false;
		*o++ = c;
	}
	*o = '\0';
	return out;
}

/* Rule @text (taken) of @c, at @loc. */
static void push_rule(struct lexer *lx, struct rw_chain *c,
		      const struct cgfw_loc *loc, char *text)
{
	struct rw_rule *p;

	if (!text) {
		lx->err = -ENOMEM;
		return;
	}
	if (c->n_rules == c->cap_rules) {
		size_t cap = c->cap_rules ? c->cap_rules * 2 : 16;

		p = realloc(c->rules, cap * sizeof(*p));
		if (!p) {
			free(text);
			lx->err = -ENOMEM;
			return;
		}
		c->rules = p;
		c->cap_rules = cap;
	}
	p = &c->rules[c->n_rules++];
	p->loc = *loc;
	p->text = text;
}

/* A rule of @c from @tok to the end of its statement, which it skips. */
static void add_rule(struct lexer *lx, struct rw_chain *c,
		     const struct token *tok)
{
	skip_statement(lx);
	if (c)
		push_rule(lx, c, &tok->loc,
			  rule_text(lx->src->text, tok->off,
				    lx->last_end > tok->off ? lx->last_end :
							      tok->off));
}

/*
 * The family of a table reference. @t is the token after "table", "chain",
 * "rule", ... Returns the token of the table's name, or T_EOF on error.
 */
static struct token table_ref(struct lexer *lx, struct token t,
			      const char *what)
{
	if (t.type == T_WORD && tok_is(lx, &t, "cgroup")) {
		replace(lx, &t, "inet");
		return next(lx);
	}
	if (t.type != T_WORD && t.type != T_STRING) {
		lex_error(lx, &t.loc, "expected a table name after '%s'", what);
	} else if (is_family(lx, &t)) {
		lex_error(lx, &t.loc,
			  "cgfw applies tables of the cgroup family only, not '%.*s'; write '%s cgroup NAME' (its chains are bound to cgroups by their hooks)",
			  (int)t.len, lx->src->text + t.off, what);
	} else {
		/* no family given: nft would take ip */
		lex_error(lx, &t.loc,
			  "no family given, so nft would make this an ip table; write '%s cgroup %.*s'",
			  what, (int)t.len, lx->src->text + t.off);
	}
	return (struct token){ .type = T_EOF };
}

static void note_table(struct lexer *lx, const struct token *name_tok)
{
	struct rw_table *t;
	char *name = tok_name(lx, name_tok);

	if (!name) {
		lx->err = -ENOMEM;
		return;
	}
	if (find_table(lx->res, name)) {
		free(name);
		return;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		free(name);
		lx->err = -ENOMEM;
		return;
	}
	t->name = name;
	t->loc = name_tok->loc;
	list_add_tail(&t->list, &lx->res->tables);
}

/*
 * A priority given as a number must fit nf_tables' 32 bits: nft 1.0.6
 * takes a larger one and cuts it (99999999999 becomes 1215752191).
 */
static void check_priority(struct lexer *lx, struct token t)
{
	const char *p = lx->src->text + t.off;
	char num[32], *end;
	long long v;

	if (t.type != T_WORD || t.len >= sizeof(num) ||
	    !strchr("-+0123456789", *p))
		return;		/* a name ("filter"), or nft's to judge */
	memcpy(num, p, t.len);
	num[t.len] = '\0';
	errno = 0;
	v = strtoll(num, &end, 0);
	if (*end)
		return;
	if (errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
		lex_error(lx, &t.loc,
			  "priority %s is out of range: a chain's priority is a 32-bit number, from %d to %d",
			  num, INT32_MIN, INT32_MAX);
}

/* "type filter hook egress cgroup "P" priority 0;" */
static void parse_chain_type(struct lexer *lx, struct rw_chain *c)
{
	struct token t, hook, cg, path;

	for (;;) {
		t = peek(lx);
		if (t.type != T_WORD && t.type != T_STRING)
			break;
		next(lx);
		if (tok_is(lx, &t, "priority")) {
			check_priority(lx, peek(lx));
			continue;
		}
		if (!tok_is(lx, &t, "hook"))
			continue;

		hook = next(lx);
		if (tok_is(lx, &hook, "egress")) {
			c->dir = CGFW_EGRESS;
			replace(lx, &hook, "output");
		} else if (tok_is(lx, &hook, "ingress")) {
			c->dir = CGFW_INGRESS;
			replace(lx, &hook, "input");
		} else {
			lex_error(lx, &hook.loc,
				  "the cgroup family has the hooks 'ingress' and 'egress' only; write 'hook egress cgroup \"PATH\"' or 'hook ingress cgroup \"PATH\"'");
			break;
		}
		cg = peek(lx);
		if (!tok_is(lx, &cg, "cgroup")) {
			lex_error(lx, &hook.loc,
				  "hook %.*s needs the cgroup it filters; write 'hook %.*s cgroup \"PATH\"' (PATH absolute, or relative to the cgroup v2 mount)",
				  (int)hook.len, lx->src->text + hook.off,
				  (int)hook.len, lx->src->text + hook.off);
			break;
		}
		next(lx);
		path = peek(lx);
		if (path.type != T_STRING) {
			lex_error(lx, &path.loc,
				  "expected the cgroup's path as a quoted string, like cgroup \"web.slice\"");
			break;
		}
		next(lx);
		if (c->bound) {
			lex_error(lx, &hook.loc,
				  "chain '%s' is already bound to cgroup \"%s\"; a chain has one hook",
				  c->name, c->cgroup_path);
			break;
		}
		c->bound = true;
		c->cgroup_path = tok_name(lx, &path);
		c->cgroup_loc = path.loc;
		if (!c->cgroup_path)
			lx->err = -ENOMEM;
		blank(lx, &cg);
		blank(lx, &path);
	}
	skip_statement(lx);
}

/* "counter NAME {", "ct helper NAME {" ...: a named stateful object */
static void note_object(struct lexer *lx, const char *table,
			const struct token *t)
{
	static const char *const kinds[] = {
		"counter", "quota", "limit", "ct", "synproxy", "secmark",
	};
	struct rw_result *res = lx->res;
	struct token name;
	struct rw_obj *o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (tok_is(lx, t, kinds[i]))
			break;
	if (i == ARRAY_SIZE(kinds))
		return;
	if (!res->object_loc.line)
		res->object_loc = t->loc;	/* the first */
	next(lx);
	if (tok_is(lx, t, "ct"))
		next(lx);			/* helper, timeout, ... */
	name = peek(lx);
	if (name.type != T_WORD && name.type != T_STRING)
		return;
	o = realloc(res->objs, (res->n_objs + 1) * sizeof(*o));
	if (!o) {
		lx->err = -ENOMEM;
		return;
	}
	res->objs = o;
	o = &o[res->n_objs];
	o->loc = t->loc;
	o->table = strdup(table);
	o->name = tok_name(lx, &name);
	res->n_objs++;
	if (!o->table || !o->name)
		lx->err = -ENOMEM;
}

/*
 * The first token of the next statement of a block, past empty ones;
 * false at the block's end (its closing brace is taken) or the input's.
 */
static bool block_next(struct lexer *lx, struct token *t)
{
	for (;;) {
		*t = peek(lx);
		switch (t->type) {
		case T_EOF:
			return false;
		case T_RBRACE:
			next(lx);
			return false;
		case T_NL:
		case T_SEMI:
			next(lx);
			continue;
		default:
			return true;
		}
	}
}

static void parse_chain_body(struct lexer *lx, struct rw_chain *c)
{
	struct token t;

	while (block_next(lx, &t)) {
		if (tok_is(lx, &t, "type")) {
			next(lx);
			parse_chain_type(lx, c);
		} else if (tok_is(lx, &t, "policy") ||
			   tok_is(lx, &t, "comment") ||
			   tok_is(lx, &t, "devices") ||
			   tok_is(lx, &t, "flags")) {
			skip_statement(lx);
		} else {
			add_rule(lx, c, &t);
		}
	}
}

static void parse_table_body(struct lexer *lx, const char *table)
{
	struct rw_chain *c;
	struct token t, name;

	while (block_next(lx, &t)) {
		if (!tok_is(lx, &t, "chain")) {
			note_object(lx, table, &t);
			skip_statement(lx);	/* sets, maps, flags, ... */
			continue;
		}
		next(lx);
		name = next(lx);
		if (name.type != T_WORD && name.type != T_STRING) {
			lex_error(lx, &name.loc, "expected a chain name");
			skip_statement(lx);
			continue;
		}
		c = get_chain(lx, table, &name);
		t = peek(lx);
		if (t.type == T_LBRACE) {
			next(lx);
			parse_chain_body(lx, c);
		}
	}
}

/* "table cgroup NAME { ... }" or the object of "add table ..." */
static void parse_table(struct lexer *lx)
{
	struct token name = table_ref(lx, next(lx), "table");
	char *tname;

	if (name.type == T_EOF) {
		skip_statement(lx);
		return;
	}
	note_table(lx, &name);
	if (peek(lx).type != T_LBRACE) {
		skip_statement(lx);
		return;
	}
	next(lx);
	tname = tok_name(lx, &name);
	if (!tname) {
		lx->err = -ENOMEM;
		return;
	}
	parse_table_body(lx, tname);
	free(tname);
}

static void note_other(struct lexer *lx, const struct token *t)
{
	if (lx->res->has_other)
		return;
	lx->res->has_other = true;
	lx->res->other_loc = t->loc;
}

/* "add|delete element cgroup TABLE SET { ... }" */
static void note_elem_cmd(struct lexer *lx, const struct token *cmd,
			  const struct token *table)
{
	struct token set = next(lx);
	struct rw_elem_cmd *e;

	if (set.type != T_WORD && set.type != T_STRING) {
		skip_statement(lx);
		return;
	}
	e = calloc(1, sizeof(*e));
	if (e) {
		e->table = tok_name(lx, table);
		e->set = tok_name(lx, &set);
	}
	if (!e || !e->table || !e->set) {
		if (e) {
			free(e->table);
			free(e->set);
		}
		free(e);
		lx->err = -ENOMEM;
		return;
	}
	e->del = tok_is(lx, cmd, "delete");
	e->start = cmd->off;
	e->rest = set.off + set.len;
	e->loc = cmd->loc;
	skip_statement(lx);
	e->end = lx->has_peeked ? lx->peeked.off : lx->pos;
	list_add_tail(&e->list, &lx->res->elem_cmds);
}

static const struct {
	const char *cmd, *obj;
	enum rw_rule_op op;
} rule_ops[] = {
	{ "add", "rule", RW_RULE_ADD },
	{ "insert", "rule", RW_RULE_INSERT },
	{ "replace", "rule", RW_RULE_REPLACE },
	{ "delete", "rule", RW_RULE_DELETE },
	{ "flush", "chain", RW_CHAIN_FLUSH },
};

/* Which rule command "@cmd @obj" is; -1: none. */
static int rule_op(const struct lexer *lx, const struct token *cmd,
		   const struct token *obj)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rule_ops); i++)
		if (tok_is(lx, cmd, rule_ops[i].cmd) &&
		    tok_is(lx, obj, rule_ops[i].obj))
			return rule_ops[i].op;
	return -1;
}

static void free_rule_cmd(struct rw_rule_cmd *rc)
{
	free(rc->table);
	free(rc->chain);
	free(rc->ref);
	free(rc->text);
	free(rc);
}

/*
 * A rule command from its chain's name on: "position|handle|index N",
 * then the statements to the end, which it skips.
 */
static struct rw_rule_cmd *note_rule_cmd(struct lexer *lx,
					 const struct token *cmd, int op,
					 const struct token *table,
					 const struct token *chain)
{
	static const char *const refs[] = { "position", "handle", "index" };
	struct rw_rule_cmd *rc = calloc(1, sizeof(*rc));
	struct token t, num;
	size_t i;

	if (!rc)
		goto nomem;
	rc->table = tok_name(lx, table);
	rc->chain = tok_name(lx, chain);
	if (!rc->table || !rc->chain)
		goto nomem;
	rc->op = op;
	rc->loc = cmd->loc;
	rc->start = cmd->off;
	t = peek(lx);
	for (i = 0; i < ARRAY_SIZE(refs); i++)
		if (tok_is(lx, &t, refs[i]))
			rc->ref_word = refs[i];
	if (rc->ref_word) {
		next(lx);
		num = peek(lx);
		rc->ref_loc = t.loc;
		rc->ref_start = t.off;
		rc->ref_end = t.off + t.len;
		if (num.type == T_WORD) {
			next(lx);
			rc->ref = tok_name(lx, &num);
			if (!rc->ref)
				goto nomem;
			rc->ref_end = num.off + num.len;
		}
		t = peek(lx);
	}
	skip_statement(lx);
	if (t.type == T_WORD || t.type == T_STRING) {
		rc->text_loc = t.loc;
		rc->text = rule_text(lx->src->text, t.off,
				     lx->last_end > t.off ? lx->last_end : t.off);
		if (!rc->text)
			goto nomem;
	}
	rc->end = lx->has_peeked ? lx->peeked.off : lx->pos;
	list_add_tail(&rc->list, &lx->res->rule_cmds);
	return rc;
nomem:
	if (rc)
		free_rule_cmd(rc);
	lx->err = -ENOMEM;
	return NULL;
}

/* "add|insert|... chain|rule|set|... cgroup TABLE ..." */
static void parse_command(struct lexer *lx, const struct token *cmd)
{
	struct token obj = next(lx), name, chain, t;
	struct rw_rule_cmd *rc;
	struct rw_chain *c;
	bool ordered;
	char *tname;
	int op;

	op = rule_op(lx, cmd, &obj);
	if (!tok_is(lx, &obj, "element") && op < 0)
		note_other(lx, cmd);
	if (tok_is(lx, &obj, "table")) {
		parse_table(lx);
		return;
	}
	if (tok_is(lx, &obj, "ruleset") || obj.type != T_WORD) {
		skip_statement(lx);
		return;
	}
	name = table_ref(lx, next(lx), "table");
	if (name.type == T_EOF) {
		skip_statement(lx);
		return;
	}
	note_table(lx, &name);
	if (tok_is(lx, &obj, "element") &&
	    (tok_is(lx, cmd, "add") || tok_is(lx, cmd, "delete"))) {
		note_elem_cmd(lx, cmd, &name);
		return;
	}
	if (!tok_is(lx, &obj, "chain") && !tok_is(lx, &obj, "rule")) {
		skip_statement(lx);
		return;
	}
	chain = peek(lx);
	if (chain.type != T_WORD && chain.type != T_STRING) {
		if (op >= 0)
			lex_error(lx, chain.type == T_EOF ? &cmd->loc :
							    &chain.loc,
				  "expected a chain name after table '%.*s'",
				  (int)name.len, lx->src->text + name.off);
		skip_statement(lx);
		return;
	}
	next(lx);
	tname = tok_name(lx, &name);
	c = tname ? get_chain(lx, tname, &chain) : NULL;
	free(tname);
	if (!c) {
		lx->err = lx->err ? : -ENOMEM;
		return;
	}
	/* a rule in order, for apply; placed ones make the order unknown */
	t = peek(lx);
	ordered = op == RW_RULE_ADD && !tok_is(lx, &t, "position") &&
		  !tok_is(lx, &t, "handle") && !tok_is(lx, &t, "index");
	if (op == RW_RULE_ADD || op == RW_RULE_INSERT ||
	    op == RW_RULE_REPLACE)
		c->order_unknown |= !ordered;
	if (op >= 0) {
		rc = note_rule_cmd(lx, cmd, op, &name, &chain);
		if (rc && ordered)
			push_rule(lx, c, &t.loc,
				  strdup(rc->text ? rc->text : ""));
		return;
	}
	if (tok_is(lx, &obj, "chain") && peek(lx).type == T_LBRACE) {
		next(lx);
		parse_chain_body(lx, c);
		return;
	}
	skip_statement(lx);
}

static const char *const commands[] = {
	"add", "create", "insert", "replace", "delete", "destroy", "flush",
	"list", "reset", "rename",
};

static void parse_top(struct lexer *lx)
{
	struct token t;
	size_t i;

	for (;;) {
		t = peek(lx);
		switch (t.type) {
		case T_EOF:
			return;
		case T_NL:
		case T_SEMI:
		case T_RBRACE:
			next(lx);
			continue;
		default:
			break;
		}
		next(lx);
		if (tok_is(lx, &t, "table")) {
			note_other(lx, &t);
			parse_table(lx);
			continue;
		}
		if (tok_is(lx, &t, "include")) {
			lex_error(lx, &t.loc,
				  "'include' is not taken here: cgfw update reads its commands from one file");
			skip_statement(lx);
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(commands); i++)
			if (tok_is(lx, &t, commands[i]))
				break;
		if (i < ARRAY_SIZE(commands)) {
			parse_command(lx, &t);
		} else {
			if (!tok_is(lx, &t, "define"))
				note_other(lx, &t);
			skip_statement(lx);	/* define, or nft's to judge */
		}
	}
}

void cgfw_rw_result_release(struct rw_result *rw)
{
	struct rw_table *t, *tn;
	struct rw_chain *c, *cn;
	struct rw_elem_cmd *e, *en;
	struct rw_rule_cmd *r, *rn;
	size_t i;

	if (!rw->tables.next)
		return;
	for (i = 0; i < rw->n_objs; i++) {
		free(rw->objs[i].table);
		free(rw->objs[i].name);
	}
	free(rw->objs);
	list_for_each_entry_safe(e, en, &rw->elem_cmds, list) {
		free(e->table);
		free(e->set);
		free(e);
	}
	list_for_each_entry_safe(r, rn, &rw->rule_cmds, list)
		free_rule_cmd(r);
	list_for_each_entry_safe(t, tn, &rw->tables, list) {
		free(t->name);
		free(t);
	}
	list_for_each_entry_safe(c, cn, &rw->chains, list) {
		free(c->table);
		free(c->name);
		free(c->cgroup_path);
		for (i = 0; i < c->n_rules; i++)
			free(c->rules[i].text);
		free(c->rules);
		free(c);
	}
	free(rw->text);
	memset(rw, 0, sizeof(*rw));
}

void cgfw_rw_blank(char *text, size_t start, size_t end)
{
	for (; start < end; start++)
		if (text[start] != '\n')
			text[start] = ' ';
}

char *cgfw_rw_rules_text(const struct rw_result *rw, const char *table)
{
	char *t = malloc(rw->len + 1);
	const struct rw_elem_cmd *e;
	const struct rw_rule_cmd *rc;
	size_t n;

	if (!t)
		return NULL;
	memcpy(t, rw->text, rw->len + 1);
	list_for_each_entry(e, &rw->elem_cmds, list)
		cgfw_rw_blank(t, e->start, e->end);
	list_for_each_entry(rc, &rw->rule_cmds, list) {
		if (!rc->text || strcmp(rc->table, table)) {
			cgfw_rw_blank(t, rc->start, rc->end);
			continue;
		}
		/* "insert" or "replace" becomes "add", padded */
		n = strcspn(t + rc->start, " \t\n");
		cgfw_rw_blank(t, rc->start, rc->start + n);
		memcpy(t + rc->start, "add", 3);
		if (rc->ref_word)
			cgfw_rw_blank(t, rc->ref_start, rc->ref_end);
	}
	return t;
}

int cgfw_rewrite(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		 struct rw_result *out)
{
	struct lexer lx = {
		.ctx = ctx,
		.src = src,
		.line = 1,
		.col = 1,
		.res = out,
	};
	memset(out, 0, sizeof(*out));
	list_init(&out->tables);
	list_init(&out->chains);
	list_init(&out->elem_cmds);
	list_init(&out->rule_cmds);
	out->text = malloc(src->len + 1);
	if (!out->text)
		return -ENOMEM;
	memcpy(out->text, src->text, src->len + 1);
	out->len = src->len;
	lx.out = out->text;

	parse_top(&lx);

	if (!lx.err && list_empty(&out->tables)) {
		cgfw_err_at(ctx, src, NULL,
			    "no table in the input; write 'table cgroup NAME { chain C { type filter hook egress cgroup \"PATH\" priority 0; ... } }'");
		lx.err = -EINVAL;
	}
	if (lx.err)
		cgfw_rw_result_release(out);
	return lx.err;
}
