/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The IR: what nft compiled (nf_tables bytecode), plus cgroup bindings. */
#ifndef CGFW_FRONT_IR_H
#define CGFW_FRONT_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "base/ctx.h"
#include "base/list.h"
#include "front/cgroup.h"

struct nftnl_table;
struct nftnl_chain;
struct nftnl_set;
struct nftnl_rule;
struct nftnl_obj;

struct ir_rule {
	struct list_head list;
	struct nftnl_rule *nl;	/* expressions, as nf_tables bytecode */
	struct cgfw_loc loc;	/* where the user wrote it (line 0: unknown) */
	char *text;		/* its text on one line; NULL: unknown */
};

struct ir_chain {
	struct list_head list;
	char *name;
	struct cgfw_loc loc;
	bool base;		/* bound to a cgroup: hook ingress|egress */
	enum cgfw_dir dir;
	struct cgfw_cgroup cgroup;
	int32_t priority;
	uint32_t policy;	/* NF_ACCEPT or NF_DROP */
	struct nftnl_chain *nl;	/* as read back */
	uint64_t packets, bytes;	/* a base chain's counters */
	struct list_head rules;	/* struct ir_rule */
};

struct ir_set {
	struct list_head list;
	struct nftnl_set *nl;	/* attributes and elements */
	bool anonymous;
};

/* A named stateful object: counter, quota, limit, ct helper ... */
struct ir_obj {
	struct list_head list;
	struct nftnl_obj *nl;	/* its type, name and values */
	struct cgfw_loc loc;	/* its declaration; line 0: not known */
};

struct ir_table {
	struct list_head list;
	char *name;
	struct cgfw_loc loc;
	struct nftnl_table *nl;
	struct list_head chains;	/* struct ir_chain */
	struct list_head sets;		/* struct ir_set */
	struct list_head objs;		/* struct ir_obj */
};

struct cgfw_ruleset {
	struct cgfw_source src;
	struct list_head tables;	/* struct ir_table */
	struct cgfw_loc object_loc;	/* the first one in the source */
};

void cgfw_ir_init(struct cgfw_ruleset *rs);
/* Every table of @rs, not the ruleset itself. */
void cgfw_ir_release(struct cgfw_ruleset *rs);
void cgfw_ir_table_free(struct ir_table *t);
struct ir_table *cgfw_ir_find_table(const struct cgfw_ruleset *rs,
				    const char *name);
struct ir_chain *cgfw_ir_find_chain(const struct ir_table *t, const char *name);
struct ir_set *cgfw_ir_find_set(const struct ir_table *t, const char *name);
/* The set's name, and whether it is an anonymous set */
const char *cgfw_ir_set_name(const struct ir_set *s);

#endif /* CGFW_FRONT_IR_H */
