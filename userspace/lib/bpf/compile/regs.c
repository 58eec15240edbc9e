// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What every part of the code generator shares (codegen.h): nft's
 * registers on the program's stack, and the refusal of a rule at its
 * place in the user's file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <linux/netfilter/nf_tables.h>

#include "bpf/compile/cg.h"
#include "bpf/compile/emit.h"
#include "front/ir.h"

void cgfw_cg_refuse(struct cg *g, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (g->err)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cgfw_err_at(g->ctx, &g->rs->src,
		    g->rule && g->rule->loc.line ? &g->rule->loc :
		    g->chain ? &g->chain->loc : NULL,
		    "the bpf backend cannot do this: %s; use the nft backend (-b nft) for this rule",
		    msg);
	g->err = -EOPNOTSUPP;
}

int cgfw_cg_reg(struct cg *g, uint32_t reg, uint32_t len)
{
	int off;

	if (reg >= NFT_REG32_00 && reg <= NFT_REG32_15)
		off = (reg - NFT_REG32_00) * 4;
	else if (reg >= NFT_REG_1 && reg <= NFT_REG_4)
		off = (reg - NFT_REG_1) * 16;
	else
		off = -1;
	if (off < 0 || off + len > 64 || !len) {
		cgfw_cg_refuse(g, "register %u with %u bytes", reg, len);
		return 0;
	}
	return STK_REGS + off;
}
