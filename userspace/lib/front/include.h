/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Include: nft's include statements expanded, lines kept whole. */
#ifndef CGFW_FRONT_INCLUDE_H
#define CGFW_FRONT_INCLUDE_H

#include "base/ctx.h"

/*
 * Put the files that @src's include statements name in their place, and
 * the spans that say which file each line is from; at most @max_len bytes
 * in all. 0, or -errno with the message at the statement.
 */
int cgfw_include_expand(struct cgfw_ctx *ctx, struct cgfw_source *src,
			size_t max_len);

#endif
