/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A growable string, always NUL-terminated once anything was added. */
#ifndef CGFW_BASE_STRBUF_H
#define CGFW_BASE_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/list.h"

struct strbuf {
	char *buf;
	size_t len, cap;
	bool oom;	/* an append failed; buf holds what fit */
};

void cgfw_sb_init(struct strbuf *sb);
void cgfw_sb_release(struct strbuf *sb);
/* Room for @n more bytes after len, to be written in place; false: OOM. */
bool cgfw_sb_reserve(struct strbuf *sb, size_t n);
void cgfw_sb_addn(struct strbuf *sb, const char *s, size_t n);
void cgfw_sb_adds(struct strbuf *sb, const char *s);
void cgfw_sb_addf(struct strbuf *sb, const char *fmt, ...) __printf(2, 3);
void cgfw_sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* *@to = a copy of @s (NULL: NULL); -ENOMEM if that failed. */
static inline int cgfw_strdup(char **to, const char *s)
{
	*to = s ? strdup(s) : NULL;
	return s && !*to ? -ENOMEM : 0;
}

/* Give the buffer away (NUL-terminated) or NULL if an append failed. */
char *cgfw_sb_detach(struct strbuf *sb);

#endif /* CGFW_BASE_STRBUF_H */
