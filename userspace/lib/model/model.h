/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model of what is installed: tables, their chains with hook, cgroup
 * and binding state, rules with their source text and counters, sets with
 * their elements. Each backend fills it from the kernel (nft: netlink
 * dumps parsed with libnftnl; bpf: the programs attached now and the
 * description each carries); "cgfw list" (text and JSON), "cgfw update"
 * and the tests read it. Nothing in it is parsed from printed text.
 */
#ifndef CGFW_MODEL_MODEL_H
#define CGFW_MODEL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "front/cgroup.h"

/* What a bound chain's cgroup binding is now. */
enum model_binding {
	MODEL_BOUND,		/* to the cgroup that is at its path now */
	MODEL_STALE,		/* to a cgroup removed since (or replaced) */
	MODEL_WAITING,		/* to nothing yet: the path does not exist */
};

const char *cgfw_model_binding_str(enum model_binding b);

struct model_counter {
	bool present;
	uint64_t packets, bytes;
};

struct model_rule {
	char *text;		/* as the user wrote it; NULL: not known */
	bool text_cut;		/* only the start of it was kept */
	uint64_t handle;	/* nf_tables rule handle; 0: none (bpf) */
	struct model_counter counter;
	bool has_quota;
	uint64_t quota_used;	/* bytes */
};

struct model_chain {
	char *name;
	uint64_t handle;
	bool base;		/* bound to a cgroup */
	enum cgfw_dir dir;
	int32_t priority;
	uint32_t policy;	/* NF_ACCEPT or NF_DROP */
	char *cgroup_path;	/* the path it was bound by */
	uint64_t cgroup_id;	/* the cgroup it is bound to */
	enum model_binding binding;
	struct model_counter policy_counter;
	struct model_rule *rules;
	size_t n_rules;
};

/* One element: a key, or an interval of keys; and a map's value. */
struct model_elem {
	uint8_t *key, *key_end;	/* key_end: last key of an interval, or NULL */
	uint8_t *data;		/* a map's value, or NULL */
	int32_t verdict;	/* a verdict map's value */
	char *chain;		/* its chain for jump and goto */
	uint64_t timeout;	/* ms; shown when not the set's timeout */
	uint64_t expires;	/* ms left; 0: it does not expire */
};

struct model_set {
	char *name;
	uint64_t handle;
	uint32_t flags;		/* NFT_SET_* */
	uint32_t key_type, key_len;	/* nft datatype; concatenations too */
	uint32_t data_type, data_len;	/* maps; NFT_DATA_VERDICT for vmaps */
	uint32_t key_byteorder;	/* from the set's userdata; 0: unknown */
	uint64_t timeout;	/* ms: what an element gets by default */
	struct model_elem *elems;
	size_t n_elems, cap_elems;
	uint64_t capacity;	/* the bpf map's size; 0: none */
	char *where;		/* the bpf map's pin or id, for people */
};

/*
 * A named stateful object (nft backend): its type and live values, as
 * NFTA_OBJ_DATA has them.
 */
struct model_obj {
	char *name;
	uint64_t handle;
	uint32_t type;		/* NFT_OBJECT_* */
	union {
		struct { uint64_t packets, bytes; } counter;
		struct { uint64_t bytes, used; bool over; } quota;
		struct {
			uint64_t rate, unit, burst;	/* unit: seconds */
			bool bytes, over;
		} limit;
	};
};

struct model_table {
	char *name;		/* the user's name */
	const char *backend;	/* "nft-emulated", "nft-native", "bpf" */
	char *kernel_name;	/* "inet cgfw_web", "cgroup web", a pin dir */
	uint64_t handle;
	uint64_t generation;	/* which apply made it */
	uint64_t memory;	/* bytes the kernel holds for it, 0: unknown */
	char *note;		/* what is not as applied (an interrupted apply) */
	bool degraded;		/* it does not filter as applied (note says) */
	bool logs;		/* bpf: its log statements need a reader */
	uint64_t log_lost;	/* records they could not write */
	struct model_set *sets;
	size_t n_sets;
	struct model_chain *chains;
	size_t n_chains;
	struct model_obj *objs;
	size_t n_objs;
};

struct cgfw_listing {
	struct model_table *tables;
	size_t n_tables;
	bool bindings_only;	/* asked for (cgfw_list_opts): the backends */
};

/*
 * Growing arrays of the model. Each returns the new zeroed entry, or NULL
 * when out of memory.
 */
struct model_table *cgfw_model_add_table(struct cgfw_listing *l);
struct model_chain *cgfw_model_add_chain(struct model_table *t);
struct model_rule *cgfw_model_add_rule(struct model_chain *c);
struct model_set *cgfw_model_add_set(struct model_table *t);
struct model_obj *cgfw_model_add_obj(struct model_table *t);
struct model_elem *cgfw_model_add_elem(struct model_set *s);
/* The last element added, taken back. */
void cgfw_model_drop_elem(struct model_set *s);

void cgfw_model_table_release(struct model_table *t);
struct model_chain *cgfw_model_find_chain(const struct model_table *t,
					  const char *name);
struct model_set *cgfw_model_find_set(const struct model_table *t,
				      const char *name);
struct model_table *cgfw_model_find_table(const struct cgfw_listing *l,
					  const char *name, const char *backend);

/* The binding of a chain bound to cgroup @id by @path, as it is now. */
enum model_binding cgfw_model_binding_of(const char *path, uint64_t id);

/*
 * The elements of an nf_tables set as the model holds them: intervals as
 * [first, last], from nft's start and end elements.
 */
struct nftnl_set;
int cgfw_model_set_from_nftnl(struct model_set *ms, const struct nftnl_set *s);

#endif /* CGFW_MODEL_MODEL_H */
