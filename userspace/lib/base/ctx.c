// SPDX-License-Identifier: LGPL-2.1-or-later
/* The library context: print callback and the last call's error text. */
#include <stdio.h>
#include <stdlib.h>

#include "base/ctx.h"
#include "front/cgroup.h"

CGFW_API int cgfw_ctx__new(struct cgfw_ctx **out,
			   const struct cgfw_ctx_opts *opts)
{
	struct cgfw_ctx *ctx;

	if (!out || (opts && opts->sz < offsetof(struct cgfw_ctx_opts,
						 log_level)))
		return libcgfw_err(-EINVAL);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return libcgfw_err(-ENOMEM);
	ctx->log_level = CGFW_LOG_WARN;
	if (opts) {
		ctx->print = opts->print;
		ctx->print_data = opts->print_data;
		if (opts->sz > offsetof(struct cgfw_ctx_opts, log_level))
			ctx->log_level = opts->log_level;
	}
	sb_init(&ctx->err);
	*out = ctx;
	return 0;
}

CGFW_API void cgfw_ctx__free(struct cgfw_ctx *ctx)
{
	if (!ctx)
		return;
	sb_release(&ctx->err);
	free(ctx);
}

CGFW_API const char *cgfw_ctx__error(const struct cgfw_ctx *ctx)
{
	if (!ctx || !ctx->err.buf)
		return "";
	if (ctx->err.oom)
		return "out of memory while formatting the error message\n";
	return ctx->err.buf;
}

void ctx_reset(struct cgfw_ctx *ctx)
{
	sb_release(&ctx->err);
}

void ctx_err(struct cgfw_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	sb_adds(&ctx->err, "Error: ");
	va_start(ap, fmt);
	sb_vaddf(&ctx->err, fmt, ap);
	va_end(ap);
	sb_adds(&ctx->err, "\n");
}

/* The text of line @line (1-based) of @src, without its newline. */
static const char *src_line(const struct cgfw_source *src, unsigned int line,
			    size_t *len)
{
	const char *p = src->text, *end = src->text + src->len, *nl;

	while (--line && p < end) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			return NULL;
		p = nl + 1;
	}
	nl = memchr(p, '\n', end - p);
	*len = nl ? (size_t)(nl - p) : (size_t)(end - p);
	return p;
}

void ctx_err_at(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		const struct cgfw_loc *loc, const char *fmt, ...)
{
	const char *line;
	unsigned int i;
	size_t len;
	va_list ap;

	if (!loc || !loc->line) {
		sb_addf(&ctx->err, "%s: Error: ", src->name);
		va_start(ap, fmt);
		sb_vaddf(&ctx->err, fmt, ap);
		va_end(ap);
		sb_adds(&ctx->err, "\n");
		return;
	}
	sb_addf(&ctx->err, "%s:%u:%u", src->name, loc->line, loc->col);
	if (loc->col_end > loc->col)
		sb_addf(&ctx->err, "-%u", loc->col_end);
	sb_adds(&ctx->err, ": Error: ");
	va_start(ap, fmt);
	sb_vaddf(&ctx->err, fmt, ap);
	va_end(ap);
	sb_adds(&ctx->err, "\n");

	line = src_line(src, loc->line, &len);
	if (!line || len > 512)
		return;
	sb_addn(&ctx->err, line, len);
	sb_adds(&ctx->err, "\n");
	for (i = 1; i < loc->col && i <= len; i++)
		sb_adds(&ctx->err, line[i - 1] == '\t' ? "\t" : " ");
	for (i = loc->col; i <= (loc->col_end ? loc->col_end : loc->col); i++)
		sb_adds(&ctx->err, "^");
	sb_adds(&ctx->err, "\n");
}

static const char *const backend_names[] = {
	[CGFW_BACKEND_AUTO] = "auto",
	[CGFW_BACKEND_NFT] = "nft",
	[CGFW_BACKEND_BPF] = "bpf",
	[CGFW_BACKEND_BOTH] = "both",
	[CGFW_BACKEND_NFT_NATIVE] = "nft-native",
	[CGFW_BACKEND_NFT_EMULATED] = "nft-emulated",
};

_Static_assert(ARRAY_SIZE(backend_names) == CGFW_BACKEND_NFT_EMULATED + 1,
	       "every backend has a name");

CGFW_API int cgfw_backend__from_str(const char *s, enum cgfw_backend *out)
{
	size_t i;

	for (i = 0; s && i < ARRAY_SIZE(backend_names); i++) {
		if (!strcmp(s, backend_names[i])) {
			*out = i;
			return 0;
		}
	}
	return libcgfw_err(-EINVAL);
}

CGFW_API const char *cgfw_backend__str(enum cgfw_backend b)
{
	if ((size_t)b >= ARRAY_SIZE(backend_names))
		return "?";
	return backend_names[b];
}

const char *cgfw_dir_str(enum cgfw_dir dir)
{
	return dir == CGFW_EGRESS ? "egress" : "ingress";
}
