/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Netlink: nf_tables batches that remember where in the user's text each
 * message came from, and dumps.
 */
#ifndef CGFW_NL_NETLINK_H
#define CGFW_NL_NETLINK_H

#include <stdint.h>

#include "base/ctx.h"

/*
 * The cgroup table family of the kernel series (kernel-patches/: its
 * include/uapi/linux/netfilter.h and netfilter/nf_tables.h), which the
 * installed headers do not have.
 */
#define NFPROTO_CGROUP		13
#define NF_CGROUP_INGRESS	0
#define NF_CGROUP_EGRESS	1
#define NFTA_HOOK_CGROUP_ID	(NFTA_HOOK_DEVS + 1)

struct mnl_socket;
struct nlmsghdr;

/* One message of a batch and the source place it came from. */
struct cgfw_nl_origin {
	uint32_t seq;
	const struct cgfw_loc *loc;	/* NULL: not the user's text */
	const char *what;		/* e.g. "the table", for messages */
};

/*
 * The largest single message we build: a rule, or a chunk of elements
 * (libnftnl fills an elements message up to its 64 KiB nest).
 */
#define CGFW_NL_MAX_MSG (128 * 1024)

struct cgfw_nl_batch {
	char *buf;
	size_t len, bufsize;
	size_t last;		/* offset of the last message */
	uint32_t seq;
	struct cgfw_nl_origin *origins;
	size_t n_origins, cap_origins;
	int err;		/* sticky -ENOMEM / -EMSGSIZE */
};

int cgfw_nl_open(struct cgfw_ctx *ctx, struct mnl_socket **out);
/*
 * The socket that changes cgfw's tables: with the context's hold_tables
 * the one the context keeps, the owner of the tables it holds; else a new
 * one. Give it back with cgfw_nl_writer_close().
 */
int cgfw_nl_writer(struct cgfw_ctx *ctx, struct mnl_socket **out);
void cgfw_nl_writer_close(struct cgfw_ctx *ctx, struct mnl_socket *nl);
int cgfw_nl_batch_init(struct cgfw_nl_batch *nb);
void cgfw_nl_batch_release(struct cgfw_nl_batch *nb);
/* Start the next message; records where it came from. */
struct nlmsghdr *cgfw_nl_batch_next(struct cgfw_nl_batch *nb, uint16_t type,
				    uint16_t family, uint16_t flags,
				    const struct cgfw_loc *loc,
				    const char *what);
void cgfw_nl_batch_done(struct cgfw_nl_batch *nb);
/* Send the batch; on a kernel error, the message names the culprit. */
int cgfw_nl_batch_commit(struct cgfw_ctx *ctx, struct mnl_socket *nl,
			 struct cgfw_nl_batch *nb,
			 const struct cgfw_source *src);

typedef int (*cgfw_nl_cb)(const struct nlmsghdr *nlh, void *data);
/* Dump request: calls cb for each message. */
int cgfw_nl_dump(struct mnl_socket *nl, struct nlmsghdr *req, cgfw_nl_cb cb,
		 void *data);

/* Does the rule message @nlh hold an expression of one of @kinds (@n)? */
bool cgfw_rule_has_expr(const struct nlmsghdr *nlh, const char *const *kinds,
			size_t n);

/*
 * The nf_tables rule message @from as libnftnl's parser can read it:
 * libnftnl 1.2.4 writes an objref's names without their NUL, so a rule
 * with an objref is copied with them ended (*copy, malloc()ed, to be
 * freed); any other is @from itself (*copy NULL). NULL when out of
 * memory.
 */
const struct nlmsghdr *cgfw_rule_names_ended(const struct nlmsghdr *from,
					     struct nlmsghdr **copy);

#endif /* CGFW_NL_NETLINK_H */
