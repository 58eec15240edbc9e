// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which nf_tables tables are cgfw's, which apply made each, and whether
 * another process holds one: the two targets' families and names, the
 * userdata cgfw keeps on its tables and their cgfw_apply chains
 * (nft/nft.h), the list of a family's tables, their owners.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>

#include "nft/nft.h"

const struct nft_target cgfw_nft_emulated = {
	.backend = "nft-emulated", .family = NFPROTO_INET,
	.family_name = "inet", .prefix = "cgfw_",
	.dispatch = true,
};

const struct nft_target cgfw_nft_native = {
	.backend = "nft-native", .family = NFPROTO_CGROUP,
	.family_name = "cgroup", .prefix = "",
	.native = true,
};

/* ---- which tables are cgfw's ---- */

struct table_ud {
	const char *comment;
	const char *name;
	uint32_t format, with_bpf;
	uint64_t gen;
};

static int table_ud_cb(const struct nftnl_udata *attr, void *data)
{
	struct table_ud *u = data;
	const char *v = nftnl_udata_get(attr);
	uint8_t len = nftnl_udata_len(attr);
	bool strz = len && v[len - 1] == '\0';

	switch (nftnl_udata_type(attr)) {
	case 0:	/* NFTNL_UDATA_TABLE_COMMENT */
		if (strz)
			u->comment = v;
		break;
	case CGFW_UD_TABLE_FORMAT:
		if (len == 4)
			u->format = nftnl_udata_get_u32(attr);
		break;
	case CGFW_UD_TABLE_NAME:
		if (strz)
			u->name = v;
		break;
	case CGFW_UD_TABLE_GEN:
		if (len == 8)
			memcpy(&u->gen, v, 8);
		break;
	case CGFW_UD_TABLE_WITH_BPF:
		if (len == 4)
			u->with_bpf = nftnl_udata_get_u32(attr);
		break;
	}
	return 0;
}

static void table_ud(const struct nftnl_table *t, struct table_ud *u)
{
	const void *ud;
	uint32_t len;

	memset(u, 0, sizeof(*u));
	ud = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &len);
	if (ud)
		nftnl_udata_parse(ud, len, table_ud_cb, u);
}

/*
 * cgfw's: its userdata says so; or, made by cgfw before it kept TLVs, its
 * comment starts with "cgfw: " (such a table is replaced and removed as
 * cgfw's).
 */
bool cgfw_nft_owned(const struct nftnl_table *t, const struct nft_target *tg)
{
	const char *name = nftnl_table_get_str(t, NFTNL_TABLE_NAME);
	struct table_ud u;

	if (nftnl_table_get_u32(t, NFTNL_TABLE_FAMILY) != tg->family ||
	    strncmp(name, tg->prefix, strlen(tg->prefix)))
		return false;
	table_ud(t, &u);
	return u.format || (u.comment && !strncmp(u.comment,
						  CGFW_OWNER_COMMENT,
						  strlen(CGFW_OWNER_COMMENT)));
}

const char *cgfw_nft_user_name(const struct nftnl_table *t,
			       const struct nft_target *tg)
{
	return nftnl_table_get_str(t, NFTNL_TABLE_NAME) + strlen(tg->prefix);
}

static int apply_ud_cb(const struct nftnl_udata *attr, void *data)
{
	struct cgfw_apply_info *ai = data;
	const void *v = nftnl_udata_get(attr);
	uint8_t len = nftnl_udata_len(attr);

	if (nftnl_udata_type(attr) == CGFW_UD_APPLY_GEN && len == 8)
		memcpy(&ai->gen, v, 8);
	else if (nftnl_udata_type(attr) == CGFW_UD_APPLY_WITH_BPF && len == 4)
		ai->bpf = nftnl_udata_get_u32(attr);
	return 0;
}

void cgfw_nft_made_by(const struct nftnl_table *t, const struct nft_target *tg,
		      const struct nftnl_chain *apply,
		      struct cgfw_apply_info *ai)
{
	struct table_ud u;
	const void *ud;
	uint32_t len;

	table_ud(t, &u);
	ai->gen = u.gen;
	ai->nft_family = tg->family;
	ai->bpf = u.with_bpf;
	ud = apply ? nftnl_chain_get_data(apply, NFTNL_CHAIN_USERDATA, &len) :
		     NULL;
	if (ud)
		nftnl_udata_parse(ud, len, apply_ud_cb, ai);
}

static int push(char ***v, size_t *n, const char *s)
{
	char **p = realloc(*v, (*n + 1) * sizeof(**v));

	if (!p)
		return -ENOMEM;
	*v = p;
	p[*n] = strdup(s);
	if (!p[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int tables_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nft_tables *ts = data;
	struct nftnl_table *t = nftnl_table_alloc();
	struct cgfw_apply_info *g;
	const char *name;

	if (!t || nftnl_table_nlmsg_parse(nlh, t) < 0) {
		ts->err = -ENOMEM;
		goto out;
	}
	name = nftnl_table_get_str(t, NFTNL_TABLE_NAME);
	if (!cgfw_nft_owned(t, ts->tg)) {
		ts->err = ts->err ? : push(&ts->others, &ts->n_others, name);
		goto out;
	}
	g = realloc(ts->made_by, (ts->n_owned + 1) * sizeof(*g));
	if (!g) {
		ts->err = -ENOMEM;
		goto out;
	}
	ts->made_by = g;
	cgfw_nft_made_by(t, ts->tg, NULL, &g[ts->n_owned]);
	ts->err = ts->err ? : push(&ts->owned, &ts->n_owned, name);
out:
	if (t)
		nftnl_table_free(t);
	return MNL_CB_OK;
}

void cgfw_nft_tables_release(struct nft_tables *ts)
{
	size_t i;

	for (i = 0; i < ts->n_owned; i++)
		free(ts->owned[i]);
	for (i = 0; i < ts->n_others; i++)
		free(ts->others[i]);
	free(ts->owned);
	free(ts->others);
	free(ts->made_by);
	memset(ts, 0, sizeof(*ts));
}

/* Chain cgfw_apply of an owned table: the apply that made its content. */
static int apply_chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nft_tables *ts = data;
	struct nftnl_chain *c = nftnl_chain_alloc();
	const void *ud;
	uint32_t len;
	ssize_t i;

	if (!c || nftnl_chain_nlmsg_parse(nlh, c) < 0) {
		ts->err = -ENOMEM;
		goto out;
	}
	if (strcmp(nftnl_chain_get_str(c, NFTNL_CHAIN_NAME), CGFW_APPLY_CHAIN))
		goto out;
	i = cgfw_nft_find(ts->owned, ts->n_owned,
			  nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE));
	ud = nftnl_chain_get_data(c, NFTNL_CHAIN_USERDATA, &len);
	if (i >= 0 && ud)
		nftnl_udata_parse(ud, len, apply_ud_cb, &ts->made_by[i]);
out:
	if (c)
		nftnl_chain_free(c);
	return MNL_CB_OK;
}

/* The tables of @tg's family: cgfw's and the others. */
int cgfw_nft_list_tables(struct mnl_socket *nl, const struct nft_target *tg,
			 struct nft_tables *ts)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int ret;

	memset(ts, 0, sizeof(*ts));
	ts->tg = tg;
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, tg->family,
				    NLM_F_DUMP, 1);
	ret = cgfw_nl_dump(nl, nlh, tables_cb, ts);
	if (ret || ts->err || !ts->n_owned)
		return ts->err ? : ret;
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETCHAIN, tg->family,
				    NLM_F_DUMP, 2);
	ret = cgfw_nl_dump(nl, nlh, apply_chain_cb, ts);
	return ts->err ? : ret;
}

ssize_t cgfw_nft_find(char **v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return i;
	return -1;
}

int cgfw_nft_generation(struct cgfw_ctx *ctx, const struct nft_target *tg,
			const char *name, uint64_t *gen)
{
	char kname[NFT_NAME_MAXLEN + 8];
	struct mnl_socket *nl;
	struct nft_tables ts;
	ssize_t i;
	int ret;

	snprintf(kname, sizeof(kname), "%s%s", tg->prefix, name);
	ret = cgfw_nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = cgfw_nft_list_tables(nl, tg, &ts);
	mnl_socket_close(nl);
	i = ret ? -1 : cgfw_nft_find(ts.owned, ts.n_owned, kname);
	if (!ret && i < 0)
		ret = -ENOENT;
	if (!ret)
		*gen = ts.made_by[i].gen;
	cgfw_nft_tables_release(&ts);
	return ret;
}

int cgfw_nft_tables(struct cgfw_ctx *ctx, const struct nft_target *tg,
		    struct backend_table **out, size_t *n)
{
	struct backend_table *v;
	struct mnl_socket *nl;
	struct nft_tables ts;
	size_t i;
	int ret;

	*out = NULL;
	*n = 0;
	ret = cgfw_nl_open(ctx, &nl);
	if (ret)
		return ret;
	ret = cgfw_nft_list_tables(nl, tg, &ts);
	mnl_socket_close(nl);
	v = ret ? NULL : calloc(ts.n_owned + 1, sizeof(*v));
	if (!ret && !v)
		ret = -ENOMEM;
	for (i = 0; !ret && i < ts.n_owned; i++) {
		v[i].name = strdup(ts.owned[i] + strlen(tg->prefix));
		v[i].made_by = ts.made_by[i];
		if (!v[i].name)
			ret = -ENOMEM;
		*n = i + 1;
	}
	cgfw_nft_tables_release(&ts);
	if (ret) {
		cgfw_backend_tables_free(v, *n);
		*n = 0;
		return ret;
	}
	*out = v;
	return 0;
}

/* A table of cgfw's that another netlink socket than @self owns. */
struct held_scan {
	const struct nft_target *tg;
	const char *kname;	/* NULL: any */
	uint32_t self;
	char name[NFT_NAME_MAXLEN];
	uint32_t owner;
	int err;
};

static int held_cb(const struct nlmsghdr *nlh, void *data)
{
	struct held_scan *h = data;
	struct nftnl_table *t = nftnl_table_alloc();
	const char *name;
	uint32_t owner;

	if (!t || nftnl_table_nlmsg_parse(nlh, t) < 0) {
		h->err = -ENOMEM;
		goto out;
	}
	name = nftnl_table_get_str(t, NFTNL_TABLE_NAME);
	owner = nftnl_table_get_u32(t, NFTNL_TABLE_OWNER);
	if (!h->owner && cgfw_nft_owned(t, h->tg) &&
	    (!h->kname || !strcmp(name, h->kname)) &&
	    nftnl_table_get_u32(t, NFTNL_TABLE_FLAGS) & NFT_TABLE_F_OWNER &&
	    owner != h->self) {
		snprintf(h->name, sizeof(h->name), "%s", name);
		h->owner = owner;
	}
out:
	if (t)
		nftnl_table_free(t);
	return MNL_CB_OK;
}

/*
 * The process with the netfilter netlink socket of port @portid: its
 * inode from /proc/net/netlink, then the process with a descriptor of
 * it. 0: not found.
 */
static pid_t port_pid(uint32_t portid)
{
	unsigned long inode = 0, ino;
	char line[256], link[64], want[64], fd[600];
	unsigned int proto, port;
	struct dirent *p, *e;
	DIR *proc, *fds;
	pid_t pid = 0;
	FILE *f;

	f = fopen("/proc/net/netlink", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %u %u %*s %*s %*s %*s %*s %*s %lu",
			   &proto, &port, &ino) == 3 &&
		    proto == NETLINK_NETFILTER && port == portid)
			inode = ino;
	fclose(f);
	if (!inode)
		return 0;
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	proc = opendir("/proc");
	while (proc && !pid && (p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(fd, sizeof(fd), "/proc/%s/fd", p->d_name);
		fds = opendir(fd);
		while (fds && !pid && (e = readdir(fds))) {
			ssize_t n;

			snprintf(fd, sizeof(fd), "/proc/%s/fd/%s", p->d_name,
				 e->d_name);
			n = readlink(fd, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (!strcmp(link, want))
				pid = atoi(p->d_name);
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
	return pid;
}

int cgfw_nft_held(struct cgfw_ctx *ctx, const struct nft_target *tg,
		  const char *name)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], kname[NFT_NAME_MAXLEN + 8];
	char comm[64] = "", path[64];
	struct held_scan h = { .tg = tg };
	struct mnl_socket *nl;
	pid_t pid;
	struct nlmsghdr *nlh;
	FILE *f;
	int ret;

	if (name) {
		snprintf(kname, sizeof(kname), "%s%s", tg->prefix, name);
		h.kname = kname;
	}
	if (ctx->holder)
		h.self = mnl_socket_get_portid(ctx->holder);
	ret = cgfw_nl_open(ctx, &nl);
	if (ret)
		return ret;
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, tg->family,
				    NLM_F_DUMP, 1);
	ret = cgfw_nl_dump(nl, nlh, held_cb, &h);
	mnl_socket_close(nl);
	if (ret == -EAFNOSUPPORT || ret == -EOPNOTSUPP || ret == -EPROTONOSUPPORT)
		return 0;	/* a family this kernel lacks holds nothing */
	if (ret || h.err)
		return h.err ? : ret;
	if (!h.owner)
		return 0;
	pid = port_pid(h.owner);
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = pid > 0 ? fopen(path, "r") : NULL;
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	cgfw_err(ctx, "table %s %s is held by another process (%s%s%u; nf_tables' owner flag), so cgfw cannot change it: %s",
		 tg->family_name, h.name, comm,
		 *comm ? ", pid " : "netlink port ",
		 *comm ? (unsigned int)pid : h.owner, !strcmp(comm, "cgfw") ?
		 "change the rules file that cgfw daemon applies instead, or stop the daemon" :
		 "stop that process, or let it change the table");
	return -EPERM;
}

void cgfw_nft_held_hint(struct cgfw_ctx *ctx, int err)
{
	if (err == -EPERM)
		cgfw_err(ctx, "a table of cgfw's is held by another process (nf_tables' owner flag): by the cgfw daemon, if one runs; change the rules file it applies instead, or stop it");
}
