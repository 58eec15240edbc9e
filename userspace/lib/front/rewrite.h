/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rewrite: the cgroup family into inet, with lines and columns kept. */
#ifndef CGFW_FRONT_REWRITE_H
#define CGFW_FRONT_REWRITE_H

#include <stdbool.h>

#include "base/ctx.h"
#include "front/cgroup.h"

/* A rule: where it starts, and its text on one line, comments left out. */
struct rw_rule {
	struct cgfw_loc loc;
	char *text;
};

/* What the rewrite learnt about one chain of the user's file. */
struct rw_chain {
	struct list_head list;
	char *table;
	char *name;
	struct cgfw_loc loc;		/* the chain's name */
	bool bound;			/* has "hook ingress|egress cgroup" */
	enum cgfw_dir dir;
	char *cgroup_path;		/* as written, unquoted */
	struct cgfw_loc cgroup_loc;	/* the quoted path */
	struct rw_rule *rules;		/* in source order */
	size_t n_rules, cap_rules;
	bool order_unknown;		/* insert/replace/position used */
};

struct rw_table {
	struct list_head list;
	char *name;
	struct cgfw_loc loc;
};

/* An "add element" or "delete element" command of the user's file. */
struct rw_elem_cmd {
	struct list_head list;
	bool del;
	char *table;
	char *set;
	size_t start, end;	/* its bytes in the text */
	size_t rest;		/* where the elements start, after the set */
	struct cgfw_loc loc;	/* its first word */
};

/* What a rule command of the user's file does (cgfw update). */
enum rw_rule_op {
	RW_RULE_ADD,		/* add rule: after "position", else at the end */
	RW_RULE_INSERT,		/* insert rule: before it, else at the start */
	RW_RULE_REPLACE,	/* replace rule ... handle N */
	RW_RULE_DELETE,		/* delete rule ... handle N */
	RW_CHAIN_FLUSH,		/* flush chain: every rule of the chain */
};

/* A rule command, or "flush chain", of the user's file. */
struct rw_rule_cmd {
	struct list_head list;
	enum rw_rule_op op;
	char *table;
	char *chain;
	struct cgfw_loc loc;		/* its first word */
	size_t start, end;		/* its bytes in the text */
	const char *ref_word;		/* "position", "handle", "index"; NULL */
	char *ref;			/* the number after it, as written */
	struct cgfw_loc ref_loc;	/* that word */
	size_t ref_start, ref_end;	/* both words' bytes */
	char *text;		/* the rule's statements on one line; NULL: none */
	struct cgfw_loc text_loc;	/* where they start */
};

/* A named stateful object declared in a table, and where. */
struct rw_obj {
	char *table;
	char *name;
	struct cgfw_loc loc;	/* its first word (counter, ct, ...) */
};

struct rw_result {
	char *text;		/* the rewritten input, same lines */
	size_t len;
	struct list_head tables;	/* struct rw_table */
	struct list_head chains;	/* struct rw_chain */
	struct list_head elem_cmds;	/* struct rw_elem_cmd */
	struct list_head rule_cmds;	/* struct rw_rule_cmd */
	/* a statement that is none of the commands above */
	bool has_other;
	struct cgfw_loc object_loc;	/* the first named stateful object */
	struct rw_obj *objs;		/* every one */
	size_t n_objs;
	struct cgfw_loc other_loc;	/* the first of them */
};

int cgfw_rewrite(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		 struct rw_result *out);
void cgfw_rw_result_release(struct rw_result *rw);
/* Blank @text from @start to @end, its line breaks kept. */
void cgfw_rw_blank(char *text, size_t start, size_t end);
/*
 * The rewritten text with only the rule commands of @table that carry
 * statements, each made "add rule" (at its chain's end: no position, no
 * handle), every other command blanked: what nft compiles their
 * statements from, in order. NULL: out of memory.
 */
char *cgfw_rw_rules_text(const struct rw_result *rw, const char *table);
struct rw_chain *cgfw_rw_find_chain(const struct rw_result *rw, const char *table,
				    const char *chain);

#endif /* CGFW_FRONT_REWRITE_H */
