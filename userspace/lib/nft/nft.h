/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The nft backend's two targets: native cgroup family, emulated inet. */
#ifndef CGFW_NFT_NFT_H
#define CGFW_NFT_NFT_H

#include <stdbool.h>
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

/* Can this kernel hold an nf_tables table of @family (and a socket rule)? */
bool nft_probe_table(struct cgfw_ctx *ctx, uint16_t family, bool socket_rule);

#endif /* CGFW_NFT_NFT_H */
