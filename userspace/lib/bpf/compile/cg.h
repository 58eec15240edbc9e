/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The code generator's state, and what its parts share of it: codegen.c
 * (the rules), regs.c (nft's registers, refusals) and ct.c (connection
 * tracking), which codegen.c calls and which use nothing of codegen.c.
 * codegen.h has the rest, for the generator's extensions.
 */
#ifndef CGFW_BPF_CG_H
#define CGFW_BPF_CG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/ctx.h"

struct bpf_prog_spec;
struct bpf_table;
struct cgfw_bpf_ext;
struct cgfw_ruleset;
struct cls_prog;
struct emitter;
struct ir_chain;
struct ir_rule;
struct nftnl_expr;

struct cg {
	struct cgfw_ctx *ctx;
	const struct cgfw_ruleset *rs;
	struct bpf_table *bt;
	struct bpf_prog_spec *p;
	struct emitter *em;
	const struct ir_chain *chain;	/* the chain being emitted */
	const struct ir_rule *rule;	/* the rule being emitted */
	int depth;
	int err;
	const struct cgfw_bpf_ext *ext;	/* NULL: rule by rule */
	struct cls_prog *cls;		/* the classifier's runs (cls_gen.c) */
	bool count_calls;	/* counters by lookup_percpu_elem (codegen.c) */
	/* the first rules of the long stretches already told of */
	const struct ir_rule **told;
	size_t n_told;
	const struct ir_rule *ct_warned;	/* ct status told of (ct.c) */
};

#define E(insn) cgfw_em_emit(g->em, insn)

/* Refuse the current rule, at its place, with the reason (regs.c). */
void cgfw_cg_refuse(struct cg *g, const char *fmt, ...) __printf(2, 3);
/* Stack offset of nft register @reg, for @len bytes; 0 (refused) if none. */
int cgfw_cg_reg(struct cg *g, uint32_t reg, uint32_t len);
/* ct: the connection-tracking entry's key, or the rule ends (ct.c). */
void cgfw_cg_ct(struct cg *g, struct nftnl_expr *e, int brk);

#endif /* CGFW_BPF_CG_H */
