/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The IR: what nft compiled (nf_tables bytecode), plus cgroup bindings. */
#ifndef CGFW_FRONT_IR_H
#define CGFW_FRONT_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "base/ctx.h"
#include "front/cgroup.h"

struct nftnl_table;
struct nftnl_chain;
struct nftnl_set;
struct nftnl_rule;

struct ir_rule {
	struct list_head list;
	struct nftnl_rule *nl;	/* expressions, as nf_tables bytecode */
	struct cgfw_loc loc;	/* where the user wrote it (line 0: unknown) */
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
	struct nftnl_chain *nl;	/* as read back from the shadow */
	struct list_head rules;	/* struct ir_rule */
};

struct ir_set {
	struct list_head list;
	struct nftnl_set *nl;	/* attributes and elements */
	bool anonymous;
};

struct ir_table {
	struct list_head list;
	char *name;
	struct cgfw_loc loc;
	struct nftnl_table *nl;
	struct list_head chains;	/* struct ir_chain */
	struct list_head sets;		/* struct ir_set */
};

struct cgfw_ruleset {
	struct cgfw_source src;
	struct list_head tables;	/* struct ir_table */
	char *listing;		/* nft's listing of the shadow, for set decls */
};

void ir_table_free(struct ir_table *t);
struct ir_chain *ir_find_chain(const struct ir_table *t, const char *name);

#endif /* CGFW_FRONT_IR_H */
