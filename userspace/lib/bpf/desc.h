/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The description of a bpf table's generation: what "cgfw list" shows and
 * "cgfw update" needs, kept in an array map that every program of the
 * generation references. Whatever program runs on a cgroup, the
 * description it carries is the one of the rules it enforces.
 *
 * The format is a stream of netlink attributes (each under 64 KiB; the
 * stream as long as it needs), versioned by DESC_FORMAT; it is split over
 * the entries of the map (bpf/desc.c).
 */
#ifndef CGFW_BPF_DESC_H
#define CGFW_BPF_DESC_H

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"

#define CGFW_DESC_FORMAT 1
#define CGFW_DESC_MAP_NAME "cgfw_desc"

struct desc_chain {
	char *name;
	bool base;
	uint32_t dir, policy;
	int32_t priority;
	char *cgroup_path;
	uint64_t cgroup_id;
};

struct desc_rule {
	uint32_t chain;		/* index in chains */
	char *text;		/* NULL: not known */
	bool counter, quota;	/* it has one (reached by a program or not) */
};

struct desc_set {
	char *name;
	uint32_t map_id;
	void *nlset;		/* NEWSET message of its attributes */
	uint32_t nlset_len;
	bool meter;		/* its elements hold a statement's state */
};

struct desc_prog {
	uint32_t dir;
	uint64_t cgroup_id;
	uint32_t counters_id;	/* its counters map */
};

struct desc_slot {
	uint32_t prog;		/* index in progs */
	uint32_t slot;		/* in its counters map */
	uint32_t chain;		/* index in chains */
	int32_t rule;		/* index in the chain's rules; -1: policy */
};

/* A quota's state: bytes consumed, a u64 in slot @slot of map @map_id. */
struct desc_quota {
	uint32_t map_id, slot;
	uint64_t bytes;		/* the quota: nft reports no more used */
	uint32_t chain;
	int32_t rule;
};

/*
 * A named counter, quota or limit: its state in slot @slot of map
 * @map_id (a counter's packets and bytes, a quota's bytes used, a limit's
 * bucket), and what it was declared with.
 */
struct desc_obj {
	uint32_t type;		/* NFT_OBJECT_* */
	char *name;
	uint32_t map_id, slot;
	uint64_t bytes;		/* a quota's bytes, a limit's rate */
	uint64_t unit;		/* a limit's, in seconds */
	uint32_t burst;		/* a limit's */
	uint32_t flags;		/* NFT_QUOTA_F_INV, NFT_LIMIT_F_INV */
	uint32_t limit_type;	/* NFT_LIMIT_PKTS or NFT_LIMIT_PKT_BYTES */
};

/*
 * A log statement: slot @id of its records (bpf/compile/codegen.h), and
 * what nf_log would write with them; the ring buffer that holds them and
 * the count of records lost, slot @id of map @lost_id.
 */
struct desc_log {
	uint32_t id;
	char *prefix;
	uint32_t level;
	uint32_t ring_id, lost_id;
};

struct desc {
	uint32_t format;
	uint64_t gen;
	uint32_t with_nft;	/* the apply's nft family too, or 0 */
	bool conntrack;		/* its programs read ct: a keeper */
	char *table;
	struct desc_chain *chains;
	size_t n_chains;
	struct desc_rule *rules;
	size_t n_rules;
	struct desc_set *sets;
	size_t n_sets;
	struct desc_prog *progs;
	size_t n_progs;
	struct desc_slot *slots;
	size_t n_slots;
	struct desc_quota *quotas;
	size_t n_quotas;
	struct desc_obj *objs;
	size_t n_objs;
	struct desc_log *logs;
	size_t n_logs;
};

/* Writing: records appended to a buffer (bpf/desc.c). */
void cgfw_desc_put_header(struct strbuf *sb, uint64_t gen, uint32_t with_nft,
			  const char *table, bool conntrack);
void cgfw_desc_put_chain(struct strbuf *sb, const struct desc_chain *c);
void cgfw_desc_put_rule(struct strbuf *sb, const struct desc_rule *r);
void cgfw_desc_put_set(struct strbuf *sb, const struct desc_set *s);
void cgfw_desc_put_prog(struct strbuf *sb, const struct desc_prog *p);
void cgfw_desc_put_slot(struct strbuf *sb, const struct desc_slot *s);
void cgfw_desc_put_quota(struct strbuf *sb, const struct desc_quota *q);
void cgfw_desc_put_obj(struct strbuf *sb, const struct desc_obj *o);
void cgfw_desc_put_log(struct strbuf *sb, const struct desc_log *l);

/* Reading: -EINVAL if it is not a description this cgfw can read. */
int cgfw_desc_parse(const void *buf, size_t len, struct desc *d);
void cgfw_desc_release(struct desc *d);

/* The map that holds it: value size and entries for @len bytes. */
void cgfw_desc_map_size(size_t len, uint32_t *value_size, uint32_t *entries);
/* Write @sb into the map @fd (sized by cgfw_desc_map_size()), and freeze it. */
int cgfw_desc_store(int fd, const struct strbuf *sb);
/* Read the description in map @fd. */
int cgfw_desc_load(int fd, struct desc *d);

#endif /* CGFW_BPF_DESC_H */
