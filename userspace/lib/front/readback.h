/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Read nf_tables objects back into the IR (front/readback.c). */
#ifndef CGFW_FRONT_READBACK_H
#define CGFW_FRONT_READBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "front/ir.h"

struct mnl_socket;
struct nftnl_table;
struct nlmsghdr;
struct strbuf;

struct readback_opts {
	uint16_t family;	/* NFPROTO_UNSPEC: every family */
	bool no_elems;		/* sets without their elements */
	/* Read this table? NULL: every table. */
	bool (*want)(const struct nftnl_table *t, void *data);
	void *data;
	/* Called with every message read, if set. */
	int (*tap)(const struct nlmsghdr *nlh, void *data);
	void *tap_data;
	/* The rules as NEWRULE messages in chain order, and every set's
	 * elements as NEWSETELEM messages, read in place of dumps
	 * (cgfw_readback_notes()); NULL: dump them. */
	const void *rules, *elems;
	size_t rules_len, elems_len;
	bool heard_to_tap;	/* those go to the tap only, not into @rs */
};

/* The tables of the current network namespace, into @rs. */
int cgfw_readback(struct cgfw_ctx *ctx, struct cgfw_ruleset *rs,
		  const struct readback_opts *opts);
/* The same from messages recorded by a readback with a tap. */
int cgfw_readback_stream(struct cgfw_ruleset *rs, const void *buf, size_t len);

/*
 * Listen to what nf_tables commits in this network namespace from now
 * on; after the commits, cgfw_readback_notes() gives the rules they made
 * in chain order and the elements they added, for readback_opts.rules
 * and .elems: a dump of rules or elements costs the kernel a walk from
 * the start for each part of it, quadratic in their number.
 */
int cgfw_readback_listen(struct mnl_socket **nl);
/* What was heard on @nl: NEWRULE messages into @rules, NEWSETELEM into
 * @elems; -EAGAIN when they cannot stand for dumps (a rule inserted
 * before another, a deletion, messages lost): then dump. */
int cgfw_readback_notes(struct mnl_socket *nl, struct strbuf *rules,
			struct strbuf *elems);

#endif /* CGFW_FRONT_READBACK_H */
