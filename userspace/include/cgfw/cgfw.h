/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcgfw: nftables rules for a cgroup v2, compiled by nft itself and
 * enforced by netfilter (a native cgroup table family, or an inet table
 * that dispatches on "socket cgroupv2"), by CGROUP_SKB eBPF programs, or
 * by both.
 *
 * Conventions (see docs/naming.rst):
 *  - every object is opaque and reached through object__verb() functions;
 *  - int functions return 0 or -errno and also set errno;
 *    pointer functions return NULL and set errno;
 *  - the library never prints and never exits: messages go to the print
 *    callback of the context, and the text of the last error is kept in the
 *    context (cgfw_ctx__error());
 *  - options structs start with their size (CGFW_OPTS()), so fields can be
 *    added without breaking callers built against an older header; a
 *    caller built against a newer header is refused (-EINVAL) only if it
 *    sets a field this library does not know.
 */
#ifndef CGFW_CGFW_H
#define CGFW_CGFW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CGFW_API __attribute__((visibility("default")))

#define CGFW_VERSION_MAJOR 0
#define CGFW_VERSION_MINOR 3
#define CGFW_VERSION "0.3.0"

/** cgfw_version() - the version of the library in use, "MAJOR.MINOR.PATCH" */
CGFW_API const char *cgfw_version(void);

/*
 * Declare an options struct of TYPE, zeroed (its padding too: the library
 * refuses unknown bytes that are set), with .sz set.
 */
#define CGFW_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		memset(&NAME, 0, sizeof(struct TYPE));			\
		(struct TYPE){ .sz = sizeof(struct TYPE),		\
			       __VA_ARGS__ };				\
	})

struct cgfw_ctx;
struct cgfw_ruleset;
struct cgfw_listing;

enum cgfw_log_level {
	CGFW_LOG_ERROR,
	CGFW_LOG_WARN,
	CGFW_LOG_INFO,
	CGFW_LOG_DEBUG,
};

typedef void (*cgfw_print_fn)(enum cgfw_log_level level, const char *msg,
			      void *data);

struct cgfw_ctx_opts {
	size_t sz;
	/*
	 * Warnings and information: waiting for another cgfw command,
	 * an interrupted apply finished. Errors are kept in the ctx
	 * (cgfw_ctx__error()), not printed.
	 */
	cgfw_print_fn print;
	void *print_data;
	enum cgfw_log_level log_level;	/* the most detailed sent; WARN */
	/*
	 * The nft tables this context makes or changes are held by it
	 * (nf_tables' owner flag) until it is freed: no other process can
	 * change or delete them, "nft flush ruleset" passes them by. When
	 * the context is freed or the process dies they stay in force,
	 * held by no one, for any cgfw command to change or take over.
	 * Kernels before 6.9 cannot: then nothing is held. For a daemon.
	 */
	bool hold_tables;
	size_t :0;
};
#define cgfw_ctx_opts__last_field hold_tables

/**
 * cgfw_ctx__new() - create a library context
 * @out: the new context, set on success only
 * @opts: options, may be NULL
 *
 * Return: 0, or -errno (errno set).
 */
CGFW_API int cgfw_ctx__new(struct cgfw_ctx **out,
			   const struct cgfw_ctx_opts *opts);

/** cgfw_ctx__free() - free a context; NULL is fine. */
CGFW_API void cgfw_ctx__free(struct cgfw_ctx *ctx);

/**
 * cgfw_ctx__error() - the message of the last failed call
 *
 * One or more lines, each "FILE:LINE:COL: Error: what is wrong" followed by
 * the offending source line and a caret underline where the error has a
 * place in the input. Empty string when the last call did not fail.
 * The string belongs to the context and lives until the next call.
 */
CGFW_API const char *cgfw_ctx__error(const struct cgfw_ctx *ctx);

enum cgfw_backend {
	CGFW_BACKEND_AUTO,	/* native nft family, else bpf, else emulated */
	CGFW_BACKEND_NFT,	/* nf_tables: native family or emulated inet */
	CGFW_BACKEND_BPF,	/* generated CGROUP_SKB programs */
	CGFW_BACKEND_BOTH,	/* nft and bpf, a packet must pass both */
	CGFW_BACKEND_NFT_NATIVE,	/* nf_tables cgroup family only */
	CGFW_BACKEND_NFT_EMULATED,	/* inet + socket cgroupv2 only */
};

/**
 * cgfw_backend__from_str() - parse "auto", "nft", "bpf", "both",
 * "nft-native" or "nft-emulated".
 */
CGFW_API int cgfw_backend__from_str(const char *s, enum cgfw_backend *out);
CGFW_API const char *cgfw_backend__str(enum cgfw_backend b);

struct cgfw_compile_opts {
	size_t sz;
	/*
	 * A cgroup that does not exist (yet) is no error: its chains are
	 * bound to nothing and wait for it (the daemon binds them).
	 */
	bool allow_missing_cgroups;
	size_t :0;
};
#define cgfw_compile_opts__last_field allow_missing_cgroups

/**
 * cgfw_ruleset__compile() - rewrite, compile and read back a rule file
 * @ctx: context
 * @name: the file name used in messages ("-" is shown as "<stdin>")
 * @buf: the file's text; need not be NUL-terminated
 * @len: its length
 * @opts: options, may be NULL
 * @out: the compiled ruleset, set on success only
 *
 * The text is nft syntax with the cgroup table family. It is compiled by
 * libnftables inside a throwaway (shadow) network namespace, and the result
 * is read back as nf_tables bytecode. Nothing is installed. Cgroup paths are
 * resolved against the cgroup v2 mount and must exist (unless
 * opts->allow_missing_cgroups). libnftables runs in a child process: if it
 * crashes on the input, the call fails, the caller goes on.
 *
 * Return: 0, or -errno (errno set) with the message in cgfw_ctx__error():
 * -EINVAL for bad input, -ENOENT for a missing cgroup, -EPERM without the
 * privilege to create the shadow namespace.
 */
CGFW_API int cgfw_ruleset__compile(struct cgfw_ctx *ctx, const char *name,
				   const char *buf, size_t len,
				   const struct cgfw_compile_opts *opts,
				   struct cgfw_ruleset **out);

/**
 * cgfw_ruleset__compile_file() - cgfw_ruleset__compile() on a file
 * @path: a file path, or "-" for standard input
 */
CGFW_API int cgfw_ruleset__compile_file(struct cgfw_ctx *ctx,
					const char *path,
					const struct cgfw_compile_opts *opts,
					struct cgfw_ruleset **out);

CGFW_API void cgfw_ruleset__free(struct cgfw_ruleset *rs);

/**
 * cgfw_ruleset__rebind() - find each bound chain's cgroup again by its path
 *
 * A cgroup removed and made again at its path (a service restart, a new
 * container) is another cgroup: what was applied for the old one filters
 * nothing now. This binds the chains of @rs to the cgroups at their paths
 * now; applying @rs again then puts them in force.
 *
 * Return: how many chains changed cgroup (0: applying again would change
 * nothing), or -errno.
 */
CGFW_API int cgfw_ruleset__rebind(struct cgfw_ctx *ctx,
				  struct cgfw_ruleset *rs);
/*
 * cgfw_ruleset__waiting() - bound chains whose path has no cgroup now
 * (compiled with allow_missing_cgroups, or rebound after a removal); such
 * a ruleset cannot be applied until they have one.
 */
CGFW_API size_t cgfw_ruleset__waiting(const struct cgfw_ruleset *rs);
/* The cgroup path of the @i-th bound chain, or NULL past the last. */
CGFW_API const char *cgfw_ruleset__cgroup(const struct cgfw_ruleset *rs,
					  size_t i);
/* The name of the @i-th table, or NULL past the last. */
CGFW_API const char *cgfw_ruleset__table(const struct cgfw_ruleset *rs,
					 size_t i);

/**
 * cgfw_guards__sync() - hold a new cgroup's packets until its table binds
 * @rs: rulesets (whose chains with policy drop are guarded)
 * @in_force: for each, whether it is applied at its cgroups now
 * @n: how many; 0 removes every guard
 *
 * When a chain's cgroup is made again, its processes can send before the
 * table is bound to the new cgroup. A guard, a program on the chain's
 * parent cgroup, drops the packets of the parent's child cgroups it was
 * not told about. This tells each guard about every child of its parent
 * that exists now, except a guarded chain's cgroup while its ruleset is
 * not in force at it, sets the guards needed and removes the others.
 * Call it after every change; a child made in between is held until then.
 *
 * Return: 0, or -errno.
 */
CGFW_API int cgfw_guards__sync(struct cgfw_ctx *ctx,
			       struct cgfw_ruleset *const *rs,
			       const bool *in_force, size_t n);

/*
 * The bpf backend's log statements: a program writes a record for each
 * packet a log statement sees to its table's ring buffer; a log reader
 * turns them into the lines nf_log writes ("PREFIXIN= OUT=lo SRC=..."),
 * for the caller to put in the kernel log (cgfw daemon writes them to
 * /dev/kmsg). Records nobody reads fill the buffer, and the next are
 * lost and counted (cgfw list).
 */
struct cgfw_log_reader;

/* A line, without its newline, and the statement's level (0-7). */
typedef void (*cgfw_log_line_fn)(int level, const char *line, void *data);

struct cgfw_log_reader_opts {
	size_t sz;
	size_t :0;
};
#define cgfw_log_reader_opts__last_field sz

/**
 * cgfw_log_reader__new() - a reader of the bpf tables' log records
 * @fn: called with each line, from cgfw_log_reader__read()
 *
 * It reads nothing until cgfw_log_reader__refresh() finds the tables.
 * Return: 0, or -errno.
 */
CGFW_API int cgfw_log_reader__new(struct cgfw_ctx *ctx, cgfw_log_line_fn fn,
				  void *data,
				  const struct cgfw_log_reader_opts *opts,
				  struct cgfw_log_reader **out);
/*
 * Find the ring buffers of the bpf tables installed now (after an apply
 * or a delete); the records waiting in those it read are read first, to
 * @fn. Then cgfw_log_reader__fd() may change.
 */
CGFW_API int cgfw_log_reader__refresh(struct cgfw_log_reader *r);
/* How many tables it reads; 0: none logs. */
CGFW_API size_t cgfw_log_reader__tables(const struct cgfw_log_reader *r);
/* An fd that polls readable when records wait; -1 with no table. */
CGFW_API int cgfw_log_reader__fd(const struct cgfw_log_reader *r);
/*
 * The records waiting, each to @fn: 4,096 at most (poll again for the
 * rest). Return: 0, or -errno.
 */
CGFW_API int cgfw_log_reader__read(struct cgfw_log_reader *r);
CGFW_API void cgfw_log_reader__free(struct cgfw_log_reader *r);

/**
 * cgfw_sets__expire() - take expired elements out of the bpf tables' sets
 * @removed: set to how many were taken out (NULL: not wanted)
 *
 * In a set with timeouts, the bpf backend's programs treat an expired
 * element as absent, but it keeps its place in the set's map until this
 * takes it out (nf_tables collects its own every second or so; cgfw
 * daemon calls this every 2 seconds). Until then a set that rules add to
 * can be full of expired elements and refuse new ones.
 *
 * Return: 0, or -errno (what failed in @ctx).
 */
CGFW_API int cgfw_sets__expire(struct cgfw_ctx *ctx, size_t *removed);

/**
 * cgfw_ruleset__bytecode() - the nf_tables bytecode of every rule, as text
 * @text: set to a malloc()ed string the caller frees
 *
 * Each rule is shown with its source line, in the format of
 * "nft --debug=netlink": one "[ expr ... ]" line per expression.
 */
CGFW_API int cgfw_ruleset__bytecode(const struct cgfw_ruleset *rs,
				    char **text);

/**
 * cgfw_ruleset__bpf_asm() - the CGROUP_SKB programs of the bpf backend
 * @text: set to a malloc()ed string the caller frees
 *
 * Annotated BPF assembly of every program (one per table, cgroup and
 * direction), each block labelled with the rule and source line it came
 * from, and the maps the programs use. Nothing is loaded.
 *
 * Return: 0, or -errno; -EOPNOTSUPP with the rule's place for what the bpf
 * backend cannot do.
 */
CGFW_API int cgfw_ruleset__bpf_asm(struct cgfw_ctx *ctx,
				   const struct cgfw_ruleset *rs, char **text);

/**
 * cgfw_ruleset__bpf_object() - the bpf backend's programs as an ELF object
 * @path: the object file to write
 * @commands: set to a malloc()ed string: the "bpftool map update" lines
 *	that fill its maps once loaded (an object cannot carry hash-map
 *	contents)
 *
 * One section per direction (cgroup_skb/egress, cgroup_skb/ingress), one
 * function symbol per program, maps described by BTF: what
 * "bpftool prog loadall" takes.
 */
CGFW_API int cgfw_ruleset__bpf_object(struct cgfw_ctx *ctx,
				      const struct cgfw_ruleset *rs,
				      const char *path, char **commands);

/**
 * cgfw_ruleset__bpf_pin() - load the programs, unattached, and pin them
 * @dir: a directory on a bpf file system
 * @pinned: set to a malloc()ed string: the pinned paths, one a line
 *
 * For tools that attach pinned programs themselves (systemd's
 * IPEgressFilterPath=). Each is pinned as DIR/TABLE-DIRECTION-CGROUPID.
 */
CGFW_API int cgfw_ruleset__bpf_pin(struct cgfw_ctx *ctx,
				   const struct cgfw_ruleset *rs,
				   const char *dir, char **pinned);

struct cgfw_apply_opts {
	size_t sz;
	enum cgfw_backend backend;
	size_t :0;
};
#define cgfw_apply_opts__last_field backend

/**
 * cgfw_ruleset__check() - what an apply would do, without doing it
 *
 * Chooses the backends as cgfw_ruleset__apply() does, saying why through
 * the print callback, and has each check every table: the bpf backend
 * compiles its programs (it does not load them), the emulated nft target
 * says what it sees otherwise than the others. Nothing is installed.
 *
 * Return: 0, or -errno (-EOPNOTSUPP: a backend cannot do it).
 */
CGFW_API int cgfw_ruleset__check(struct cgfw_ctx *ctx,
				 const struct cgfw_ruleset *rs,
				 const struct cgfw_apply_opts *opts);

/**
 * cgfw_ruleset__apply() - install a compiled ruleset, atomically
 *
 * Every table of the ruleset replaces the table of the same name that cgfw
 * installed before, in one transaction: either all of it takes effect or
 * nothing changes, and there is no moment without rules. cgfw commands
 * wait for each other (one at a time in a network namespace); an apply
 * that was killed is finished or rolled back by the next one.
 *
 * Return: 0, or -errno; -EOPNOTSUPP when the backend is not available.
 */
CGFW_API int cgfw_ruleset__apply(struct cgfw_ctx *ctx,
				 const struct cgfw_ruleset *rs,
				 const struct cgfw_apply_opts *opts);

struct cgfw_update_opts {
	size_t sz;
	size_t :0;
};
#define cgfw_update_opts__last_field sz

/**
 * cgfw_update() - change installed tables in place with nft's commands
 * @name: the file name used in messages
 * @buf: nft commands: "add element cgroup TABLE SET { ... }" and
 *	"delete element ..."; for tables of the nft backend also "add rule
 *	cgroup TABLE CHAIN [position N] ...", "insert rule ...", "replace
 *	rule ... handle N ...", "delete rule ... handle N" and "flush chain
 *	cgroup TABLE CHAIN"; nothing else
 *
 * The elements and statements are compiled by nft against the table as
 * installed. The whole of @buf is one change: the nft backend takes it in
 * one transaction, the bpf backend its elements in its maps without
 * reloading its programs (put back if any part fails); it refuses rule
 * commands, its rules being its programs.
 *
 * Return: 0, or -errno; -ENOENT if no table of that name has that set or
 * chain, -EOPNOTSUPP for rule commands on a table of the bpf backend.
 */
CGFW_API int cgfw_update(struct cgfw_ctx *ctx, const char *name,
			 const char *buf, size_t len,
			 const struct cgfw_update_opts *opts);

/**
 * cgfw_table__delete() - remove a table that cgfw installed
 * Return: 0, -ENOENT if cgfw installed no table of that name.
 */
CGFW_API int cgfw_table__delete(struct cgfw_ctx *ctx, const char *name);

/** cgfw_flush() - remove every table cgfw installed, and nothing else. */
CGFW_API int cgfw_flush(struct cgfw_ctx *ctx);

struct cgfw_list_opts {
	size_t sz;
	const char *table;	/* one table's name, or NULL for all */
	/*
	 * the tables and their chains' bindings only: no rules, set
	 * elements or counters (what cgfw_listing__unbound() needs,
	 * cheap enough to ask every second)
	 */
	bool bindings_only;
	size_t :0;
};
#define cgfw_list_opts__last_field bindings_only

/**
 * cgfw_listing__new() - read back what cgfw installed, from the kernel
 * @opts: options, may be NULL
 *
 * Return: 0, -ENOENT if opts->table is given and not installed.
 */
CGFW_API int cgfw_listing__new(struct cgfw_ctx *ctx,
			       const struct cgfw_list_opts *opts,
			       struct cgfw_listing **out);
CGFW_API void cgfw_listing__free(struct cgfw_listing *l);

/**
 * cgfw_listing__unbound() - bound chains that filter nothing now
 *
 * The number of chains of @l bound to a cgroup that was removed (or
 * replaced by another at its path), or waiting for a path to appear, and
 * of tables that do not filter as applied (a bpf table whose conntrack
 * keeper was deleted): what a monitoring check looks at.
 */
CGFW_API size_t cgfw_listing__unbound(const struct cgfw_listing *l);

struct cgfw_format_opts {
	size_t sz;
	bool json;	/* JSON (nft -j's schema), not nft syntax */
	bool handles;	/* nft syntax: "# handle N", as nft -a (JSON has them) */
	size_t :0;
};
#define cgfw_format_opts__last_field handles

/**
 * cgfw_listing__format() - the listing in nft syntax or as JSON
 * @opts: options, may be NULL (nft syntax)
 * @text: set to a malloc()ed string the caller frees
 *
 * nft syntax with the cgroup family, fit to be applied again (cgfw apply,
 * or nft with the family), live counters in place; or JSON in the schema
 * of "nft -j list ruleset" for reading (rules carry their text, not nft's
 * "expr": nft -j -f does not take it), with cgfw's additions under the key
 * "cgfw".
 */
CGFW_API int cgfw_listing__format(const struct cgfw_listing *l,
				  const struct cgfw_format_opts *opts,
				  char **text);

struct cgfw_status {
	size_t sz;
	char cgroup2_mount[256];	/* "" when cgroup2 is not mounted */
	char bpffs_mount[256];		/* "" when no bpffs is mounted */
	bool nft_available;		/* nf_tables answers */
	bool nft_cgroup_family;		/* the native cgroup family */
	bool nft_socket_cgroupv2;	/* socket cgroupv2 in inet output */
	bool bpf_cgroup_skb;		/* BPF_PROG_TYPE_CGROUP_SKB loads */
	bool privileged;		/* CAP_NET_ADMIN and CAP_SYS_ADMIN */
	bool bpf_backend_built;		/* always true (every build has it) */
	/* the bpf backend reads the kernel's sk_buff through its BTF: */
	bool bpf_device_names;		/* meta iifname, oifname, types */
	bool bpf_ct;			/* ct at egress */
	size_t :0;
};

/**
 * cgfw_status__probe() - what this machine supports
 * @st: filled in; st->sz must be set (CGFW_OPTS(cgfw_status, st))
 *
 * Without the privileges to ask the kernel (st->privileged false), the
 * kernel features are not known: they read false, and
 * cgfw_status__format() says "unknown".
 */
CGFW_API int cgfw_status__probe(struct cgfw_ctx *ctx, struct cgfw_status *st);

/** cgfw_status__format() - the status as text or JSON (opts->json) */
CGFW_API int cgfw_status__format(const struct cgfw_status *st,
				 const struct cgfw_format_opts *opts,
				 char **text);

#ifdef __cplusplus
}
#endif
#endif /* CGFW_CGFW_H */
