// SPDX-License-Identifier: LGPL-2.1-or-later
/* A growable, always NUL-terminated string. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

void cgfw_sb_init(struct strbuf *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void cgfw_sb_release(struct strbuf *sb)
{
	free(sb->buf);
	cgfw_sb_init(sb);
}

static bool sb_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	size_t cap = sb->cap ? sb->cap : 64;
	char *p;

	if (sb->oom)
		return false;
	if (need <= sb->cap)
		return true;
	while (cap < need)
		cap *= 2;
	p = realloc(sb->buf, cap);
	if (!p) {
		sb->oom = true;
		return false;
	}
	sb->buf = p;
	sb->cap = cap;
	return true;
}

bool cgfw_sb_reserve(struct strbuf *sb, size_t n)
{
	return sb_grow(sb, n);
}

void cgfw_sb_addn(struct strbuf *sb, const char *s, size_t n)
{
	if (!sb_grow(sb, n))
		return;
	if (n)
		memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void cgfw_sb_adds(struct strbuf *sb, const char *s)
{
	cgfw_sb_addn(sb, s, strlen(s));
}

void cgfw_sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || !sb_grow(sb, n))
		return;
	vsnprintf(sb->buf + sb->len, n + 1, fmt, ap);
	sb->len += n;
}

void cgfw_sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cgfw_sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *cgfw_sb_detach(struct strbuf *sb)
{
	char *p;

	if (sb->oom) {
		cgfw_sb_release(sb);
		return NULL;
	}
	if (!sb->buf) {
		/* nothing was added: an empty string, terminated */
		if (!sb_grow(sb, 0))
			return NULL;
		sb->buf[0] = '\0';
	}
	p = sb->buf;
	cgfw_sb_init(sb);
	return p;
}
