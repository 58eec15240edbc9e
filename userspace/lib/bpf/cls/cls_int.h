/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The classifier's analysis of one program (cls_rule.c, cls_gen.c). */
#ifndef CGFW_BPF_CLS_INT_H
#define CGFW_BPF_CLS_INT_H

#include "bpf/cls/cls.h"
#include "bpf/table.h"

/* A box while rules are read: every dim the program may have. */
struct cls_rbox {
	uint64_t lo[CLS_MAX_DIMS], hi[CLS_MAX_DIMS];
};

/*
 * A rule's statements, in its order, when they are more than a counter:
 * run after its match by the program's op interpreter (cls_gen.c).
 */
enum cls_op_kind {
	CLS_OP_END,
	CLS_OP_COUNTER,		/* slot: the rule's counter ordinal + 1 */
	CLS_OP_QUOTA,		/* slot: state; a: bytes; flags: over */
	CLS_OP_LIMIT,		/* slot: state; a: cost or ns, b: max, c: rate */
	CLS_OP_SET,		/* a: value; flags: CLS_OPF_PRIORITY or mark */
};

#define CLS_OPF_INV		1	/* quota over, limit over */
#define CLS_OPF_PKTS		2	/* limit in packets */
#define CLS_OPF_PRIORITY	4	/* set the priority, not the mark */

#define CLS_MAX_OPS	8

struct cls_opspec {
	uint8_t kind, flags;
	struct nftnl_expr *e;	/* quota, limit: its state is its own */
	uint64_t a, b, c;
};

/* The op record in the blob: 32 bytes. */
struct cls_op {
	uint8_t kind, flags;
	uint16_t pad;
	uint32_t slot;
	uint64_t a, b, c;
};

#define CLS_OP_SIZE	32

/* One rule as the classifier sees it. */
/* Indexable rules in a row that become a tree, at least (cls_gen.c). */
#define CLS_MIN_RUN	16

struct cls_rule {
	bool indexable;
	bool many;		/* a set's boxes, enough to be a run alone */
	bool counter;
	bool has_verdict;
	int32_t verdict;	/* NFT_CONTINUE: none */
	const char *chain;	/* of jump, goto */
	struct cls_rbox *boxes;	/* its match: a union; none: never */
	size_t n_boxes;
	struct cls_opspec ops[CLS_MAX_OPS];	/* statements, in order */
	size_t n_ops;
	bool has_ops;		/* more than a counter: the interpreter's */
};

/* A verdict the dispatch after a match knows. */
struct cls_case {
	int32_t verdict;
	const char *chain;
	const struct ir_rule *rule;	/* one rule that has it */
};

struct cls_run {
	size_t first, n;	/* its rules in the chain */
	uint32_t root;		/* its root record in the blob */
	uint32_t ops;		/* u32 [n]: each rule's op list, 0: none */
	bool any_ops;
	struct cls_case *cases;	/* case 0: continue */
	size_t n_cases;
	struct cls_stats st;
	size_t bytes;		/* of the blob: the tree's */
};

struct cls_chain {
	const struct ir_chain *chain;
	const struct ir_rule **rules;
	size_t n_rules;
	struct cls_rule *info;	/* [n_rules] */
	int *run_of;		/* [n_rules]: its run, -1: codegen.c's */
	struct cls_run *runs;
	size_t n_runs;
};

struct cls_prog {
	struct cls_dim dims[CLS_MAX_DIMS];
	size_t n_dims;
	bool sets_mark, sets_priority;
	struct cls_chain *chains;
	size_t n_chains;
	struct cls_blob blob;
	size_t blob_map;	/* index in the table's maps */
	bool any;		/* some chain has a run */
};

/* Read one rule; 0 (out->indexable says), or -ENOMEM. */
int cgfw_cls_rule_read(struct cls_prog *cp, const struct bpf_table *bt,
		       enum cgfw_dir dir, const struct ir_rule *ir,
		       struct cls_rule *out);

#endif /* CGFW_BPF_CLS_INT_H */
