/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Read nf_tables objects back into the IR (front/readback.c). */
#ifndef CGFW_FRONT_READBACK_H
#define CGFW_FRONT_READBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "front/ir.h"

struct nftnl_set;
struct nftnl_table;
struct nlmsghdr;

struct readback_opts {
	uint16_t family;	/* NFPROTO_UNSPEC: every family */
	bool no_elems;		/* sets without their elements */
	bool no_rules;		/* chains without their rules */
	bool no_sets;		/* tables without their sets */
	/* Read this table? NULL: every table. */
	bool (*want)(const struct nftnl_table *t, void *data);
	void *data;
	/* Elements known already, not to be read: @s's, if it says so. */
	bool (*have_elems)(const struct nftnl_set *s, void *data);
	void *have_data;
	/* Called with every message read, if set. */
	int (*tap)(const struct nlmsghdr *nlh, void *data);
	void *tap_data;
};

/* The tables of the current network namespace, into @rs. */
int cgfw_readback(struct cgfw_ctx *ctx, struct cgfw_ruleset *rs,
		  const struct readback_opts *opts);
/* The same from messages recorded by a readback with a tap. */
int cgfw_readback_stream(struct cgfw_ruleset *rs, const void *buf, size_t len);

#endif /* CGFW_FRONT_READBACK_H */
