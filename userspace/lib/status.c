// SPDX-License-Identifier: LGPL-2.1-or-later
/* What this machine supports: each probe asks the kernel itself. */
#include <stdio.h>
#include <stdlib.h>

#include <libmnl/libmnl.h>
#include <linux/magic.h>
#include <linux/netfilter.h>

#include "backend.h"
#include "bpf/compile/kbtf.h"
#include "base/json.h"
#include "base/mounts.h"
#include "front/cgroup.h"
#include "nft/nft.h"
#include "nl/netlink.h"

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

CGFW_API int cgfw_status__probe(struct cgfw_ctx *ctx, struct cgfw_status *st)
{
	const struct cgfw_kbtf *kb;
	struct mnl_socket *nl;
	size_t sz;
	int err;

	if (!ctx || !st || st->sz < offsetofend(struct cgfw_status, privileged))
		return libcgfw_err(-EINVAL);
	sz = st->sz < sizeof(*st) ? st->sz : sizeof(*st);
	memset((char *)st + sizeof(st->sz), 0, sz - sizeof(st->sz));
	cgfw_ctx_reset(ctx);

	cgfw_cgroup2_mount(st->cgroup2_mount, sizeof(st->cgroup2_mount));
	cgfw_mount_find("bpf", BPF_FS_MAGIC, st->bpffs_mount,
			sizeof(st->bpffs_mount), NULL);
	st->privileged = has_cap(12 /* NET_ADMIN */) &&
			 has_cap(21 /* SYS_ADMIN */);
	if (!cgfw_nl_open(ctx, &nl)) {
		st->nft_available = true;
		mnl_socket_close(nl);
	}
	cgfw_ctx_reset(ctx);
	/* the kernel's answers need the privileges to ask */
	if (st->privileged) {
		st->nft_cgroup_family =
			cgfw_nft_probe_table(ctx, NFPROTO_CGROUP, false);
		st->nft_socket_cgroupv2 =
			cgfw_nft_probe_table(ctx, NFPROTO_INET, true);
		st->bpf_cgroup_skb = !cgfw_backend_bpf.probe(ctx);
		cgfw_ctx_reset(ctx);
	}
	if (sz > offsetof(struct cgfw_status, bpf_backend_built))
		st->bpf_backend_built = true;
	if (st->bpf_cgroup_skb && sz > offsetof(struct cgfw_status, bpf_ct)) {
		kb = cgfw_kbtf(&err);
		st->bpf_device_names = kb;
		st->bpf_ct = kb && !kb->ct_err;
	}
	return 0;
}

/* A probe's answer: yes, no, or unknown without the privileges to ask. */
static void answer(struct strbuf *sb, struct cgfw_json *j, const char *key,
		   const char *label, bool v, bool known)
{
	if (j) {
		cgfw_json_key(j, key);
		if (known)
			cgfw_json_bool(j, v);
		else
			cgfw_json_null(j);
		return;
	}
	cgfw_sb_addf(sb, "%-36s %s\n", label, !known ? "unknown (needs root)" :
					 v ? "yes" : "no");
}

static void path(struct strbuf *sb, struct cgfw_json *j, const char *key,
		 const char *label, const char *v)
{
	if (j)
		cgfw_json_kv_str(j, key, v);
	else
		cgfw_sb_addf(sb, "%-36s %s\n", label, *v ? v : "not mounted");
}

CGFW_API int cgfw_status__format(const struct cgfw_status *st,
				 const struct cgfw_format_opts *opts,
				 char **text)
{
	struct cgfw_json json, *j = NULL;
	bool known;
	struct strbuf sb;

	if (!st || !text || !CGFW_OPTS_VALID(NULL, opts, cgfw_format_opts) ||
	    st->sz < offsetofend(struct cgfw_status, privileged))
		return libcgfw_err(-EINVAL);
	cgfw_sb_init(&sb);
	known = st->privileged;
	if (CGFW_OPTS_GET(opts, json, false)) {
		j = &json;
		cgfw_json_init(j, &sb);
		cgfw_json_obj_open(j);
		cgfw_json_kv_str(j, "version", CGFW_VERSION);
	}
	path(&sb, j, "cgroup2_mount", "cgroup2 mount:", st->cgroup2_mount);
	path(&sb, j, "bpffs_mount", "bpffs mount:", st->bpffs_mount);
	answer(&sb, j, "nf_tables", "nf_tables:", st->nft_available, true);
	answer(&sb, j, "nft_cgroup_family", "nft cgroup family (native):",
	       st->nft_cgroup_family, known);
	answer(&sb, j, "nft_socket_cgroupv2", "nft socket cgroupv2:",
	       st->nft_socket_cgroupv2, known);
	answer(&sb, j, "bpf_cgroup_skb", "bpf CGROUP_SKB:", st->bpf_cgroup_skb,
	       known);
	answer(&sb, j, "bpf_backend_built", "bpf backend built:",
	       st->sz > offsetof(struct cgfw_status, bpf_backend_built) &&
	       st->bpf_backend_built, true);
	if (st->sz > offsetof(struct cgfw_status, bpf_ct)) {
		answer(&sb, j, "bpf_device_names",
		       "bpf device names (kernel BTF):", st->bpf_device_names,
		       known);
		answer(&sb, j, "bpf_ct", "bpf ct at egress (kernel BTF):",
		       st->bpf_ct, known);
	}
	answer(&sb, j, "privileged", "privileged (NET_ADMIN, SYS_ADMIN):",
	       st->privileged, true);
	if (j) {
		cgfw_json_obj_close(j);
		cgfw_sb_adds(&sb, "\n");
	}
	*text = cgfw_sb_detach(&sb);
	return *text ? 0 : libcgfw_err(-ENOMEM);
}

CGFW_API const char *cgfw_version(void)
{
	return CGFW_VERSION;
}
