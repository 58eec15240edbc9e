/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Netlink: nf_tables batches that remember where each message came from, and dumps. */
#ifndef CGFW_NL_NETLINK_H
#define CGFW_NL_NETLINK_H

#include <stdint.h>

#include "base/ctx.h"

struct mnl_socket;

/* One message of a batch and the source place it came from. */
struct nl_origin {
	uint32_t seq;
	const struct cgfw_loc *loc;	/* NULL: not the user's text */
	const char *what;		/* e.g. "table web", for messages */
};

/* The largest single message we build: a rule, or a chunk of elements. */
#define NL_MAX_MSG (64 * 1024)

struct nl_batch {
	char *buf;
	size_t len, bufsize;
	size_t last;		/* offset of the last message */
	uint32_t seq;
	struct nl_origin *origins;
	size_t n_origins, cap_origins;
	int err;		/* sticky -ENOMEM / -EMSGSIZE */
};

int nl_open(struct cgfw_ctx *ctx, struct mnl_socket **out);
int nl_batch_init(struct nl_batch *nb);
void nl_batch_release(struct nl_batch *nb);
/* Start the next message; records where it came from. */
struct nlmsghdr *nl_batch_next(struct nl_batch *nb, uint16_t type,
			       uint16_t family, uint16_t flags,
			       const struct cgfw_loc *loc, const char *what);
void nl_batch_done(struct nl_batch *nb);
/* Send the batch; on a kernel error, the message names the culprit. */
int nl_batch_commit(struct cgfw_ctx *ctx, struct mnl_socket *nl,
		    struct nl_batch *nb, const struct cgfw_source *src);
/* Dump request: calls cb for each message. */
int nl_dump(struct mnl_socket *nl, struct nlmsghdr *req,
	    int (*cb)(const struct nlmsghdr *nlh, void *data), void *data);

#endif /* CGFW_NL_NETLINK_H */
