// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Code generation: nf_tables bytecode (the IR) to CGROUP_SKB programs, one
 * expression at a time, with nft's semantics:
 *
 *  - nft's registers are 16 32-bit words on the stack; a load that is not
 *    a whole number of words zeroes the last word first, as nft does;
 *  - a match that fails, and a header that is missing (a short packet, a
 *    later fragment, an unknown layer 4), ends the rule (NFT_BREAK);
 *  - cmp <, >, range and sets compare bytes in order (memcmp), so network
 *    byte order data compares as numbers;
 *  - accept ends the chain (a later base chain still runs), drop ends the
 *    program, return goes back to the caller or to the base chain's
 *    policy; jump and goto inline the target chain.
 *
 * An expression, flag or key without a faithful equivalent is refused with
 * the rule's place in the file and the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <unistd.h>

#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "bpf/compile/codegen.h"
#include "bpf/compile/kbtf.h"

static uint32_t word_of(const uint8_t *data, uint32_t len, uint32_t i)
{
	uint32_t w = 0;

	memcpy(&w, data + i * 4, len - i * 4 >= 4 ? 4 : len - i * 4);
	return w;
}

/* Store @len bytes of @data in the registers at @off, zero-padded. */
static void store_data(struct cg *g, int off, const uint8_t *data,
		       uint32_t len)
{
	uint32_t i;

	for (i = 0; i * 4 < len; i++)
		E(I_ST(BPF_W, BPF_REG_10, off + i * 4,
		       (int32_t)word_of(data, len, i)));
}

/* r0 = map @idx lookup with the key at fp+@key_off; 0 -> @miss. */
void cgfw_cg_map_lookup(struct cg *g, size_t idx, int key_off)
{
	cgfw_em_ld_imm64(g->em, BPF_REG_1, BPF_PSEUDO_MAP_FD, MAP_IDX_BIAS + idx);
	E(I_MOV64_REG(BPF_REG_2, BPF_REG_10));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_2, key_off));
	E(I_CALL(BPF_FUNC_map_lookup_elem));
}

/* ---- counters ---- */

int cgfw_cg_add_slot(struct cg *g, const struct ir_rule *rule)
{
	struct bpf_slot *s;

	s = realloc(g->p->slots, (g->p->n_slots + 1) * sizeof(*s));
	if (!s) {
		g->err = -ENOMEM;
		return 0;
	}
	g->p->slots = s;
	s[g->p->n_slots].chain = g->chain;
	s[g->p->n_slots].rule = rule;
	return g->p->n_slots++;
}

/*
 * The verifier writes each inlined map lookup into the program one at a
 * time, and each time moves the whole program (bpf_patch_insn_data()): a
 * counter on each of 4,000 rules took 13 s to load, 2,000 rules 3.3 s.
 * In a table of more counters than this, a rule's counter is found by
 * bpf_map_lookup_percpu_elem() on the CPU the prologue read, a call the
 * verifier leaves as it is (a few nanoseconds more a counted packet).
 */
#define CG_INLINE_COUNTERS 256

static size_t count_counters(const struct ir_table *t)
{
	const struct ir_chain *c;
	const struct ir_rule *r;
	struct nftnl_expr *e;
	size_t n = 0;

	list_for_each_entry(c, &t->chains, list) {
		list_for_each_entry(r, &c->rules, list) {
			struct nftnl_expr_iter *it =
				nftnl_expr_iter_create(r->nl);

			while (it && (e = nftnl_expr_iter_next(it)))
				n += !strcmp(nftnl_expr_get_str(e,
						NFTNL_EXPR_NAME), "counter");
			if (it)
				nftnl_expr_iter_destroy(it);
		}
	}
	return n;
}

/* r0 a counter slot's value: packets += 1, bytes += skb->len; NULL: @miss */
void cgfw_cg_count_value(struct cg *g, int miss)
{
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, miss);
	E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_0, 0));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, 1));
	E(I_STX(BPF_DW, BPF_REG_0, BPF_REG_1, 0));
	E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_0, 8));
	E(I_LDX(BPF_W, BPF_REG_2, R_CTX, offsetof(struct __sk_buff, len)));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_2));
	E(I_STX(BPF_DW, BPF_REG_0, BPF_REG_1, 8));
}

/* packets += 1, bytes += skb->len in this slot of the per-CPU counters */
static void gen_count(struct cg *g, const struct ir_rule *rule)
{
	int skip = cgfw_em_label(g->em), slot = cgfw_cg_add_slot(g, rule);

	E(I_ST(BPF_W, BPF_REG_10, STK_SCRATCH, slot));
	if (g->count_calls) {
		cgfw_em_ld_imm64(g->em, BPF_REG_1, BPF_PSEUDO_MAP_FD,
				 MAP_IDX_BIAS + g->p->counters_map);
		E(I_MOV64_REG(BPF_REG_2, BPF_REG_10));
		E(I_ALU64_IMM(BPF_ADD, BPF_REG_2, STK_SCRATCH));
		E(I_LDX(BPF_W, BPF_REG_3, R_CTX,
			offsetof(struct __sk_buff, cb[4])));
		E(I_CALL(BPF_FUNC_map_lookup_percpu_elem));
	} else {
		cgfw_cg_map_lookup(g, g->p->counters_map, STK_SCRATCH);
	}
	cgfw_cg_count_value(g, skip);
	cgfw_em_bind(g->em, skip);
}

/* A map of the program's own (not a set's): its index in the table. */
size_t cgfw_cg_new_map(struct cg *g, const char *name, uint32_t type,
		       uint32_t key_size, uint32_t value_size, uint32_t max)
{
	struct bpf_map_spec *m;

	m = realloc(g->bt->maps, (g->bt->n_maps + 1) * sizeof(*m));
	if (!m) {
		g->err = -ENOMEM;
		return 0;
	}
	g->bt->maps = m;
	m = &m[g->bt->n_maps];
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->type = type;
	m->key_size = key_size;
	m->value_size = value_size;
	m->max_entries = max;
	return g->bt->n_maps++;
}

/* if (r@reg OP value) goto label, for any 64-bit unsigned value */
static void jmp_u64(struct cg *g, int op, int reg, uint64_t v, int label)
{
	if (v <= INT32_MAX) {
		cgfw_em_jmp_imm(g->em, op, reg, v, label);
		return;
	}
	cgfw_em_ld_imm64(g->em, BPF_REG_4, 0, v);
	cgfw_em_jmp_reg(g->em, op, reg, BPF_REG_4, label);
}

/*
 * The slot of a stateful expression (quota, limit) or a named object in
 * its array map: one per expression or object @key, shared by all its
 * inlined copies and all the table's programs. A new slot starts as
 * @init (@size bytes).
 */
uint32_t cgfw_cg_state_slot(struct cg *g, struct bpf_state *st,
			    const void *key, const char *name,
			    const void *init, uint32_t size, bool spin_lock)
{
	struct bpf_map_spec *m;
	uint32_t slot;
	void *v;

	for (slot = 0; slot < st->n; slot++)
		if (st->exprs[slot] == key)
			return slot;
	if (st->map == SIZE_MAX) {
		st->map = cgfw_cg_new_map(g, name, BPF_MAP_TYPE_ARRAY, 4, size, 0);
		if (g->err)
			return 0;
		g->bt->maps[st->map].spin_lock = spin_lock;
	}
	m = &g->bt->maps[st->map];
	v = realloc(st->exprs, (st->n + 1) * sizeof(void *));
	if (v)
		st->exprs = v;
	v = v ? realloc(m->keys, (m->n_elems + 1) * 4) : NULL;
	if (v)
		m->keys = v;
	v = v ? realloc(m->values, (m->n_elems + 1) * size) : NULL;
	if (!v) {
		g->err = -ENOMEM;
		return 0;
	}
	m->values = v;
	slot = st->n;
	st->exprs[st->n++] = key;
	memcpy((uint8_t *)m->keys + m->n_elems * 4, &slot, 4);
	memcpy((uint8_t *)m->values + m->n_elems * size, init, size);
	m->max_entries = ++m->n_elems;
	return slot;
}

/*
 * quota [over] N bytes: consumed += len, shared by every CPU (an atomic
 * fetch-add, as nft_quota's atomic64_add_return); past the quota means
 * consumed > N (nft_overquota()). "over" matches past it, the plain form
 * until then.
 */
/* The quota whose bytes used r0 points to: @brk unless it matches. */
static void quota_run(struct cg *g, uint64_t quota, bool over, int brk)
{
	E(I_LDX(BPF_W, BPF_REG_2, R_CTX, offsetof(struct __sk_buff, len)));
	E(I_MOV64_REG(BPF_REG_1, BPF_REG_2));
	E(((struct bpf_insn){ .code = BPF_STX | BPF_DW | BPF_ATOMIC,
	   .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1,
	   .imm = BPF_ADD | BPF_FETCH }));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_2));	/* the new total */
	/* no match: not past the quota for "over", past it otherwise */
	jmp_u64(g, over ? BPF_JLE : BPF_JGT, BPF_REG_1, quota, brk);
}

static void gen_quota_state(struct cg *g, const void *key, uint64_t quota,
			    uint64_t used, bool over, int brk)
{
	uint32_t slot = cgfw_cg_state_slot(g, &g->bt->quotas, key, "cgfw_quota",
					   &used, 8, false);

	if (g->err)
		return;
	E(I_ST(BPF_W, BPF_REG_10, STK_SCRATCH, slot));
	cgfw_cg_map_lookup(g, g->bt->quotas.map, STK_SCRATCH);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, brk);
	quota_run(g, quota, over, brk);
}

static void gen_quota(struct cg *g, struct nftnl_expr *e, int brk)
{
	gen_quota_state(g, e, nftnl_expr_get_u64(e, NFTNL_EXPR_QUOTA_BYTES),
			nftnl_expr_get_u64(e, NFTNL_EXPR_QUOTA_CONSUMED),
			nftnl_expr_get_u32(e, NFTNL_EXPR_QUOTA_FLAGS) &
			NFT_QUOTA_F_INV, brk);
}

/*
 * limit rate [over] R/UNIT [burst B packets|bytes]: nft_limit_eval(), a
 * token bucket shared by every CPU under a bpf_spin_lock. The clock is
 * read before the lock (no calls while it is held): time that seems to
 * run backwards counts as none.
 */
/* A limit's bucket: its size (@max ns), a packet's cost, its first state */
static int limit_bucket(const struct limit_args *a, uint64_t *max,
			uint64_t *cost, struct limit_state *init)
{
	uint64_t nsecs = a->unit * 1000000000ULL;
	uint32_t burst = a->burst;

	if (!a->rate)
		return -EINVAL;
	if (a->pkts && !burst)
		burst = 5;	/* NFT_LIMIT_PKT_BURST_DEFAULT */
	*cost = 0;
	if (a->pkts) {
		*cost = nsecs / a->rate;
		*max = *cost * burst;
	} else {
		*max = nsecs * (a->rate + burst) / a->rate;
	}
	memset(init, 0, sizeof(*init));
	init->tokens = *max;
	return 0;
}

/*
 * The bucket of limit @a, whose state r0 points to, the clock read into
 * fp+S+48 (no calls while the lock is held): no match (@brk) when there
 * are too few tokens, or for "over" enough.
 */
static void limit_run(struct cg *g, const struct limit_args *a, uint64_t max,
		      uint64_t cost, int brk)
{
	uint64_t nsecs = a->unit * 1000000000ULL, rate = a->rate;
	int S = STK_SCRATCH, ok = cgfw_em_label(g->em), done = cgfw_em_label(g->em);
	int fresh = cgfw_em_label(g->em), capped = cgfw_em_label(g->em);
	bool pkts = a->pkts, invert = a->invert;

	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, S + 56));	/* the state */
	E(I_MOV64_REG(BPF_REG_1, BPF_REG_0));
	E(I_CALL(BPF_FUNC_spin_lock));

	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, S + 56));
	E(I_LDX(BPF_DW, BPF_REG_3, BPF_REG_2, 8));		/* tokens */
	E(I_LDX(BPF_DW, BPF_REG_4, BPF_REG_10, S + 48));	/* now */
	E(I_LDX(BPF_DW, BPF_REG_5, BPF_REG_2, 16));		/* last */
	cgfw_em_jmp_reg(g->em, BPF_JGE, BPF_REG_4, BPF_REG_5, fresh);
	E(I_MOV64_REG(BPF_REG_4, BPF_REG_5));
	cgfw_em_bind(g->em, fresh);
	E(I_STX(BPF_DW, BPF_REG_2, BPF_REG_4, 16));		/* last = now */
	E(I_ALU64_REG(BPF_ADD, BPF_REG_3, BPF_REG_4));
	E(I_ALU64_REG(BPF_SUB, BPF_REG_3, BPF_REG_5));
	cgfw_em_ld_imm64(g->em, BPF_REG_4, 0, max);
	cgfw_em_jmp_reg(g->em, BPF_JLE, BPF_REG_3, BPF_REG_4, capped);
	E(I_MOV64_REG(BPF_REG_3, BPF_REG_4));
	cgfw_em_bind(g->em, capped);
	/* r1 = cost: per packet, or nsecs * len / rate */
	if (pkts) {
		cgfw_em_ld_imm64(g->em, BPF_REG_1, 0, cost);
	} else {
		E(I_LDX(BPF_W, BPF_REG_1, R_CTX, offsetof(struct __sk_buff, len)));
		cgfw_em_ld_imm64(g->em, BPF_REG_4, 0, nsecs);
		E(I_ALU64_REG(BPF_MUL, BPF_REG_1, BPF_REG_4));
		cgfw_em_ld_imm64(g->em, BPF_REG_4, 0, rate);
		E(I_ALU64_REG(BPF_DIV, BPF_REG_1, BPF_REG_4));
	}
	E(I_MOV64_REG(BPF_REG_5, BPF_REG_3));
	E(I_ALU64_REG(BPF_SUB, BPF_REG_5, BPF_REG_1));		/* delta */
	cgfw_em_jmp_imm(g->em, BPF_JSGE, BPF_REG_5, 0, ok);
	E(I_STX(BPF_DW, BPF_REG_2, BPF_REG_3, 8));	/* too few: keep them */
	E(I_ST(BPF_DW, BPF_REG_10, S + 48, !invert));	/* break? */
	cgfw_em_goto(g->em, done);
	cgfw_em_bind(g->em, ok);
	E(I_STX(BPF_DW, BPF_REG_2, BPF_REG_5, 8));
	E(I_ST(BPF_DW, BPF_REG_10, S + 48, invert));
	cgfw_em_bind(g->em, done);
	E(I_MOV64_REG(BPF_REG_1, BPF_REG_2));
	E(I_CALL(BPF_FUNC_spin_unlock));
	E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_10, S + 48));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_1, 0, brk);
}

static void gen_limit_state(struct cg *g, const void *key,
			    const struct limit_args *a, int brk)
{
	struct limit_state init;
	uint64_t max, cost;
	uint32_t slot;

	if (limit_bucket(a, &max, &cost, &init)) {
		cgfw_cg_refuse(g, "limit with a rate of 0");
		return;
	}
	slot = cgfw_cg_state_slot(g, &g->bt->limits, key, "cgfw_limit", &init,
				  sizeof(init), true);
	if (g->err)
		return;
	E(I_CALL(BPF_FUNC_ktime_get_ns));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, STK_SCRATCH + 48));	/* now */
	E(I_ST(BPF_W, BPF_REG_10, STK_SCRATCH, slot));
	cgfw_cg_map_lookup(g, g->bt->limits.map, STK_SCRATCH);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, brk);
	limit_run(g, a, max, cost, brk);
}

static struct limit_args stmt_limit(struct nftnl_expr *e);

static void gen_limit(struct cg *g, struct nftnl_expr *e, int brk)
{
	struct limit_args a = stmt_limit(e);

	gen_limit_state(g, e, &a, brk);
}

/* ---- named objects ---- */

static const char *obj_type_name(uint32_t type)
{
	static const char *const names[] = {
		[NFT_OBJECT_COUNTER] = "counter", [NFT_OBJECT_QUOTA] = "quota",
		[NFT_OBJECT_CT_HELPER] = "ct helper",
		[NFT_OBJECT_LIMIT] = "limit",
		[NFT_OBJECT_CONNLIMIT] = "connlimit",
		[NFT_OBJECT_TUNNEL] = "tunnel",
		[NFT_OBJECT_CT_TIMEOUT] = "ct timeout",
		[NFT_OBJECT_SECMARK] = "secmark",
		[NFT_OBJECT_CT_EXPECT] = "ct expectation",
		[NFT_OBJECT_SYNPROXY] = "synproxy",
	};

	return type < ARRAY_SIZE(names) && names[type] ? names[type] : "other";
}

static struct limit_args obj_limit(struct nftnl_obj *o)
{
	return (struct limit_args){
		.rate = nftnl_obj_get_u64(o, NFTNL_OBJ_LIMIT_RATE),
		.unit = nftnl_obj_get_u64(o, NFTNL_OBJ_LIMIT_UNIT),
		.burst = nftnl_obj_get_u32(o, NFTNL_OBJ_LIMIT_BURST),
		.pkts = nftnl_obj_get_u32(o, NFTNL_OBJ_LIMIT_TYPE) ==
			NFT_LIMIT_PKTS,
		.invert = nftnl_obj_get_u32(o, NFTNL_OBJ_LIMIT_FLAGS) &
			  NFT_LIMIT_F_INV,
	};
}

/* The slot of named object @o, made if new; -1 if bpf has no such kind. */
static int64_t obj_slot(struct cg *g, const struct ir_obj *o)
{
	struct nftnl_obj *nl = o->nl;
	struct limit_state init;
	struct limit_args a;
	uint64_t v[2], max, cost;

	switch (nftnl_obj_get_u32(nl, NFTNL_OBJ_TYPE)) {
	case NFT_OBJECT_COUNTER:
		v[0] = nftnl_obj_get_u64(nl, NFTNL_OBJ_CTR_PKTS);
		v[1] = nftnl_obj_get_u64(nl, NFTNL_OBJ_CTR_BYTES);
		return cgfw_cg_state_slot(g, &g->bt->counter_objs, o,
					  "cgfw_objctr", v, 16, false);
	case NFT_OBJECT_QUOTA:
		v[0] = nftnl_obj_get_u64(nl, NFTNL_OBJ_QUOTA_CONSUMED);
		return cgfw_cg_state_slot(g, &g->bt->quotas, o, "cgfw_quota",
					  v, 8, false);
	case NFT_OBJECT_LIMIT:
		a = obj_limit(nl);
		if (limit_bucket(&a, &max, &cost, &init))
			return -1;
		return cgfw_cg_state_slot(g, &g->bt->limits, o, "cgfw_limit",
					  &init, sizeof(init), true);
	}
	return -1;
}

int cgfw_bpf_obj_slots(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		       struct bpf_table *bt)
{
	struct cg g = { .ctx = ctx, .rs = rs, .bt = bt };
	const struct ir_obj *o;

	list_for_each_entry(o, &bt->table->objs, list) {
		if (obj_slot(&g, o) >= 0 || g.err)
			continue;
		cgfw_err_at(ctx, &rs->src,
			    o->loc.line ? &o->loc :
			    rs->object_loc.line ? &rs->object_loc : &bt->table->loc,
			    "the bpf backend cannot do this: named %s objects ('%s' in table '%s'; counters, quotas and limits are compiled); use the nft backend (-b nft)",
			    obj_type_name(nftnl_obj_get_u32(o->nl, NFTNL_OBJ_TYPE)),
			    nftnl_obj_get_str(o->nl, NFTNL_OBJ_NAME),
			    bt->table->name);
		return -EOPNOTSUPP;
	}
	return g.err;
}

/* The packets and bytes r0 points to, counted by every CPU (atomic) */
static void counter_run(struct cg *g)
{
	E(I_MOV64_IMM(BPF_REG_1, 1));
	E(((struct bpf_insn){ .code = BPF_STX | BPF_DW | BPF_ATOMIC,
	   .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1, .imm = BPF_ADD }));
	E(I_LDX(BPF_W, BPF_REG_1, R_CTX, offsetof(struct __sk_buff, len)));
	E(((struct bpf_insn){ .code = BPF_STX | BPF_DW | BPF_ATOMIC,
	   .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1, .off = 8,
	   .imm = BPF_ADD }));
}

/* counter name "NAME": its packets and bytes, one for the table */
static void gen_counter_obj(struct cg *g, uint32_t slot)
{
	int skip = cgfw_em_label(g->em);

	E(I_ST(BPF_W, BPF_REG_10, STK_SCRATCH, slot));
	cgfw_cg_map_lookup(g, g->bt->counter_objs.map, STK_SCRATCH);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, skip);
	counter_run(g);
	cgfw_em_bind(g->em, skip);
}

/* ---- log ---- */

/*
 * log [prefix P] [level L]: a record to the table's ring buffer
 * (struct cgfw_log_rec), for a reader to write to the kernel log; a full
 * buffer (no reader) counts the record lost, for cgfw list. The verdict
 * is never changed. log group (nfnetlink_log), level audit and flags
 * (which need the socket's group or the link-layer header) are refused.
 */
static void gen_log(struct cg *g, struct nftnl_expr *e)
{
	uint32_t level = nftnl_expr_is_set(e, NFTNL_EXPR_LOG_LEVEL) ?
			 nftnl_expr_get_u32(e, NFTNL_EXPR_LOG_LEVEL) : 4;
	uint32_t flags = nftnl_expr_get_u32(e, NFTNL_EXPR_LOG_FLAGS);
	int S = STK_SCRATCH, got = cgfw_em_label(g->em);
	int done = cgfw_em_label(g->em), short_pkt = cgfw_em_label(g->em);
	int submit = cgfw_em_label(g->em);
	uint64_t zero = 0;
	uint32_t slot;

	if (nftnl_expr_is_set(e, NFTNL_EXPR_LOG_GROUP)) {
		cgfw_cg_refuse(g, "log group (nfnetlink_log, which a CGROUP_SKB program cannot reach)");
		return;
	}
	if (level > 7 || flags) {
		cgfw_cg_refuse(g, "log %s", level > 7 ? "level audit" :
			       "flags (tcp sequence and options, ip options, skuid, ether)");
		return;
	}
	slot = cgfw_cg_state_slot(g, &g->bt->logs, e, "cgfw_loglost", &zero, 8,
				  false);
	if (g->err)
		return;
	if (g->bt->log_ring == SIZE_MAX) {
		g->bt->log_ring = cgfw_cg_new_map(g, "cgfw_log",
						  BPF_MAP_TYPE_RINGBUF, 0, 0,
						  CGFW_LOG_RING);
		if (g->err)
			return;
	}
	cgfw_em_ld_imm64(g->em, BPF_REG_1, BPF_PSEUDO_MAP_FD,
			 MAP_IDX_BIAS + g->bt->log_ring);
	E(I_MOV64_IMM(BPF_REG_2, sizeof(struct cgfw_log_rec)));
	E(I_MOV64_IMM(BPF_REG_3, 0));
	E(I_CALL(BPF_FUNC_ringbuf_reserve));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, got);
	/* no room: lost */
	E(I_ST(BPF_W, BPF_REG_10, S, slot));
	cgfw_cg_map_lookup(g, g->bt->logs.map, S);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, done);
	E(I_MOV64_IMM(BPF_REG_1, 1));
	E(((struct bpf_insn){ .code = BPF_STX | BPF_DW | BPF_ATOMIC,
	   .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1, .imm = BPF_ADD }));
	cgfw_em_goto(g->em, done);

	cgfw_em_bind(g->em, got);
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, S + 56));
	E(I_ST(BPF_W, BPF_REG_0, offsetof(struct cgfw_log_rec, id), slot));
	E(I_LDX(BPF_W, BPF_REG_1, R_CTX, offsetof(struct __sk_buff, ifindex)));
	E(I_STX(BPF_W, BPF_REG_0, BPF_REG_1,
		offsetof(struct cgfw_log_rec, ifindex)));
	E(I_LDX(BPF_W, BPF_REG_1, R_CTX, offsetof(struct __sk_buff, mark)));
	E(I_STX(BPF_W, BPF_REG_0, BPF_REG_1, offsetof(struct cgfw_log_rec, mark)));
	E(I_STX(BPF_B, BPF_REG_0, R_NFPROTO,
		offsetof(struct cgfw_log_rec, nfproto)));
	E(I_ST(BPF_B, BPF_REG_0, offsetof(struct cgfw_log_rec, dir),
	       g->p->dir));
	E(I_ST(BPF_W, BPF_REG_0, offsetof(struct cgfw_log_rec, pad), 0));
	E(I_LDX(BPF_W, BPF_REG_4, R_CTX, offsetof(struct __sk_buff, len)));
	E(I_STX(BPF_W, BPF_REG_0, BPF_REG_4, offsetof(struct cgfw_log_rec, len)));
	cgfw_em_jmp_imm(g->em, BPF_JLE, BPF_REG_4, CGFW_LOG_SNAP, short_pkt);
	E(I_MOV64_IMM(BPF_REG_4, CGFW_LOG_SNAP));
	cgfw_em_bind(g->em, short_pkt);
	E(I_STX(BPF_H, BPF_REG_0, BPF_REG_4,
		offsetof(struct cgfw_log_rec, caplen)));
	/* JLE, not JEQ: verifiers before 6.8 narrow r4 to [1, 128] so only */
	cgfw_em_jmp_imm(g->em, BPF_JLE, BPF_REG_4, 0, submit);
	E(I_MOV64_REG(BPF_REG_1, R_CTX));
	E(I_MOV64_IMM(BPF_REG_2, 0));
	E(I_MOV64_REG(BPF_REG_3, BPF_REG_0));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_3, offsetof(struct cgfw_log_rec, data)));
	E(I_CALL(BPF_FUNC_skb_load_bytes));
	cgfw_em_bind(g->em, submit);
	E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_10, S + 56));
	E(I_MOV64_IMM(BPF_REG_2, 0));
	E(I_CALL(BPF_FUNC_ringbuf_submit));
	cgfw_em_bind(g->em, done);
}

/* ---- meters ---- */

static int one_stmt(struct nftnl_expr *e, void *data)
{
	struct nftnl_expr **out = data;

	if (*out)
		return -1;
	*out = e;
	return 0;
}

struct nftnl_expr *cgfw_bpf_dynset_stmt(const struct nftnl_expr *dynset,
					 bool *several)
{
	struct nftnl_expr *stmt = NULL;

	*several = nftnl_expr_expr_foreach(dynset, one_stmt, &stmt) < 0;
	return stmt;
}

static struct limit_args stmt_limit(struct nftnl_expr *e)
{
	return (struct limit_args){
		.rate = nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_RATE),
		.unit = nftnl_expr_get_u64(e, NFTNL_EXPR_LIMIT_UNIT),
		.burst = nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_BURST),
		.pkts = nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_TYPE) ==
			NFT_LIMIT_PKTS,
		.invert = nftnl_expr_get_u32(e, NFTNL_EXPR_LIMIT_FLAGS) &
			  NFT_LIMIT_F_INV,
	};
}

int cgfw_bpf_meter_state(struct nftnl_expr *stmt, uint64_t *init,
			 uint32_t *size, bool *spin_lock)
{
	const char *name = nftnl_expr_get_str(stmt, NFTNL_EXPR_NAME);
	struct limit_state ls;
	struct limit_args a;
	uint64_t max, cost;

	memset(init, 0, CGFW_METER_STATE_MAX);
	*spin_lock = false;
	if (!strcmp(name, "counter")) {	/* as nft_counter_clone() */
		init[0] = nftnl_expr_get_u64(stmt, NFTNL_EXPR_CTR_PACKETS);
		init[1] = nftnl_expr_get_u64(stmt, NFTNL_EXPR_CTR_BYTES);
		*size = 16;
	} else if (!strcmp(name, "quota")) {	/* nft_quota_clone() */
		init[0] = nftnl_expr_get_u64(stmt, NFTNL_EXPR_QUOTA_CONSUMED);
		*size = 8;
	} else if (!strcmp(name, "limit")) {
		a = stmt_limit(stmt);
		if (limit_bucket(&a, &max, &cost, &ls))
			return -EINVAL;
		memcpy(init, &ls, sizeof(ls));
		*size = sizeof(ls);
		*spin_lock = true;
	} else {
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The same statement: a meter's elements get the first rule's state. */
static bool same_stmt(struct nftnl_expr *a, struct nftnl_expr *b)
{
	static const uint16_t attrs64[] = {
		NFTNL_EXPR_LIMIT_RATE, NFTNL_EXPR_LIMIT_UNIT,
	}, attrs32[] = {
		NFTNL_EXPR_LIMIT_BURST, NFTNL_EXPR_LIMIT_TYPE,
		NFTNL_EXPR_LIMIT_FLAGS,
	};
	const char *name = nftnl_expr_get_str(a, NFTNL_EXPR_NAME);
	size_t i;

	if (a == b)
		return true;
	if (strcmp(name, nftnl_expr_get_str(b, NFTNL_EXPR_NAME)))
		return false;
	if (!strcmp(name, "quota"))
		return nftnl_expr_get_u64(a, NFTNL_EXPR_QUOTA_BYTES) ==
		       nftnl_expr_get_u64(b, NFTNL_EXPR_QUOTA_BYTES) &&
		       nftnl_expr_get_u64(a, NFTNL_EXPR_QUOTA_CONSUMED) ==
		       nftnl_expr_get_u64(b, NFTNL_EXPR_QUOTA_CONSUMED) &&
		       nftnl_expr_get_u32(a, NFTNL_EXPR_QUOTA_FLAGS) ==
		       nftnl_expr_get_u32(b, NFTNL_EXPR_QUOTA_FLAGS);
	if (!strcmp(name, "counter"))
		return nftnl_expr_get_u64(a, NFTNL_EXPR_CTR_PACKETS) ==
		       nftnl_expr_get_u64(b, NFTNL_EXPR_CTR_PACKETS) &&
		       nftnl_expr_get_u64(a, NFTNL_EXPR_CTR_BYTES) ==
		       nftnl_expr_get_u64(b, NFTNL_EXPR_CTR_BYTES);
	if (!strcmp(name, "limit")) {
		for (i = 0; i < ARRAY_SIZE(attrs64); i++)
			if (nftnl_expr_get_u64(a, attrs64[i]) !=
			    nftnl_expr_get_u64(b, attrs64[i]))
				return false;
		for (i = 0; i < ARRAY_SIZE(attrs32); i++)
			if (nftnl_expr_get_u32(a, attrs32[i]) !=
			    nftnl_expr_get_u32(b, attrs32[i]))
				return false;
	}
	return true;
}

/* Where a set's timeouts are checked keeps what a helper call clobbers. */
#define STK_TIME_NOW	(STK_SCRATCH + 48)	/* bpf_ktime_get_ns() */
#define STK_TIME_ELEM	(STK_SCRATCH + 56)	/* the element found */

/* The timeout an add or update of @e gives: its own, else the set's (ms). */
static uint64_t dynset_timeout(const struct bpf_map_spec *m,
			       struct nftnl_expr *e)
{
	uint64_t ms = 0;

	if (nftnl_expr_is_set(e, NFTNL_EXPR_DYNSET_TIMEOUT))
		ms = nftnl_expr_get_u64(e, NFTNL_EXPR_DYNSET_TIMEOUT);
	if (!ms && nftnl_set_is_set(m->set->nl, NFTNL_SET_TIMEOUT))
		ms = nftnl_set_get_u64(m->set->nl, NFTNL_SET_TIMEOUT);
	return cgfw_timeout_ms(ms);
}

/* r0 = bpf_map_update_elem(map @idx, fp+@key, fp+@value, @flags) */
static void map_update(struct cg *g, size_t idx, int key, int value,
		       int flags)
{
	cgfw_em_ld_imm64(g->em, BPF_REG_1, BPF_PSEUDO_MAP_FD,
			 MAP_IDX_BIAS + idx);
	E(I_MOV64_REG(BPF_REG_2, BPF_REG_10));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_2, key));
	E(I_MOV64_REG(BPF_REG_3, BPF_REG_10));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_3, value));
	E(I_MOV64_IMM(BPF_REG_4, flags));
	E(I_CALL(BPF_FUNC_map_update_elem));
}

/* bpf_map_delete_elem(map @idx, fp+@key) */
static void map_delete(struct cg *g, size_t idx, int key)
{
	cgfw_em_ld_imm64(g->em, BPF_REG_1, BPF_PSEUDO_MAP_FD,
			 MAP_IDX_BIAS + idx);
	E(I_MOV64_REG(BPF_REG_2, BPF_REG_10));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_2, key));
	E(I_CALL(BPF_FUNC_map_delete_elem));
}

/*
 * r0, an element of map @m (not NULL) that add or update @e finds, in a
 * set with timeouts, as nft_dynset_eval() has it: to @gone if it has
 * expired (a new one is made in its place); else an update gives it its
 * timeout again from now, unless it never expires; then to @have with
 * r0 as it was. The time is at STK_TIME_NOW.
 */
static void gen_dynset_found(struct cg *g, const struct bpf_map_spec *m,
			     struct nftnl_expr *e, int gone, int have)
{
	uint64_t ms = dynset_timeout(m, e);

	E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_0, m->time_off));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, 0, have);	/* never */
	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, STK_TIME_NOW));
	cgfw_em_jmp_reg(g->em, BPF_JGE, BPF_REG_2, BPF_REG_1, gone);
	if (nftnl_expr_get_u32(e, NFTNL_EXPR_DYNSET_OP) ==
	    NFT_DYNSET_OP_UPDATE) {
		cgfw_em_ld_imm64(g->em, BPF_REG_1, 0, ms * 1000000);
		E(I_ALU64_REG(BPF_ADD, BPF_REG_2, BPF_REG_1));
		E(I_STX(BPF_DW, BPF_REG_0, BPF_REG_2, m->time_off));
	}
	cgfw_em_goto(g->em, have);
}

/* A new element's struct cgfw_elem_time, at fp + @off (STK_TIME_NOW set) */
static void gen_new_time(struct cg *g, const struct bpf_map_spec *m,
			 struct nftnl_expr *e, int off)
{
	uint64_t ms = dynset_timeout(m, e);

	E(I_ST(BPF_DW, BPF_REG_10, off, 0));
	if (ms) {
		E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, STK_TIME_NOW));
		cgfw_em_ld_imm64(g->em, BPF_REG_1, 0, ms * 1000000);
		E(I_ALU64_REG(BPF_ADD, BPF_REG_2, BPF_REG_1));
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_2, off));
	}
	cgfw_em_ld_imm64(g->em, BPF_REG_1, 0, ms);
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, off + 8));
}

/*
 * add or update @set { KEY [timeout T] STATEMENT } (@e): the element made
 * if new (the statement's first state; a full set does not match, as
 * nft), or if it has expired, then the statement run on the element's
 * own state.
 */
static void gen_meter(struct cg *g, size_t idx, int key, struct nftnl_expr *e,
		      struct nftnl_expr *stmt, int brk)
{
	const char *name = nftnl_expr_get_str(stmt, NFTNL_EXPR_NAME);
	const struct bpf_map_spec *m = &g->bt->maps[idx];
	uint64_t init[CGFW_METER_STATE_MAX / 8], max, cost;
	int have = cgfw_em_label(g->em), S = STK_SCRATCH;
	int gone = cgfw_em_label(g->em);
	struct limit_state ls;
	struct limit_args a;
	uint32_t size, i;
	bool lock;

	if (cgfw_bpf_meter_state(stmt, init, &size, &lock)) {
		cgfw_cg_refuse(g, "a meter of '%s' statements (counter, quota and limit are compiled)",
			       name);
		return;
	}
	if (m->time_off) {
		E(I_CALL(BPF_FUNC_ktime_get_ns));
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, STK_TIME_NOW));
	}
	cgfw_cg_map_lookup(g, idx, key);
	if (m->time_off) {
		int absent = cgfw_em_label(g->em);

		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, absent);
		gen_dynset_found(g, m, e, gone, have);
		/* expired: out, so that a new one goes in */
		cgfw_em_bind(g->em, gone);
		map_delete(g, idx, key);
		cgfw_em_bind(g->em, absent);
	} else {
		cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, have);
	}
	for (i = 0; i < size / 8; i++) {
		cgfw_em_ld_imm64(g->em, BPF_REG_1, 0, init[i]);
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, S + 8 * i));
	}
	if (m->time_off)
		gen_new_time(g, m, e, S + m->time_off);
	map_update(g, idx, key, S, BPF_NOEXIST);  /* another CPU may be first */
	cgfw_cg_map_lookup(g, idx, key);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, brk);
	cgfw_em_bind(g->em, have);
	if (!strcmp(name, "counter")) {
		counter_run(g);
	} else if (!strcmp(name, "quota")) {
		quota_run(g, nftnl_expr_get_u64(stmt, NFTNL_EXPR_QUOTA_BYTES),
			  nftnl_expr_get_u32(stmt, NFTNL_EXPR_QUOTA_FLAGS) &
			  NFT_QUOTA_F_INV, brk);
	} else {
		a = stmt_limit(stmt);
		limit_bucket(&a, &max, &cost, &ls);
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, S + 56));
		E(I_CALL(BPF_FUNC_ktime_get_ns));
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, S + 48));	/* now */
		E(I_LDX(BPF_DW, BPF_REG_0, BPF_REG_10, S + 56));
		limit_run(g, &a, max, cost, brk);
	}
}

/* counter, quota or limit name "NAME": the object's state, one for all */
static void gen_objref(struct cg *g, struct nftnl_expr *e, int brk)
{
	uint32_t type = nftnl_expr_get_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE);
	const char *name;
	const struct ir_obj *o;
	struct limit_args a;
	int64_t slot;

	if (!nftnl_expr_is_set(e, NFTNL_EXPR_OBJREF_IMM_NAME)) {
		cgfw_cg_refuse(g, "objects chosen by a map");
		return;
	}
	name = nftnl_expr_get_str(e, NFTNL_EXPR_OBJREF_IMM_NAME);
	list_for_each_entry(o, &g->bt->table->objs, list) {
		if (nftnl_obj_get_u32(o->nl, NFTNL_OBJ_TYPE) == type &&
		    !strcmp(nftnl_obj_get_str(o->nl, NFTNL_OBJ_NAME), name))
			break;
	}
	if (&o->list == &g->bt->table->objs) {
		cgfw_cg_refuse(g, "%s '%s' is not in table '%s'",
			       obj_type_name(type), name, g->bt->table->name);
		return;
	}
	slot = obj_slot(g, o);
	if (slot < 0) {
		cgfw_cg_refuse(g, "named %s objects", obj_type_name(type));
		return;
	}
	switch (type) {
	case NFT_OBJECT_COUNTER:
		gen_counter_obj(g, slot);
		break;
	case NFT_OBJECT_QUOTA:
		gen_quota_state(g, o, nftnl_obj_get_u64(o->nl, NFTNL_OBJ_QUOTA_BYTES),
				nftnl_obj_get_u64(o->nl, NFTNL_OBJ_QUOTA_CONSUMED),
				nftnl_obj_get_u32(o->nl, NFTNL_OBJ_QUOTA_FLAGS) &
				NFT_QUOTA_F_INV, brk);
		break;
	case NFT_OBJECT_LIMIT:
		a = obj_limit(o->nl);
		gen_limit_state(g, o, &a, brk);
		break;
	}
}

/* ---- the packet's context: family, layer 4, transport offset ---- */

/* r0 = bpf_skb_load_bytes(skb, @off_reg or @off, fp+@dst, @len) */
void cgfw_cg_load_bytes(struct cg *g, int off_reg, int off, int dst,
			int len)
{
	E(I_MOV64_REG(BPF_REG_1, R_CTX));
	if (off_reg >= 0) {
		E(I_MOV64_REG(BPF_REG_2, off_reg));
		if (off)
			E(I_ALU64_IMM(BPF_ADD, BPF_REG_2, off));
	} else {
		E(I_MOV64_IMM(BPF_REG_2, off));
	}
	E(I_MOV64_REG(BPF_REG_3, BPF_REG_10));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_3, dst));
	E(I_MOV64_IMM(BPF_REG_4, len));
	E(I_CALL(BPF_FUNC_skb_load_bytes));
}

/*
 * if r@reg is an IPv6 extension header ipv6_find_hdr() walks over: goto
 * @label. nf_tables' packet info (IP6_FH_F_AUTH) stops at AH, and takes
 * it for the layer 4 protocol; a search for a header type (exthdr)
 * walks over it (@auth).
 */
static void jmp_if_exthdr(struct cg *g, int reg, int label, bool auth)
{
	static const int exthdrs[] = { 0, 43, 44, 60 };	/* not NONE */
	size_t i;

	for (i = 0; i < ARRAY_SIZE(exthdrs); i++)
		cgfw_em_jmp_imm(g->em, BPF_JEQ, reg, exthdrs[i], label);
	if (auth)
		cgfw_em_jmp_imm(g->em, BPF_JEQ, reg, 51, label);
}

/* if r@reg is ipv6_ext_hdr(): any of them, AH and NONE too: goto @label */
static void jmp_if_ext_hdr(struct cg *g, int reg, int label)
{
	jmp_if_exthdr(g, reg, label, true);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, reg, 59, label);
}

/* if a header that ends at r3 ends past the packet (-EBADMSG): goto @label */
static void jmp_if_past_end(struct cg *g, int label)
{
	E(I_LDX(BPF_W, BPF_REG_1, R_CTX, offsetof(struct __sk_buff, len)));
	cgfw_em_jmp_reg(g->em, BPF_JGT, BPF_REG_3, BPF_REG_1, label);
}

/* IPv6 extension headers walked, at most this many (ipv6_find_hdr()) */
#define IPV6_MAX_EXTHDRS 8

/* the prologue's labels, shared by its parts */
struct prologue {
	int ipv4, ipv6;
	int body;		/* the values are known: on to the rules */
	int v6_unspec;		/* IPv6 headers not walked: no layer 4 */
	int v6_done;		/* S + 16 layer 4, S + 24 its offset */
};

/* nft_set_pktinfo_ipv4: a later fragment has no transport header */
static void prologue_ipv4(struct cg *g, const struct prologue *l)
{
	int S = STK_SCRATCH;

	cgfw_em_bind(g->em, l->ipv4);
	E(I_MOV64_IMM(R_NFPROTO, NFPROTO_IPV4));
	cgfw_cg_load_bytes(g, -1, 0, S, 20);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, l->body);
	E(I_LDX(BPF_B, R_L4PROTO, BPF_REG_10, S + 9));
	E(I_LDX(BPF_H, BPF_REG_3, BPF_REG_10, S + 6));
	E(I_BE(BPF_REG_3, 16));
	E(I_ALU64_IMM(BPF_AND, BPF_REG_3, 0x1fff));	/* IP_OFFSET */
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_3, 0, l->body);
	E(I_LDX(BPF_B, R_THOFF, BPF_REG_10, S + 0));
	E(I_ALU64_IMM(BPF_AND, R_THOFF, 0xf));
	E(I_ALU64_IMM(BPF_LSH, R_THOFF, 2));
	cgfw_em_goto(g->em, l->body);
}

/*
 * One step of the walk: the header of type S + 16 at offset S + 24, if
 * an extension header, is stepped over (a later fragment ends the walk);
 * any other header is the layer 4 one.
 */
static void prologue_exthdr(struct cg *g, const struct prologue *l)
{
	int hdr = cgfw_em_label(g->em), frag = cgfw_em_label(g->em);
	int next = cgfw_em_label(g->em);
	int S = STK_SCRATCH;

	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, S + 16));
	jmp_if_exthdr(g, BPF_REG_2, hdr, false);
	cgfw_em_goto(g->em, l->v6_done);	/* not one walked over */

	/* its first 4 bytes at S; r4 = its length */
	cgfw_em_bind(g->em, hdr);
	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, S + 24));
	cgfw_cg_load_bytes(g, BPF_REG_2, 0, S, 4);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, l->v6_unspec);
	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, S + 16));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, 44, frag);
	E(I_LDX(BPF_B, BPF_REG_4, BPF_REG_10, S + 1));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_4, 1));
	E(I_ALU64_IMM(BPF_LSH, BPF_REG_4, 3));
	cgfw_em_goto(g->em, next);

	cgfw_em_bind(g->em, frag);
	E(I_LDX(BPF_H, BPF_REG_3, BPF_REG_10, S + 2));
	E(I_BE(BPF_REG_3, 16));
	E(I_ALU64_IMM(BPF_AND, BPF_REG_3, 0xfff8));
	E(I_MOV64_IMM(BPF_REG_4, 8));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_3, 0, next);
	/*
	 * A later fragment: the protocol after it, if that is not
	 * an extension header, and no transport header.
	 */
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_10, S));
	jmp_if_ext_hdr(g, BPF_REG_2, l->v6_unspec);
	E(I_MOV64_REG(R_L4PROTO, BPF_REG_2));
	cgfw_em_goto(g->em, l->body);

	cgfw_em_bind(g->em, next);	/* -EBADMSG past the packet's end */
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_10, S));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_2, S + 16));
	E(I_LDX(BPF_DW, BPF_REG_3, BPF_REG_10, S + 24));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_3, BPF_REG_4));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_3, S + 24));
	jmp_if_past_end(g, l->v6_unspec);
}

/*
 * ipv6_find_hdr(skb, &thoff, -1, &fragoff, &flags), flags IP6_FH_F_AUTH
 * (nft_set_pktinfo_ipv6()): the next header at S + 16, its offset at
 * S + 24. Hop-by-hop, routing and destination options are (len + 1) * 8
 * bytes, a fragment header 8; AH ends the walk. Its end, where the
 * headers cannot be walked, falls through to @l->body.
 */
static void prologue_ipv6(struct cg *g, const struct prologue *l)
{
	int S = STK_SCRATCH, i;

	cgfw_em_bind(g->em, l->ipv6);
	E(I_MOV64_IMM(R_NFPROTO, NFPROTO_IPV6));
	cgfw_cg_load_bytes(g, -1, 6, S, 1);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, l->body);
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_10, S));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_2, S + 16));	/* nexthdr */
	E(I_ST(BPF_DW, BPF_REG_10, S + 24, 40));		/* offset */
	for (i = 0; i < IPV6_MAX_EXTHDRS; i++)
		prologue_exthdr(g, l);
	/* more extension headers than walked: treated as unknown */
	cgfw_em_goto(g->em, l->v6_unspec);

	cgfw_em_bind(g->em, l->v6_done);
	E(I_LDX(BPF_DW, R_L4PROTO, BPF_REG_10, S + 16));
	E(I_LDX(BPF_DW, R_THOFF, BPF_REG_10, S + 24));
	cgfw_em_goto(g->em, l->body);
	cgfw_em_bind(g->em, l->v6_unspec);
	E(I_MOV64_IMM(R_L4PROTO, -1));
	E(I_MOV64_IMM(R_THOFF, -1));
}

/*
 * Every path of the prologue ends here with its own known values, and
 * the verifier would check each of them through every rule. Passed
 * through skb->cb (saved and restored around the program by the
 * kernel), the values become unknown to it, and with the scratch
 * space zeroed all paths continue as one state.
 */
static void prologue_one_state(struct cg *g)
{
	int S = STK_SCRATCH, i;

	E(I_STX(BPF_W, R_CTX, R_NFPROTO, offsetof(struct __sk_buff, cb[0])));
	E(I_STX(BPF_W, R_CTX, R_THOFF, offsetof(struct __sk_buff, cb[1])));
	E(I_STX(BPF_W, R_CTX, R_L4PROTO, offsetof(struct __sk_buff, cb[2])));
	E(I_MOV64_IMM(BPF_REG_1, 0));	/* for the blocks (cgfw_cg_block()) */
	E(I_STX(BPF_W, R_CTX, BPF_REG_1, offsetof(struct __sk_buff, cb[3])));
	for (i = 0; i < 8; i++)
		E(I_ST(BPF_DW, BPF_REG_10, S + i * 8, 0));
	E(I_LDX(BPF_W, R_NFPROTO, R_CTX, offsetof(struct __sk_buff, cb[0])));
	E(I_LDX(BPF_W, R_THOFF, R_CTX, offsetof(struct __sk_buff, cb[1])));
	E(I_LDX(BPF_W, R_L4PROTO, R_CTX, offsetof(struct __sk_buff, cb[2])));
	/* cb holds 32 bits: -1 comes back as 0xffffffff */
	E(I_ALU64_IMM(BPF_LSH, R_THOFF, 32));
	E(I_ALU64_IMM(BPF_ARSH, R_THOFF, 32));
	E(I_ALU64_IMM(BPF_LSH, R_L4PROTO, 32));
	E(I_ALU64_IMM(BPF_ARSH, R_L4PROTO, 32));
}

/*
 * nft_set_pktinfo_ipv4/ipv6: the layer 4 protocol and where its header
 * is. An IPv4 later fragment has a protocol but no transport header; an
 * IPv6 packet whose headers cannot be walked has neither.
 */
static void gen_prologue(struct cg *g)
{
	struct prologue l;
	int i;

	l.ipv4 = cgfw_em_label(g->em);
	l.ipv6 = cgfw_em_label(g->em);
	l.body = cgfw_em_label(g->em);
	l.v6_unspec = cgfw_em_label(g->em);
	l.v6_done = cgfw_em_label(g->em);
	cgfw_em_note(g->em, "prologue: packet family, layer 4 protocol, transport header");
	E(I_MOV64_REG(R_CTX, BPF_REG_1));
	if (g->count_calls) {	/* the CPU whose counters count (gen_count()) */
		E(I_CALL(BPF_FUNC_get_smp_processor_id));
		E(I_STX(BPF_W, R_CTX, BPF_REG_0,
			offsetof(struct __sk_buff, cb[4])));
	}
	for (i = 0; i < 8; i++)	/* nft's registers start out zero here */
		E(I_ST(BPF_DW, BPF_REG_10, STK_REGS + i * 8, 0));
	E(I_MOV64_IMM(R_NFPROTO, 0));
	E(I_MOV64_IMM(R_THOFF, -1));
	E(I_MOV64_IMM(R_L4PROTO, -1));
	E(I_LDX(BPF_W, BPF_REG_2, R_CTX, offsetof(struct __sk_buff, protocol)));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, __builtin_bswap16(ETH_P_IP),
			l.ipv4);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, __builtin_bswap16(ETH_P_IPV6),
			l.ipv6);
	cgfw_em_goto(g->em, l.body);

	prologue_ipv4(g, &l);
	prologue_ipv6(g, &l);
	cgfw_em_bind(g->em, l.body);
	prologue_one_state(g);
}

/* ---- expressions ---- */

static const void *attr_data(struct nftnl_expr *e, uint16_t attr,
			     uint32_t *len)
{
	const void *d = nftnl_expr_get(e, attr, len);

	if (!d)
		*len = 0;
	return d;
}

/*
 * r@dst = r@src, as a value of its own to the verifier. A branch on
 * R_THOFF or R_L4PROTO itself teaches the verifier their range, which it
 * then carries from rule to rule: the rules after one that tested them
 * are walked again for each range learnt (three times over on access
 * lists). A branch on a copy teaches it only the copy's. The copy made
 * by a move alone is linked to its source; any operation but an
 * addition unlinks it.
 */
static void copy_unlinked(struct cg *g, int dst, int src)
{
	E(I_MOV64_REG(dst, src));
	E(I_ALU64_IMM(BPF_OR, dst, 0));
}

/* bpf_skb_load_bytes(): reads beyond the linear area too */
static void gen_payload_helper(struct cg *g, bool th, uint32_t off,
			       uint32_t len, int dst, int brk)
{
	cgfw_cg_load_bytes(g, th ? R_THOFF : -1, off, dst, len);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, brk);
}

/*
 * Straight from the packet when the bytes are in its linear area (no
 * helper call); through the helper otherwise. The helper's path comes
 * first in the code, so that the verifier walks it first: the bytes it
 * leaves on the stack are of any value to the verifier, and the direct
 * path, which leaves a known load there, then meets an equal state at
 * @done and stops. The other way round, both paths would be walked
 * through the rest of the rule, and each load after doubles them again.
 */
static void gen_payload_direct(struct cg *g, bool th, uint32_t off,
			       uint32_t len, int dst, int brk)
{
	int slow = cgfw_em_label(g->em), done = cgfw_em_label(g->em);
	int fast = cgfw_em_label(g->em);
	static const int size[17] = { [1] = BPF_B, [2] = BPF_H, [4] = BPF_W,
				      [16] = BPF_W };
	uint32_t i;

	/* the verifier wants the offset bounded well below 64k (r5: above) */
	if (th)
		cgfw_em_jmp_imm(g->em, BPF_JGT, BPF_REG_5, 0x7fff, slow);
	E(I_LDX(BPF_W, BPF_REG_2, R_CTX, offsetof(struct __sk_buff, data)));
	E(I_LDX(BPF_W, BPF_REG_3, R_CTX,
		offsetof(struct __sk_buff, data_end)));
	if (th)
		E(I_ALU64_REG(BPF_ADD, BPF_REG_2, BPF_REG_5));
	if (off)
		E(I_ALU64_IMM(BPF_ADD, BPF_REG_2, off));
	E(I_MOV64_REG(BPF_REG_4, BPF_REG_2));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_4, len));
	cgfw_em_jmp_reg(g->em, BPF_JLE, BPF_REG_4, BPF_REG_3, fast);
	cgfw_em_bind(g->em, slow);
	gen_payload_helper(g, th, off, len, dst, brk);
	cgfw_em_goto(g->em, done);
	cgfw_em_bind(g->em, fast);
	for (i = 0; i < len; i += len < 4 ? len : 4) {
		E(I_LDX(size[len], BPF_REG_1, BPF_REG_2, i));
		E(I_STX(size[len], BPF_REG_10, BPF_REG_1, dst + i));
	}
	cgfw_em_bind(g->em, done);
}

static void gen_payload(struct cg *g, struct nftnl_expr *e, int brk)
{
	uint32_t base = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE);
	uint32_t off = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET);
	uint32_t len = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN);
	int dst;

	if (nftnl_expr_is_set(e, NFTNL_EXPR_PAYLOAD_SREG)) {
		cgfw_cg_refuse(g, "payload statements change the packet (a CGROUP_SKB program may not)");
		return;
	}
	/*
	 * At egress a packet has no link layer header yet (it is built at
	 * the device): nft_payload_eval() breaks, whatever the match.
	 */
	if (base == NFT_PAYLOAD_LL_HEADER && g->p->dir == CGFW_EGRESS) {
		cgfw_em_goto(g->em, brk);
		return;
	}
	if (base != NFT_PAYLOAD_NETWORK_HEADER &&
	    base != NFT_PAYLOAD_TRANSPORT_HEADER) {
		cgfw_cg_refuse(g, "%s header payload%s: a CGROUP_SKB program sees the packet from its network header on",
			       base == NFT_PAYLOAD_LL_HEADER ? "link layer" :
							       "inner",
			       base == NFT_PAYLOAD_LL_HEADER ? " at ingress" : "");
		return;
	}
	dst = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_DREG), len);
	if (!dst)
		return;
	if (len % 4)	/* nft zeroes the last, partial word */
		E(I_ST(BPF_W, BPF_REG_10, dst + len / 4 * 4, 0));
	if (base == NFT_PAYLOAD_TRANSPORT_HEADER) {	/* none: break */
		copy_unlinked(g, BPF_REG_5, R_THOFF);
		cgfw_em_jmp_imm(g->em, BPF_JSLT, BPF_REG_5, 0, brk);
	}
	if (len == 1 || len == 2 || len == 4 || len == 16)
		gen_payload_direct(g, base == NFT_PAYLOAD_TRANSPORT_HEADER,
				   off, len, dst, brk);
	else
		gen_payload_helper(g, base == NFT_PAYLOAD_TRANSPORT_HEADER,
				   off, len, dst, brk);
}

/*
 * One step of ipv6_find_hdr(skb, &off, @type, NULL, NULL): the header at
 * S + 24 of type S + 16 is @type (r5: its offset, on to @found), or an
 * extension header to step over, or the end of the walk (@none).
 */
static void find_ipv6_step(struct cg *g, uint8_t type, int found, int none)
{
	int frag = cgfw_em_label(g->em), ah = cgfw_em_label(g->em);
	int next = cgfw_em_label(g->em), hdr = cgfw_em_label(g->em);
	int S = STK_SCRATCH;

	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, S + 16));
	E(I_LDX(BPF_DW, BPF_REG_5, BPF_REG_10, S + 24));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, type, found);
	jmp_if_exthdr(g, BPF_REG_2, hdr, true);
	cgfw_em_goto(g->em, none);
	cgfw_em_bind(g->em, hdr);
	cgfw_cg_load_bytes(g, BPF_REG_5, 0, S, 4);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, none);
	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, S + 16));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, 51, ah);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, 44, frag);
	E(I_LDX(BPF_B, BPF_REG_4, BPF_REG_10, S + 1));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_4, 1));
	E(I_ALU64_IMM(BPF_LSH, BPF_REG_4, 3));
	cgfw_em_goto(g->em, next);
	cgfw_em_bind(g->em, ah);
	E(I_LDX(BPF_B, BPF_REG_4, BPF_REG_10, S + 1));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_4, 2));
	E(I_ALU64_IMM(BPF_LSH, BPF_REG_4, 2));
	cgfw_em_goto(g->em, next);
	cgfw_em_bind(g->em, frag);	/* after a later fragment: -ENOENT */
	E(I_LDX(BPF_H, BPF_REG_3, BPF_REG_10, S + 2));
	E(I_BE(BPF_REG_3, 16));
	E(I_ALU64_IMM(BPF_AND, BPF_REG_3, 0xfff8));
	E(I_MOV64_IMM(BPF_REG_4, 8));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_3, 0, none);
	cgfw_em_bind(g->em, next);	/* -EBADMSG past the packet's end */
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_10, S));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_2, S + 16));
	E(I_LDX(BPF_DW, BPF_REG_3, BPF_REG_10, S + 24));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_3, BPF_REG_4));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_3, S + 24));
	jmp_if_past_end(g, none);
}

/*
 * nft_exthdr_ipv6_eval(): the header of @type found as the prologue
 * walks them (at most IPV6_MAX_EXTHDRS), r5 its offset at @found; else
 * @none; not IPv6: @brk, even for exists and missing. The scratch it used
 * is zeroed by the caller on every path (zero_scratch()), so that the
 * paths meet as one state again.
 */
static void find_ipv6_hdr(struct cg *g, uint8_t type, int found, int none,
			  int brk)
{
	int S = STK_SCRATCH, walked = cgfw_em_label(g->em), i;

	cgfw_em_jmp_imm(g->em, BPF_JNE, R_NFPROTO, NFPROTO_IPV6, brk);
	cgfw_cg_load_bytes(g, -1, 6, S, 1);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, none);
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_10, S));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_2, S + 16));	/* nexthdr */
	E(I_ST(BPF_DW, BPF_REG_10, S + 24, 40));		/* offset */
	for (i = 0; i < IPV6_MAX_EXTHDRS; i++)
		find_ipv6_step(g, type, walked, none);
	cgfw_em_goto(g->em, none);
	/*
	 * an extension header found is read as ipv6_find_hdr() reads it
	 * (routing and fragment headers: 4 bytes; -EBADMSG if cut short)
	 */
	cgfw_em_bind(g->em, walked);
	if (type == 0 || type == 43 || type == 44 || type == 51 ||
	    type == 60) {
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_5, S + 24));
		cgfw_cg_load_bytes(g, BPF_REG_5, 0, S,
				   type == 43 || type == 44 ? 4 : 2);
		cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, none);
		E(I_LDX(BPF_DW, BPF_REG_5, BPF_REG_10, S + 24));
	}
	cgfw_em_goto(g->em, found);
}

/* TCP options: at most 40 bytes of them, each at least one byte long */
#define TCP_OPT_STEPS 40

/*
 * One option of nft_exthdr_tcp_eval()'s walk: the option at r3 (of the
 * header at S, r4 its length - 1) is @type (r5 its length, on to
 * @found), or the next one. Its length without a branch: 1 for EOL, NOP
 * or a length of 0 (optlen()), else its length byte.
 */
static void tcpopt_step(struct cg *g, uint8_t type, int found, int none)
{
	cgfw_em_jmp_reg(g->em, BPF_JGE, BPF_REG_3, BPF_REG_4, none);
	E(I_MOV64_REG(BPF_REG_1, BPF_REG_10));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, STK_SCRATCH));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_3));
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_1, 0));	/* kind */
	E(I_LDX(BPF_B, BPF_REG_5, BPF_REG_1, 1));	/* length */
	E(I_MOV64_REG(BPF_REG_0, BPF_REG_2));		/* kind > NOP */
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_0, 254));
	E(I_ALU64_IMM(BPF_RSH, BPF_REG_0, 8));
	E(I_MOV64_REG(BPF_REG_1, BPF_REG_5));		/* length != 0 */
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, 255));
	E(I_ALU64_IMM(BPF_RSH, BPF_REG_1, 8));
	E(I_ALU64_REG(BPF_AND, BPF_REG_0, BPF_REG_1));
	E(I_ALU64_IMM(BPF_SUB, BPF_REG_5, 1));		/* 1 + t (len - 1) */
	E(I_ALU64_REG(BPF_MUL, BPF_REG_5, BPF_REG_0));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_5, 1));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, type, found);
	E(I_ALU64_REG(BPF_ADD, BPF_REG_3, BPF_REG_5));
}

/*
 * nft_exthdr_tcp_eval(): the TCP header whole (its data offset, 20 to 60
 * bytes) at S, its options walked to the first of @type; r3 its offset,
 * r5 its length at @found, checked as nft checks them (within the
 * header, @need bytes long at least); else @none.
 */
static void find_tcpopt(struct cg *g, uint8_t type, uint32_t need, int found,
			int none)
{
	int S = STK_SCRATCH, walk_found = cgfw_em_label(g->em), i;

	copy_unlinked(g, BPF_REG_1, R_L4PROTO);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_1, IPPROTO_TCP, none);
	copy_unlinked(g, BPF_REG_1, R_THOFF);
	cgfw_em_jmp_imm(g->em, BPF_JSLT, BPF_REG_1, 0, none);
	cgfw_cg_load_bytes(g, R_THOFF, 0, S, 20);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, none);
	E(I_LDX(BPF_B, BPF_REG_4, BPF_REG_10, S + 12));
	E(I_ALU64_IMM(BPF_RSH, BPF_REG_4, 4));
	E(I_ALU64_IMM(BPF_LSH, BPF_REG_4, 2));
	cgfw_em_jmp_imm(g->em, BPF_JLT, BPF_REG_4, 20, none);
	E(I_MOV64_REG(BPF_REG_1, R_CTX));
	E(I_MOV64_REG(BPF_REG_2, R_THOFF));
	E(I_MOV64_REG(BPF_REG_3, BPF_REG_10));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_3, S));
	E(I_CALL(BPF_FUNC_skb_load_bytes));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, none);
	E(I_LDX(BPF_B, BPF_REG_4, BPF_REG_10, S + 12));
	E(I_ALU64_IMM(BPF_RSH, BPF_REG_4, 4));
	E(I_ALU64_IMM(BPF_LSH, BPF_REG_4, 2));
	cgfw_em_jmp_imm(g->em, BPF_JLT, BPF_REG_4, 20, none);	/* for the verifier */
	E(I_ALU64_IMM(BPF_SUB, BPF_REG_4, 1));
	E(I_MOV64_IMM(BPF_REG_3, 20));
	for (i = 0; i < TCP_OPT_STEPS; i++)
		tcpopt_step(g, type, walk_found, none);
	cgfw_em_goto(g->em, none);
	cgfw_em_bind(g->em, walk_found);
	E(I_MOV64_REG(BPF_REG_1, BPF_REG_3));		/* i + optl <= len */
	E(I_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_5));
	E(I_ALU64_IMM(BPF_SUB, BPF_REG_1, 1));
	cgfw_em_jmp_reg(g->em, BPF_JGT, BPF_REG_1, BPF_REG_4, none);
	cgfw_em_jmp_imm(g->em, BPF_JLT, BPF_REG_5, need, none);
	cgfw_em_goto(g->em, found);
}

/* SCTP chunks walked, at most (nft walks to the end of the packet) */
#define SCTP_CHUNK_STEPS 16

/*
 * One chunk of nft_exthdr_sctp_eval()'s walk: the chunk at S + 24 is
 * @type (r5 its offset, r4 its length, on to @found), or the walk goes
 * on past it (padded to 4 bytes) while in the packet.
 */
static void sctp_step(struct cg *g, uint8_t type, int found, int none)
{
	int S = STK_SCRATCH;

	E(I_LDX(BPF_DW, BPF_REG_2, BPF_REG_10, S + 24));
	cgfw_cg_load_bytes(g, BPF_REG_2, 0, S, 4);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, none);
	E(I_LDX(BPF_H, BPF_REG_4, BPF_REG_10, S + 2));
	E(I_BE(BPF_REG_4, 16));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_4, 0, none);
	E(I_LDX(BPF_DW, BPF_REG_5, BPF_REG_10, S + 24));
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_10, S));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, type, found);
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_4, 3));		/* SCTP_PAD4() */
	E(I_ALU64_IMM(BPF_AND, BPF_REG_4, ~3));
	E(I_ALU64_REG(BPF_ADD, BPF_REG_5, BPF_REG_4));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_5, S + 24));
	E(I_LDX(BPF_W, BPF_REG_1, R_CTX, offsetof(struct __sk_buff, len)));
	cgfw_em_jmp_reg(g->em, BPF_JGE, BPF_REG_5, BPF_REG_1, none);
}

/*
 * nft_exthdr_sctp_eval(): the chunks after SCTP's common header, to the
 * first of @type (at most SCTP_CHUNK_STEPS of them); r5 its offset, r4
 * its length at @found, else @none. A field must lie within the chunk
 * and the chunk within the packet (checked by the caller with @need).
 */
static void find_sctp_chunk(struct cg *g, uint8_t type, uint32_t need,
			    bool present, int found, int none)
{
	int S = STK_SCRATCH, walk_found = cgfw_em_label(g->em), i;
	int thoff = cgfw_em_label(g->em), v4 = cgfw_em_label(g->em);

	copy_unlinked(g, BPF_REG_1, R_L4PROTO);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_1, IPPROTO_SCTP, none);
	copy_unlinked(g, BPF_REG_1, R_THOFF);
	cgfw_em_jmp_imm(g->em, BPF_JSGE, BPF_REG_1, 0, thoff);
	/*
	 * a later fragment: nft walks from the offset its packet info holds
	 * anyway (no fragment check here): IPv4's header length, IPv6's 0
	 */
	E(I_MOV64_IMM(BPF_REG_1, 0));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, R_NFPROTO, NFPROTO_IPV6, thoff);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, R_NFPROTO, NFPROTO_IPV4, v4);
	cgfw_em_goto(g->em, none);
	cgfw_em_bind(g->em, v4);
	cgfw_cg_load_bytes(g, -1, 0, S, 1);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, none);
	E(I_LDX(BPF_B, BPF_REG_1, BPF_REG_10, S));
	E(I_ALU64_IMM(BPF_AND, BPF_REG_1, 0xf));
	E(I_ALU64_IMM(BPF_LSH, BPF_REG_1, 2));
	cgfw_em_bind(g->em, thoff);
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, 12));		/* sizeof(sctphdr) */
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, S + 24));
	for (i = 0; i < SCTP_CHUNK_STEPS; i++)
		sctp_step(g, type, walk_found, none);
	cgfw_em_goto(g->em, none);
	cgfw_em_bind(g->em, walk_found);
	if (!present) {
		cgfw_em_jmp_imm(g->em, BPF_JLT, BPF_REG_4, need, none);
		E(I_MOV64_REG(BPF_REG_1, BPF_REG_5));
		E(I_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_4));
		E(I_LDX(BPF_W, BPF_REG_2, R_CTX, offsetof(struct __sk_buff, len)));
		cgfw_em_jmp_reg(g->em, BPF_JGT, BPF_REG_1, BPF_REG_2, none);
	}
	cgfw_em_goto(g->em, found);
}

/* The scratch a header walk used, zeroed: its paths meet as one state. */
static void zero_scratch(struct cg *g)
{
	int i;

	for (i = 0; i < 8; i++)
		E(I_ST(BPF_DW, BPF_REG_10, STK_SCRATCH + 8 * i, 0));
}

/*
 * exthdr: IPv6 extension headers (hbh, rt, frag, dst, mh, and the rest
 * nft names by number), TCP options and SCTP chunks: a field of the
 * first of its type, or whether there is one (exists, missing). IPv4
 * options are refused.
 */
static void gen_exthdr(struct cg *g, struct nftnl_expr *e, int brk)
{
	uint32_t op = nftnl_expr_is_set(e, NFTNL_EXPR_EXTHDR_OP) ?
		      nftnl_expr_get_u32(e, NFTNL_EXPR_EXTHDR_OP) :
		      NFT_EXTHDR_OP_IPV6;
	uint32_t off = nftnl_expr_get_u32(e, NFTNL_EXPR_EXTHDR_OFFSET);
	uint32_t len = nftnl_expr_get_u32(e, NFTNL_EXPR_EXTHDR_LEN);
	uint32_t flags = nftnl_expr_get_u32(e, NFTNL_EXPR_EXTHDR_FLAGS);
	uint8_t type = nftnl_expr_get_u8(e, NFTNL_EXPR_EXTHDR_TYPE);
	int found = cgfw_em_label(g->em), none = cgfw_em_label(g->em);
	int done = cgfw_em_label(g->em), fail = cgfw_em_label(g->em);
	int out = cgfw_em_label(g->em), dst;

	/* a write (SREG) or "reset tcp option" (neither register) */
	if (nftnl_expr_is_set(e, NFTNL_EXPR_EXTHDR_SREG) ||
	    !nftnl_expr_is_set(e, NFTNL_EXPR_EXTHDR_DREG)) {
		cgfw_cg_refuse(g, "exthdr statements change the packet (a CGROUP_SKB program may not)");
		return;
	}
	if (op != NFT_EXTHDR_OP_IPV6 && op != NFT_EXTHDR_OP_TCPOPT &&
	    op != NFT_EXTHDR_OP_SCTP) {
		cgfw_cg_refuse(g, "%s are not compiled to BPF yet (IPv6 extension headers, TCP options and SCTP chunks are)",
			       op == NFT_EXTHDR_OP_IPV4 ? "IPv4 options" :
			       "these extension headers");
		return;
	}
	dst = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_EXTHDR_DREG),
		      flags & NFT_EXTHDR_F_PRESENT ? 1 : len);
	if (!dst)
		return;
	if (op == NFT_EXTHDR_OP_TCPOPT) {
		find_tcpopt(g, type, off + len, found, none);
		cgfw_em_bind(g->em, found);	/* r2: where its field is */
		E(I_MOV64_REG(BPF_REG_2, BPF_REG_3));
		E(I_ALU64_REG(BPF_ADD, BPF_REG_2, R_THOFF));
		E(I_MOV64_REG(BPF_REG_5, BPF_REG_2));
	} else if (op == NFT_EXTHDR_OP_SCTP) {
		find_sctp_chunk(g, type, off + len,
				flags & NFT_EXTHDR_F_PRESENT, found, none);
		cgfw_em_bind(g->em, found);	/* r5: the chunk's offset */
	} else {
		find_ipv6_hdr(g, type, found, none, fail);
		cgfw_em_bind(g->em, found);	/* r5: the header's offset */
	}
	if (flags & NFT_EXTHDR_F_PRESENT) {	/* 1 or 0 in the register */
		E(I_ST(BPF_W, BPF_REG_10, dst, 1));
		cgfw_em_goto(g->em, done);
		cgfw_em_bind(g->em, none);
		E(I_ST(BPF_W, BPF_REG_10, dst, 0));
	} else {
		if (len % 4)	/* nft zeroes the last, partial word */
			E(I_ST(BPF_W, BPF_REG_10, dst + len / 4 * 4, 0));
		cgfw_cg_load_bytes(g, BPF_REG_5, off, dst, len);
		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, done);
		cgfw_em_bind(g->em, none);
		cgfw_em_goto(g->em, fail);
	}
	cgfw_em_bind(g->em, done);
	zero_scratch(g);
	cgfw_em_goto(g->em, out);
	cgfw_em_bind(g->em, fail);	/* NFT_BREAK */
	zero_scratch(g);
	cgfw_em_goto(g->em, brk);
	cgfw_em_bind(g->em, out);
}

/* A meta key as nft writes it (src/meta.c), for messages. */
static const char *meta_key_name(uint32_t key)
{
	static const char *const names[] = {
		[NFT_META_LEN] = "length", [NFT_META_PROTOCOL] = "protocol",
		[NFT_META_PRIORITY] = "priority", [NFT_META_MARK] = "mark",
		[NFT_META_IIF] = "iif", [NFT_META_OIF] = "oif",
		[NFT_META_IIFNAME] = "iifname", [NFT_META_OIFNAME] = "oifname",
		[NFT_META_IIFTYPE] = "iiftype", [NFT_META_OIFTYPE] = "oiftype",
		[NFT_META_SKUID] = "skuid", [NFT_META_SKGID] = "skgid",
		[NFT_META_NFTRACE] = "nftrace",
		[NFT_META_RTCLASSID] = "rtclassid",
		[NFT_META_SECMARK] = "secmark", [NFT_META_NFPROTO] = "nfproto",
		[NFT_META_L4PROTO] = "l4proto",
		[NFT_META_BRI_IIFNAME] = "ibrname",
		[NFT_META_BRI_OIFNAME] = "obrname",
		[NFT_META_PKTTYPE] = "pkttype", [NFT_META_CPU] = "cpu",
		[NFT_META_IIFGROUP] = "iifgroup",
		[NFT_META_OIFGROUP] = "oifgroup",
		[NFT_META_CGROUP] = "cgroup", [NFT_META_PRANDOM] = "random",
		[NFT_META_SECPATH] = "secpath", [NFT_META_IIFKIND] = "iifkind",
		[NFT_META_OIFKIND] = "oifkind",
		[NFT_META_BRI_IIFPVID] = "ibrpvid",
		[NFT_META_BRI_IIFVPROTO] = "ibrvproto",
		[NFT_META_TIME_NS] = "time", [NFT_META_TIME_DAY] = "day",
		[NFT_META_TIME_HOUR] = "hour", [NFT_META_SDIF] = "sdif",
		[NFT_META_SDIFNAME] = "sdifname",
	};
	static __thread char other[32];

	if (key < ARRAY_SIZE(names) && names[key])
		return names[key];
	snprintf(other, sizeof(other), "key %u", key);
	return other;
}

/*
 * meta pkttype (nft_meta_get_eval_pkttype_lo()): skb->pkt_type, but a
 * multicast packet looped back (PACKET_LOOPBACK) is multicast, or for
 * IPv4 broadcast when its destination is not a multicast address.
 */
static void gen_pkttype(struct cg *g, int off, int brk)
{
	int done = cgfw_em_label(g->em), v6 = cgfw_em_label(g->em);

	E(I_ST(BPF_W, BPF_REG_10, off, 0));	/* nft_reg_store8() */
	E(I_LDX(BPF_W, BPF_REG_1, R_CTX, offsetof(struct __sk_buff, pkt_type)));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_1, PACKET_LOOPBACK, done);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, R_NFPROTO, NFPROTO_IPV6, v6);
	cgfw_em_jmp_imm(g->em, BPF_JNE, R_NFPROTO, NFPROTO_IPV4, brk);
	cgfw_cg_load_bytes(g, -1, 16, STK_SCRATCH, 1);	/* daddr's first byte */
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, brk);
	E(I_LDX(BPF_B, BPF_REG_2, BPF_REG_10, STK_SCRATCH));
	E(I_ST(BPF_W, BPF_REG_10, STK_SCRATCH, 0));
	E(I_ALU64_IMM(BPF_AND, BPF_REG_2, 0xf0));
	E(I_MOV64_IMM(BPF_REG_1, PACKET_MULTICAST));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, 0xe0, done);
	E(I_MOV64_IMM(BPF_REG_1, PACKET_BROADCAST));
	cgfw_em_goto(g->em, done);
	cgfw_em_bind(g->em, v6);
	E(I_MOV64_IMM(BPF_REG_1, PACKET_MULTICAST));
	cgfw_em_bind(g->em, done);
	E(I_STX(BPF_B, BPF_REG_10, BPF_REG_1, off));
}

/*
 * meta time, day and hour: nft reads the wall clock (ktime_get_real_ns()),
 * a program can read TAI (bpf_ktime_get_tai_ns()), the wall clock plus
 * the kernel's TAI offset. That offset, and the kernel's time zone that
 * meta day counts in (sys_tz, set by settimeofday()), are read here and
 * built into the program: a leap second or a new sys_tz takes an apply
 * again. meta hour is the second of the day in UTC (nft converts the
 * user's local time), meta day the weekday from sys_tz, 0 for Sunday.
 */
static void gen_time(struct cg *g, uint32_t key, uint32_t dreg)
{
	struct timezone tz = { 0 };
	struct timex tx = { 0 };
	int off = cgfw_cg_reg(g, dreg, key == NFT_META_TIME_NS ? 8 : 4);
	long tai = adjtimex(&tx) < 0 ? 0 : tx.tai;

	if (!off)
		return;
	if (syscall(SYS_gettimeofday, NULL, &tz))
		tz.tz_minuteswest = 0;
	E(I_CALL(BPF_FUNC_ktime_get_tai_ns));
	if (tai) {
		cgfw_em_ld_imm64(g->em, BPF_REG_1, 0, tai * 1000000000ULL);
		E(I_ALU64_REG(BPF_SUB, BPF_REG_0, BPF_REG_1));
	}
	if (key == NFT_META_TIME_NS) {
		E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, off));
		return;
	}
	E(I_ALU64_IMM(BPF_DIV, BPF_REG_0, 1000000000));
	if (key == NFT_META_TIME_HOUR) {
		E(I_ALU64_IMM(BPF_MOD, BPF_REG_0, 86400));
	} else {
		E(I_ALU64_IMM(BPF_SUB, BPF_REG_0, 60 * tz.tz_minuteswest));
		E(I_ALU64_IMM(BPF_DIV, BPF_REG_0, 86400));
		E(I_ALU64_IMM(BPF_ADD, BPF_REG_0, 4));	/* 1970-01-01: a Thursday */
		E(I_ALU64_IMM(BPF_MOD, BPF_REG_0, 7));
	}
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_0, off));
}

/*
 * The device the hook has (the input device at ingress, the output one at
 * egress, skb->dev at both), as nft_meta_get_eval() reads nft_in() or
 * nft_out(): its name up to its NUL, zero-padded, its type or its group.
 * skb->dev is read through the kernel's BTF (bpf/compile/kbtf.c); the
 * name by bpf_probe_read_kernel_str() into registers made zero first.
 */
static void gen_device(struct cg *g, uint32_t key, uint32_t dreg, int brk)
{
	bool name = key == NFT_META_IIFNAME || key == NFT_META_OIFNAME;
	bool type = key == NFT_META_IIFTYPE || key == NFT_META_OIFTYPE;
	const struct cgfw_kbtf *kb;
	int err, off, i, done;

	kb = cgfw_kbtf(&err);
	if (!kb) {
		cgfw_cg_refuse(g, "meta %s reads the device from the kernel's sk_buff, through BTF, %s",
			       meta_key_name(key),
			       err == -ENOENT ? "which this kernel has not (/sys/kernel/btf/vmlinux)" :
			       err == -EPERM ? "which this kernel does not let a program do (no JIT for kfuncs, or lockdown)" :
					       "which this kernel has without the names it needs");
		return;
	}
	off = cgfw_cg_reg(g, dreg, name ? 16 : 4);
	if (!off)
		return;
	E(I_MOV64_REG(BPF_REG_1, R_CTX));
	E(((struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
			      .src_reg = BPF_PSEUDO_KFUNC_CALL,
			      .imm = kb->cast_to_kern_ctx }));
	E(I_LDX(BPF_DW, BPF_REG_3, BPF_REG_0, kb->skb_dev));
	if (!name) {	/* no device: no type or group, the rule ends */
		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_3, 0, brk);
		E(I_LDX(type ? BPF_H : BPF_W, BPF_REG_1, BPF_REG_3,
			type ? kb->dev_type : kb->dev_group));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, off));
		return;
	}
	for (i = 0; i < 16; i += 4)	/* no device: an empty name */
		E(I_ST(BPF_W, BPF_REG_10, off + i, 0));
	done = cgfw_em_label(g->em);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_3, 0, done);
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_3, kb->dev_name));
	E(I_MOV64_REG(BPF_REG_1, BPF_REG_10));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, off));
	E(I_MOV64_IMM(BPF_REG_2, 16));
	E(I_CALL(BPF_FUNC_probe_read_kernel_str));
	cgfw_em_bind(g->em, done);
}

/*
 * A device the hook has not (the input device at egress, the output one
 * at ingress), as nft_meta_get_eval() has it where nft_in() or nft_out()
 * is NULL: its index 0, its name empty, no type or group (the rule ends).
 * False for the device the hook has.
 */
static bool gen_no_device(struct cg *g, struct nftnl_expr *e, uint32_t key,
			  int brk)
{
	bool egress = g->p->dir == CGFW_EGRESS;
	uint32_t dreg = nftnl_expr_get_u32(e, NFTNL_EXPR_META_DREG);
	int off, n;

	switch (key) {
	case NFT_META_IIF:
	case NFT_META_IIFNAME:
	case NFT_META_IIFTYPE:
	case NFT_META_IIFGROUP:
		if (!egress)
			return false;
		break;
	case NFT_META_OIF:
	case NFT_META_OIFNAME:
	case NFT_META_OIFTYPE:
	case NFT_META_OIFGROUP:
		if (egress)
			return false;
		break;
	default:
		return false;
	}
	if (key == NFT_META_IIFTYPE || key == NFT_META_OIFTYPE ||
	    key == NFT_META_IIFGROUP || key == NFT_META_OIFGROUP) {
		/* the rule ends here (the emitter drops what follows) */
		cgfw_em_goto(g->em, brk);
		return true;
	}
	n = key == NFT_META_IIFNAME || key == NFT_META_OIFNAME ? 16 : 4;
	off = cgfw_cg_reg(g, dreg, n);
	for (; off && n > 0; n -= 4)
		E(I_ST(BPF_W, BPF_REG_10, off + n - 4, 0));
	return true;
}

static void gen_meta(struct cg *g, struct nftnl_expr *e, int brk)
{
	uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY);
	int off, field = -1;

	if (nftnl_expr_is_set(e, NFTNL_EXPR_META_SREG)) {
		off = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_META_SREG), 4);
		if (key == NFT_META_MARK)
			field = offsetof(struct __sk_buff, mark);
		else if (key == NFT_META_PRIORITY)
			field = offsetof(struct __sk_buff, priority);
		else
			cgfw_cg_refuse(g, "meta statement %u (only mark and priority can be set)",
			       key);
		if (!off || field < 0)
			return;
		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, off));
		E(I_STX(BPF_W, R_CTX, BPF_REG_1, field));
		return;
	}
	if (key == NFT_META_TIME_NS || key == NFT_META_TIME_DAY ||
	    key == NFT_META_TIME_HOUR) {
		gen_time(g, key, nftnl_expr_get_u32(e, NFTNL_EXPR_META_DREG));
		return;
	}
	if (gen_no_device(g, e, key, brk))
		return;
	switch (key) {
	case NFT_META_IIFNAME:
	case NFT_META_OIFNAME:
	case NFT_META_IIFTYPE:
	case NFT_META_OIFTYPE:
	case NFT_META_IIFGROUP:
	case NFT_META_OIFGROUP:
		gen_device(g, key, nftnl_expr_get_u32(e, NFTNL_EXPR_META_DREG),
			   brk);
		return;
	}
	off = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_META_DREG), 4);
	if (!off)
		return;
	switch (key) {
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
	case NFT_META_OIF:	/* the other one: gen_no_device() */
		field = offsetof(struct __sk_buff, ifindex);
		break;
	case NFT_META_NFPROTO:
		E(I_STX(BPF_W, BPF_REG_10, R_NFPROTO, off));
		return;
	case NFT_META_L4PROTO:
		copy_unlinked(g, BPF_REG_1, R_L4PROTO);
		cgfw_em_jmp_imm(g->em, BPF_JSLT, BPF_REG_1, 0, brk);
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, off));
		return;
	case NFT_META_SKUID:
		E(I_MOV64_REG(BPF_REG_1, R_CTX));
		E(I_CALL(BPF_FUNC_get_socket_uid));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_0, off));
		return;
	case NFT_META_CPU:
		E(I_CALL(BPF_FUNC_get_smp_processor_id));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_0, off));
		return;
	case NFT_META_PRANDOM:
		E(I_CALL(BPF_FUNC_get_prandom_u32));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_0, off));
		return;
	case NFT_META_PKTTYPE:
		gen_pkttype(g, off, brk);
		return;
	default:
		cgfw_cg_refuse(g, "meta %s has no CGROUP_SKB equivalent yet",
			       meta_key_name(key));
		return;
	}
	E(I_LDX(BPF_W, BPF_REG_1, R_CTX, field));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, off));
}

/*
 * socket mark and wildcard: the packet's full socket (nft_socket_eval()
 * breaks without one, as for a request or time-wait socket), its mark,
 * or whether it is bound to no address (0.0.0.0 or ::, by its family).
 */
static void gen_socket_field(struct cg *g, uint32_t key, int off, int brk)
{
	int v6, done, bound;
	size_t i;

	E(I_LDX(BPF_DW, BPF_REG_1, R_CTX, offsetof(struct __sk_buff, sk)));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, 0, brk);
	E(I_CALL(BPF_FUNC_sk_fullsock));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, brk);
	if (key == NFT_SOCKET_MARK) {
		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_0,
			offsetof(struct bpf_sock, mark)));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, off));
		return;
	}
	v6 = cgfw_em_label(g->em);
	done = cgfw_em_label(g->em);
	bound = cgfw_em_label(g->em);
	E(I_LDX(BPF_W, BPF_REG_2, BPF_REG_0, offsetof(struct bpf_sock, family)));
	E(I_MOV64_IMM(BPF_REG_1, 1));	/* another family: 0, as nft */
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_2, AF_INET6, v6);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_2, AF_INET, done);
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_0, offsetof(struct bpf_sock, src_ip4)));
	cgfw_em_goto(g->em, done);
	cgfw_em_bind(g->em, v6);
	E(I_MOV64_IMM(BPF_REG_1, 0));
	for (i = 0; i < 4; i++) {
		E(I_LDX(BPF_W, BPF_REG_3, BPF_REG_0,
			offsetof(struct bpf_sock, src_ip6) + 4 * i));
		E(I_ALU64_REG(BPF_OR, BPF_REG_1, BPF_REG_3));
	}
	cgfw_em_bind(g->em, done);
	/* 1 when bound to no address: r2 = (r1 == 0) */
	E(I_MOV64_IMM(BPF_REG_2, 0));
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_1, 0, bound);
	E(I_MOV64_IMM(BPF_REG_2, 1));
	cgfw_em_bind(g->em, bound);
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_2, off));
}

static void gen_socket(struct cg *g, struct nftnl_expr *e, int brk)
{
	uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_SOCKET_KEY);
	int off;

	if (key == NFT_SOCKET_TRANSPARENT) {
		cgfw_cg_refuse(g, "socket transparent (a CGROUP_SKB program cannot read IP_TRANSPARENT)");
		return;
	}
	if (key != NFT_SOCKET_CGROUPV2 && key != NFT_SOCKET_MARK &&
	    key != NFT_SOCKET_WILDCARD) {
		cgfw_cg_refuse(g, "socket key %u", key);
		return;
	}
	off = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_SOCKET_DREG),
		      key == NFT_SOCKET_CGROUPV2 ? 8 : 4);
	if (!off)
		return;
	if (key != NFT_SOCKET_CGROUPV2) {
		gen_socket_field(g, key, off, brk);
		return;
	}
	E(I_MOV64_REG(BPF_REG_1, R_CTX));
	E(I_MOV64_IMM(BPF_REG_2,
		      nftnl_expr_get_u32(e, NFTNL_EXPR_SOCKET_LEVEL)));
	E(I_CALL(BPF_FUNC_skb_ancestor_cgroup_id));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, brk);	/* no such level */
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_0, off));
	E(I_ALU64_IMM(BPF_RSH, BPF_REG_0, 32));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_0, off + 4));
}

/*
 * numgen random mod M offset O: reciprocal_scale(get_random_u32(), M) + O,
 * as nft_ng_random_eval(). numgen inc: the next of 0 .. M - 1 after the
 * last packet's, over every CPU, starting at 0 (nft_ng_inc_gen(), from
 * M - 1): a count each expression keeps (an atomic add), modulo M.
 */
static void gen_numgen(struct cg *g, struct nftnl_expr *e, int brk)
{
	uint32_t mod = nftnl_expr_get_u32(e, NFTNL_EXPR_NG_MODULUS);
	uint32_t offset = nftnl_expr_get_u32(e, NFTNL_EXPR_NG_OFFSET);
	uint64_t zero = 0;
	uint32_t slot;
	int off;

	off = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_NG_DREG), 4);
	if (!off || !mod) {
		if (off)
			cgfw_cg_refuse(g, "numgen with a modulus of 0");
		return;
	}
	if (nftnl_expr_get_u32(e, NFTNL_EXPR_NG_TYPE) == NFT_NG_RANDOM) {
		E(I_CALL(BPF_FUNC_get_prandom_u32));
		cgfw_em_ld_imm64(g->em, BPF_REG_1, 0, mod);
		E(I_ALU64_REG(BPF_MUL, BPF_REG_0, BPF_REG_1));
		E(I_ALU64_IMM(BPF_RSH, BPF_REG_0, 32));
	} else {
		slot = cgfw_cg_state_slot(g, &g->bt->numgens, e, "cgfw_numgen",
					  &zero, 8, false);
		if (g->err)
			return;
		E(I_ST(BPF_W, BPF_REG_10, STK_SCRATCH, slot));
		cgfw_cg_map_lookup(g, g->bt->numgens.map, STK_SCRATCH);
		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, brk);
		E(I_MOV64_IMM(BPF_REG_1, 1));
		E(((struct bpf_insn){ .code = BPF_STX | BPF_DW | BPF_ATOMIC,
		   .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1,
		   .imm = BPF_ADD | BPF_FETCH }));
		cgfw_em_ld_imm64(g->em, BPF_REG_2, 0, mod);
		E(I_ALU64_REG(BPF_MOD, BPF_REG_1, BPF_REG_2));
		E(I_MOV64_REG(BPF_REG_0, BPF_REG_1));
	}
	if (offset) {
		cgfw_em_ld_imm64(g->em, BPF_REG_1, 0, offset);
		E(I_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1));
	}
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_0, off));
}

/* r@dst = the @len (<= 8) bytes at fp+@off as a big-endian number */
static void load_be(struct cg *g, int dst, int off, uint32_t len)
{
	uint32_t i;

	E(I_MOV64_IMM(dst, 0));
	for (i = 0; i < len; i++) {
		E(I_ALU64_IMM(BPF_LSH, dst, 8));
		E(I_LDX(BPF_B, BPF_REG_5, BPF_REG_10, off + i));
		E(I_ALU64_REG(BPF_OR, dst, BPF_REG_5));
	}
}

static uint64_t be_value(const uint8_t *d, uint32_t len)
{
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < len; i++)
		v = v << 8 | d[i];
	return v;
}

/* Equality of @len bytes at fp+@off with @data: equal -> fall through. */
static void gen_equal(struct cg *g, int off, const uint8_t *data,
		      uint32_t len, int differ)
{
	uint32_t i, rest;

	for (i = 0; i * 4 < len; i++) {
		rest = len - i * 4;
		if (rest >= 4) {
			E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, off + i * 4));
			jmp_u64(g, BPF_JNE, BPF_REG_1, word_of(data, len, i),
				differ);
		} else {
			/* compare only the bytes that are there */
			E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, off + i * 4));
			E(I_ALU64_IMM(BPF_AND, BPF_REG_1,
				      (int32_t)((1u << (rest * 8)) - 1)));
			jmp_u64(g, BPF_JNE, BPF_REG_1, word_of(data, len, i),
				differ);
		}
	}
}

static void gen_cmp(struct cg *g, struct nftnl_expr *e, int brk)
{
	uint32_t op = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP), len;
	const uint8_t *data = attr_data(e, NFTNL_EXPR_CMP_DATA, &len);
	int off = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_SREG), len);
	int match;

	if (!off)
		return;
	switch (op) {
	case NFT_CMP_EQ:
		gen_equal(g, off, data, len, brk);
		return;
	case NFT_CMP_NEQ:
		match = cgfw_em_label(g->em);
		gen_equal(g, off, data, len, match);
		cgfw_em_goto(g->em, brk);
		cgfw_em_bind(g->em, match);
		return;
	}
	if (len > 8) {
		cgfw_cg_refuse(g, "ordered comparison of %u bytes (at most 8)", len);
		return;
	}
	load_be(g, BPF_REG_1, off, len);
	switch (op) {	/* break when the comparison does not hold */
	case NFT_CMP_LT:
		jmp_u64(g, BPF_JGE, BPF_REG_1, be_value(data, len), brk);
		break;
	case NFT_CMP_LTE:
		jmp_u64(g, BPF_JGT, BPF_REG_1, be_value(data, len), brk);
		break;
	case NFT_CMP_GT:
		jmp_u64(g, BPF_JLE, BPF_REG_1, be_value(data, len), brk);
		break;
	case NFT_CMP_GTE:
		jmp_u64(g, BPF_JLT, BPF_REG_1, be_value(data, len), brk);
		break;
	default:
		cgfw_cg_refuse(g, "cmp operation %u", op);
	}
}

static void gen_range(struct cg *g, struct nftnl_expr *e, int brk)
{
	uint32_t op = nftnl_expr_get_u32(e, NFTNL_EXPR_RANGE_OP);
	uint32_t flen, tlen;
	const uint8_t *from = attr_data(e, NFTNL_EXPR_RANGE_FROM_DATA, &flen);
	const uint8_t *to = attr_data(e, NFTNL_EXPR_RANGE_TO_DATA, &tlen);
	int off = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_RANGE_SREG),
			  flen);
	int out = op == NFT_RANGE_EQ ? brk : cgfw_em_label(g->em);

	if (!off)
		return;
	if (flen != tlen || flen > 8) {
		cgfw_cg_refuse(g, "range over %u bytes (at most 8)", flen);
		return;
	}
	load_be(g, BPF_REG_1, off, flen);
	jmp_u64(g, BPF_JLT, BPF_REG_1, be_value(from, flen), out);
	jmp_u64(g, BPF_JGT, BPF_REG_1, be_value(to, flen), out);
	if (op == NFT_RANGE_NEQ) {	/* inside the range: no match */
		cgfw_em_goto(g->em, brk);
		cgfw_em_bind(g->em, out);
	}
}

static void gen_bitwise(struct cg *g, struct nftnl_expr *e)
{
	uint32_t op = nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_OP);
	uint32_t len = nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_LEN);
	int src = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_SREG),
			  len);
	int dst = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_DREG),
			  len);
	uint32_t i, n = (len + 3) / 4, mlen, xlen, dlen, shift;
	const uint8_t *mask, *xor, *data;

	if (!src || !dst)
		return;
	if (op == NFT_BITWISE_BOOL) {
		mask = attr_data(e, NFTNL_EXPR_BITWISE_MASK, &mlen);
		xor = attr_data(e, NFTNL_EXPR_BITWISE_XOR, &xlen);
		for (i = 0; i < n; i++) {
			E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, src + i * 4));
			E(I_ALU32_IMM(BPF_AND, BPF_REG_1,
				      i * 4 < mlen ? word_of(mask, mlen, i) : 0));
			E(I_ALU32_IMM(BPF_XOR, BPF_REG_1,
				      i * 4 < xlen ? word_of(xor, xlen, i) : 0));
			E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, dst + i * 4));
		}
		return;
	}
	data = attr_data(e, NFTNL_EXPR_BITWISE_DATA, &dlen);
	shift = dlen >= 4 ? word_of(data, dlen, 0) : 0;
	if ((op != NFT_BITWISE_LSHIFT && op != NFT_BITWISE_RSHIFT) ||
	    !shift || shift >= 32) {
		cgfw_cg_refuse(g, "bitwise operation %u by %u", op, shift);
		return;
	}
	/* host-order 32-bit words, the carry moving between them */
	E(I_MOV64_IMM(BPF_REG_3, 0));	/* carry */
	for (i = 0; i < n; i++) {
		uint32_t w = op == NFT_BITWISE_LSHIFT ? n - 1 - i : i;

		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, src + w * 4));
		E(I_MOV64_REG(BPF_REG_2, BPF_REG_1));
		if (op == NFT_BITWISE_LSHIFT) {
			E(I_ALU32_IMM(BPF_LSH, BPF_REG_1, shift));
			E(I_ALU32_IMM(BPF_RSH, BPF_REG_2, 32 - shift));
		} else {
			E(I_ALU32_IMM(BPF_RSH, BPF_REG_1, shift));
			E(I_ALU32_IMM(BPF_LSH, BPF_REG_2, 32 - shift));
		}
		E(I_ALU64_REG(BPF_OR, BPF_REG_1, BPF_REG_3));
		E(I_MOV64_REG(BPF_REG_3, BPF_REG_2));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, dst + w * 4));
	}
}

static void gen_byteorder(struct cg *g, struct nftnl_expr *e)
{
	uint32_t len = nftnl_expr_get_u32(e, NFTNL_EXPR_BYTEORDER_LEN);
	uint32_t size = nftnl_expr_get_u32(e, NFTNL_EXPR_BYTEORDER_SIZE);
	int src = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_BYTEORDER_SREG),
			  len);
	int dst = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_BYTEORDER_DREG),
			  len);
	uint32_t i;

	if (!src || !dst)
		return;
	if ((size != 2 && size != 4 && size != 8) || len % size) {
		cgfw_cg_refuse(g, "byteorder of %u-byte elements over %u bytes", size,
		       len);
		return;
	}
	/* hton and ntoh are the same swap on a little-endian host */
	for (i = 0; i < len / size; i++) {
		int s = src + i * size, d = dst + i * size;

		if (size == 8) {
			/* two words, swapped and exchanged */
			E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, s));
			E(I_LDX(BPF_W, BPF_REG_2, BPF_REG_10, s + 4));
			E(I_BE(BPF_REG_1, 32));
			E(I_BE(BPF_REG_2, 32));
			E(I_STX(BPF_W, BPF_REG_10, BPF_REG_2, d));
			E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, d + 4));
		} else {
			E(I_LDX(size == 4 ? BPF_W : BPF_H, BPF_REG_1,
				BPF_REG_10, s));
			E(I_BE(BPF_REG_1, size * 8));
			E(I_STX(size == 4 ? BPF_W : BPF_H, BPF_REG_10,
				BPF_REG_1, d));
		}
	}
}

static size_t set_map_index(struct cg *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->bt->n_maps; i++)
		if (g->bt->maps[i].set &&
		    !strcmp(nftnl_set_get_str(g->bt->maps[i].set->nl,
					      NFTNL_SET_NAME), name))
			return i;
	return SIZE_MAX;
}

static void gen_chain(struct cg *g, const struct ir_chain *c, int ret,
		      int accept);

static const struct ir_chain *chain_by_index(const struct cg *g, uint32_t i)
{
	const struct ir_chain *c;

	list_for_each_entry(c, &g->bt->table->chains, list)
		if (!i--)
			return c;
	return NULL;
}

/*
 * A verdict. @next: the next rule; @ret: where "return" goes; @accept:
 * the end of the base chain.
 */
void cgfw_cg_verdict(struct cg *g, int32_t verdict, const char *chain,
		     int next, int ret, int accept)
{
	const struct ir_chain *target;
	const struct ir_rule *rule = g->rule;
	const struct ir_chain *self = g->chain;

	switch (verdict) {
	case NF_ACCEPT:
		cgfw_em_goto(g->em, accept);
		return;
	case NF_DROP:
		E(I_MOV64_IMM(BPF_REG_0, 0));
		E(I_EXIT());
		return;
	case NFT_CONTINUE:
		cgfw_em_goto(g->em, next);
		return;
	case NFT_RETURN:
		cgfw_em_goto(g->em, ret);
		return;
	case NFT_JUMP:
	case NFT_GOTO:
		target = chain ? cgfw_ir_find_chain(g->bt->table, chain) : NULL;
		if (!target || target->base) {
			cgfw_cg_refuse(g, "jump to chain '%s'", chain ? chain : "?");
			return;
		}
		if (g->depth >= CGFW_CG_MAX_JUMPS) {
			cgfw_cg_refuse(g, "jumps nested deeper than %d",
				       CGFW_CG_MAX_JUMPS);
			return;
		}
		g->depth++;
		cgfw_em_note(g->em, "%s %s", verdict == NFT_JUMP ? "jump" : "goto",
			     chain);
		/* jump: back to the next rule; goto: to our caller */
		gen_chain(g, target, verdict == NFT_JUMP ? next : ret, accept);
		g->depth--;
		g->chain = self;
		g->rule = rule;
		return;
	}
	cgfw_cg_refuse(g, "verdict %d", verdict);
}

/*
 * One case per distinct { verdict, chain } of @n values (each @stride
 * s32 long, verdict and chain first); the value found is at scratch
 * +32 (verdict) and +36 (chain).
 */
static int cmp_case(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

static void gen_dispatch(struct cg *g, const int32_t *v, uint32_t stride,
			 uint32_t n, int brk, int ret, int accept)
{
	int32_t (*cases)[2] = calloc(n + 1, sizeof(*cases));
	uint32_t i, j, n_cases = 0;

	if (!cases) {
		g->err = -ENOMEM;
		return;
	}
	/* the distinct cases, in a stable order (map order is not) */
	for (i = 0; i < n; i++) {
		for (j = 0; j < n_cases; j++)
			if (cases[j][0] == v[i * stride] &&
			    cases[j][1] == v[i * stride + 1])
				break;
		if (j == n_cases) {
			cases[n_cases][0] = v[i * stride];
			cases[n_cases++][1] = v[i * stride + 1];
		}
	}
	qsort(cases, n_cases, sizeof(*cases), cmp_case);
	for (i = 0; i < n_cases; i++) {
		int other = cgfw_em_label(g->em);

		/* r1, r2 do not survive calls: reload them */
		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, STK_SCRATCH + 32));
		E(I_LDX(BPF_W, BPF_REG_2, BPF_REG_10, STK_SCRATCH + 36));
		cgfw_em_jmp32_imm(g->em, BPF_JNE, BPF_REG_1, cases[i][0], other);
		cgfw_em_jmp32_imm(g->em, BPF_JNE, BPF_REG_2, cases[i][1], other);
		cgfw_cg_verdict(g, cases[i][0],
			    cases[i][0] == NFT_JUMP || cases[i][0] == NFT_GOTO ?
			    chain_by_index(g, cases[i][1])->name : NULL,
			    brk, ret, accept);
		cgfw_em_goto(g->em, brk);
		cgfw_em_bind(g->em, other);
	}
	free(cases);
	cgfw_em_goto(g->em, brk);
}

/*
 * r0, an element found in map @m of a set with timeouts: to @expired if
 * it has (nft_set_elem_expired(): now at or past its expiry), else on,
 * with r0 as it was.
 */
static void gen_expired(struct cg *g, const struct bpf_map_spec *m,
			int expired)
{
	int live = cgfw_em_label(g->em);

	E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_0, m->time_off));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, 0, live);	/* never */
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, STK_TIME_ELEM));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_1, STK_TIME_NOW));
	E(I_CALL(BPF_FUNC_ktime_get_ns));
	E(I_LDX(BPF_DW, BPF_REG_1, BPF_REG_10, STK_TIME_NOW));
	cgfw_em_jmp_reg(g->em, BPF_JGE, BPF_REG_0, BPF_REG_1, expired);
	E(I_LDX(BPF_DW, BPF_REG_0, BPF_REG_10, STK_TIME_ELEM));
	cgfw_em_bind(g->em, live);
}

/*
 * load_be() of a field in nft's registers (@off a multiple of 4): 2 and
 * 4 bytes loaded whole and swapped, 8 as two words (the stack takes no
 * unaligned double word).
 */
static void load_be_reg(struct cg *g, int dst, int off, uint32_t len)
{
	switch (len) {
	case 2:
		E(I_LDX(BPF_H, dst, BPF_REG_10, off));
		E(I_BE(dst, 16));
		return;
	case 4:
		E(I_LDX(BPF_W, dst, BPF_REG_10, off));
		E(I_BE(dst, 32));
		return;
	case 8:
		E(I_LDX(BPF_W, dst, BPF_REG_10, off));
		E(I_BE(dst, 32));
		E(I_ALU64_IMM(BPF_LSH, dst, 32));
		E(I_LDX(BPF_W, BPF_REG_5, BPF_REG_10, off + 4));
		E(I_BE(BPF_REG_5, 32));
		E(I_ALU64_REG(BPF_OR, dst, BPF_REG_5));
		return;
	}
	load_be(g, dst, off, len);
}

/* To @out unless @lo <= the @len bytes at fp+@off <= @hi (big-endian). */
static void gen_in_range(struct cg *g, int off, const uint8_t *lo,
			 const uint8_t *hi, uint32_t len, int out)
{
	int lo_ok, hi_ok;

	if (len <= 8) {
		load_be_reg(g, BPF_REG_1, off, len);
		if (!memcmp(lo, hi, len)) {
			jmp_u64(g, BPF_JNE, BPF_REG_1, be_value(lo, len), out);
			return;
		}
		jmp_u64(g, BPF_JLT, BPF_REG_1, be_value(lo, len), out);
		jmp_u64(g, BPF_JGT, BPF_REG_1, be_value(hi, len), out);
		return;
	}
	/* two halves, the first 8 bytes deciding unless equal */
	lo_ok = cgfw_em_label(g->em);
	hi_ok = cgfw_em_label(g->em);
	load_be_reg(g, BPF_REG_1, off, 8);
	load_be_reg(g, BPF_REG_2, off + 8, len - 8);
	jmp_u64(g, BPF_JGT, BPF_REG_1, be_value(lo, 8), lo_ok);
	jmp_u64(g, BPF_JLT, BPF_REG_1, be_value(lo, 8), out);
	jmp_u64(g, BPF_JLT, BPF_REG_2, be_value(lo + 8, len - 8), out);
	cgfw_em_bind(g->em, lo_ok);
	jmp_u64(g, BPF_JLT, BPF_REG_1, be_value(hi, 8), hi_ok);
	jmp_u64(g, BPF_JGT, BPF_REG_1, be_value(hi, 8), out);
	jmp_u64(g, BPF_JGT, BPF_REG_2, be_value(hi + 8, len - 8), out);
	cgfw_em_bind(g->em, hi_ok);
}

/* Boxes in a row, one by one, past this many: said. */
#define CG_MANY_BOXES 256

/* Where a lookup goes on a hit: its verdict or data, for gen_boxes(). */
struct box_hit {
	int found;		/* a set's lookup: on here */
	int dreg, dst;		/* a map's: the verdict, or data to fp+dst */
	int brk, ret, accept;
};

/* Box @i of map @m holds the key: its verdict, or its data, or @found. */
static void box_hit(struct cg *g, const struct bpf_map_spec *m, uint32_t i,
		    const struct box_hit *h)
{
	const uint8_t *d = (const uint8_t *)m->values +
			   (size_t)i * m->value_size + m->data_off;
	int32_t v[2];
	uint32_t n, w;

	if (h->dreg == NFT_REG_VERDICT) {
		memcpy(v, d, sizeof(v));
		cgfw_cg_verdict(g, v[0], v[0] == NFT_JUMP || v[0] == NFT_GOTO ?
				chain_by_index(g, v[1])->name : NULL,
				h->brk, h->ret, h->accept);
		cgfw_em_goto(g->em, h->brk);
		return;
	}
	for (n = 0; h->dreg >= 0 && n < m->data_size; n += 4) {
		memcpy(&w, d + n, 4);
		E(I_ST(BPF_W, BPF_REG_10, h->dst + n, w));
	}
	cgfw_em_goto(g->em, h->found);
}

/*
 * A lookup in a set or map of intervals of concatenations (ip saddr .
 * tcp dport { 10.0.0.0/8 . 22-25 }): its boxes, fixed when the program
 * is made, each field of the key against the box's bounds, box after
 * box; at the first that holds it, box_hit(), else on.
 */
static void gen_boxes(struct cg *g, const struct bpf_map_spec *m, int key,
		      const struct box_hit *h)
{
	const uint8_t *flen, *lo, *hi;
	uint32_t n_f = 0, i, f, off;
	char at[CGFW_WHERE_MAX];
	int next;

	if (!cgfw_set_fields(m->set->nl, &flen, &n_f))
		return;	/* refused with the set (maps.c) */
	if (m->n_elems > CG_MANY_BOXES)
		cgfw_log(g->ctx, CGFW_LOG_WARN,
			 "%s: set '%s' has %u intervals of concatenations, which the bpf backend compares with a packet one by one in this rule; in a rule of matches, counters and a verdict, a lookup with == (not !=) becomes a tree",
			 cgfw_src_lines(&g->rs->src, g->rule->loc.line,
					g->rule->loc.line, at, sizeof(at)),
			 cgfw_ir_set_name(m->set), m->n_elems);
	for (i = 0; i < m->n_elems; i++) {
		lo = (const uint8_t *)m->keys + (size_t)i * m->key_size;
		hi = (const uint8_t *)m->values + (size_t)i * m->value_size;
		next = cgfw_em_label(g->em);
		for (f = 0, off = 0; f < n_f; off += (flen[f] + 3) / 4 * 4, f++)
			gen_in_range(g, key + off, lo + off, hi + off, flen[f],
				     next);
		box_hit(g, m, i, h);
		cgfw_em_bind(g->em, next);
	}
}

/* A lookup (@flags) in a set or map of boxes, its data to @dreg. */
static void gen_lookup_boxes(struct cg *g, const struct bpf_map_spec *m,
			     int key, uint32_t flags, int dreg, int brk,
			     int ret, int accept)
{
	struct box_hit h = {
		.found = flags & NFT_LOOKUP_F_INV ? brk : cgfw_em_label(g->em),
		.dreg = dreg, .brk = brk, .ret = ret, .accept = accept,
	};

	if (dreg >= 0 && dreg != NFT_REG_VERDICT) {
		h.dst = cgfw_cg_reg(g, dreg, m->data_size);
		if (!h.dst)
			return;
	}
	gen_boxes(g, m, key, &h);
	if (!(flags & NFT_LOOKUP_F_INV)) {
		cgfw_em_goto(g->em, brk);	/* in none of them */
		cgfw_em_bind(g->em, h.found);
	}
}

static void gen_lookup(struct cg *g, struct nftnl_expr *e, int brk, int ret,
		       int accept)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET);
	uint32_t flags = nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_FLAGS);
	size_t idx = set_map_index(g, name);
	struct bpf_map_spec *m;
	int key, dreg = -1;
	uint32_t n;

	if (idx == SIZE_MAX) {
		cgfw_cg_refuse(g, "set %s", name);
		return;
	}
	m = &g->bt->maps[idx];
	if (m->meter) {
		cgfw_cg_refuse(g, "a lookup in set %s, which a rule meters (nft runs the meter's statement on the element it finds)",
			       name);
		return;
	}
	if (nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_DREG))
		dreg = nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_DREG);
	key = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_SREG),
		      m->type == BPF_MAP_TYPE_LPM_TRIE ? m->key_size - 4 :
							 m->key_size);
	if (!key)
		return;
	if (m->boxes) {
		gen_lookup_boxes(g, m, key, flags, dreg, brk, ret, accept);
		return;
	}
	if (m->inline_only) {
		int found = cgfw_em_label(g->em);

		for (n = 0; n < m->n_elems; n++) {
			int other = cgfw_em_label(g->em);

			gen_equal(g, key, (uint8_t *)m->keys + n * m->key_size,
				  m->key_size, other);
			cgfw_em_goto(g->em, flags & NFT_LOOKUP_F_INV ? brk : found);
			cgfw_em_bind(g->em, other);
		}
		if (!(flags & NFT_LOOKUP_F_INV)) {
			cgfw_em_goto(g->em, brk);	/* none of them */
			cgfw_em_bind(g->em, found);
		}
		return;
	}
	if (m->type == BPF_MAP_TYPE_LPM_TRIE) {
		/* { u32 prefixlen; key } in the scratch space */
		E(I_ST(BPF_W, BPF_REG_10, STK_SCRATCH, (m->key_size - 4) * 8));
		for (n = 0; n < m->key_size - 4; n += 4) {
			E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, key + n));
			E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1,
				STK_SCRATCH + 4 + n));
		}
		key = STK_SCRATCH;
	}
	cgfw_cg_map_lookup(g, idx, key);
	if (flags & NFT_LOOKUP_F_INV && m->time_off) {
		int none = cgfw_em_label(g->em);

		cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, none);
		gen_expired(g, m, none);
		cgfw_em_goto(g->em, brk);
		cgfw_em_bind(g->em, none);
		return;
	}
	if (flags & NFT_LOOKUP_F_INV) {
		cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, brk);
		return;
	}
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, brk);
	if (m->time_off)
		gen_expired(g, m, brk);
	if (dreg < 0)
		return;
	if (dreg == NFT_REG_VERDICT) {
		/* value: { s32 verdict; u32 chain } */
		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_0, 0));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, STK_SCRATCH + 32));
		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_0, 4));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, STK_SCRATCH + 36));
		gen_dispatch(g, m->values, m->value_size / 4, m->n_elems, brk,
			     ret, accept);
		return;
	}
	key = cgfw_cg_reg(g, dreg, m->data_size);
	if (!key)
		return;
	for (n = 0; n < m->data_size; n += 4) {
		E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_0, n));
		E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, key + n));
	}
}

/*
 * "add @s { key timeout T }" and "update @s { ... }" on a set with
 * timeouts, as nft_dynset_eval() does them: a key not there, or there
 * and expired, goes in, to expire T (the rule's, else the set's; none:
 * never) from now; an update of one there that expires is given T again
 * from now, an add leaves it, as both leave one that never expires. One
 * that does not fit ends the rule.
 */
static void gen_dynset_time(struct cg *g, struct nftnl_expr *e, size_t idx,
			    int key, int brk)
{
	const struct bpf_map_spec *m = &g->bt->maps[idx];
	int insert = cgfw_em_label(g->em), done = cgfw_em_label(g->em);
	uint32_t n;

	E(I_CALL(BPF_FUNC_ktime_get_ns));
	E(I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, STK_TIME_NOW));
	cgfw_cg_map_lookup(g, idx, key);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, insert);
	gen_dynset_found(g, m, e, insert, done);
	cgfw_em_bind(g->em, insert);
	/* the value: no data, then struct cgfw_elem_time */
	for (n = 0; n < m->time_off; n += 8)
		E(I_ST(BPF_DW, BPF_REG_10, STK_SCRATCH + n, 0));
	gen_new_time(g, m, e, STK_SCRATCH + m->time_off);
	map_update(g, idx, key, STK_SCRATCH, BPF_ANY);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, brk);
	cgfw_em_bind(g->em, done);
}

/*
 * "add @s { key }", "update @s { key }" and "delete @s { key }" on a set
 * (not a map) with at most one statement: the key into the set's map,
 * or out of it. An add or update of a key already there leaves it; one
 * that does not fit (the set is full) ends the rule, as nft_dynset_eval()
 * breaks; a delete of a key not there does nothing. With timeouts,
 * gen_dynset_time(); with a statement, gen_meter().
 */
static void gen_dynset(struct cg *g, struct nftnl_expr *e, int brk)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_DYNSET_SET_NAME);
	uint32_t op = nftnl_expr_get_u32(e, NFTNL_EXPR_DYNSET_OP);
	size_t idx = set_map_index(g, name);
	const struct bpf_map_spec *m;
	struct nftnl_expr *stmt;
	bool several;
	int key;

	if (idx == SIZE_MAX) {
		cgfw_cg_refuse(g, "set %s", name);
		return;
	}
	m = &g->bt->maps[idx];
	stmt = cgfw_bpf_dynset_stmt(e, &several);
	if (nftnl_expr_is_set(e, NFTNL_EXPR_DYNSET_SREG_DATA) ||
	    (nftnl_expr_is_set(e, NFTNL_EXPR_DYNSET_TIMEOUT) &&
	     nftnl_expr_get_u64(e, NFTNL_EXPR_DYNSET_TIMEOUT) &&
	     !m->time_off) ||
	    several ||
	    (nftnl_expr_is_set(e, NFTNL_EXPR_DYNSET_FLAGS) &&
	     nftnl_expr_get_u32(e, NFTNL_EXPR_DYNSET_FLAGS)) ||
	    m->type != BPF_MAP_TYPE_HASH || m->inline_only) {
		cgfw_cg_refuse(g, "%s @%s with a map, a timeout or more than one statement",
			       op == NFT_DYNSET_OP_DELETE ? "delete" : "add",
			       name);
		return;
	}
	if (op != NFT_DYNSET_OP_DELETE && !stmt != !m->meter) {
		cgfw_cg_refuse(g, "set %s is metered by some rules and added to without a statement by others (its elements would differ from nft's)",
			       name);
		return;
	}
	if (stmt && m->n_elems) {
		cgfw_cg_refuse(g, "a meter of set %s, which has elements of its own (nft gives them no statement)",
			       name);
		return;
	}
	if (stmt && !same_stmt(stmt, m->meter)) {
		cgfw_cg_refuse(g, "set %s is a meter of another statement in another rule (its elements would differ from nft's)",
			       name);
		return;
	}
	key = cgfw_cg_reg(g, nftnl_expr_get_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY),
		      m->key_size);
	if (!key)
		return;
	if (op == NFT_DYNSET_OP_DELETE) {
		map_delete(g, idx, key);
		return;
	}
	if (stmt) {
		gen_meter(g, idx, key, e, stmt, brk);
		return;
	}
	if (m->time_off) {
		gen_dynset_time(g, e, idx, key, brk);
		return;
	}
	/* a set's value is one byte, 0 (maps.c) */
	E(I_ST(BPF_DW, BPF_REG_10, STK_SCRATCH, 0));
	map_update(g, idx, key, STK_SCRATCH, BPF_ANY);
	cgfw_em_jmp_imm(g->em, BPF_JNE, BPF_REG_0, 0, brk);
}

static void gen_immediate(struct cg *g, struct nftnl_expr *e, int next,
			  int ret, int accept)
{
	uint32_t dreg = nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG), len;
	const uint8_t *data;
	int off;

	if (dreg == NFT_REG_VERDICT) {
		cgfw_cg_verdict(g, nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT),
			    nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN) ?
			    nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN) : NULL,
			    next, ret, accept);
		return;
	}
	data = attr_data(e, NFTNL_EXPR_IMM_DATA, &len);
	off = cgfw_cg_reg(g, dreg, len);
	if (off)
		store_data(g, off, data, len);
}

static void gen_expr(struct cg *g, struct nftnl_expr *e, int next, int ret,
		     int accept)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	if (!strcmp(name, "payload"))
		gen_payload(g, e, next);
	else if (!strcmp(name, "meta"))
		gen_meta(g, e, next);
	else if (!strcmp(name, "cmp"))
		gen_cmp(g, e, next);
	else if (!strcmp(name, "range"))
		gen_range(g, e, next);
	else if (!strcmp(name, "bitwise"))
		gen_bitwise(g, e);
	else if (!strcmp(name, "byteorder"))
		gen_byteorder(g, e);
	else if (!strcmp(name, "lookup"))
		gen_lookup(g, e, next, ret, accept);
	else if (!strcmp(name, "immediate"))
		gen_immediate(g, e, next, ret, accept);
	else if (!strcmp(name, "counter"))
		gen_count(g, g->rule);
	else if (!strcmp(name, "quota"))
		gen_quota(g, e, next);
	else if (!strcmp(name, "limit"))
		gen_limit(g, e, next);
	else if (!strcmp(name, "socket"))
		gen_socket(g, e, next);
	else if (!strcmp(name, "numgen"))
		gen_numgen(g, e, next);
	else if (!strcmp(name, "objref"))
		gen_objref(g, e, next);
	else if (!strcmp(name, "log"))
		gen_log(g, e);
	else if (!strcmp(name, "dynset"))
		gen_dynset(g, e, next);
	else if (!strcmp(name, "exthdr"))
		gen_exthdr(g, e, next);
	else if (!strcmp(name, "ct"))
		cgfw_cg_ct(g, e, next);
	else
		cgfw_cg_refuse(g, "'%s' expressions are not compiled to BPF yet", name);
}

void cgfw_cg_rule(struct cg *g, const struct ir_rule *r, int ret, int accept)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r->nl);
	int next = cgfw_em_label(g->em);
	char at[CGFW_WHERE_MAX];
	struct nftnl_expr *e;

	if (!it) {
		g->err = -ENOMEM;
		return;
	}
	g->rule = r;
	if (r->loc.line)
		cgfw_em_note(g->em, "chain %s, rule at %s", g->chain->name,
			     cgfw_src_lines(&g->rs->src, r->loc.line, 0, at,
					    sizeof(at)));
	else
		cgfw_em_note(g->em, "chain %s, a rule", g->chain->name);
	while (!g->err && !g->em->err && (e = nftnl_expr_iter_next(it)))
		gen_expr(g, e, next, ret, accept);
	nftnl_expr_iter_destroy(it);
	cgfw_em_bind(g->em, next);
}

/* ---- blocks, for the verifier ---- */

/*
 * The verifier walks a program depth first: at a branch it cannot decide
 * it follows one way and keeps the other waiting on a stack of at most
 * 8,192 (BPF_COMPLEXITY_LIMIT_JMP_SEQ). In code rule by rule every check
 * that fails goes on to the next rule, and the walk goes on there while
 * the rule's other checks still wait: a chain of N rules of k checks keeps
 * about N * (k - 1) waiting, and past 8,192 the program is refused ("The
 * sequence of 8193 jumps is too complex"; about 1,600 rules of five
 * checks). So a long chain is cut into blocks of at most CG_BLOCK_JUMPS
 * jumps, each behind a branch on skb->cb[3], which is zero at run time but
 * unknown to the verifier (the prologue's): the walk passes from head to
 * head first, one waiting branch a block, then goes into the blocks from
 * the last, each ending at the next head already walked. At most one
 * block's checks wait at a time. A packet pays two instructions a block.
 */
#define CG_BLOCK_JUMPS 2048

/* Rules one by one, this many in a row or more: said (a packet pays each). */
#define CG_LONG_STRETCH 512

void cgfw_cg_blocks_init(struct cg *g, struct cg_blocks *b)
{
	memset(b, 0, sizeof(*b));
	b->start = g->em->n_fixups;
	b->next = -1;
}

/*
 * The classifier says when its tree is not bounded (cls_gen.c); a long
 * stretch of rules compiled one by one is said here, once a program.
 */
static void say_stretch(struct cg *g, struct cg_blocks *b)
{
	const struct ir_rule **told;
	size_t i, n = b->n_one;
	char at[CGFW_WHERE_MAX];

	b->n_one = 0;
	if (n < CG_LONG_STRETCH || g->err)
		return;
	for (i = 0; i < g->n_told; i++)
		if (g->told[i] == b->first)
			return;	/* a chain inlined at several jumps */
	told = realloc(g->told, (g->n_told + 1) * sizeof(*told));
	if (!told)
		return;
	g->told = told;
	g->told[g->n_told++] = b->first;
	cgfw_log(g->ctx, CGFW_LOG_WARN,
		 "%s: these %zu rules of chain '%s' are checked one by one (no 16 in a row alike that become a lookup or a tree): a packet that matches none of them pays for all %zu, and past about 8,000 such rules the kernel's verifier gives up. Rules that differ only in their values, next to each other, become a lookup or a tree; sets take many values in one rule",
		 cgfw_src_lines(&g->rs->src, b->first->loc.line,
				b->last->loc.line, at, sizeof(at)), n,
		 g->chain->name, n);
}

void cgfw_cg_block(struct cg *g, struct cg_blocks *b,
		   const struct ir_rule *one)
{
	int body;

	if (!one) {
		say_stretch(g, b);
	} else {
		if (!b->n_one++)
			b->first = one;
		b->last = one;
	}
	if (g->em->n_fixups - b->start < CG_BLOCK_JUMPS)
		return;
	if (b->next >= 0)
		cgfw_em_bind(g->em, b->next);
	body = cgfw_em_label(g->em);
	b->next = cgfw_em_label(g->em);
	b->start = g->em->n_fixups;
	cgfw_em_note(g->em, "chain %s: a block (for the verifier)",
		     g->chain->name);
	E(I_LDX(BPF_W, BPF_REG_1, R_CTX, offsetof(struct __sk_buff, cb[3])));
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_1, 0, body);
	cgfw_em_goto(g->em, b->next);
	cgfw_em_bind(g->em, body);
}

void cgfw_cg_blocks_end(struct cg *g, struct cg_blocks *b)
{
	say_stretch(g, b);
	if (b->next >= 0)
		cgfw_em_bind(g->em, b->next);
	b->next = -1;
}

/* ---- runs of rules that differ in one constant ---- */

/*
 * Rules alike but for the constant of one "cmp ==", with nothing after it
 * but a counter and a verdict that ends the chain, are one map lookup:
 * constant -> { rule, verdict, chain }. The expressions before the key
 * have no side effects, so evaluating them once for all the rules is the
 * same as once for each; the first rule with a constant wins, as in nft,
 * since its verdict ends the chain. Each rule keeps its counter.
 */
#define RUN_MIN 16	/* below this, comparisons are cheaper than a lookup */

struct shape {
	size_t n;		/* expressions */
	struct nftnl_expr *e[32];
	char text[32][256];	/* each, as text (the key's data left out) */
	int key;		/* the key cmp's index, -1: not a run rule */
	bool counter;
};

static bool pure(const char *name, struct nftnl_expr *e)
{
	if (!strcmp(name, "payload"))
		return !nftnl_expr_is_set(e, NFTNL_EXPR_PAYLOAD_SREG);
	if (!strcmp(name, "meta"))
		return !nftnl_expr_is_set(e, NFTNL_EXPR_META_SREG);
	return !strcmp(name, "cmp") || !strcmp(name, "range") ||
	       !strcmp(name, "bitwise") || !strcmp(name, "byteorder") ||
	       !strcmp(name, "socket");
}

static bool terminal(int32_t v)
{
	return v == NF_ACCEPT || v == NF_DROP || v == NFT_RETURN ||
	       v == NFT_GOTO;
}

static void shape_of(const struct ir_rule *r, struct shape *s)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r->nl);
	struct nftnl_expr *e;
	const char *name;
	size_t i, k;

	s->n = 0;
	s->key = -1;
	s->counter = false;
	while (it && (e = nftnl_expr_iter_next(it)) && s->n < 32)
		s->e[s->n++] = e;
	if (it)
		nftnl_expr_iter_destroy(it);
	if (s->n < 2 || s->n >= 32)
		return;
	/* ... cmp ==, [counter], immediate verdict */
	e = s->e[s->n - 1];
	if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "immediate") ||
	    nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG) != NFT_REG_VERDICT ||
	    !terminal(nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT)))
		return;
	k = s->n - 2;
	if (!strcmp(nftnl_expr_get_str(s->e[k], NFTNL_EXPR_NAME), "counter")) {
		s->counter = true;
		if (!k--)
			return;
	}
	e = s->e[k];
	if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "cmp") ||
	    nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP) != NFT_CMP_EQ)
		return;
	for (i = 0; i < k; i++) {
		name = nftnl_expr_get_str(s->e[i], NFTNL_EXPR_NAME);
		if (!pure(name, s->e[i]))
			return;
		snprintf(s->text[i], sizeof(s->text[i]), "%s ", name);
		nftnl_expr_snprintf(s->text[i] + strlen(s->text[i]),
				    sizeof(s->text[i]) - strlen(s->text[i]),
				    s->e[i], NFTNL_OUTPUT_DEFAULT, 0);
	}
	s->key = k;
}

/* Is @b a rule of the run that @a starts? */
static bool same_run(const struct shape *a, const struct shape *b)
{
	uint32_t la, lb;
	size_t i;

	if (b->key != a->key || b->n != a->n || b->counter != a->counter)
		return false;
	for (i = 0; i < (size_t)a->key; i++)
		if (strcmp(a->text[i], b->text[i]))
			return false;
	nftnl_expr_get(a->e[a->key], NFTNL_EXPR_CMP_DATA, &la);
	nftnl_expr_get(b->e[b->key], NFTNL_EXPR_CMP_DATA, &lb);
	return la == lb && la <= 16 &&
	       nftnl_expr_get_u32(a->e[a->key], NFTNL_EXPR_CMP_SREG) ==
	       nftnl_expr_get_u32(b->e[b->key], NFTNL_EXPR_CMP_SREG);
}

struct run_key {
	const void *key;
	size_t index;
	struct nftnl_expr *imm;
};

static int cmp_run_key(const void *a, const void *b, void *len)
{
	const struct run_key *x = a, *y = b;
	int d = memcmp(x->key, y->key, *(uint32_t *)len);

	return d ? d : (x->index > y->index) - (x->index < y->index);
}

/*
 * The map of a run: each constant, from the first rule with it, to
 * { verdict, chain, rule } (chain: a goto's target, as its place in the
 * table; rule: its index in the run). Its index in *@idx, the constant's
 * length in *@len; 0 or -ENOMEM.
 */
static int run_map(struct cg *g, const struct ir_rule **rules, size_t n,
		   const struct shape *s, struct shape *t, size_t *idx,
		   uint32_t *len)
{
	struct run_key *order = NULL;
	struct bpf_map_spec *m;
	int32_t value[3];
	size_t i;

	m = realloc(g->bt->maps, (g->bt->n_maps + 1) * sizeof(*m));
	if (!m)
		goto nomem;
	g->bt->maps = m;
	*idx = g->bt->n_maps++;
	m = &m[*idx];
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->type = BPF_MAP_TYPE_HASH;
	snprintf(m->name, sizeof(m->name), "cgfw_run");
	nftnl_expr_get(s->e[s->key], NFTNL_EXPR_CMP_DATA, len);
	m->key_size = *len;
	m->value_size = sizeof(value);
	m->max_entries = n;
	m->keys = calloc(n, *len);
	m->values = calloc(n, sizeof(value));
	if (!m->keys || !m->values)
		goto nomem;
	/* the first rule with a constant wins: sort, keep the lowest index */
	order = calloc(n, sizeof(*order));
	if (!order)
		goto nomem;
	for (i = 0; i < n; i++) {
		shape_of(rules[i], t);
		order[i].key = nftnl_expr_get(t->e[t->key], NFTNL_EXPR_CMP_DATA,
					      len);
		order[i].index = i;
		order[i].imm = t->e[t->n - 1];
	}
	qsort_r(order, n, sizeof(*order), cmp_run_key, len);
	for (i = 0; i < n; i++) {
		struct nftnl_expr *v = order[i].imm;

		if (i && !memcmp(order[i].key, order[i - 1].key, *len))
			continue;
		value[0] = nftnl_expr_get_u32(v, NFTNL_EXPR_IMM_VERDICT);
		value[1] = 0;
		if (value[0] == NFT_GOTO) {
			const struct ir_chain *c;
			const char *cn = nftnl_expr_get_str(v, NFTNL_EXPR_IMM_CHAIN);

			list_for_each_entry(c, &g->bt->table->chains, list) {
				if (!strcmp(c->name, cn))
					break;
				value[1]++;
			}
		}
		value[2] = order[i].index;
		memcpy((uint8_t *)m->keys + m->n_elems * *len, order[i].key,
		       *len);
		memcpy((uint8_t *)m->values + m->n_elems * sizeof(value), value,
		       sizeof(value));
		m->n_elems++;
	}
	free(order);
	return 0;
nomem:
	free(order);
	g->err = -ENOMEM;
	return -ENOMEM;
}

/*
 * The key register looked up in map @idx: a miss goes to @next, a hit's
 * { verdict, chain, rule } is copied to STK_SCRATCH + 32. False if the
 * register is refused.
 */
static bool run_lookup(struct cg *g, const struct shape *s, size_t idx,
		       uint32_t len, int next)
{
	int key;

	key = cgfw_cg_reg(g, nftnl_expr_get_u32(s->e[s->key], NFTNL_EXPR_CMP_SREG),
		      len);
	if (!key)
		return false;
	cgfw_cg_map_lookup(g, idx, key);
	cgfw_em_jmp_imm(g->em, BPF_JEQ, BPF_REG_0, 0, next);
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_0, 0));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, STK_SCRATCH + 32));
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_0, 4));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, STK_SCRATCH + 36));
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_0, 8));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, STK_SCRATCH + 40));
	return true;
}

/* The counter of the rule found: rule i of the run counts in slot base + i. */
static void run_count(struct cg *g, const struct ir_rule **rules, size_t n)
{
	int skip = cgfw_em_label(g->em), base = 0, j;
	size_t i;

	for (i = 0; i < n; i++) {
		g->rule = rules[i];
		j = cgfw_cg_add_slot(g, rules[i]);
		if (!i)
			base = j;
	}
	E(I_LDX(BPF_W, BPF_REG_1, BPF_REG_10, STK_SCRATCH + 40));
	E(I_ALU64_IMM(BPF_ADD, BPF_REG_1, base));
	E(I_STX(BPF_W, BPF_REG_10, BPF_REG_1, STK_SCRATCH));
	cgfw_cg_map_lookup(g, g->p->counters_map, STK_SCRATCH);
	cgfw_cg_count_value(g, skip);
	cgfw_em_bind(g->em, skip);
}

/*
 * The @n rules at @rules, a run: the expressions before the key once,
 * the lookup, the counter, the verdict found (gen_dispatch()).
 */
static void gen_run(struct cg *g, const struct ir_rule **rules, size_t n,
		    int ret, int accept)
{
	struct shape *s = calloc(1, sizeof(*s)), *t = calloc(1, sizeof(*t));
	int next = cgfw_em_label(g->em);
	struct bpf_map_spec *m;
	char at[CGFW_WHERE_MAX];
	size_t i, idx;
	uint32_t len;

	if (!s || !t) {
		g->err = -ENOMEM;
		goto out;
	}
	shape_of(rules[0], s);
	g->rule = rules[0];
	cgfw_em_note(g->em, "chain %s, rules at %s: %zu rules, one lookup",
		     g->chain->name,
		     cgfw_src_lines(&g->rs->src, rules[0]->loc.line,
				    rules[n - 1]->loc.line, at, sizeof(at)),
		     n);
	for (i = 0; i < (size_t)s->key; i++)
		gen_expr(g, s->e[i], next, ret, accept);
	if (run_map(g, rules, n, s, t, &idx, &len) ||
	    !run_lookup(g, s, idx, len, next))
		goto out;
	if (s->counter)
		run_count(g, rules, n);
	g->rule = rules[0];
	m = &g->bt->maps[idx];
	gen_dispatch(g, m->values, 3, m->n_elems, next, ret, accept);
	cgfw_em_bind(g->em, next);
out:
	free(s);
	free(t);
}

/* How many rules from @i on form a run (1: none). */
static size_t run_length(const struct ir_rule **rules, size_t n, size_t i)
{
	struct shape *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	size_t j = i + 1;

	if (!a || !b)
		goto out;
	shape_of(rules[i], a);
	if (a->key < 0)
		goto out;
	for (; j < n; j++) {
		shape_of(rules[j], b);
		if (!same_run(a, b))
			break;
	}
out:
	free(a);
	free(b);
	return j - i;
}

/* The rules of @c; its end, and "return", go to @ret. */
static void gen_chain(struct cg *g, const struct ir_chain *c, int ret,
		      int accept)
{
	const struct ir_rule *r, **rules = NULL;
	struct cg_blocks blocks;
	size_t n = 0, i, run;

	if (g->ext && g->ext->chain(g, c, ret, accept))
		return;	/* the extension's (the classifier, cls_gen.c) */
	list_for_each_entry(r, &c->rules, list)
		n++;
	rules = calloc(n + 1, sizeof(*rules));
	if (!rules) {
		g->err = -ENOMEM;
		return;
	}
	n = 0;
	list_for_each_entry(r, &c->rules, list)
		rules[n++] = r;
	cgfw_cg_blocks_init(g, &blocks);
	for (i = 0; i < n && !g->err; i += run) {
		g->chain = c;
		run = run_length(rules, n, i);
		/* a program may use 64 maps: keep a few for what follows */
		if (run >= RUN_MIN &&
		    cgfw_bt_maps_used(g->bt) < MAX_MAPS - 8) {	/* roughly */
			cgfw_cg_block(g, &blocks, NULL);
			gen_run(g, rules + i, run, ret, accept);
		} else {
			cgfw_cg_block(g, &blocks, rules[i]);
			cgfw_cg_rule(g, rules[i], ret, accept);
			run = 1;
		}
	}
	cgfw_cg_blocks_end(g, &blocks);
	g->chain = c;
	free(rules);
	cgfw_em_goto(g->em, ret);
}

static void gen_base_chain(struct cg *g, const struct ir_chain *c)
{
	int policy = cgfw_em_label(g->em), end = cgfw_em_label(g->em);

	cgfw_em_note(g->em, "chain %s: hook %s cgroup \"%s\" priority %d", c->name,
		     cgfw_dir_str(c->dir), c->cgroup.path, c->priority);
	gen_chain(g, c, policy, end);
	cgfw_em_bind(g->em, policy);
	g->chain = c;
	g->rule = NULL;
	cgfw_em_note(g->em, "chain %s: policy %s", c->name,
		     c->policy == NF_DROP ? "drop" : "accept");
	gen_count(g, NULL);
	if (c->policy == NF_DROP) {
		E(I_MOV64_IMM(BPF_REG_0, 0));
		E(I_EXIT());
	}
	cgfw_em_bind(g->em, end);
}

int cgfw_bpf_generate(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		      struct bpf_table *bt, struct bpf_prog_spec *p,
		      const struct cgfw_bpf_ext *ext)
{
	struct cg state = {
		.ctx = ctx, .rs = rs, .bt = bt, .p = p, .em = &p->em,
		.ext = ext,
	}, *g = &state;
	size_t i, n_maps;

	cgfw_em_init(&p->em);
	g->count_calls = count_counters(bt->table) > CG_INLINE_COUNTERS;
	/* what the program enforces is described by a map it carries */
	cgfw_em_note(&p->em, "the table's description (bpf/desc.h)");
	cgfw_em_ld_imm64(&p->em, BPF_REG_0, BPF_PSEUDO_MAP_FD,
			 MAP_IDX_BIAS + bt->desc_map);
	gen_prologue(g);
	if (ext)
		ext->prologue(g);
	for (i = 0; i < p->n_chains && !g->err; i++)
		gen_base_chain(g, p->chains[i]);
	if (ext)
		ext->release(g);
	free(g->told);
	cgfw_em_note(&p->em, "every chain let the packet pass");
	E(I_MOV64_IMM(BPF_REG_0, 1));
	E(I_EXIT());
	if (g->err)
		return g->err;
	n_maps = cgfw_bt_maps_used(bt);
	if (n_maps > MAX_MAPS) {
		cgfw_err_at(ctx, &rs->src, &bt->table->loc,
			    "table '%s' needs %zu BPF maps (its sets, counters, quotas), more than the %d one program may use; merge sets, or use the nft backend",
			    bt->table->name, n_maps, MAX_MAPS);
		return -E2BIG;
	}
	if (cgfw_em_finish(&p->em)) {
		cgfw_err_at(ctx, &rs->src, &bt->table->loc,
			    "the program for table '%s' is too large for BPF (%zu instructions, or a jump too far); use sets or the nft backend",
			    bt->table->name, p->em.n);
		return p->em.err;
	}
	/*
	 * The verifier checks at most 1,000,000 instructions a program, and
	 * code rule by rule takes it 1.5 to 2.2 a program instruction
	 * (docs/design.rst): past this size it is likely to give up.
	 */
	if (p->em.n > 500000)
		cgfw_log(ctx, CGFW_LOG_WARN,
			 "%s: the %s program of table '%s' is %zu instructions; the kernel's verifier checks at most 1,000,000, 1.5 to 2.2 for each of these, and may refuse it",
			 rs->src.name, cgfw_dir_str(p->dir), bt->table->name,
			 p->em.n);
	return 0;
}
