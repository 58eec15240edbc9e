/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Element commands on installed sets, compiled by nft (update.c), as the
 * backends take them.
 */
#ifndef CGFW_UPDATE_CMDS_H
#define CGFW_UPDATE_CMDS_H

#include "base/list.h"
#include "front/rewrite.h"

struct nftnl_set;

/* One named set an update touches. */
struct upd_set {
	struct list_head list;
	char *table, *set;
	const struct cgfw_loc *loc;	/* the first command naming it */
	/* the first that adds to it, and that deletes from it */
	const struct cgfw_loc *add_loc, *del_loc;
	struct nftnl_set *obj;		/* its attributes, as installed */
	struct nftnl_set *add, *del;	/* elements compiled by nft */
};

struct upd_journal;

struct upd_cmds {
	struct cgfw_source src;
	struct rw_result rw;
	struct list_head sets;	/* struct upd_set */
	/* what a backend without transactions changed, to undo it (bpf) */
	struct upd_journal *journal;
};

#endif /* CGFW_UPDATE_CMDS_H */
