/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The library context: errors with their place in the input, logging. */
#ifndef CGFW_BASE_CTX_H
#define CGFW_BASE_CTX_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cgfw/cgfw.h>

#include "base/strbuf.h"

/* A place in the user's input: 1-based line and columns. */
struct cgfw_loc {
	unsigned int line;
	unsigned int col;
	unsigned int col_end;	/* inclusive; == col for one character */
};

/* Lines of the text that come from one file, from @first on. */
struct cgfw_src_span {
	unsigned int first;	/* the span's first line in the text */
	unsigned int line;	/* the same line in its file */
	const char *file;	/* the file's name as shown */
};

/*
 * The source a ruleset was compiled from: kept for error messages. With
 * included files (front/include.c) the text holds them all, and the
 * spans say which file and line each line of it is.
 */
struct cgfw_source {
	char *name;	/* as shown in messages */
	char *text;	/* NUL-terminated copy of the input */
	size_t len;
	struct cgfw_src_span *spans;	/* by first line; none: all is name's */
	size_t n_spans;
	char **files;			/* the included files' names */
	size_t n_files;
};

struct cgfw_ctx {
	cgfw_print_fn print;
	void *print_data;
	enum cgfw_log_level log_level;
	struct strbuf err;	/* messages of the current call's failure */
	bool hold_tables;
	/* the netlink socket that holds the tables (nl/netlink.c) */
	void *holder;
	void (*holder_close)(void *holder);
	/*
	 * What a step of the current call made for a later step of the same
	 * call (bpf/backend.c: the tables its check compiled, for its stage),
	 * and how to release it: with the next call, or with the context.
	 */
	void *kept;
	void (*kept_release)(void *kept);
};

/* Start a library call: forget the previous call's error and what it kept. */
void cgfw_ctx_reset(struct cgfw_ctx *ctx);
/* Keep @kept for a later step of this call; what was kept is released. */
void cgfw_ctx_keep(struct cgfw_ctx *ctx, void *kept,
		   void (*release)(void *kept));
/* What was kept with @release, now the caller's; NULL if nothing was. */
void *cgfw_ctx_take(struct cgfw_ctx *ctx, void (*release)(void *kept));
/*
 * For a step whose failure is no failure of the call (a best effort):
 * the errors it adds after cgfw_err_mark() are taken back by
 * cgfw_err_drop(), the call's own kept.
 */
size_t cgfw_err_mark(const struct cgfw_ctx *ctx);
void cgfw_err_drop(struct cgfw_ctx *ctx, size_t mark);
/* Add an error message without a place in the input. */
void cgfw_err(struct cgfw_ctx *ctx, const char *fmt, ...) __printf(2, 3);
/* Add "FILE:L:C-C: Error: msg" plus the source line and carets. */
void cgfw_err_at(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		 const struct cgfw_loc *loc, const char *fmt, ...)
	__printf(4, 5);

/* Send a message to the print callback, if its level is wanted. */
void cgfw_log(struct cgfw_ctx *ctx, enum cgfw_log_level level,
	      const char *fmt, ...) __printf(3, 4);

/* The file that line @line of the text is from, and its line there. */
const char *cgfw_src_where(const struct cgfw_source *src, unsigned int line,
			   unsigned int *file_line);
#define CGFW_WHERE_MAX (2 * PATH_MAX + 32)
/* "FILE:FIRST-LAST" (or "FILE:FIRST-FILE2:LAST", or "FILE:LINE") in @buf */
const char *cgfw_src_lines(const struct cgfw_source *src, unsigned int first,
			   unsigned int last, char *buf, size_t size);
void cgfw_src_release(struct cgfw_source *src);
/* Text only: no NUL bytes or other control characters; else -EINVAL. */
int cgfw_src_check_text(struct cgfw_ctx *ctx, const struct cgfw_source *src);
/* Line @line (1-based) of @src, without its newline; NULL if none. */
const char *cgfw_src_line(const struct cgfw_source *src, unsigned int line,
			  size_t *len);

/*
 * Options structs, as libbpf checks them: NULL is fine; else its size
 * must be at least a size_t, and the bytes past the fields this library
 * knows (a caller built against a newer header) must be zero.
 */
#define offsetofend(TYPE, FIELD) \
	(offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
bool cgfw_opts_check(struct cgfw_ctx *ctx, const void *opts, size_t known,
		     const char *type);
#define CGFW_OPTS_VALID(ctx, opts, TYPE)				\
	cgfw_opts_check(ctx, opts,					\
			offsetofend(struct TYPE, TYPE##__last_field), #TYPE)
#define CGFW_OPTS_HAS(opts, FIELD)					\
	((opts) && (opts)->sz >= offsetofend(typeof(*(opts)), FIELD))
#define CGFW_OPTS_GET(opts, FIELD, fallback)				\
	(CGFW_OPTS_HAS(opts, FIELD) ? (opts)->FIELD : (fallback))

/* Return -err with errno set, as every exported int function does. */
static inline int libcgfw_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

#endif /* CGFW_BASE_CTX_H */
