/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The classifier (docs/classifier.rst): a run of rules whose matches are
 * constraints on packet fields becomes a decision tree of equal-size cuts
 * (HiCuts), kept as data in one array map and walked by a fixed loop in
 * the program; a leaf lists the rules that can still match, in rule
 * order, with the checks the tree did not make for them. The first rule
 * that passes its checks is nft's first match; rules that let evaluation
 * go on (no verdict, jump) resume the scan where it stopped.
 *
 *  - cls_rule.c: nft bytecode to boxes (one interval per dimension),
 *  - cls_tree.c: the tree and its serialisation (no BPF: unit-tested),
 *  - cls_gen.c:  the BPF code that extracts the dimensions, walks the tree
 *		  and scans a leaf, and the hooks codegen.c calls.
 */
#ifndef CGFW_BPF_CLS_H
#define CGFW_BPF_CLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- dimensions ---- */

/* Where a dimension's value comes from. */
enum cls_src {
	CLS_SRC_NET,		/* network header payload */
	CLS_SRC_TH,		/* transport header payload */
	CLS_SRC_META,		/* a meta key's register image */
	CLS_SRC_SOCKET,		/* socket cgroupv2 level: its 8-byte image */
};

/*
 * A dimension: @len (1..4) bytes at @off of the source, read as a
 * big-endian number, ANDed with @mask. Its value is below 2^32; a field
 * the packet does not have (a short packet, no transport header, an
 * unknown layer 4 protocol, no cgroup at that level) is CLS_ABSENT, which
 * no interval contains: a rule that constrains it does not match, as nft
 * breaks on the load.
 */
struct cls_dim {
	uint8_t src;		/* enum cls_src */
	uint8_t len;
	uint16_t off;		/* payload offset; meta key; socket level */
	uint32_t mask;		/* of the (8 * len)-bit value */
	uint32_t word;		/* socket: which 4 bytes of the image */
	bool live;		/* can change during evaluation: never cut on */
};

#define CLS_ABSENT	(1ULL << 32)
#define CLS_MAX_DIMS	16	/* the key vector lives on the stack */

/* ---- rules and boxes ---- */

/* A rule's match: a union of boxes; each box, one interval per dim. */
struct cls_box {
	uint32_t rule;		/* index in the run */
	uint64_t *lo, *hi;	/* [n_dims]; unconstrained: 0, CLS_ABSENT */
};

/* What a rule does once it matched. */
struct cls_action {
	bool counter;
	int32_t verdict;	/* NFT_CONTINUE: none */
	const char *chain;	/* jump, goto */
};

/* The indexable rules of one run, in rule order, as boxes. */
struct cls_input {
	size_t n_dims;
	const struct cls_dim *dims;
	size_t n_rules;
	const bool *terminal;	/* [n_rules]: its verdict ends the chain */
	const uint16_t *cases;	/* [n_rules]: its verdict's dispatch case */
	const uint32_t *slots;	/* [n_rules]: counter slot + 1, 0: none */
	size_t n_boxes;
	const uint32_t *box_rule;	/* [n_boxes], ascending */
	const uint64_t *box_lo, *box_hi;	/* [n_boxes * n_dims] */
};

/* ---- the serialised tree (the blob: one array map element) ---- */

/*
 * A node record, 16 bytes:
 *	cut:  kind 0, shift, dim's key offset, the children's key offset,
 *	      lo, hi, base: the child of a key v in [lo, hi] is the record
 *	      at base + 16 * (v >> shift), in 32-bit arithmetic (base is the
 *	      first child's offset less 16 * (lo >> shift)); any other v (and
 *	      CLS_ABSENT) takes the child after the last, as if v were
 *	      hi + 2^shift, or with CLS_COARSE in the key offset (a cut of a
 *	      4-byte dim's dense block) the (v >> 24)th of the 257 after the
 *	      last. After the loads, the walk's chain is a shift, a shift and
 *	      an add.
 *	cut on the parent's key: kind 3, as a cut, on the key its parent
 *	      loaded (its children's key offset; for the child after the
 *	      last, the parent's own key): a cut loads that key while it
 *	      picks the child, so a child that cuts the dim most of its
 *	      siblings cut does not wait for a load of its own
 *	guard: kind 2, walk on at a, or at b when the best match so far is
 *	      below rule c (the lowest rule under a); it loads the key at
 *	      its nkey, the key of a when a is a cut (then of kind 3)
 *	leaf: kind 1, its entries from a (the last has next 0), then the
 *	      test of the guard the walk goes on to, made here, so that the
 *	      walk goes from the leaf to the guard's side without a step
 *	      through the guard's record: walk on at b (the guard's a), or
 *	      at c (its b) when the best match so far is below min (its c,
 *	      at most 65535: a lower bound skips less, never wrongly); it
 *	      loads the key at its shift byte (the guard's nkey). A leaf
 *	      that goes on to the end has b = c = the end.
 *	end: kind 4, the walk is over
 * A child with no boxes is a copy of the record the walk goes on to (a
 * guard or the end): their fields are offsets, so the copy does what
 * the record does, one step sooner. A cut of kind 3 is the root (the
 * walk starts with its key loaded), a cut's child, or a guard's a (and
 * so a leaf's b); the end loads no key.
 * The tree is threaded: a cut whose boxes that reach every child were
 * set aside (a fork, as EffiCuts separates wide rules) builds a subtree
 * of them too; the leaves of the one walked first go on to a guard of
 * the other. The walk needs no stack.
 * An entry, 16 bytes, then its checks, 12 bytes each:
 *	next	offset of the next entry (after the checks); 0: the last
 *	rule	its rule's index in the run: entries are in rule order
 *	case	dispatch case of the rule's verdict
 *	nchk	its number of checks
 *	slot	counter slot + 1 (0: no counter)
 *	check:	key offset, lo, hi (inclusive)
 * A walk finds, over every leaf it reaches, the entry of the lowest rule
 * above @last whose checks pass; after a rule that lets evaluation go
 * on, the walk is made again with @last = that rule.
 */
struct cls_node {
	uint8_t kind;
	uint8_t shift;		/* leaf: the key of b (dim * 8) */
	union {
		struct {
			uint8_t key;	/* dim * 8 */
			uint8_t nkey;	/* the key of the kind 3 cuts after it */
		};
		uint16_t min;	/* leaf: the lowest rule under b, at most */
	};
	uint32_t a, b, c;	/* cut: lo, hi, base; leaf: entries, b, c */
};

#define CLS_CUT		0
#define CLS_LEAF	1
#define CLS_GUARD	2
#define CLS_CUT_PRE	3
#define CLS_END		4
/*
 * In a cut's key byte: the children after the last are by the key's first
 * byte (key >> 24, 257 of them).
 */
#define CLS_COARSE	1
#define CLS_COARSE_SHIFT	24
#define CLS_COARSE_N	257
#define CLS_NODE_SIZE	16
#define CLS_ENTRY_SIZE	16
#define CLS_CHECK_SIZE	12

struct cls_entry {
	uint32_t next, rule;
	uint16_t kase, nchk;
	uint32_t slot;
};

/* The blob ends with this much room: an entry's checks are read at once. */
#define CLS_BLOB_PAD	(CLS_ENTRY_SIZE + CLS_CHECK_SIZE * CLS_MAX_DIMS)

struct cls_check {
	uint32_t key, lo, hi;
};

struct cls_blob {
	uint8_t *buf;
	size_t len, cap;
};

/* Tuning of the tree (cls_tree.c has the defaults). */
struct cls_params {
	unsigned int binth;	/* a leaf of at most this many entries */
	unsigned int spfac;	/* children's entries <= spfac * parent's */
	unsigned int max_cuts_log2;	/* children per node <= 2^this */
	unsigned int max_depth;
	unsigned int max_forks;	/* forks on one path */
	unsigned int fork_min;	/* boxes in every child that make a fork */
	/* a dense block's entries <= this * the whole block's; 0: never */
	unsigned int dense_space;
	size_t budget;		/* entries in all leaves, at most */
	size_t part_min;	/* boxes that make partitions; 0: never */
	size_t part_bytes;	/* unless one tree takes at most this a box */
	unsigned int part_spfac;	/* spfac within a partition; 0: spfac */
};

void cgfw_cls_default_params(struct cls_params *p);

/* What a build made: for docs and the benchmark. */
struct cls_stats {
	size_t nodes, forks, leaves, entries, checks, max_depth;
	size_t max_leaf;	/* entries of the largest leaf */
	bool budget_hit;	/* cutting stopped early: memory budget */
};

/*
 * Build the tree of @in into @blob (appending); @root gets the offset of
 * the root's record. 0, -ENOMEM, or -E2BIG past 4 GiB.
 */
int cgfw_cls_build(const struct cls_input *in, const struct cls_params *prm,
		   struct cls_blob *blob, uint32_t *root, struct cls_stats *st);

/*
 * The reference walk (tests, and the model of cls_gen.c's code): the
 * first match above rule @last for key @key; its rule, case and slot
 * into the pointers. 1: found, 0: none.
 * @cost (NULL: not counted) adds what the walk did.
 */
struct cls_cost {
	size_t cuts, pre, forks, skips, leaves, entries, checks;
};

int cgfw_cls_walk(const struct cls_blob *blob, uint32_t root, const uint64_t *key,
		  int64_t last, uint32_t *rule, uint16_t *kase, uint32_t *slot,
		  struct cls_cost *cost);

void cgfw_cls_blob_release(struct cls_blob *b);
int cgfw_cls_blob_add(struct cls_blob *b, const void *data, size_t len,
		      uint32_t *off);

#endif /* CGFW_BPF_CLS_H */
