/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compile with libnftables in a shadow network namespace (front/compile.c). */
#ifndef CGFW_FRONT_COMPILE_H
#define CGFW_FRONT_COMPILE_H

#include <stddef.h>

#include "base/ctx.h"
#include "front/ir.h"

struct cgfw_nl_batch;

struct shadow_job {
	/* committed in the shadow first (sets to add elements to), or NULL */
	struct cgfw_nl_batch *setup;
	const char *text;	/* nft commands: the rewritten input */
	size_t len;
};

/*
 * Run @job in a shadow namespace in a child process and read what it made
 * into @out. Errors are reported against @src (nft's, with their places).
 * A crash or a limit of libnftables is an error (-EINVAL), not the
 * caller's end.
 */
int cgfw_shadow_compile(struct cgfw_ctx *ctx, const struct cgfw_source *src,
			const struct shadow_job *job, struct cgfw_ruleset *out);

/* Enter a new, empty network namespace; *saved gets the old one. */
int cgfw_netns_enter_shadow(struct cgfw_ctx *ctx, int *saved);
/* Go back to the namespace saved by cgfw_netns_enter_shadow(). */
int cgfw_netns_leave_shadow(int saved);

#endif /* CGFW_FRONT_COMPILE_H */
