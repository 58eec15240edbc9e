// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The classifier in the program (docs/classifier.rst).
 *
 * Before the chains: every chain the program reaches is read rule by rule
 * (cls_rule.c); a run of at least CLS_MIN_RUN indexable rules becomes a
 * tree (cls_tree.c), all of a program's trees one blob, the only element
 * of one array map. After the prologue the program reads each dimension
 * once into the key vector on the stack and looks the blob up.
 *
 * A run, in place of its rules:
 *
 *	pass:	best = none
 *		walk the tree from the run's root: a cut picks a child by
 *		the key; a leaf's entries are scanned in rule order from
 *		the first rule above the last match, until one passes its
 *		checks (the best so far, if lower) or reaches the best;
 *		then the walk goes where the leaf says: a side subtree (the
 *		rules a cut found in every child, cls_tree.c), entered if
 *		the key is in its guard's range, or the end; no stack
 *		none: the run is over
 *		count the rule's packet, then its verdict: accept, drop,
 *		return, goto (as codegen.c does them), or continue / jump
 *		(then "pass" again, above that rule)
 *
 * The program's size does not depend on the number of rules: each loop
 * head is a may_goto, so the verifier proves the loops once, not per
 * iteration (an 8-million-iteration budget per packet that no ruleset
 * comes near: a walk is a few dozen iterations). Regular chains are
 * still inlined where they are jumped to, their runs with their own
 * state (one slot per jump depth).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "bpf/compile/codegen.h"
#include "bpf/cls/cls_int.h"

/* Shorter runs are compared rule by rule (codegen.c). */
#define CLS_CASE_OPS	0x8000	/* in an entry's case: the rule has ops */

/* The stack below codegen.c's 128 bytes. */
#define STK_KEY		(STK_SCRATCH - 8 * CLS_MAX_DIMS)	/* -256 */
#define STK_MIN		(-328)	/* u32 per jump depth: first rule to see */
#define STK_BEST_CASE	(-344)
#define STK_BEST_SLOT	(-340)
#define STK_BASE	(-352)	/* the blob */
#define STK_CTX		(-360)	/* r6, while the walk has it */
#define STK_OP		(-364)	/* the op the interpreter is at */
#define CLS_NONE_OFF	0	/* the blob's first word: UINT32_MAX */
/* a key offset masked with this is in the key vector, and aligned */
#define KEY_MASK	(8 * CLS_MAX_DIMS - 8)

#ifndef BPF_JCOND
#define BPF_JCOND	0xe0	/* may_goto (Linux 6.9) */
#endif

/* a slot for each jump depth codegen.c inlines, 0 to CGFW_CG_MAX_JUMPS */
_Static_assert(STK_MIN + 4 * (CGFW_CG_MAX_JUMPS + 1) <= STK_KEY, "stack");
_Static_assert(STK_BEST_CASE + 16 <= STK_MIN, "stack");
_Static_assert((KEY_MASK & (KEY_MASK + 8)) == 0, "the key vector: 2^n slots");

/* ---- the analysis ---- */

static void prog_free(struct cls_prog *cp)
{
	size_t i, j;

	if (!cp)
		return;
	for (i = 0; i < cp->n_chains; i++) {
		struct cls_chain *c = &cp->chains[i];

		for (j = 0; j < c->n_rules && c->info; j++)
			free(c->info[j].boxes);
		for (j = 0; j < c->n_runs; j++)
			free(c->runs[j].cases);
		free(c->info);
		free(c->rules);
		free(c->run_of);
		free(c->runs);
	}
	free(cp->chains);
	cgfw_cls_blob_release(&cp->blob);
	free(cp);
}

static void cls_release(struct cg *g)
{
	prog_free(g->cls);
	g->cls = NULL;
}

static int chain_index(const struct ir_table *t, const struct ir_chain *c)
{
	const struct ir_chain *x;
	int i = 0;

	list_for_each_entry(x, &t->chains, list) {
		if (x == c)
			return i;
		i++;
	}
	return -1;
}

static const struct ir_chain *chain_at(const struct ir_table *t, int i)
{
	const struct ir_chain *x;

	list_for_each_entry(x, &t->chains, list)
		if (!i--)
			return x;
	return NULL;
}

/* Mark the chains a rule can go to (jump, goto, a verdict map). */
static void mark_targets(const struct bpf_table *bt, const struct ir_rule *r,
			 bool *reach)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r->nl);
	const struct ir_chain *c;
	struct nftnl_expr *e;
	size_t i, k;

	while (it && (e = nftnl_expr_iter_next(it))) {
		const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

		if (!strcmp(name, "immediate") &&
		    nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN)) {
			c = cgfw_ir_find_chain(bt->table, nftnl_expr_get_str(e,
						NFTNL_EXPR_IMM_CHAIN));
			if (c && chain_index(bt->table, c) >= 0)
				reach[chain_index(bt->table, c)] = true;
		} else if (!strcmp(name, "lookup") &&
			   nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_DREG) &&
			   nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_DREG) ==
			   NFT_REG_VERDICT) {
			const char *set = nftnl_expr_get_str(e,
						NFTNL_EXPR_LOOKUP_SET);

			for (i = 0; i < bt->n_maps; i++) {
				const struct bpf_map_spec *m = &bt->maps[i];

				if (!m->set || strcmp(nftnl_set_get_str(m->set->nl,
						NFTNL_SET_NAME), set) ||
				    m->data_size < 8)
					continue;
				for (k = 0; k < m->n_elems; k++) {
					int32_t v[2];

					memcpy(v, (uint8_t *)m->values +
					       k * m->value_size + m->data_off, 8);
					if ((v[0] == NFT_JUMP ||
					     v[0] == NFT_GOTO) &&
					    chain_at(bt->table, v[1]))
						reach[v[1]] = true;
				}
			}
		}
	}
	if (it)
		nftnl_expr_iter_destroy(it);
}

/* Does a statement of the table set meta @key? */
static bool table_sets(const struct ir_table *t, uint32_t key)
{
	const struct ir_chain *c;
	const struct ir_rule *r;

	list_for_each_entry(c, &t->chains, list) {
		list_for_each_entry(r, &c->rules, list) {
			struct nftnl_expr_iter *it =
				nftnl_expr_iter_create(r->nl);
			struct nftnl_expr *e;
			bool found = false;

			while (it && !found && (e = nftnl_expr_iter_next(it)))
				found = !strcmp(nftnl_expr_get_str(e,
						NFTNL_EXPR_NAME), "meta") &&
					nftnl_expr_is_set(e,
						NFTNL_EXPR_META_SREG) &&
					nftnl_expr_get_u32(e,
						NFTNL_EXPR_META_KEY) == key;
			if (it)
				nftnl_expr_iter_destroy(it);
			if (found || !it)
				return true;
		}
	}
	return false;
}

static int read_chain(struct cg *g, struct cls_prog *cp,
		      const struct ir_chain *ic, struct cls_chain *c)
{
	const struct ir_rule *r;
	size_t i, j, n = 0;
	int ret;

	memset(c, 0, sizeof(*c));
	c->chain = ic;
	list_for_each_entry(r, &ic->rules, list)
		n++;
	c->rules = calloc(n + 1, sizeof(*c->rules));
	c->info = calloc(n + 1, sizeof(*c->info));
	c->run_of = calloc(n + 1, sizeof(*c->run_of));
	if (!c->rules || !c->info || !c->run_of)
		return -ENOMEM;
	list_for_each_entry(r, &ic->rules, list)
		c->rules[c->n_rules++] = r;
	for (i = 0; i < n; i++) {
		ret = cgfw_cls_rule_read(cp, g->bt, g->p->dir, c->rules[i],
				    &c->info[i]);
		if (ret)
			return ret;
		c->run_of[i] = -1;
	}
	/*
	 * runs: CLS_MIN_RUN indexable rules in a row, or more, or with a
	 * rule whose set holds as many boxes
	 */
	for (i = 0; i < n; i = j) {
		struct cls_run *run;
		bool many = false;

		for (j = i; j < n && c->info[j].indexable; j++)
			many |= c->info[j].many;
		if (j - i < CLS_MIN_RUN && !many) {
			j += j == i;
			continue;
		}
		run = realloc(c->runs, (c->n_runs + 1) * sizeof(*run));
		if (!run)
			return -ENOMEM;
		c->runs = run;
		run = &c->runs[c->n_runs];
		memset(run, 0, sizeof(*run));
		run->first = i;
		run->n = j - i;
		for (n = i; n < j; n++)
			c->run_of[n] = c->n_runs;
		c->n_runs++;
		n = c->n_rules;
	}
	return 0;
}

static bool same_case(const struct cls_case *k, const struct cls_rule *r)
{
	return k->verdict == r->verdict &&
	       (!k->chain || !r->chain ? k->chain == r->chain :
		!strcmp(k->chain, r->chain));
}

/*
 * The op lists of a run's rules into the blob, and the table of where
 * each starts (0: the rule has none); quota and limit states get their
 * slots (one per expression, as codegen.c gives them).
 */
static int build_ops(struct cg *g, struct cls_prog *cp, struct cls_chain *c,
		     struct cls_run *run, const uint32_t *ords)
{
	uint32_t *table = NULL, off;
	size_t i, k;
	int ret = 0;

	if (!run->any_ops)
		return 0;
	table = calloc(run->n, sizeof(*table));
	if (!table)
		return -ENOMEM;
	for (i = 0; i < run->n && !ret && !g->err; i++) {
		const struct cls_rule *r = &c->info[run->first + i];

		if (!r->has_ops)
			continue;
		table[i] = cp->blob.len;
		for (k = 0; k <= r->n_ops && !ret; k++) {
			const struct cls_opspec *o = &r->ops[k];
			struct cls_op op = { 0 };
			struct limit_state init = { 0 };
			uint64_t used;

			if (k < r->n_ops) {
				op.kind = o->kind;
				op.flags = o->flags;
				op.a = o->a;
				op.b = o->b;
				op.c = o->c;
			}
			switch (op.kind) {
			case CLS_OP_COUNTER:
				op.slot = ords[i];
				break;
			case CLS_OP_QUOTA:
				used = nftnl_expr_get_u64(o->e,
						NFTNL_EXPR_QUOTA_CONSUMED);
				op.slot = cgfw_cg_state_slot(g, &g->bt->quotas, o->e,
						     "cgfw_quota", &used, 8,
						     false);
				break;
			case CLS_OP_LIMIT:
				init.tokens = o->b;
				op.slot = cgfw_cg_state_slot(g, &g->bt->limits, o->e,
						     "cgfw_limit", &init,
						     sizeof(init), true);
				break;
			}
			ret = cgfw_cls_blob_add(&cp->blob, &op, sizeof(op), &off);
		}
	}
	ret = ret ? : g->err;
	ret = ret ? : cgfw_cls_blob_add(&cp->blob, table, run->n * sizeof(*table),
				   &run->ops);
	free(table);
	return ret;
}

/*
 * A leaf of more entries than this is a scan, not a leaf: said (binth is
 * 4; the lists the classifier is measured on stay under 16 at 10,000
 * rules).
 */
#define CLS_LEAF_SCAN 64

/*
 * A tree that stopped cutting before its leaves were small leaves some
 * packets checking rule after rule: say where, why, and how many.
 */
static void say_unbounded(struct cg *g, const struct cls_chain *c,
			  const struct cls_run *run)
{
	const struct ir_rule *first = c->rules[run->first];
	const struct ir_rule *last = c->rules[run->first + run->n - 1];
	char at[CGFW_WHERE_MAX];

	if (!run->st.budget_hit && run->st.max_leaf <= CLS_LEAF_SCAN)
		return;
	cgfw_log(g->ctx, CGFW_LOG_WARN,
		 "%s: the classifier of these %zu rules %s: a packet may check up to %zu of them one by one, where a bounded tree checks a few (%zu MiB, %zu bytes a rule). Rules that overlap in wildcards make it so; sets for long lists of one field keep it small",
		 cgfw_src_lines(&g->rs->src, first->loc.line, last->loc.line,
				at, sizeof(at)), run->n,
		 run->st.budget_hit ?
		 "reached its memory budget before its leaves were small" :
		 "could not separate them",
		 run->st.max_leaf, run->bytes >> 20, run->bytes / run->n);
}

/* The tree of one run, into the program's blob. */
static int build_run(struct cg *g, struct cls_prog *cp, struct cls_chain *c,
		     struct cls_run *run)
{
	size_t n = run->n, nb = 0, i, j, d, k, n_counted = 0;
	struct cls_input in = { .n_dims = cp->n_dims, .dims = cp->dims };
	bool *terminal = calloc(n + 1, sizeof(*terminal));
	uint16_t *cases = calloc(n + 1, sizeof(*cases));
	uint32_t *slots = calloc(n + 1, sizeof(*slots)), *box_rule = NULL;
	uint32_t *ords = calloc(n + 1, sizeof(*ords));
	uint64_t *lo = NULL, *hi = NULL;
	struct cls_params prm;
	int ret = -ENOMEM;

	run->cases = calloc(n + 1, sizeof(*run->cases));
	for (i = 0; i < n; i++)
		nb += c->info[run->first + i].n_boxes;
	box_rule = calloc(nb + 1, sizeof(*box_rule));
	lo = calloc(nb * cp->n_dims + 1, sizeof(*lo));
	hi = calloc(nb * cp->n_dims + 1, sizeof(*hi));
	if (!terminal || !cases || !slots || !run->cases || !box_rule ||
	    !lo || !hi || !ords)
		goto out;
	run->cases[0].verdict = NFT_CONTINUE;
	run->n_cases = 1;
	for (i = 0, nb = 0; i < n; i++) {
		const struct cls_rule *r = &c->info[run->first + i];

		terminal[i] = r->verdict == NF_ACCEPT || r->verdict == NF_DROP ||
			      r->verdict == NFT_RETURN || r->verdict == NFT_GOTO;
		/* a quota or a limit may not hold: then the rule does not */
		for (k = 0; k < r->n_ops; k++)
			if (r->ops[k].kind == CLS_OP_QUOTA ||
			    r->ops[k].kind == CLS_OP_LIMIT)
				terminal[i] = false;
		for (k = 0; k < run->n_cases && !same_case(&run->cases[k], r);
		     k++)
			;
		if (k == run->n_cases) {
			run->cases[k].verdict = r->verdict;
			run->cases[k].chain = r->chain;
			run->cases[k].rule = c->rules[run->first + i];
			run->n_cases++;
		}
		slots[i] = r->counter ? ++n_counted : 0;
		cases[i] = k;
		if (r->has_ops) {	/* its counters are ops */
			cases[i] |= CLS_CASE_OPS;
			ords[i] = slots[i];
			slots[i] = 0;
			run->any_ops = true;
		}
		for (j = 0; j < r->n_boxes; j++, nb++) {
			box_rule[nb] = i;
			for (d = 0; d < cp->n_dims; d++) {
				lo[nb * cp->n_dims + d] = r->boxes[j].lo[d];
				hi[nb * cp->n_dims + d] = r->boxes[j].hi[d];
			}
		}
	}
	in.n_rules = n;
	in.terminal = terminal;
	in.cases = cases;
	in.slots = slots;
	in.n_boxes = nb;
	in.box_rule = box_rule;
	in.box_lo = lo;
	in.box_hi = hi;
	cgfw_cls_default_params(&prm);
	run->bytes = cp->blob.len;
	ret = cgfw_cls_build(&in, &prm, &cp->blob, &run->root, &run->st);
	run->bytes = cp->blob.len - run->bytes;
	if (!ret)
		say_unbounded(g, c, run);
	ret = ret ? : build_ops(g, cp, c, run, ords);
	if (ret == -E2BIG)
		cgfw_err_at(g->ctx, &g->rs->src, &c->chain->loc,
			   "chain '%s': the classifier of its rules would pass 4 GiB; split the chain or use sets",
			   c->chain->name);
out:
	free(terminal);
	free(cases);
	free(slots);
	free(ords);
	free(box_rule);
	free(lo);
	free(hi);
	return ret;
}

static int analyse(struct cg *g, struct cls_prog *cp)
{
	const struct ir_table *t = g->bt->table;
	const struct ir_chain *ic;
	size_t n = 0, i, j, k;
	bool *reach, changed = true;
	int ret = 0;

	cp->sets_mark = table_sets(t, NFT_META_MARK);
	cp->sets_priority = table_sets(t, NFT_META_PRIORITY);
	list_for_each_entry(ic, &t->chains, list)
		n++;
	reach = calloc(n + 1, sizeof(*reach));
	cp->chains = calloc(n + 1, sizeof(*cp->chains));
	if (!reach || !cp->chains) {
		free(reach);
		return -ENOMEM;
	}
	for (i = 0; i < g->p->n_chains; i++)
		reach[chain_index(t, g->p->chains[i])] = true;
	while (changed) {	/* what the reached chains go to */
		const struct ir_rule *r;

		changed = false;
		for (i = 0; i < n; i++) {
			bool before[64];

			if (!reach[i])
				continue;
			for (k = 0; k < n && k < 64; k++)
				before[k] = reach[k];
			list_for_each_entry(r, &chain_at(t, i)->rules, list)
				mark_targets(g->bt, r, reach);
			for (k = 0; k < n && k < 64; k++)
				changed |= before[k] != reach[k];
			if (n > 64)	/* more chains than tracked: once more */
				changed |= !reach[n - 1];
		}
		if (n > 64)
			break;
	}
	if (n > 64)	/* read them all */
		for (i = 0; i < n; i++)
			reach[i] = true;
	for (i = 0; i < n && !ret; i++) {
		if (!reach[i])
			continue;
		ret = read_chain(g, cp, chain_at(t, i),
				 &cp->chains[cp->n_chains++]);
	}
	/* the blob's first record: the best rule when there is none */
	if (!ret && !cp->blob.len) {
		static const uint32_t none[CLS_NODE_SIZE / 4] = { UINT32_MAX };
		uint32_t off;

		ret = cgfw_cls_blob_add(&cp->blob, none, sizeof(none), &off);
	}
	for (i = 0; i < cp->n_chains && !ret; i++)
		for (j = 0; j < cp->chains[i].n_runs && !ret; j++) {
			ret = build_run(g, cp, &cp->chains[i],
					&cp->chains[i].runs[j]);
			cp->any = true;
		}
	free(reach);
	return ret;
}

/* ---- the dimensions, once per packet ---- */

/* r1 = the @len bytes at r2 + @off, as a big-endian number */
static void load_be_direct(struct cg *g, int src, int off, int len)
{
	switch (len) {
	case 1:
		E(I_LDX(BPF_B, BPF_REG_1, src, off));
		break;
	case 2:
		E(I_LDX(BPF_H, BPF_REG_1, src, off));
		E(I_BE(BPF_REG_1, 16));
		break;
	case 3:
		E(I_LDX(BPF_B, BPF_REG_1, src, off));
		E(I_ALU64_IMM(BPF_LSH, BPF_REG_1, 16));
		E(I_LDX(BPF_H, BPF_REG_3, src, off + 1));
		E(I_BE(BPF_REG_3, 16));
		E(I_ALU64_REG(BPF_OR, BPF_REG_1, BPF_REG_3));
		break;
	default:
		E(I_LDX(BPF_W, BPF_REG_1, src, off));
		E(I_BE(BPF_REG_1, 32));
	}
}

/* r1 = the dim's value from its source; CLS_ABSENT if missing */
static void gen_dim(struct cg *g, const struct cls_dim *d, size_t i)
{
	int absent = cgfw_em_label(g->em), got = cgfw_em_label(g->em);
	int slow = cgfw_em_label(g->em);
	int field = -1;

	switch (d->src) {
	case CLS_SRC_NET:
	case CLS_SRC_TH:
		if (d->src == CLS_SRC_TH) {
			cgfw_em_jmp_imm(g->em, BPF_JSLT, R_THOFF, 0, absent);
			cgfw_em_jmp_imm(g->em, BPF_JGT, R_THOFF, 0x7fff, slow);
		}
		E(I_LDX(BPF_W, BPF_REG_2, R_CTX,
			offsetof(struct __sk_buff, data)));
		E(I_LDX(BPF_W, BPF_REG_4, R_CTX,
			offsetof(struct __sk_buff, data_end)));
		if (d->src == CLS_SRC_TH)
			E(I_ALU64_REG(BPF_ADD, BPF_REG_2, R_THOFF));
		E(I_MOV64_REG(BPF_REG_5, BPF_REG_2));
		E(I_ALU64_IMM(BPF_ADD, BPF_REG_5, d->off + d->len));
		cgfw_em_jmp_reg(g->em, BPF_JGT, BPF_REG_5, BPF_REG_4, slow);
		load_be_direct(g, BPF_REG_2, d->off, d->len);
		cgfw_em_goto(g->em, got);
		/* beyond the linear area: the helper */
		cgfw_em_bind(g->em, slow);
		cgfw_cg_load_bytes(g, d->src == CLS_SRC_TH ? R_THOFF : -1, d->off,
			   STK_SCRATCH, d->len);
		cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, absent);
		load_be_direct(g, BPF_REG_10, STK_SCRATCH, d->len);
		cgfw_em_goto(g->em, got);
		break;
	case CLS_SRC_META:
		switch (d->off) {
		case NFT_META_LEN:
			field = offsetof(struct __sk_buff, len);
			break;
		case NFT_META_PROTOCOL:
			field = offsetof(struct __sk_buff, protocol);
			break;
		case NFT_META_MARK:
			field = offsetof(struct __sk_buff, mark);
			break;
		case NFT_META_PRIORITY:
			field = offsetof(struct __sk_buff, priority);
			break;
		case NFT_META_IIF:
		case NFT_META_OIF:
			field = offsetof(struct __sk_buff, ifindex);
			break;
		case NFT_META_NFPROTO:
			E(I_MOV64_REG(BPF_REG_1, R_NFPROTO));
			break;
		case NFT_META_L4PROTO:
			cgfw_em_jmp_imm(g->em, BPF_JSLT, R_L4PROTO, 0, absent);
			E(I_MOV64_REG(BPF_REG_1, R_L4PROTO));
			break;
		case NFT_META_SKUID:
			E(I_MOV64_REG(BPF_REG_1, R_CTX));
			E(I_CALL(BPF_FUNC_get_socket_uid));
			E(I_MOV64_REG(BPF_REG_1, BPF_REG_0));
			break;
		}
		if (field >= 0)
			E(I_LDX(BPF_W, BPF_REG_1, R_CTX, field));
		/* the register's first len bytes, big-endian */
		E(I_BE(BPF_REG_1, 32));
		if (d->len < 4)
			E(I_ALU64_IMM(BPF_RSH, BPF_REG_1, 32 - 8 * d->len));
		cgfw_em_goto(g->em, got);
		break;
	case CLS_SRC_SOCKET:
		E(I_MOV64_REG(BPF_REG_1, R_CTX));
		E(I_MOV64_IMM(BPF_REG_2, d->off));
		E(I_CALL(BPF_FUNC_skb_ancestor_cgroup_id));
		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, absent);
		E(I_MOV64_REG(BPF_REG_1, BPF_REG_0));
		if (d->word)
			E(I_ALU64_IMM(BPF_RSH, BPF_REG_1, 32));
		E(I_BE(BPF_REG_1, 32));	/* 32-bit: the word, swapped */
		if (d->len < 4)
			E(I_ALU64_IMM(BPF_RSH, BPF_REG_1, 32 - 8 * d->len));
		cgfw_em_goto(g->em, got);
		break;
	}
	cgfw_em_bind(g->em, absent);
	E(I_MOV64_IMM(BPF_REG_1, 1));
	E(I_ALU64_IMM(BPF_LSH, BPF_REG_1, 32));	/* CLS_ABSENT */
	cgfw_em_bind(g->em, got);
	if (d->mask != UINT32_MAX && d->len == 4)
		E(I_ALU32_IMM(BPF_AND, BPF_REG_1, (int32_t)d->mask));
	else if (d->len < 4 && d->mask != (1u << (8 * d->len)) - 1)
		E(I_ALU64_IMM(BPF_AND, BPF_REG_1, (int32_t)d->mask));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, STK_KEY + 8 * i));
}

/*
 * The payload dims of one header at once, straight from the packet, when
 * it holds all of them (the common case); else one by one (gen_dim).
 */
static void gen_payload_dims(struct cg *g, int src)
{
	struct cls_prog *cp = g->cls;
	int slow = cgfw_em_label(g->em), done = cgfw_em_label(g->em);
	size_t i, n = 0, end = 0;

	for (i = 0; i < cp->n_dims; i++) {
		if (cp->dims[i].src != src)
			continue;
		n++;
		if (cp->dims[i].off + cp->dims[i].len > end)
			end = cp->dims[i].off + cp->dims[i].len;
	}
	if (!n)
		return;
	if (src == CLS_SRC_TH) {
		cgfw_em_jmp_imm(g->em, BPF_JSLT, R_THOFF, 0, slow);
		cgfw_em_jmp_imm(g->em, BPF_JGT, R_THOFF, 0x7fff, slow);
	}
	E(I_LDX(BPF_W, BPF_REG_2, R_CTX, offsetof(struct __sk_buff, data)));
	E(I_LDX(BPF_W, BPF_REG_4, R_CTX,
		offsetof(struct __sk_buff, data_end)));
	if (src == CLS_SRC_TH)
		E(I_ALU64_REG(BPF_ADD, BPF_REG_2, R_THOFF));
	E(I_MOV64_REG(BPF_REG_5, BPF_REG_2));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_5, end));
	cgfw_em_jmp_reg(g->em, BPF_JGT, BPF_REG_5, BPF_REG_4, slow);
	for (i = 0; i < cp->n_dims; i++) {
		const struct cls_dim *d = &cp->dims[i];

		if (d->src != src)
			continue;
		load_be_direct(g, BPF_REG_2, d->off, d->len);
		if (d->mask != UINT32_MAX && d->len == 4)
			E(I_ALU32_IMM(BPF_AND, BPF_REG_1, (int32_t)d->mask));
		else if (d->len < 4 && d->mask != (1u << (8 * d->len)) - 1)
			E(I_ALU64_IMM(BPF_AND, BPF_REG_1, (int32_t)d->mask));
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, STK_KEY + 8 * i));
	}
	cgfw_em_goto(g->em, done);
	cgfw_em_bind(g->em, slow);
	for (i = 0; i < cp->n_dims; i++)
		if (cp->dims[i].src == src)
			gen_dim(g, &cp->dims[i], i);
	cgfw_em_bind(g->em, done);
}

/*
 * Does this kernel's verifier know may_goto (Linux 6.9)? Without it the
 * loops cannot be proven; the chains are then compiled rule by rule, as
 * before the classifier (and cgfw compile, which loads nothing, asks the
 * running kernel too).
 */
static bool have_may_goto(void)
{
	static const struct bpf_insn probe[] = {
		{ .code = BPF_JMP | BPF_JCOND, .off = 2 },	/* may_goto */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "cgfw_probe", "GPL",
			       probe, ARRAY_SIZE(probe), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void cls_prologue(struct cg *g)
{
	struct cls_prog *cp;
	struct bpf_map_spec *m;
	int filled = cgfw_em_label(g->em);
	uint32_t zero = 0, pad;
	size_t i, idx;
	int ret;

	/*
	 * The blob is one more map: not where it could take the place of
	 * the table's next programs' counters (the limit is the table's)
	 */
	if (g->err || cgfw_bt_maps_used(g->bt) + g->bt->n_progs + 8 > MAX_MAPS ||
	    !have_may_goto())
		return;	/* then codegen.c's rule by rule */
	cp = calloc(1, sizeof(*cp));
	if (!cp) {
		g->err = -ENOMEM;
		return;
	}
	g->cls = cp;
	ret = analyse(g, cp);
	if (ret) {
		if (!g->err)
			g->err = ret;
		return;
	}
	if (!cp->any)
		return;

	/* the blob: one element of an array map */
	/* room after the last entry for reading its checks at once */
	if (cgfw_cls_blob_add(&cp->blob, (uint8_t[CLS_BLOB_PAD]){ 0 },
			 CLS_BLOB_PAD, &pad)) {
		g->err = -ENOMEM;
		return;
	}
	idx = cgfw_cg_new_map(g, "cgfw_cls", BPF_MAP_TYPE_ARRAY, 4,
		      (cp->blob.len + 7) / 8 * 8, 1);
	if (g->err)
		return;
	m = &g->bt->maps[idx];
	m->flags = BPF_F_RDONLY_PROG;
	m->rodata = true;
	m->keys = calloc(1, 4);
	m->values = calloc(1, (cp->blob.len + 7) / 8 * 8);
	if (!m->keys || !m->values) {
		g->err = -ENOMEM;
		return;
	}
	memcpy(m->keys, &zero, 4);
	memcpy(m->values, cp->blob.buf, cp->blob.len);
	m->n_elems = 1;
	cp->blob_map = idx;
	g->p->cls = true;	/* bpf/load.c: rule by rule if refused */
	g->p->cls_map = idx;

	cgfw_em_note(g->em, "classifier: %zu dimensions of the packet, the blob (%zu bytes)",
		     cp->n_dims, cp->blob.len);
	gen_payload_dims(g, CLS_SRC_NET);
	gen_payload_dims(g, CLS_SRC_TH);
	for (i = 0; i < cp->n_dims; i++)
		if (cp->dims[i].src != CLS_SRC_NET &&
		    cp->dims[i].src != CLS_SRC_TH)
			gen_dim(g, &cp->dims[i], i);
	for (i = cp->n_dims; i < CLS_MAX_DIMS; i++)
		E(I_ST(BPF_DW, BPF_REG_10, STK_KEY + 8 * i, 0));
	/* the state slots start initialised: they are read at var offsets */
	for (i = 0; i < (size_t)(STK_KEY - STK_BASE) / 8; i++)
		E(I_ST(BPF_DW, BPF_REG_10, STK_BASE + 8 * i, 0));
	/* the element in place: an object's .rodata, which libbpf fills */
	cgfw_em_ld_imm64(g->em, BPF_REG_0, BPF_PSEUDO_MAP_VALUE,
			 MAP_IDX_BIAS + idx);
	/*
	 * A blob that is not one (zeros: a map nothing filled) fails
	 * closed: its first word is UINT32_MAX, else the packet is dropped
	 * before any walk
	 */
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_0, CLS_NONE_OFF));
	cgfw_em_jmp32_imm(g->em, BPF_JEQ, BPF_REG_1, -1, filled);
	E(I_MOV64_IMM(BPF_REG_0, 0));
	E(I_EXIT());
	cgfw_em_bind(g->em, filled);
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, STK_BASE));
}

/* ---- a run ---- */

static void may_goto(struct cg *g, int label)
{
	cgfw_em_jmp_imm(g->em, BPF_JCOND, 0, 0, label);
}

/* R_CTX, then R_NFPROTO, R_THOFF, R_L4PROTO from skb->cb (the prologue's) */
static void restore_ctx_regs(struct cg *g)
{
	E(I_LDX(BPF_DW, R_CTX, BPF_REG_10, STK_CTX));
	E(I_LDX(BPF_W, R_NFPROTO, R_CTX, offsetof(struct __sk_buff, cb[0])));
	E(I_LDX(BPF_W, R_THOFF, R_CTX, offsetof(struct __sk_buff, cb[1])));
	E(I_LDX(BPF_W, R_L4PROTO, R_CTX, offsetof(struct __sk_buff, cb[2])));
	E(I_ALU64_IMM(BPF_LSH, R_THOFF, 32));
	E(I_ALU64_IMM(BPF_ARSH, R_THOFF, 32));
	E(I_ALU64_IMM(BPF_LSH, R_L4PROTO, 32));
	E(I_ALU64_IMM(BPF_ARSH, R_L4PROTO, 32));
}

/* r@reg = the key at the offset in r@reg (masked: in the vector) */
static void key_at(struct cg *g, int reg)
{
	E(I_ALU64_IMM(BPF_AND, reg, KEY_MASK));
	E(I_ALU64_REG(BPF_ADD, reg, BPF_REG_10));
	E(I_LDX(BPF_DW, reg, reg, STK_KEY));
}

/* r2 = the op at STK_OP; past the blob: goto @bad */
static void op_ptr(struct cg *g, int bad)
{
	E(I_LDX(BPF_W, BPF_REG_3, BPF_REG_10, STK_OP));
	cgfw_em_jmp_imm(g->em, BPF_JGT, BPF_REG_3, g->cls->blob.len - CLS_OP_SIZE,
		   bad);
	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, STK_BASE));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_2, BPF_REG_3));
}

/*
 * The counter whose slot is at STK_SCRATCH: packets += 1, bytes += len;
 * no element: goto @miss
 */
static void count_slot(struct cg *g, int miss)
{
	cgfw_cg_map_lookup(g, g->p->counters_map, STK_SCRATCH);
	cgfw_cg_count_value(g, miss);
}

/* counter (the op at r2): packets += 1, bytes += len in slot base + ordinal */
static void op_counter(struct cg *g, int base, int next)
{
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_2, 4));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, base - 1));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, STK_SCRATCH));
	count_slot(g, next);
	cgfw_em_goto(g->em, next);
}

/* quota (the op at r2): consumed += len; past it means consumed > bytes */
static void op_quota(struct cg *g, int next, int fail)
{
	int S = STK_SCRATCH;

	if (g->bt->quotas.map != SIZE_MAX) {
		int over = cgfw_em_label(g->em);

		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_2, 4));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, S));
		cgfw_cg_map_lookup(g, g->bt->quotas.map, S);
		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, fail);
		E(I_LDX(BPF_W, BPF_REG_5, R_CTX,
			offsetof(struct __sk_buff, len)));
		E(I_MOV64_REG(BPF_REG_1, BPF_REG_5));
		E(((struct bpf_insn){ .code = BPF_STX | BPF_DW | BPF_ATOMIC,
				      .dst_reg = BPF_REG_0,
				      .src_reg = BPF_REG_1,
				      .imm = BPF_ADD | BPF_FETCH }));
		E(I_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_5));	/* total */
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, S + 8));
		op_ptr(g, fail);
		E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_10, S + 8));
		E(I_LDX(BPF_DW, BPF_REG_5, BPF_REG_2, 8));	/* bytes */
		E(I_LDX(BPF_B, BPF_REG_4, BPF_REG_2, 1));
		cgfw_em_jmp_imm(g->em, BPF_JSET, BPF_REG_4, CLS_OPF_INV, over);
		cgfw_em_jmp_reg(g->em, BPF_JGT, BPF_REG_1, BPF_REG_5, fail);
		cgfw_em_goto(g->em, next);
		cgfw_em_bind(g->em, over);
		cgfw_em_jmp_reg(g->em, BPF_JLE, BPF_REG_1, BPF_REG_5, fail);
	}
	cgfw_em_goto(g->em, next);
}

/*
 * limit (the op at r2): nft_limit_eval()'s token bucket under the state's
 * lock, its parameters copied to the stack first (nothing else while locked)
 */
static void op_limit(struct cg *g, int next, int fail)
{
	int S = STK_SCRATCH, k;

	if (g->bt->limits.map != SIZE_MAX) {
		int fresh = cgfw_em_label(g->em), capped = cgfw_em_label(g->em);
		int pkts = cgfw_em_label(g->em), cost = cgfw_em_label(g->em);
		int ok = cgfw_em_label(g->em), out = cgfw_em_label(g->em);

		for (k = 0; k < 3; k++) {	/* a, b, c */
			E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_2, 8 + 8 * k));
			E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, S + 8 + 8 * k));
		}
		E(I_LDX(BPF_B, BPF_REG_1, BPF_REG_2, 1));
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, S + 32));
		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_2, 4));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, S));
		E(I_CALL(BPF_FUNC_ktime_get_ns));
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, S + 48));	/* now */
		cgfw_cg_map_lookup(g, g->bt->limits.map, S);
		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, fail);
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, S + 56));
		E(I_MOV64_REG(BPF_REG_1, BPF_REG_0));
		E(I_CALL(BPF_FUNC_spin_lock));
		E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, S + 56));
		E(I_LDX(BPF_DW, BPF_REG_3, BPF_REG_2, 8));	/* tokens */
		E(I_LDX(BPF_DW, BPF_REG_4, BPF_REG_10, S + 48));
		E(I_LDX(BPF_DW, BPF_REG_5, BPF_REG_2, 16));	/* last */
		cgfw_em_jmp_reg(g->em, BPF_JGE, BPF_REG_4, BPF_REG_5, fresh);
		E(I_MOV64_REG(BPF_REG_4, BPF_REG_5));
		cgfw_em_bind(g->em, fresh);
		E(I_STX(BPF_DW, BPF_REG_2, BPF_REG_4, 16));
		E(I_ALU64_REG(BPF_ADD, BPF_REG_3, BPF_REG_4));
		E(I_ALU64_REG(BPF_SUB, BPF_REG_3, BPF_REG_5));
		E(I_LDX(BPF_DW, BPF_REG_4, BPF_REG_10, S + 16));	/* max */
		cgfw_em_jmp_reg(g->em, BPF_JLE, BPF_REG_3, BPF_REG_4, capped);
		E(I_MOV64_REG(BPF_REG_3, BPF_REG_4));
		cgfw_em_bind(g->em, capped);
		E(I_LDX(BPF_DW, BPF_REG_4, BPF_REG_10, S + 32));	/* flags */
		cgfw_em_jmp_imm(g->em, BPF_JSET, BPF_REG_4, CLS_OPF_PKTS, pkts);
		E(I_LDX(BPF_W, BPF_REG_1, R_CTX,
			offsetof(struct __sk_buff, len)));
		E(I_LDX(BPF_DW, BPF_REG_5, BPF_REG_10, S + 8));	/* ns */
		E(I_ALU64_REG(BPF_MUL, BPF_REG_1, BPF_REG_5));
		E(I_LDX(BPF_DW, BPF_REG_5, BPF_REG_10, S + 24));	/* rate */
		E(I_ALU64_REG(BPF_DIV, BPF_REG_1, BPF_REG_5));
		cgfw_em_goto(g->em, cost);
		cgfw_em_bind(g->em, pkts);
		E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_10, S + 8));
		cgfw_em_bind(g->em, cost);
		E(I_ALU64_IMM(BPF_AND, BPF_REG_4, CLS_OPF_INV));	/* 0/1 */
		E(I_MOV64_REG(BPF_REG_5, BPF_REG_3));
		E(I_ALU64_REG(BPF_SUB, BPF_REG_5, BPF_REG_1));
		cgfw_em_jmp_imm(g->em, BPF_JSGE, BPF_REG_5, 0, ok);
		E(I_STX(BPF_DW, BPF_REG_2, BPF_REG_3, 8));	/* too few */
		E(I_ALU64_IMM(BPF_XOR, BPF_REG_4, 1));	/* break: !over */
		cgfw_em_goto(g->em, out);
		cgfw_em_bind(g->em, ok);
		E(I_STX(BPF_DW, BPF_REG_2, BPF_REG_5, 8));	/* break: over */
		cgfw_em_bind(g->em, out);
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_4, S + 48));
		E(I_MOV64_REG(BPF_REG_1, BPF_REG_2));
		E(I_CALL(BPF_FUNC_spin_unlock));
		E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_10, S + 48));
		cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_1, 0, fail);
	}
	cgfw_em_goto(g->em, next);
}

/* meta mark set, meta priority set (the op at r2): a constant */
static void op_set(struct cg *g, int next)
{
	int prio = cgfw_em_label(g->em);

	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_2, 8));
	E(I_LDX(BPF_B, BPF_REG_3, BPF_REG_2, 1));
	cgfw_em_jmp_imm(g->em, BPF_JSET, BPF_REG_3, CLS_OPF_PRIORITY, prio);
	E(I_STX(BPF_W, R_CTX, BPF_REG_1,
		offsetof(struct __sk_buff, mark)));
	cgfw_em_goto(g->em, next);
	cgfw_em_bind(g->em, prio);
	E(I_STX(BPF_W, R_CTX, BPF_REG_1,
		offsetof(struct __sk_buff, priority)));
	cgfw_em_goto(g->em, next);
}

/*
 * The matched rule's statements, in order (its op list: STK_OP): counter,
 * quota, limit, meta mark/priority set, as codegen.c does them. A quota or
 * limit that does not hold ends the rule (nft's break): goto @fail; the
 * end of the list: goto @done. @base: the run's first counter slot.
 */
static void gen_ops(struct cg *g, int base, int done, int fail, int stop)
{
	int loop = cgfw_em_label(g->em), next = cgfw_em_label(g->em);
	int counter = cgfw_em_label(g->em), quota = cgfw_em_label(g->em);
	int limit = cgfw_em_label(g->em), set = cgfw_em_label(g->em);

	cgfw_em_bind(g->em, loop);
	may_goto(g, stop);
	op_ptr(g, done);
	E(I_LDX(BPF_B, BPF_REG_1, BPF_REG_2, 0));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, CLS_OP_END, done);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, CLS_OP_COUNTER, counter);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, CLS_OP_QUOTA, quota);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, CLS_OP_LIMIT, limit);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, CLS_OP_SET, set);
	cgfw_em_goto(g->em, done);	/* never */

	cgfw_em_bind(g->em, next);
	E(I_LDX(BPF_W, BPF_REG_3, BPF_REG_10, STK_OP));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_3, CLS_OP_SIZE));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_3, STK_OP));
	cgfw_em_goto(g->em, loop);

	cgfw_em_bind(g->em, counter);
	op_counter(g, base, next);
	cgfw_em_bind(g->em, quota);
	op_quota(g, next, fail);
	cgfw_em_bind(g->em, limit);
	op_limit(g, next, fail);
	cgfw_em_bind(g->em, set);
	op_set(g, next);
}

/* A run's labels (made in this order), its case labels, its state slot */
struct run_labels {
	int pass, walk, leaf, scan, skip, matched, leaf_done, pass_end;
	int run_end, nocount, out, other, guard_skip, dispatch, ops;
	int other_child;
	int *case_lbl;	/* one per case of the run */
	int stk_min;	/* the first rule to see, at this jump depth */
};

static void run_labels_init(struct cg *g, struct run_labels *l)
{
	l->pass = cgfw_em_label(g->em);
	l->walk = cgfw_em_label(g->em);
	l->leaf = cgfw_em_label(g->em);
	l->scan = cgfw_em_label(g->em);
	l->skip = cgfw_em_label(g->em);
	l->matched = cgfw_em_label(g->em);
	l->leaf_done = cgfw_em_label(g->em);
	l->pass_end = cgfw_em_label(g->em);
	l->run_end = cgfw_em_label(g->em);
	l->nocount = cgfw_em_label(g->em);
	l->out = cgfw_em_label(g->em);
	l->other = cgfw_em_label(g->em);
	l->guard_skip = cgfw_em_label(g->em);
	l->dispatch = cgfw_em_label(g->em);
	l->ops = cgfw_em_label(g->em);
	l->other_child = cgfw_em_label(g->em);
	l->case_lbl = NULL;
	l->stk_min = STK_MIN + 4 * g->depth;
}

/*
 * The run's counter slots: one per counted rule, this copy's own; the
 * first one's index (@n_counted: how many)
 */
static size_t run_slots(struct cg *g, struct cls_chain *c,
			struct cls_run *run, size_t *n_counted)
{
	size_t i, base = 0;

	for (i = 0; i < run->n; i++) {
		if (!c->info[run->first + i].counter)
			continue;
		g->rule = c->rules[run->first + i];
		if (!(*n_counted)++)
			base = cgfw_cg_add_slot(g, g->rule);
		else
			cgfw_cg_add_slot(g, g->rule);
	}
	return base;
}

/*
 * A pass's start: none the best, the walk at the run's root.
 *
 * r9: the blob, r8: the best rule so far (-1: none), r7: the first
 * rule to look at, r6: the leaf scanned (its record); r0: the record
 * (walk) or entry (scan) offset; r5: the key loaded for the
 * records after the last one (walk: a cut's children, a guard's or
 * a leaf's next), the next entry (scan).
 * A rule is compared with the best or the first by the sign of
 * their difference (both below 2^32), not by a jump on the two
 * registers: that jump would narrow the best's and the first's
 * ranges in the verifier's eyes on each of its sides, and 6.12
 * compares the ranges of the states it meets at a may_goto, so it
 * would prove the walk apart for each pair of ranges (159,097
 * instructions for the 1,000-rule list of the differential test
 * with the entries' and the guards' compares made that way; 19,385
 * as here)
 */
static void run_pass(struct cg *g, const struct cls_run *run,
		     const struct run_labels *l)
{
	struct cls_prog *cp = g->cls;

	cgfw_em_bind(g->em, l->pass);
	may_goto(g, l->run_end);
	E(I_LDX(BPF_DW, BPF_REG_9, BPF_REG_10, STK_BASE));
	E(I_LDX(BPF_W, BPF_REG_7, BPF_REG_10, l->stk_min));
	/*
	 * None: UINT32_MAX, read from the blob, where the verifier does not
	 * know it: a constant would let it decide a leaf's test while no
	 * rule matched, and keep the best exact from then on, proving the
	 * walk apart for each value the best can have (on 6.12, 577,739
	 * instructions for the 1,000-rule list)
	 */
	E(I_LDX(BPF_W, BPF_REG_8, BPF_REG_9, CLS_NONE_OFF));
	E(I_MOV32_IMM(BPF_REG_0, run->root));
	/* the root's key (a root that cuts is of kind 3) */
	E(I_LDX(BPF_DW, BPF_REG_5, BPF_REG_10,
		STK_KEY + (cp->blob.buf[run->root + 2] & KEY_MASK)));
}

/*
 * The walk's loop: two cut steps for each may_goto (the loop's own cost,
 * halved); a record not a cut: goto other
 */
static void run_walk(struct cg *g, const struct run_labels *l)
{
	int32_t size = g->cls->blob.len;
	size_t k;

	cgfw_em_bind(g->em, l->walk);
	may_goto(g, l->run_end);
	for (k = 0; k < 2; k++) {
		int pre = cgfw_em_label(g->em), cut = cgfw_em_label(g->em);

		cgfw_em_jmp_imm(g->em, BPF_JGT, BPF_REG_0, size - CLS_NODE_SIZE,
			   l->out);
		E(I_MOV64_REG(BPF_REG_1, BPF_REG_9));
		E(I_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_0));
		E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_1, 0));
		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, CLS_CUT_PRE, pre);
		cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_2, CLS_CUT, l->other);
		/* a cut: child base + 16 * (key >> shift), in 32 bits */
		E(I_LDX(BPF_B, BPF_REG_3, BPF_REG_1, 2));
		key_at(g, BPF_REG_3);
		cgfw_em_goto(g->em, cut);
		/* on the key the parent loaded: the chain has no load of it */
		cgfw_em_bind(g->em, pre);
		E(I_MOV64_REG(BPF_REG_3, BPF_REG_5));
		cgfw_em_bind(g->em, cut);
		/* the children's key, while the child is picked */
		E(I_LDX(BPF_B, BPF_REG_5, BPF_REG_1, 3));
		key_at(g, BPF_REG_5);
		/* outside [lo, hi]: the other child (a predicted branch) */
		E(I_LDX(BPF_W, BPF_REG_4, BPF_REG_1, 4));
		cgfw_em_jmp_reg(g->em, BPF_JLT, BPF_REG_3, BPF_REG_4,
				l->other_child);
		E(I_LDX(BPF_W, BPF_REG_4, BPF_REG_1, 8));
		cgfw_em_jmp_reg(g->em, BPF_JGT, BPF_REG_3, BPF_REG_4,
				l->other_child);
		/* the count not in r4 (rcx): shrx where the CPU has it */
		E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_1, 1));
		E(I_ALU64_REG(BPF_RSH, BPF_REG_3, BPF_REG_2));
		E(I_ALU64_IMM(BPF_LSH, BPF_REG_3, 4));
		E(I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, 12));
		E(I_ALU32_REG(BPF_ADD, BPF_REG_0, BPF_REG_3));
	}
	cgfw_em_goto(g->em, l->walk);
}

/*
 * A cut's child after the last: as if the key were hi + 2^shift, and
 * in a coarse cut on by the key's first byte, without a branch (a
 * branch here doubles the paths through a cut step: 6.12's verifier
 * processed 63,544 instructions for the differential test's list,
 * 26,884 without); this cut's key is the one loaded for it
 * (reloaded: r3, compared with the block's ends, has ranges 6.12
 * would tell apart at may_goto)
 */
static void run_other_child(struct cg *g, const struct run_labels *l)
{
	cgfw_em_bind(g->em, l->other_child);
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_1, 2));
	E(I_MOV64_REG(BPF_REG_5, BPF_REG_2));
	key_at(g, BPF_REG_5);
	E(I_ALU64_IMM(BPF_AND, BPF_REG_2, CLS_COARSE));
	E(I_ALU64_IMM(BPF_NEG, BPF_REG_2, 0));
	E(I_ALU64_IMM(BPF_RSH, BPF_REG_3, CLS_COARSE_SHIFT));
	E(I_ALU64_REG(BPF_AND, BPF_REG_3, BPF_REG_2));
	E(I_LDX(BPF_W, BPF_REG_4, BPF_REG_1, 8));
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_1, 1));
	E(I_ALU64_REG(BPF_RSH, BPF_REG_4, BPF_REG_2));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_4, 1));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_4, BPF_REG_3));
	E(I_ALU64_IMM(BPF_LSH, BPF_REG_4, 4));
	E(I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, 12));
	E(I_ALU32_REG(BPF_ADD, BPF_REG_0, BPF_REG_4));
	cgfw_em_goto(g->em, l->walk);
}

/* A record not a cut: a leaf, the end, or a guard (tested here) */
static void run_guard(struct cg *g, const struct run_labels *l)
{
	cgfw_em_bind(g->em, l->other);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, CLS_LEAF, l->leaf);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, CLS_END, l->pass_end);
	/* a guard: walk a, or b if the best is below c; a's key */
	E(I_LDX(BPF_B, BPF_REG_5, BPF_REG_1, 3));
	key_at(g, BPF_REG_5);
	E(I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, 12));
	E(I_MOV64_REG(BPF_REG_2, BPF_REG_0));
	E(I_ALU64_REG(BPF_SUB, BPF_REG_2, BPF_REG_8));
	cgfw_em_jmp_imm(g->em, BPF_JSGE, BPF_REG_2, 0, l->guard_skip);
	E(I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, 4));
	cgfw_em_goto(g->em, l->walk);
	cgfw_em_bind(g->em, l->guard_skip);
	E(I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, 8));
	cgfw_em_goto(g->em, l->walk);
}

/*
 * A leaf: its entries, in rule order, until one with next 0, the best
 * so far from them; then on to where the leaf says
 */
static void run_leaf(struct cg *g, const struct run_labels *l)
{
	int32_t size = g->cls->blob.len;
	size_t k;

	cgfw_em_bind(g->em, l->leaf);
	E(I_MOV64_REG(BPF_REG_6, BPF_REG_1));
	E(I_LDX(BPF_W, BPF_REG_0, BPF_REG_1, 4));
	cgfw_em_bind(g->em, l->scan);
	may_goto(g, l->run_end);
	cgfw_em_jmp_imm(g->em, BPF_JGT, BPF_REG_0, size - CLS_BLOB_PAD, l->out);
	E(I_MOV64_REG(BPF_REG_1, BPF_REG_9));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_0));
	E(I_LDX(BPF_W, BPF_REG_5, BPF_REG_1, 0));	/* next */
	E(I_LDX(BPF_W, BPF_REG_2, BPF_REG_1, 4));	/* rule */
	E(I_MOV64_REG(BPF_REG_3, BPF_REG_2));
	E(I_ALU64_REG(BPF_SUB, BPF_REG_3, BPF_REG_7));
	cgfw_em_jmp_imm(g->em, BPF_JSLT, BPF_REG_3, 0, l->skip);
	E(I_ALU64_REG(BPF_SUB, BPF_REG_2, BPF_REG_8));
	cgfw_em_jmp_imm(g->em, BPF_JSGE, BPF_REG_2, 0, l->leaf_done);
	E(I_LDX(BPF_H, BPF_REG_4, BPF_REG_1, 10));	/* checks */
	/* each check: lo <= key <= hi; unrolled, at fixed offsets */
	for (k = 0; k < CLS_MAX_DIMS; k++) {
		int o = CLS_ENTRY_SIZE + CLS_CHECK_SIZE * k;

		cgfw_em_jmp_imm(g->em, BPF_JLE, BPF_REG_4, k, l->matched);
		E(I_LDX(BPF_W, BPF_REG_3, BPF_REG_1, o));
		key_at(g, BPF_REG_3);
		E(I_LDX(BPF_W, BPF_REG_2, BPF_REG_1, o + 4));
		cgfw_em_jmp_reg(g->em, BPF_JLT, BPF_REG_3, BPF_REG_2, l->skip);
		E(I_LDX(BPF_W, BPF_REG_2, BPF_REG_1, o + 8));
		cgfw_em_jmp_reg(g->em, BPF_JGT, BPF_REG_3, BPF_REG_2, l->skip);
	}
	/* the lowest rule of this leaf that matches: the best so far */
	cgfw_em_bind(g->em, l->matched);
	E(I_LDX(BPF_W, BPF_REG_8, BPF_REG_1, 4));
	E(I_LDX(BPF_H, BPF_REG_2, BPF_REG_1, 8));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_2, STK_BEST_CASE));
	E(I_LDX(BPF_W, BPF_REG_2, BPF_REG_1, 12));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_2, STK_BEST_SLOT));
	cgfw_em_goto(g->em, l->leaf_done);
	cgfw_em_bind(g->em, l->skip);
	E(I_MOV64_REG(BPF_REG_0, BPF_REG_5));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, l->scan);
	/*
	 * then the test of the guard it goes on to: walk b, or c if the
	 * best is not above min; the key of b
	 */
	cgfw_em_bind(g->em, l->leaf_done);
	E(I_LDX(BPF_B, BPF_REG_5, BPF_REG_6, 1));
	key_at(g, BPF_REG_5);
	E(I_LDX(BPF_H, BPF_REG_2, BPF_REG_6, 2));
	E(I_ALU64_REG(BPF_SUB, BPF_REG_2, BPF_REG_8));
	E(I_LDX(BPF_W, BPF_REG_0, BPF_REG_6, 8));
	cgfw_em_jmp_imm(g->em, BPF_JSLT, BPF_REG_2, 0, l->walk);
	E(I_LDX(BPF_W, BPF_REG_0, BPF_REG_6, 12));
	cgfw_em_goto(g->em, l->walk);
}

/*
 * A pass's end: no best, the run is over; else the next pass starts above
 * it, its ops (if it has them) or its counter, then its case
 */
static void run_pass_end(struct cg *g, const struct cls_run *run,
			 const struct run_labels *l, size_t base,
			 size_t n_counted)
{
	size_t i;

	cgfw_em_bind(g->em, l->pass_end);
	cgfw_em_jmp32_imm(g->em, BPF_JEQ, BPF_REG_8, -1, l->run_end);
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_8, 1));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_8, l->stk_min));
	restore_ctx_regs(g);
	if (run->any_ops) {
		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, STK_BEST_CASE));
		cgfw_em_jmp_imm(g->em, BPF_JSET, BPF_REG_1, CLS_CASE_OPS,
				l->ops);
	}
	if (n_counted) {
		/* packets += 1, bytes += len in slot base + ordinal */
		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, STK_BEST_SLOT));
		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, 0, l->nocount);
		E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, (int32_t)base - 1));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, STK_SCRATCH));
		count_slot(g, l->nocount);
	}
	cgfw_em_bind(g->em, l->nocount);
	cgfw_em_bind(g->em, l->dispatch);
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, STK_BEST_CASE));
	E(I_ALU64_IMM(BPF_AND, BPF_REG_1, ~CLS_CASE_OPS & 0xffff));
	for (i = 0; i < run->n_cases; i++)
		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, i, l->case_lbl[i]);
	cgfw_em_goto(g->em, l->pass);	/* never */
}

/* The best rule's op list: its place in the run's table; then its case */
static void run_ops(struct cg *g, const struct cls_run *run,
		    const struct run_labels *l, size_t base)
{
	int32_t size = g->cls->blob.len;

	cgfw_em_bind(g->em, l->ops);
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, l->stk_min));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, -1));
	E(I_ALU64_IMM(BPF_LSH, BPF_REG_1, 2));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, run->ops));
	cgfw_em_jmp_imm(g->em, BPF_JGT, BPF_REG_1, size - 4, l->dispatch);
	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, STK_BASE));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_2, BPF_REG_1));
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_2, 0));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, STK_OP));
	gen_ops(g, base, l->dispatch, l->pass, l->run_end);
}

/*
 * A run: its passes (see the top of the file), then its cases' verdicts;
 * the state's slot is this jump depth's
 */
static void gen_run(struct cg *g, struct cls_chain *c, struct cls_run *run,
		    int ret, int accept)
{
	struct run_labels l;
	size_t i, base, n_counted = 0;
	const struct ir_rule *first = c->rules[run->first];
	const struct ir_rule *last = c->rules[run->first + run->n - 1];
	char at[CGFW_WHERE_MAX];

	run_labels_init(g, &l);
	if (g->depth > CGFW_CG_MAX_JUMPS) {
		cgfw_cg_refuse(g, "jumps nested deeper than %d",
			       CGFW_CG_MAX_JUMPS);
		return;
	}
	g->rule = first;
	cgfw_em_note(g->em, "chain %s, rules at %s: %zu rules, classifier (%zu leaves, %zu entries, depth %zu, largest leaf %zu, %zu bytes a rule%s)",
		c->chain->name,
		cgfw_src_lines(&g->rs->src, first->loc.line, last->loc.line,
			       at, sizeof(at)),
		run->n, run->st.leaves, run->st.entries,
		run->st.max_depth, run->st.max_leaf, run->bytes / run->n,
		run->any_ops ? ", statements" : "");
	base = run_slots(g, c, run, &n_counted);
	l.case_lbl = calloc(run->n_cases + 1, sizeof(*l.case_lbl));
	if (!l.case_lbl) {
		g->err = -ENOMEM;
		return;
	}
	for (i = 0; i < run->n_cases; i++)
		l.case_lbl[i] = cgfw_em_label(g->em);
	E(I_ST(BPF_W, BPF_REG_10, l.stk_min, 0));
	E(I_STX(BPF_DW, BPF_REG_10, R_CTX, STK_CTX));

	run_pass(g, run, &l);
	run_walk(g, &l);
	run_other_child(g, &l);
	run_guard(g, &l);
	run_leaf(g, &l);
	/* a blob that is not what was built: never; no more matches */
	cgfw_em_bind(g->em, l.out);
	cgfw_em_goto(g->em, l.run_end);

	run_pass_end(g, run, &l, base, n_counted);
	if (run->any_ops)
		run_ops(g, run, &l, base);
	for (i = 0; i < run->n_cases && !g->err; i++) {
		const struct cls_case *kc = &run->cases[i];

		cgfw_em_bind(g->em, l.case_lbl[i]);
		g->chain = c->chain;
		g->rule = kc->rule ? kc->rule : first;
		cgfw_cg_verdict(g, kc->verdict, kc->chain, l.pass, ret, accept);
	}
	cgfw_em_bind(g->em, l.run_end);
	restore_ctx_regs(g);
	g->chain = c->chain;
	free(l.case_lbl);
}

static bool cls_chain(struct cg *g, const struct ir_chain *ic, int ret,
		      int accept)
{
	struct cls_prog *cp = g->cls;
	struct cls_chain *c = NULL;
	struct cg_blocks blocks;
	size_t i;

	if (!cp || !cp->any)
		return false;
	for (i = 0; i < cp->n_chains; i++)
		if (cp->chains[i].chain == ic)
			c = &cp->chains[i];
	if (!c || !c->n_runs)
		return false;
	cgfw_cg_blocks_init(g, &blocks);
	for (i = 0; i < c->n_rules && !g->err && !g->em->err;) {
		g->chain = ic;
		cgfw_cg_block(g, &blocks,
			      c->run_of[i] < 0 ? c->rules[i] : NULL);
		if (c->run_of[i] < 0) {
			cgfw_cg_rule(g, c->rules[i], ret, accept);
			i++;
			continue;
		}
		gen_run(g, c, &c->runs[c->run_of[i]], ret, accept);
		i += c->runs[c->run_of[i]].n;
	}
	cgfw_cg_blocks_end(g, &blocks);
	g->chain = ic;
	cgfw_em_goto(g->em, ret);
	return true;
}

const struct cgfw_bpf_ext cgfw_bpf_classifier = {
	.prologue = cls_prologue,
	.chain = cls_chain,
	.release = cls_release,
};
