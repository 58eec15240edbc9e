/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The nft backend's two targets (nft/target.c), the batch that installs a
 * table (nft/batch.c), reading tables back into the model (nft/read.c) and
 * updating their sets (nft/update.c).
 *
 * Native, on kernels with the cgroup table family (kernel-patches/): table
 * "cgroup web" is table web of family cgroup, and each bound chain is a
 * base chain with the cgroup's id on its hook (NFTA_HOOK_CGROUP_ID), at
 * the points where cgroup BPF programs run.
 *
 * Emulated, for other kernels: table "cgroup web" becomes "inet cgfw_web".
 * Each chain bound to a cgroup becomes a regular chain holding the user's
 * rules, a base chain on output (egress) or input (ingress), at the user's
 * priority, that matches the socket's cgroup once per packet, and a chain
 * that runs the user's chain and then its policy:
 *
 *	chain cgfw_hook_egress {
 *		type filter hook output priority 0; policy accept;
 *		socket cgroupv2 level 1 == <id of web> goto cgfw_run_egress
 *	}
 *	chain cgfw_run_egress { jump egress; counter drop }
 *	chain egress { <the user's rules> }
 *
 * However the user's chain ends (its end, "return", or the end of a chain
 * it went to with "goto"), nft comes back to cgfw_run_egress and applies
 * the policy, as it would in a base chain.
 *
 * What cgfw needs to find its tables again is kept in the kernel with
 * them, as userdata TLVs of cgfw's own types next to nft's (nft ignores
 * the types it does not know): on the table, that cgfw made it; on a
 * bound chain, its direction, policy and cgroup; on a rule, its text as
 * the user wrote it; on an empty chain cgfw_apply, which apply made what
 * the table holds now. A bound chain's policy is the native base chain's
 * own, and the emulation's is the verdict that ends cgfw_run_C.
 *
 * Everything goes to the kernel in one batch: all or nothing. A table
 * applied again keeps the base chains whose hook, priority, policy and
 * cgroup have not changed, and the batch replaces their rules and every
 * other chain and set. nf_tables swaps a chain's rules at one reading of
 * the generation, so each packet runs either the old rules or the new
 * ones, whole. (A base chain made anew is on the hook beside the old one
 * during the commit, each reading the generation for itself: a packet
 * could meet the new chain before its rules and the old one after its
 * rules were gone.) nf_tables cannot change a table's userdata, which is
 * why the apply is recorded on a chain made anew each time.
 *
 * Where the kernel can (6.9), every table is made owned and persistent
 * (NFT_TABLE_F_OWNER | NFT_TABLE_F_PERSIST): owned by the netlink socket
 * that made it, which a context with hold_tables keeps, and left in force
 * with no owner when that socket closes. While a table has an owner no
 * other process can change it, and "nft flush ruleset" passes it by; a
 * context with hold_tables takes over the tables it writes that have no
 * owner (an update of their flags, in the same batch).
 */
#ifndef CGFW_NFT_NFT_H
#define CGFW_NFT_NFT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend_ops.h"
#include "nl/netlink.h"

#define CGFW_CHAIN_PREFIX	"cgfw_"		/* reserved for the chains below */
#define CGFW_HOOK_PREFIX	"cgfw_hook_"	/* a bound chain's base chain */
#define CGFW_RUN_PREFIX		"cgfw_run_"	/* runs it, then its policy */
#define CGFW_APPLY_CHAIN	"cgfw_apply"	/* records the apply */
#define CGFW_OWNER_COMMENT	"cgfw: "	/* the start of a table's comment */

/* NFT_TABLE_F_PERSIST (Linux 6.9), which bookworm's headers lack */
#define CGFW_TABLE_F_PERSIST	0x4
#define CGFW_TABLE_HELD		(NFT_TABLE_F_OWNER | CGFW_TABLE_F_PERSIST)

/* Userdata TLV types of cgfw's own (nft's are below 8). */
enum {
	/* on a table */
	CGFW_UD_TABLE_FORMAT = 0xc0,	/* u32: the version of what follows */
	CGFW_UD_TABLE_NAME,		/* strz: the user's table name */
	CGFW_UD_TABLE_GEN,		/* u64: the apply (format 1 only) */
	CGFW_UD_TABLE_WITH_BPF,		/* u32: it had bpf (format 1 only) */
	/* on a bound chain: the native base chain, the emulation's hook */
	CGFW_UD_CHAIN_NAME = 0xc0,	/* strz: the user's chain (emulated) */
	CGFW_UD_CHAIN_DIR,		/* u32: enum cgfw_dir */
	CGFW_UD_CHAIN_POLICY,		/* u32: the policy (format 1 only) */
	CGFW_UD_CHAIN_CGROUP_PATH,	/* strz: the path bound to */
	CGFW_UD_CHAIN_CGROUP_ID,	/* u64: the cgroup bound to */
	/* u32: in place of a path too long to record; found by the id */
	CGFW_UD_CHAIN_CGROUP_PATH_LEN,
	/* on chain cgfw_apply */
	CGFW_UD_APPLY_GEN = 0xc8,	/* u64: the apply that made it */
	CGFW_UD_APPLY_WITH_BPF,		/* u32: that apply had bpf too */
	/* on a rule */
	CGFW_UD_RULE_TEXT = 0xc0,	/* strz: the rule as the user wrote it */
	CGFW_UD_RULE_TEXT_LEN,		/* u32: its whole length, if cut */
};

/* 1: the apply on the table; 2: on chain cgfw_apply */
#define CGFW_UD_FORMAT 2

/* Where a target puts tables. */
struct nft_target {
	const char *backend;	/* as "cgfw list" names it */
	uint16_t family;
	const char *family_name;
	const char *prefix;	/* of the kernel's table names */
	bool native;		/* cgroup family: base chains bound by id */
	bool dispatch;		/* bound chains run from cgfw_hook_C chains */
};

extern const struct nft_target cgfw_nft_emulated, cgfw_nft_native;

/* The tables of a family: cgfw's, with the applies that made them. */
struct nft_tables {
	const struct nft_target *tg;
	char **owned, **others;	/* kernel names */
	size_t n_owned, n_others;
	struct cgfw_apply_info *made_by;
	int err;
};

struct mnl_socket;
int cgfw_nft_list_tables(struct mnl_socket *nl, const struct nft_target *tg,
			 struct nft_tables *ts);
void cgfw_nft_tables_release(struct nft_tables *ts);
/* The index of @s in @v, or -1. */
ssize_t cgfw_nft_find(char **v, size_t n, const char *s);
/* The tables of @tg as a backend lists them (backend_ops.tables). */
int cgfw_nft_tables(struct cgfw_ctx *ctx, const struct nft_target *tg,
		    struct backend_table **out, size_t *n);

/* A table of @tg's family that cgfw made (from its userdata). */
struct nftnl_table;
bool cgfw_nft_owned(const struct nftnl_table *t, const struct nft_target *tg);
/*
 * The apply that made an owned table (gen 0: before cgfw kept one), from
 * the table (format 1) and its chain cgfw_apply (@apply, if not NULL).
 */
struct nftnl_chain;
void cgfw_nft_made_by(const struct nftnl_table *t, const struct nft_target *tg,
		      const struct nftnl_chain *apply,
		      struct cgfw_apply_info *ai);
/* The user's name of an owned table. */
const char *cgfw_nft_user_name(const struct nftnl_table *t,
			       const struct nft_target *tg);

/*
 * Add to @nb the batch that makes the tables of @rs in @tg's family, by
 * the apply @ai: each replaces the table of its name in @installed (cgfw's
 * tables as read back, without rules), keeping the base chains it can.
 * Errors (with places) into @ctx.
 */
int cgfw_nft_build(struct cgfw_ctx *ctx, const struct nft_target *tg,
		   const struct cgfw_ruleset *rs,
		   const struct cgfw_ruleset *installed,
		   const struct cgfw_apply_info *ai, struct cgfw_nl_batch *nb);

/* The tables of @tg (one, or every one if @name is NULL) into @l. */
int cgfw_nft_read(struct cgfw_ctx *ctx, const struct nft_target *tg,
		  const char *name, struct cgfw_listing *l);

/*
 * The IR of the installed table @name of @tg, with its rules and its
 * sets' elements if @full; -ENOENT if there is none.
 */
int cgfw_nft_read_ir(struct cgfw_ctx *ctx, const struct nft_target *tg,
		     const char *name, bool full, struct cgfw_ruleset *out);

/* cgfw's tables of @tg, their chains and sets without rules or elements. */
int cgfw_nft_read_installed(struct cgfw_ctx *ctx, const struct nft_target *tg,
			    struct cgfw_ruleset *out);

/* The generation of cgfw's table @name of @tg; -ENOENT: none. */
int cgfw_nft_generation(struct cgfw_ctx *ctx, const struct nft_target *tg,
			const char *name, uint64_t *gen);

/*
 * Element and rule commands for the tables this target holds, in one
 * batch; CGFW_NOT_HELD: none.
 */
int cgfw_nft_update(struct cgfw_ctx *ctx, const struct nft_target *tg,
		    const struct upd_cmds *u);

/*
 * For the rule commands of cgfw update: the shadow's table @name (family
 * inet) with installed table @inst's chains (no hooks, no rules), named
 * objects and named sets (no elements), for nft to compile the commands'
 * statements against.
 */
int cgfw_nft_build_shadow(struct cgfw_ctx *ctx, const struct ir_table *inst,
			  const char *name, struct cgfw_nl_batch *nb);
/*
 * The rule commands of @rw for the user's table @table into @nb, for
 * @tg's table: the statements as nft compiled them into @shadow's chains,
 * in order, with their anonymous sets (their ids in the batch after
 * *@set_id, which is moved on).
 */
int cgfw_nft_build_rule_cmds(struct cgfw_ctx *ctx, const struct nft_target *tg,
			     const struct rw_result *rw, const char *table,
			     const struct ir_table *shadow,
			     struct cgfw_nl_batch *nb, uint32_t *set_id);

/* Can this kernel hold an nf_tables table of @family (and a socket rule)? */
bool cgfw_nft_probe_table(struct cgfw_ctx *ctx, uint16_t family,
			  bool socket_rule);
/*
 * -EPERM, with the reason, if another process holds cgfw's table @name
 * (NULL: any) of @tg (backend_ops.held).
 */
int cgfw_nft_held(struct cgfw_ctx *ctx, const struct nft_target *tg,
		  const char *name);
/* After a batch failed with @err: if the kernel said EPERM, why. */
void cgfw_nft_held_hint(struct cgfw_ctx *ctx, int err);
/* Can it hold a table of @family owned and kept past its owner (6.9)? */
bool cgfw_nft_can_hold(struct cgfw_ctx *ctx, uint16_t family);

#endif /* CGFW_NFT_NFT_H */
