// SPDX-License-Identifier: LGPL-2.1-or-later
/* What the kernel's nf_tables can hold, asked in a throwaway namespace. */
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "front/compile.h"
#include "nft/nft.h"

/*
 * Try a table of @family with @flags, with one output chain and, if
 * @socket_rule, the rule "socket cgroupv2 level 0 == 1 accept", in a
 * throwaway namespace.
 */
static bool probe(struct cgfw_ctx *ctx, uint16_t family, bool socket_rule,
		  uint32_t flags)
{
	static const struct cgfw_source src = { .name = "probe" };
	struct nftnl_table *t = nftnl_table_alloc();
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *sk, *cmp;
	struct mnl_socket *nl = NULL;
	struct cgfw_nl_batch nb;
	struct nlmsghdr *nlh;
	uint64_t id = 1;
	bool ok = false;
	int saved;

	if (!t || !c || !r || cgfw_nl_batch_init(&nb))
		goto out_free;
	if (cgfw_netns_enter_shadow(ctx, &saved))
		goto out_batch;
	if (cgfw_nl_open(ctx, &nl))
		goto out_ns;

	nftnl_table_set_str(t, NFTNL_TABLE_NAME, "probe");
	if (flags)
		nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, flags);
	nlh = cgfw_nl_batch_next(&nb, NFT_MSG_NEWTABLE, family, NLM_F_CREATE,
				 NULL, NULL);
	if (nlh)
		nftnl_table_nlmsg_build_payload(nlh, t);
	cgfw_nl_batch_done(&nb);
	if (socket_rule) {
		nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, "probe");
		nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "out");
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
		nlh = cgfw_nl_batch_next(&nb, NFT_MSG_NEWCHAIN, family,
					 NLM_F_CREATE, NULL, NULL);
		if (nlh)
			nftnl_chain_nlmsg_build_payload(nlh, c);
		cgfw_nl_batch_done(&nb);

		sk = nftnl_expr_alloc("socket");
		cmp = nftnl_expr_alloc("cmp");
		if (!sk || !cmp) {
			if (sk)
				nftnl_expr_free(sk);
			if (cmp)
				nftnl_expr_free(cmp);
			goto out_ns;
		}
		nftnl_expr_set_u32(sk, NFTNL_EXPR_SOCKET_KEY,
				   NFT_SOCKET_CGROUPV2);
		nftnl_expr_set_u32(sk, NFTNL_EXPR_SOCKET_DREG, NFT_REG_1);
		nftnl_expr_set_u32(sk, NFTNL_EXPR_SOCKET_LEVEL, 0);
		nftnl_expr_set_u32(cmp, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
		nftnl_expr_set_u32(cmp, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
		nftnl_expr_set(cmp, NFTNL_EXPR_CMP_DATA, &id, sizeof(id));
		nftnl_rule_set_str(r, NFTNL_RULE_TABLE, "probe");
		nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, "out");
		nftnl_rule_add_expr(r, sk);
		nftnl_rule_add_expr(r, cmp);
		nlh = cgfw_nl_batch_next(&nb, NFT_MSG_NEWRULE, family,
					 NLM_F_CREATE | NLM_F_APPEND, NULL,
					 NULL);
		if (nlh)
			nftnl_rule_nlmsg_build_payload(nlh, r);
		cgfw_nl_batch_done(&nb);
	}
	ok = !cgfw_nl_batch_commit(ctx, nl, &nb, &src);
out_ns:
	if (nl)
		mnl_socket_close(nl);
	cgfw_netns_leave_shadow(saved);
out_batch:
	cgfw_nl_batch_release(&nb);
out_free:
	if (t)
		nftnl_table_free(t);
	if (c)
		nftnl_chain_free(c);
	if (r)
		nftnl_rule_free(r);
	cgfw_ctx_reset(ctx);	/* a failed probe is an answer, not an error */
	return ok;
}

bool cgfw_nft_probe_table(struct cgfw_ctx *ctx, uint16_t family,
			  bool socket_rule)
{
	return probe(ctx, family, socket_rule, 0);
}

bool cgfw_nft_can_hold(struct cgfw_ctx *ctx, uint16_t family)
{
	static int known[2];	/* inet, cgroup: 0 not asked, 1 yes, -1 no */
	int *k = &known[family == NFPROTO_INET ? 0 : 1];

	if (!*k)
		*k = probe(ctx, family, false,
			   CGFW_TABLE_HELD) ? 1 : -1;
	return *k > 0;
}
