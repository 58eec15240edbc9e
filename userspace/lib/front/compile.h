/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compile with libnftables in a shadow network namespace; read it back. */
#ifndef CGFW_FRONT_COMPILE_H
#define CGFW_FRONT_COMPILE_H

#include <stdint.h>

#include "base/ctx.h"
#include "front/ir.h"

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

#endif /* CGFW_FRONT_COMPILE_H */
