// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library context: the print callback and its level, the last call's
 * error text, and the one check of an options struct.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/ctx.h"

bool cgfw_opts_check(struct cgfw_ctx *ctx, const void *opts, size_t known,
		     const char *type)
{
	const char *p = opts;
	size_t sz, i;

	if (!opts)
		return true;
	memcpy(&sz, p, sizeof(sz));
	if (sz < sizeof(size_t)) {
		if (ctx)
			cgfw_err(ctx, "struct %s has a size of %zu: declare it with CGFW_OPTS()",
				 type, sz);
		return false;
	}
	for (i = known; i < sz; i++) {
		if (!p[i])
			continue;
		/* a field this library does not know, set: refused */
		if (ctx)
			cgfw_err(ctx, "struct %s has fields this libcgfw does not know (byte %zu is set); build against the libcgfw you run with",
				 type, i);
		return false;
	}
	return true;
}

CGFW_API int cgfw_ctx__new(struct cgfw_ctx **out,
			   const struct cgfw_ctx_opts *opts)
{
	struct cgfw_ctx *ctx;

	if (!out || !CGFW_OPTS_VALID(NULL, opts, cgfw_ctx_opts))
		return libcgfw_err(-EINVAL);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return libcgfw_err(-ENOMEM);
	ctx->print = CGFW_OPTS_GET(opts, print, NULL);
	ctx->print_data = CGFW_OPTS_GET(opts, print_data, NULL);
	ctx->log_level = CGFW_OPTS_GET(opts, log_level, CGFW_LOG_WARN);
	ctx->hold_tables = CGFW_OPTS_GET(opts, hold_tables, false);
	cgfw_sb_init(&ctx->err);
	*out = ctx;
	return 0;
}

CGFW_API void cgfw_ctx__free(struct cgfw_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->holder)
		ctx->holder_close(ctx->holder);
	cgfw_ctx_keep(ctx, NULL, NULL);
	cgfw_sb_release(&ctx->err);
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

void cgfw_ctx_keep(struct cgfw_ctx *ctx, void *kept,
		   void (*release)(void *kept))
{
	if (ctx->kept)
		ctx->kept_release(ctx->kept);
	ctx->kept = kept;
	ctx->kept_release = release;
}

void *cgfw_ctx_take(struct cgfw_ctx *ctx, void (*release)(void *kept))
{
	void *kept = ctx->kept;

	if (!kept || ctx->kept_release != release)
		return NULL;
	ctx->kept = NULL;
	return kept;
}

void cgfw_ctx_reset(struct cgfw_ctx *ctx)
{
	cgfw_sb_release(&ctx->err);
	cgfw_ctx_keep(ctx, NULL, NULL);
}

size_t cgfw_err_mark(const struct cgfw_ctx *ctx)
{
	return ctx->err.len;
}

void cgfw_err_drop(struct cgfw_ctx *ctx, size_t mark)
{
	if (!mark) {
		cgfw_sb_release(&ctx->err);
	} else if (ctx->err.buf && mark < ctx->err.len) {
		ctx->err.len = mark;
		ctx->err.buf[mark] = '\0';
	}
}

void cgfw_log(struct cgfw_ctx *ctx, enum cgfw_log_level level,
	      const char *fmt, ...)
{
	struct strbuf sb;
	va_list ap;

	if (!ctx->print || level > ctx->log_level)
		return;
	cgfw_sb_init(&sb);
	va_start(ap, fmt);
	cgfw_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (sb.buf && !sb.oom)
		ctx->print(level, sb.buf, ctx->print_data);
	cgfw_sb_release(&sb);
}

void cgfw_err(struct cgfw_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	cgfw_sb_adds(&ctx->err, "Error: ");
	va_start(ap, fmt);
	cgfw_sb_vaddf(&ctx->err, fmt, ap);
	va_end(ap);
	cgfw_sb_adds(&ctx->err, "\n");
}

const char *cgfw_src_line(const struct cgfw_source *src, unsigned int line,
			  size_t *len)
{
	const char *p = src->text, *end = src->text + src->len, *nl;

	if (!line)
		return NULL;
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

const char *cgfw_src_where(const struct cgfw_source *src, unsigned int line,
			   unsigned int *file_line)
{
	size_t lo = 0, hi = src->n_spans, mid;
	const struct cgfw_src_span *sp;

	*file_line = line;
	if (!src->n_spans || !line)
		return src->name;
	while (hi - lo > 1) {	/* the last span that starts at @line or before */
		mid = (lo + hi) / 2;
		if (src->spans[mid].first <= line)
			lo = mid;
		else
			hi = mid;
	}
	sp = &src->spans[lo];
	*file_line = sp->line + (line - sp->first);
	return sp->file;
}

const char *cgfw_src_lines(const struct cgfw_source *src, unsigned int first,
			   unsigned int last, char *buf, size_t size)
{
	unsigned int a, b;
	const char *fa = cgfw_src_where(src, first, &a);
	const char *fb = cgfw_src_where(src, last, &b);

	if (!last || last == first)
		snprintf(buf, size, "%s:%u", fa, a);
	else if (fa == fb)
		snprintf(buf, size, "%s:%u-%u", fa, a, b);
	else
		snprintf(buf, size, "%s:%u-%s:%u", fa, a, fb, b);
	return buf;
}

void cgfw_src_release(struct cgfw_source *src)
{
	size_t i;

	for (i = 0; i < src->n_files; i++)
		free(src->files[i]);
	free(src->files);
	free(src->spans);
	free(src->name);
	free(src->text);
	memset(src, 0, sizeof(*src));
}

/* Text only: no NUL bytes or other control characters. */
int cgfw_src_check_text(struct cgfw_ctx *ctx, const struct cgfw_source *src)
{
	struct cgfw_loc loc = { 1, 1, 1 };
	size_t i;

	for (i = 0; i < src->len; i++) {
		unsigned char c = src->text[i];

		if (c == '\n') {
			loc.line++;
			loc.col = 1;
			continue;
		}
		if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
			loc.col_end = loc.col;
			cgfw_err_at(ctx, src, &loc,
				    "the input is not text (byte 0x%02x at offset %zu); give cgfw a file of nft rules",
				    c, i);
			return -EINVAL;
		}
		loc.col++;
	}
	return 0;
}

void cgfw_err_at(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		 const struct cgfw_loc *loc, const char *fmt, ...)
{
	unsigned int i, file_line;
	const char *line, *file;
	size_t len;
	va_list ap;

	if (!src || !loc || !loc->line) {	/* no place: the file, or none */
		if (src)
			cgfw_sb_addf(&ctx->err, "%s: ", src->name);
		cgfw_sb_adds(&ctx->err, "Error: ");
		va_start(ap, fmt);
		cgfw_sb_vaddf(&ctx->err, fmt, ap);
		va_end(ap);
		cgfw_sb_adds(&ctx->err, "\n");
		return;
	}
	file = cgfw_src_where(src, loc->line, &file_line);
	cgfw_sb_addf(&ctx->err, "%s:%u:%u", file, file_line, loc->col);
	if (loc->col_end > loc->col)
		cgfw_sb_addf(&ctx->err, "-%u", loc->col_end);
	cgfw_sb_adds(&ctx->err, ": Error: ");
	va_start(ap, fmt);
	cgfw_sb_vaddf(&ctx->err, fmt, ap);
	va_end(ap);
	cgfw_sb_adds(&ctx->err, "\n");

	line = cgfw_src_line(src, loc->line, &len);
	if (!line || len > 512)
		return;
	cgfw_sb_addn(&ctx->err, line, len);
	cgfw_sb_adds(&ctx->err, "\n");
	for (i = 1; i < loc->col && i <= len; i++)
		cgfw_sb_adds(&ctx->err, line[i - 1] == '\t' ? "\t" : " ");
	for (i = loc->col; i <= (loc->col_end ? loc->col_end : loc->col); i++)
		cgfw_sb_adds(&ctx->err, "^");
	cgfw_sb_adds(&ctx->err, "\n");
}
