/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal libcgfw helpers: lists, strings, errors, the IR. */
#ifndef CGFW_INTERNAL_H
#define CGFW_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cgfw/cgfw.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#define __printf(a, b) __attribute__((format(printf, a, b)))

/* ---- intrusive doubly linked list, as in the kernel ---- */

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }

static inline void list_init(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_init(n);
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_for_each_entry(pos, head, member)				\
	for (pos = list_entry((head)->next, typeof(*pos), member);	\
	     &pos->member != (head);					\
	     pos = list_entry(pos->member.next, typeof(*pos), member))
#define list_for_each_entry_safe(pos, n, head, member)			\
	for (pos = list_entry((head)->next, typeof(*pos), member),	\
	     n = list_entry(pos->member.next, typeof(*pos), member);	\
	     &pos->member != (head);					\
	     pos = n, n = list_entry(n->member.next, typeof(*n), member))

/* ---- growable string ---- */

struct strbuf {
	char *buf;
	size_t len, cap;
	bool oom;	/* an append failed; buf holds what fit */
};

void sb_init(struct strbuf *sb);
void sb_release(struct strbuf *sb);
void sb_addn(struct strbuf *sb, const char *s, size_t n);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addf(struct strbuf *sb, const char *fmt, ...) __printf(2, 3);
void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Give the buffer away (NUL-terminated) or NULL if an append failed. */
char *sb_detach(struct strbuf *sb);

/* ---- source locations and errors ---- */

/* A place in the user's input: 1-based line and columns. */
struct cgfw_loc {
	unsigned int line;
	unsigned int col;
	unsigned int col_end;	/* inclusive; == col for one character */
};

/* The source a ruleset was compiled from: kept for error messages. */
struct cgfw_source {
	char *name;	/* as shown in messages */
	char *text;	/* NUL-terminated copy of the input */
	size_t len;
};

struct cgfw_ctx {
	cgfw_print_fn print;
	void *print_data;
	enum cgfw_log_level log_level;
	struct strbuf err;	/* messages of the current call's failure */
};

/* Start a library call: forget the previous call's error. */
void ctx_reset(struct cgfw_ctx *ctx);
/* Add an error message without a place in the input. */
void ctx_err(struct cgfw_ctx *ctx, const char *fmt, ...) __printf(2, 3);
/* Add "FILE:L:C-C: Error: msg" plus the source line and carets. */
void ctx_err_at(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		const struct cgfw_loc *loc, const char *fmt, ...)
	__printf(4, 5);

/* Return -err with errno set, as every exported int function does. */
static inline int libcgfw_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

/* ---- cgroup v2 ---- */

struct cgfw_cgroup {
	char *path;	/* absolute path of the cgroup directory */
	uint64_t id;	/* cgroup id (inode number of the directory) */
	unsigned int level;	/* depth below the cgroup2 root, root = 0 */
};

/* Find the cgroup2 mount point; 0 or -ENOENT. @buf gets the path. */
int cgroup2_mount(char *buf, size_t size);
/* Resolve a user path (absolute, or relative to the mount). */
int cgroup_resolve(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		   const struct cgfw_loc *loc, const char *user_path,
		   struct cgfw_cgroup *out);
void cgroup_release(struct cgfw_cgroup *cg);
/* The path of the cgroup with this id under the mount, or a note. */
char *cgroup_path_of_id(uint64_t id);

/* ---- rewrite: the cgroup family into inet (rewrite.c) ---- */

enum cgfw_dir {
	CGFW_EGRESS,
	CGFW_INGRESS,
};

const char *cgfw_dir_str(enum cgfw_dir dir);

/* What the rewrite learnt about one chain of the user's file. */
struct rw_chain {
	struct list_head list;
	char *table;
	char *name;
	struct cgfw_loc loc;		/* the chain's name */
	bool bound;			/* has "hook ingress|egress cgroup" */
	enum cgfw_dir dir;
	char *cgroup_path;		/* as written, unquoted */
	struct cgfw_loc cgroup_loc;	/* the quoted path */
	struct cgfw_loc *rule_locs;	/* rules in source order */
	size_t n_rules, cap_rules;
	bool order_unknown;		/* insert/replace/position used */
};

struct rw_table {
	struct list_head list;
	char *name;
	struct cgfw_loc loc;
};

/* An "add element" or "delete element" command of the user's file. */
struct rw_elem_cmd {
	struct list_head list;
	bool del;
	char *table;
	char *set;
	size_t start, end;	/* its bytes in the text */
	size_t rest;		/* where the elements start, after the set */
	struct cgfw_loc loc;	/* its first word */
};

struct rw_result {
	char *text;		/* the rewritten input, same lines */
	size_t len;
	struct list_head tables;	/* struct rw_table */
	struct list_head chains;	/* struct rw_chain */
	struct list_head elem_cmds;	/* struct rw_elem_cmd */
	bool has_other;		/* a statement that is not an element command */
	struct cgfw_loc other_loc;	/* the first of them */
};

int rewrite(struct cgfw_ctx *ctx, const struct cgfw_source *src,
	    struct rw_result *out);
void rw_result_release(struct rw_result *rw);
struct rw_chain *rw_find_chain(const struct rw_result *rw, const char *table,
			       const char *chain);

/* ---- the IR: what nft compiled, plus cgroup bindings (ir.c) ---- */

struct nftnl_table;
struct nftnl_chain;
struct nftnl_set;
struct nftnl_rule;

struct ir_rule {
	struct list_head list;
	struct nftnl_rule *nl;	/* expressions, as nf_tables bytecode */
	struct cgfw_loc loc;	/* where the user wrote it (line 0: unknown) */
};

struct ir_chain {
	struct list_head list;
	char *name;
	struct cgfw_loc loc;
	bool base;		/* bound to a cgroup: hook ingress|egress */
	enum cgfw_dir dir;
	struct cgfw_cgroup cgroup;
	int32_t priority;
	uint32_t policy;	/* NF_ACCEPT or NF_DROP */
	struct nftnl_chain *nl;	/* as read back from the shadow */
	struct list_head rules;	/* struct ir_rule */
};

struct ir_set {
	struct list_head list;
	struct nftnl_set *nl;	/* attributes and elements */
	bool anonymous;
};

struct ir_table {
	struct list_head list;
	char *name;
	struct cgfw_loc loc;
	struct nftnl_table *nl;
	struct list_head chains;	/* struct ir_chain */
	struct list_head sets;		/* struct ir_set */
};

struct cgfw_ruleset {
	struct cgfw_source src;
	struct list_head tables;	/* struct ir_table */
	char *listing;		/* nft's listing of the shadow, for set decls */
};

void ir_table_free(struct ir_table *t);
struct ir_chain *ir_find_chain(const struct ir_table *t, const char *name);

/* ---- shadow namespace compile and read-back (compile.c, readback.c) ---- */

/* Run the rewritten text through libnftables in the current netns. */
int nft_compile_text(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		     const char *text, size_t len);
/* nft's "list ruleset" of the current netns. */
int nft_list_text(const char *cmd, char **out);
/* Read every table of the current netns into @rs (unbound chains). */
int readback(struct cgfw_ctx *ctx, struct cgfw_ruleset *rs);
/* The same, for the tables of one family. */
int readback_family(struct cgfw_ctx *ctx, struct cgfw_ruleset *rs,
		    uint16_t family);

/* Enter a new, empty network namespace; *saved gets the old one. */
int netns_enter_shadow(struct cgfw_ctx *ctx, int *saved);
/* Go back to the namespace saved by netns_enter_shadow(). */
int netns_leave_shadow(int saved);

/* ---- netlink (mnl.c) ---- */

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

/* ---- backends (backend.c, nft_emul.c, bpf.c) ---- */

/* Tables cgfw installed, as found in the kernel. */
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

/* One named set an update touches (update.c). */
struct upd_set {
	struct list_head list;
	char *table, *set;
	const struct cgfw_loc *loc;	/* the first command naming it */
	char *decl;			/* "set S { type ...; }" */
	struct nftnl_set *add, *del;	/* elements compiled by nft */
};

struct upd_cmds {
	struct cgfw_source src;
	struct rw_result rw;
	struct list_head sets;	/* struct upd_set */
};

/* "set S { ... }" of table @table in nft's listing, elements left out */
char *set_decl_from_listing(const char *listing, const char *table,
			    const char *set);

struct backend_ops {
	const char *name;
	/* 0 if usable here, else -EOPNOTSUPP with the reason in ctx. */
	int (*probe)(struct cgfw_ctx *ctx);
	int (*apply)(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs);
	/* @names NULL: every table of this backend. -ENOENT: none found. */
	int (*remove)(struct cgfw_ctx *ctx, const char *name);
	int (*list)(struct cgfw_ctx *ctx, const char *name,
		    struct cgfw_listing *l);
	/* The declaration of set @set of table @table; -ENOENT: not here. */
	int (*set_decl)(struct cgfw_ctx *ctx, const char *table,
			const char *set, char **decl);
	/* Element changes to the tables it holds; -ENOENT: none of them. */
	int (*update)(struct cgfw_ctx *ctx, const struct upd_cmds *u);
};

extern const struct backend_ops nft_emul_backend;
extern const struct backend_ops nft_native_backend;
extern const struct backend_ops bpf_backend;

/* Every backend that can hold tables: for list, delete, flush, update. */
const struct backend_ops *const *backends_all(size_t *n);

/* Can this kernel hold an nf_tables table of @family (and a socket rule)? */
bool nft_probe_table(struct cgfw_ctx *ctx, uint16_t family, bool socket_rule);

/*
 * The cgroup table family of the kernel series (kernel-patches/: its
 * include/uapi/linux/netfilter.h and netfilter/nf_tables.h), which the
 * installed headers do not have.
 */
#define NFPROTO_CGROUP		13
#define NF_CGROUP_INGRESS	0
#define NF_CGROUP_EGRESS	1
#define NFTA_HOOK_CGROUP_ID	(NFTA_HOOK_DEVS + 1)

/* Can the bpf backend compile every table of @rs? (no kernel change) */
int bpf_check(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs);

int listing_add(struct cgfw_listing *l, struct inst_table *t);
void inst_table_release(struct inst_table *t);

#endif /* CGFW_INTERNAL_H */
