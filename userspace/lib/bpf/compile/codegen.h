/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parts of codegen.c that an extension of it builds on (its state is
 * in cg.h): the classifier (cls_gen.c), which codegen.c reaches only
 * through struct cgfw_bpf_ext, so that it depends on codegen.c and not
 * the other way round.
 */
#ifndef CGFW_BPF_CODEGEN_H
#define CGFW_BPF_CODEGEN_H

#include "bpf/compile/cg.h"
#include "bpf/table.h"

struct cls_prog;

/*
 * What an extension of the code generator does: after the prologue,
 * @prologue; @chain emits chain @c if it takes it (true), its end and
 * "return" going to @ret, the base chain's end to @accept; after the last
 * chain, @release frees what it kept.
 */
struct cgfw_bpf_ext {
	void (*prologue)(struct cg *g);
	bool (*chain)(struct cg *g, const struct ir_chain *c, int ret,
		      int accept);
	void (*release)(struct cg *g);
};

/* The classifier (cls_gen.c, docs/classifier.rst). */
extern const struct cgfw_bpf_ext cgfw_bpf_classifier;

#define MAX_MAPS 64	/* the kernel's limit of maps one program uses */
/* nft's jump stack (NFT_JUMP_STACK_SIZE): inlined jumps follow it */
#define CGFW_CG_MAX_JUMPS 16

/* The maps of @bt a program may use: sets compiled as comparisons are none. */
static inline size_t cgfw_bt_maps_used(const struct bpf_table *bt)
{
	size_t i, n = 0;

	for (i = 0; i < bt->n_maps; i++)
		n += !bt->maps[i].inline_only;
	return n;
}

/* r0 = map @idx lookup with the key at fp+@key_off; 0 -> @miss. */
void cgfw_cg_map_lookup(struct cg *g, size_t idx, int key_off);
/* r0 a counter slot's value: packets += 1, bytes += skb->len; NULL: @miss */
void cgfw_cg_count_value(struct cg *g, int miss);
/* A counter slot of the program for @rule (NULL: the chain's policy). */
int cgfw_cg_add_slot(struct cg *g, const struct ir_rule *rule);
/* A map of the program's own (not a set's): its index in the table. */
size_t cgfw_cg_new_map(struct cg *g, const char *name, uint32_t type,
		       uint32_t key_size, uint32_t value_size, uint32_t max);
/* r0 = bpf_skb_load_bytes(skb, @off_reg or @off, fp+@dst, @len) */
void cgfw_cg_load_bytes(struct cg *g, int off_reg, int off, int dst,
			int len);
/* A verdict: @next, the next rule; @ret, where "return" goes. */
void cgfw_cg_verdict(struct cg *g, int32_t verdict, const char *chain,
		     int next, int ret, int accept);
/* One rule, compared expression by expression. */
void cgfw_cg_rule(struct cg *g, const struct ir_rule *r, int ret, int accept);

/*
 * A chain's code cut into blocks for the verifier (codegen.c): set up
 * with cgfw_cg_blocks_init() where the chain starts, cgfw_cg_block()
 * before each rule or run, cgfw_cg_blocks_end() after the last.
 */
struct cg_blocks {
	size_t start;	/* the emitter's jumps when the block began */
	int next;	/* the label after the open block, -1: none */
	/* the rules compiled one by one since the last run */
	const struct ir_rule *first, *last;
	size_t n_one;
};

void cgfw_cg_blocks_init(struct cg *g, struct cg_blocks *b);
/* Before rule @one, compiled alone, or before a run (@one NULL). */
void cgfw_cg_block(struct cg *g, struct cg_blocks *b,
		   const struct ir_rule *one);
void cgfw_cg_blocks_end(struct cg *g, struct cg_blocks *b);
/*
 * The state slot of quota or limit @key (one per expression in the table,
 * or per named object).
 */
uint32_t cgfw_cg_state_slot(struct cg *g, struct bpf_state *st,
			    const void *key, const char *name,
			    const void *init, uint32_t size, bool spin_lock);

/* A limit's state: as struct nft_limit, the lock first (BTF: object.c). */
struct limit_state {
	uint32_t lock;		/* struct bpf_spin_lock */
	uint32_t pad;
	uint64_t tokens;
	uint64_t last;
};

/* A limit, from its expression or its named object */
struct limit_args {
	uint64_t rate, unit;	/* unit: seconds */
	uint32_t burst;
	bool pkts, invert;
};

/*
 * log: what a program writes to the table's ring buffer for each packet
 * a log statement sees (bpf/log.c reads it, cgfw daemon puts it in the
 * kernel log as nf_log writes its lines): the statement, the device, the
 * packet's length and mark, its family and direction, and its first
 * CGFW_LOG_SNAP bytes from the network header.
 */
#define CGFW_LOG_SNAP	128
#define CGFW_LOG_RING	(256 * 1024)
struct cgfw_log_rec {
	uint32_t id;		/* the log statement: its slot */
	uint32_t ifindex;
	uint32_t len;
	uint32_t mark;
	uint8_t nfproto;
	uint8_t dir;		/* enum cgfw_dir */
	uint16_t caplen;
	uint32_t pad;
	uint8_t data[CGFW_LOG_SNAP];
};

/* The statement of add or update @set { KEY STATEMENT }, or NULL. */
struct nftnl_expr *cgfw_bpf_dynset_stmt(const struct nftnl_expr *dynset,
					 bool *several);
/*
 * A meter: a set whose elements each carry the state of the statement
 * the rules update them with (update @s { ip saddr limit rate 10/second }):
 * a counter's packets and bytes, a quota's bytes, a limit's bucket, as
 * the element's value, fresh with each new element. Its size, first
 * value (CGFW_METER_STATE_MAX bytes at most) and whether it has a lock;
 * -EOPNOTSUPP for other statements.
 */
#define CGFW_METER_STATE_MAX 24
int cgfw_bpf_meter_state(struct nftnl_expr *stmt, uint64_t *init,
			 uint32_t *size, bool *spin_lock);

/*
 * The state of every named counter, quota and limit of @bt's table, made
 * before its programs are (listed when no rule uses them); other kinds of
 * objects refused at the first declaration.
 */
int cgfw_bpf_obj_slots(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		       struct bpf_table *bt);

#endif /* CGFW_BPF_CODEGEN_H */
