// SPDX-License-Identifier: LGPL-2.1-or-later
/* What this machine supports: each probe asks the kernel itself. */
#include <stdio.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "nft/nft.h"
#include "front/compile.h"
#include "nl/netlink.h"

static int fs_mount(const char *fstype, char *buf, size_t size)
{
	char line[4096], mnt[4096], want[64];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	snprintf(want, sizeof(want), " - %s ", fstype);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, want) ||
		    sscanf(line, "%*u %*u %*s %*s %4095s", mnt) != 1 ||
		    strlen(mnt) >= size)
			continue;
		strcpy(buf, mnt);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Effective capability bit @cap of this process. */
static bool has_cap(int cap)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ULL << cap);
}

/*
 * Try a table of @family with one output chain and, if @socket_rule, the
 * rule "socket cgroupv2 level 0 == 1 accept", in a throwaway namespace.
 */
bool nft_probe_table(struct cgfw_ctx *ctx, uint16_t family, bool socket_rule)
{
	static const struct cgfw_source src = { .name = "probe" };
	struct nftnl_table *t = nftnl_table_alloc();
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *sk, *cmp;
	struct mnl_socket *nl = NULL;
	struct nlmsghdr *nlh;
	struct nl_batch nb;
	uint64_t id = 1;
	bool ok = false;
	int saved;

	if (!t || !c || !r || nl_batch_init(&nb))
		goto out_free;
	if (netns_enter_shadow(ctx, &saved))
		goto out_batch;
	if (nl_open(ctx, &nl))
		goto out_ns;

	nftnl_table_set_str(t, NFTNL_TABLE_NAME, "probe");
	nlh = nl_batch_next(&nb, NFT_MSG_NEWTABLE, family, NLM_F_CREATE, NULL,
			    NULL);
	if (nlh)
		nftnl_table_nlmsg_build_payload(nlh, t);
	nl_batch_done(&nb);
	if (socket_rule) {
		nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, "probe");
		nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "out");
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_INET_LOCAL_OUT);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
		nlh = nl_batch_next(&nb, NFT_MSG_NEWCHAIN, family,
				    NLM_F_CREATE, NULL, NULL);
		if (nlh)
			nftnl_chain_nlmsg_build_payload(nlh, c);
		nl_batch_done(&nb);

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
		nlh = nl_batch_next(&nb, NFT_MSG_NEWRULE, family,
				    NLM_F_CREATE | NLM_F_APPEND, NULL, NULL);
		if (nlh)
			nftnl_rule_nlmsg_build_payload(nlh, r);
		nl_batch_done(&nb);
	}
	ok = !nl_batch_commit(ctx, nl, &nb, &src);
out_ns:
	if (nl)
		mnl_socket_close(nl);
	netns_leave_shadow(saved);
out_batch:
	nl_batch_release(&nb);
out_free:
	if (t)
		nftnl_table_free(t);
	if (c)
		nftnl_chain_free(c);
	if (r)
		nftnl_rule_free(r);
	ctx_reset(ctx);	/* a failed probe is an answer, not an error */
	return ok;
}

CGFW_API int cgfw_status__probe(struct cgfw_ctx *ctx, struct cgfw_status *st)
{
	struct mnl_socket *nl;
	size_t sz;

	if (!ctx || !st || st->sz < offsetof(struct cgfw_status, privileged))
		return libcgfw_err(-EINVAL);
	sz = st->sz < sizeof(*st) ? st->sz : sizeof(*st);
	memset((char *)st + sizeof(st->sz), 0, sz - sizeof(st->sz));
	ctx_reset(ctx);

	cgroup2_mount(st->cgroup2_mount, sizeof(st->cgroup2_mount));
	fs_mount("bpf", st->bpffs_mount, sizeof(st->bpffs_mount));
	if (!nl_open(ctx, &nl)) {
		st->nft_available = true;
		mnl_socket_close(nl);
	}
	ctx_reset(ctx);
	st->nft_cgroup_family = nft_probe_table(ctx, NFPROTO_CGROUP, false);
	st->nft_socket_cgroupv2 = nft_probe_table(ctx, NFPROTO_INET, true);
	st->bpf_cgroup_skb =
		libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SKB, NULL) > 0;
	st->privileged = has_cap(12 /* NET_ADMIN */) &&
			 has_cap(21 /* SYS_ADMIN */);
	if (sz > offsetof(struct cgfw_status, bpf_backend_built))
		st->bpf_backend_built = true;
	return 0;
}
