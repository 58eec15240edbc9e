/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What cgfw installed, as found in the kernel: filled by each backend. */
#ifndef CGFW_MODEL_MODEL_H
#define CGFW_MODEL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "front/cgroup.h"

struct inst_chain {
	char *name;
	bool base;
	enum cgfw_dir dir;
	char *cgroup_path;
	int32_t priority;
	uint32_t policy;
	bool policy_counted;	/* the chain's own counters (native) */
	uint64_t policy_packets, policy_bytes;
};

struct inst_table {
	char *name;			/* the user's name */
	char *kernel_name;		/* "inet cgfw_web", or its pin directory */
	const char *backend;		/* e.g. "nft-emulated" */
	bool policy_rule;		/* a bound chain's last rule is its policy */
	char *nft_text;			/* nft's listing of the kernel table */
	struct inst_chain *chains;
	size_t n_chains;
};

struct cgfw_listing {
	struct inst_table *tables;
	size_t n_tables;
};

int listing_add(struct cgfw_listing *l, struct inst_table *t);
void inst_table_release(struct inst_table *t);

#endif /* CGFW_MODEL_MODEL_H */
