// SPDX-License-Identifier: GPL-2.0
/*
 * The nf_tables cgroup family: chains bound to a cgroup v2 filter what its
 * sockets send and receive, where BPF_CGROUP_INET_{INGRESS,EGRESS} programs
 * run. Every test sends real packets over loopback in a private network
 * namespace, on a private cgroup2 mount, and checks what a program sees:
 * an errno, a datagram that arrives or not, a counter.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/bpf.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>

#include "../../kselftest_harness.h"

/*
 * From this series' include/uapi/linux/netfilter.h and
 * netfilter/nf_tables.h; spelled out so that the test also builds, and
 * skips, against headers without them.
 */
#define CG_NFPROTO_CGROUP	13
#define CG_NF_CGROUP_INGRESS	0
#define CG_NF_CGROUP_EGRESS	1
#define CG_NFTA_HOOK_CGROUP_ID	(NFTA_HOOK_DEVS + 1)

#define PORT		4242
#define TABLE		"t"

/* --- netlink ----------------------------------------------------------- */

struct nl {
	struct mnl_socket *sock;
	unsigned int portid;
	uint32_t seq;
	char buf[16384];
	struct mnl_nlmsg_batch *batch;
	int nmsg;
	char errmsg[256];	/* extack message of the first error */
	int erroff;		/* extack offset of the bad attribute, or -1 */
};

static struct nlmsghdr *nl_msg(struct nl *nl, int type, int family,
			       uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(mnl_nlmsg_batch_current(nl->batch));
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	return nlh;
}

static void nl_next(struct nl *nl)
{
	mnl_nlmsg_batch_next(nl->batch);
	nl->nmsg++;
}

static void nl_begin(struct nl *nl)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;

	nl->batch = mnl_nlmsg_batch_start(nl->buf, sizeof(nl->buf));
	nl->nmsg = 0;
	nlh = mnl_nlmsg_put_header(mnl_nlmsg_batch_current(nl->batch));
	nlh->nlmsg_type = NFNL_MSG_BATCH_BEGIN;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++nl->seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(NFNL_SUBSYS_NFTABLES);
	mnl_nlmsg_batch_next(nl->batch);
}

static int nl_err_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct nl *nl = data;
	struct nlattr *a;

	/* NETLINK_CAP_ACK: the extack follows the request's header */
	if (e->error && !nl->errmsg[0] && nl->erroff < 0 &&
	    (nlh->nlmsg_flags & NLM_F_ACK_TLVS)) {
		mnl_attr_for_each(a, nlh, sizeof(*e)) {
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG)
				snprintf(nl->errmsg, sizeof(nl->errmsg), "%s",
					 mnl_attr_get_str(a));
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_OFFS)
				nl->erroff = mnl_attr_get_u32(a);
		}
	}
	return e->error ? MNL_CB_ERROR : MNL_CB_STOP;
}

/* Sends the batch; returns 0 or the first error as -errno. */
static int nl_commit(struct nl *nl)
{
	uint32_t last = nl->seq;	/* every message asked for an ack */
	struct nlmsghdr *nlh;
	int ret, err = 0;
	char rbuf[16384];

	nlh = mnl_nlmsg_put_header(mnl_nlmsg_batch_current(nl->batch));
	nlh->nlmsg_type = NFNL_MSG_BATCH_END;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++nl->seq;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct nfgenmsg));
	((struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->res_id =
		htons(NFNL_SUBSYS_NFTABLES);
	mnl_nlmsg_batch_next(nl->batch);

	nl->errmsg[0] = 0;
	nl->erroff = -1;
	if (mnl_socket_sendto(nl->sock, mnl_nlmsg_batch_head(nl->batch),
			      mnl_nlmsg_batch_size(nl->batch)) < 0)
		return -errno;
	mnl_nlmsg_batch_stop(nl->batch);

	/* acks (and errors) come in order; the last message's ends it */
	for (;;) {
		ret = mnl_socket_recvfrom(nl->sock, rbuf, sizeof(rbuf));
		if (ret < 0)
			return err ? err : -errno;
		nlh = (struct nlmsghdr *)rbuf;
		while (mnl_nlmsg_ok(nlh, ret)) {
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				nl_err_cb(nlh, nl);
				if (e->error && !err)
					err = e->error;
				if (nlh->nlmsg_seq == last)
					return err;
			}
			nlh = mnl_nlmsg_next(nlh, &ret);
		}
	}
}

static int nl_open(struct nl *nl)
{
	struct timeval tv = { .tv_sec = 2 };
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->sock = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl->sock)
		return -errno;
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(mnl_socket_get_fd(nl->sock), SOL_SOCKET, SO_RCVTIMEO,
		   &tv, sizeof(tv));
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = time(NULL);
	return 0;
}

static void put_table(struct nl *nl, int family, int cmd, uint32_t flags)
{
	struct nlmsghdr *nlh = nl_msg(nl, cmd, family,
				      cmd == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0);

	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, TABLE);
	if (cmd == NFT_MSG_NEWTABLE)
		mnl_attr_put_u32(nlh, NFTA_TABLE_FLAGS, htonl(flags));
	nl_next(nl);
}

/* A base chain; every field can be left out or be wrong on purpose. */
struct chain {
	const char *name;
	int family;
	int hooknum;		/* -1: leave out */
	int prio;
	int idlen;		/* 0: no cgroup id; 8; anything else: bad size */
	uint64_t cgid;
	const char *dev;
	int policy;		/* -1: leave out */
	uint32_t flags;
};

static void put_chain(struct nl *nl, const struct chain *c)
{
	struct nlmsghdr *nlh = nl_msg(nl, NFT_MSG_NEWCHAIN, c->family,
				      NLM_F_CREATE);
	struct nlattr *hook;
	uint64_t be = htobe64(c->cgid);

	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, TABLE);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, c->name);
	hook = mnl_attr_nest_start(nlh, NFTA_CHAIN_HOOK);
	if (c->hooknum != -1)
		mnl_attr_put_u32(nlh, NFTA_HOOK_HOOKNUM, htonl(c->hooknum));
	mnl_attr_put_u32(nlh, NFTA_HOOK_PRIORITY, htonl(c->prio));
	if (c->idlen)
		mnl_attr_put(nlh, CG_NFTA_HOOK_CGROUP_ID, c->idlen, &be);
	if (c->dev)
		mnl_attr_put_strz(nlh, NFTA_HOOK_DEV, c->dev);
	mnl_attr_nest_end(nlh, hook);
	if (c->policy >= 0)
		mnl_attr_put_u32(nlh, NFTA_CHAIN_POLICY, htonl(c->policy));
	if (c->flags)
		mnl_attr_put_u32(nlh, NFTA_CHAIN_FLAGS, htonl(c->flags));
	nl_next(nl);
}

static void put_counter_obj(struct nl *nl, int family, const char *name)
{
	struct nlmsghdr *nlh = nl_msg(nl, NFT_MSG_NEWOBJ, family, NLM_F_CREATE);
	struct nlattr *data;

	mnl_attr_put_strz(nlh, NFTA_OBJ_TABLE, TABLE);
	mnl_attr_put_strz(nlh, NFTA_OBJ_NAME, name);
	mnl_attr_put_u32(nlh, NFTA_OBJ_TYPE, htonl(NFT_OBJECT_COUNTER));
	data = mnl_attr_nest_start(nlh, NFTA_OBJ_DATA);
	mnl_attr_nest_end(nlh, data);
	nl_next(nl);
}

/* Expressions of a rule, as the nft tool would send them. */
enum {
	X_END,
	X_NFPROTO,	/* meta nfproto == arg */
	X_MARK,		/* meta mark == arg */
	X_COUNTER,	/* counter name "c" */
	X_DROP,
	X_ACCEPT,
	X_QUEUE,
	X_REJECT,
	X_SOCKET,	/* socket transparent */
	X_PAYLOAD_SET,	/* ip ttl set 1 (payload write) */
	X_CT_STATE,	/* ct state load */
	X_LOG,
	X_BOGUS,	/* an expression no kernel has */
};

static struct nlattr *expr_start(struct nlmsghdr *nlh, const char *name)
{
	struct nlattr *e = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);

	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, name);
	return e;
}

static void put_cmp_u8_u32(struct nlmsghdr *nlh, uint32_t v, int len)
{
	struct nlattr *e = expr_start(nlh, "cmp"), *d, *dv;

	d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_u32(nlh, NFTA_CMP_SREG, htonl(NFT_REG_1));
	mnl_attr_put_u32(nlh, NFTA_CMP_OP, htonl(NFT_CMP_EQ));
	dv = mnl_attr_nest_start(nlh, NFTA_CMP_DATA);
	if (len == 1) {
		uint8_t b = v;

		mnl_attr_put(nlh, NFTA_DATA_VALUE, 1, &b);
	} else {
		mnl_attr_put(nlh, NFTA_DATA_VALUE, 4, &v);
	}
	mnl_attr_nest_end(nlh, dv);
	mnl_attr_nest_end(nlh, d);
	mnl_attr_nest_end(nlh, e);
}

static void put_meta(struct nlmsghdr *nlh, int key)
{
	struct nlattr *e = expr_start(nlh, "meta"), *d;

	d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_u32(nlh, NFTA_META_KEY, htonl(key));
	mnl_attr_put_u32(nlh, NFTA_META_DREG, htonl(NFT_REG_1));
	mnl_attr_nest_end(nlh, d);
	mnl_attr_nest_end(nlh, e);
}

static void put_verdict(struct nlmsghdr *nlh, int code)
{
	struct nlattr *e = expr_start(nlh, "immediate"), *d, *dv, *v;

	d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_u32(nlh, NFTA_IMMEDIATE_DREG, htonl(NFT_REG_VERDICT));
	dv = mnl_attr_nest_start(nlh, NFTA_IMMEDIATE_DATA);
	v = mnl_attr_nest_start(nlh, NFTA_DATA_VERDICT);
	mnl_attr_put_u32(nlh, NFTA_VERDICT_CODE, htonl(code));
	mnl_attr_nest_end(nlh, v);
	mnl_attr_nest_end(nlh, dv);
	mnl_attr_nest_end(nlh, d);
	mnl_attr_nest_end(nlh, e);
}

static void put_rule(struct nl *nl, int family, const char *chain,
		     const int *x)
{
	struct nlmsghdr *nlh = nl_msg(nl, NFT_MSG_NEWRULE, family,
				      NLM_F_CREATE | NLM_F_APPEND);
	struct nlattr *list, *e, *d;
	uint8_t ttl = 1;

	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, TABLE);
	mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, chain);
	list = mnl_attr_nest_start(nlh, NFTA_RULE_EXPRESSIONS);
	for (; *x != X_END; x++) {
		switch (*x) {
		case X_NFPROTO:
			put_meta(nlh, NFT_META_NFPROTO);
			put_cmp_u8_u32(nlh, *++x, 1);
			break;
		case X_MARK:
			put_meta(nlh, NFT_META_MARK);
			put_cmp_u8_u32(nlh, *++x, 4);
			break;
		case X_COUNTER:
			e = expr_start(nlh, "objref");
			d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
			mnl_attr_put_u32(nlh, NFTA_OBJREF_IMM_TYPE,
					 htonl(NFT_OBJECT_COUNTER));
			mnl_attr_put_strz(nlh, NFTA_OBJREF_IMM_NAME, "c");
			mnl_attr_nest_end(nlh, d);
			mnl_attr_nest_end(nlh, e);
			break;
		case X_DROP:
			put_verdict(nlh, NF_DROP);
			break;
		case X_ACCEPT:
			put_verdict(nlh, NF_ACCEPT);
			break;
		case X_QUEUE:
			e = expr_start(nlh, "queue");
			d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
			mnl_attr_put_u16(nlh, NFTA_QUEUE_NUM, htons(1));
			mnl_attr_nest_end(nlh, d);
			mnl_attr_nest_end(nlh, e);
			break;
		case X_REJECT:
			e = expr_start(nlh, "reject");
			d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
			mnl_attr_put_u32(nlh, NFTA_REJECT_TYPE,
					 htonl(NFT_REJECT_ICMPX_UNREACH));
			mnl_attr_put_u8(nlh, NFTA_REJECT_ICMP_CODE,
					NFT_REJECT_ICMPX_PORT_UNREACH);
			mnl_attr_nest_end(nlh, d);
			mnl_attr_nest_end(nlh, e);
			break;
		case X_SOCKET:
			e = expr_start(nlh, "socket");
			d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
			mnl_attr_put_u32(nlh, NFTA_SOCKET_KEY,
					 htonl(NFT_SOCKET_TRANSPARENT));
			mnl_attr_put_u32(nlh, NFTA_SOCKET_DREG, htonl(NFT_REG_1));
			mnl_attr_nest_end(nlh, d);
			mnl_attr_nest_end(nlh, e);
			break;
		case X_PAYLOAD_SET:
			e = expr_start(nlh, "immediate");
			d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
			mnl_attr_put_u32(nlh, NFTA_IMMEDIATE_DREG, htonl(NFT_REG_1));
			{
				struct nlattr *dv = mnl_attr_nest_start(nlh,
							NFTA_IMMEDIATE_DATA);

				mnl_attr_put(nlh, NFTA_DATA_VALUE, 1, &ttl);
				mnl_attr_nest_end(nlh, dv);
			}
			mnl_attr_nest_end(nlh, d);
			mnl_attr_nest_end(nlh, e);
			e = expr_start(nlh, "payload");
			d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
			mnl_attr_put_u32(nlh, NFTA_PAYLOAD_SREG, htonl(NFT_REG_1));
			mnl_attr_put_u32(nlh, NFTA_PAYLOAD_BASE,
					 htonl(NFT_PAYLOAD_NETWORK_HEADER));
			mnl_attr_put_u32(nlh, NFTA_PAYLOAD_OFFSET, htonl(8));
			mnl_attr_put_u32(nlh, NFTA_PAYLOAD_LEN, htonl(1));
			mnl_attr_nest_end(nlh, d);
			mnl_attr_nest_end(nlh, e);
			break;
		case X_CT_STATE:
			e = expr_start(nlh, "ct");
			d = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
			mnl_attr_put_u32(nlh, NFTA_CT_KEY, htonl(NFT_CT_STATE));
			mnl_attr_put_u32(nlh, NFTA_CT_DREG, htonl(NFT_REG_1));
			mnl_attr_nest_end(nlh, d);
			mnl_attr_nest_end(nlh, e);
			break;
		case X_LOG:
			e = expr_start(nlh, "log");
			mnl_attr_nest_end(nlh, e);
			break;
		case X_BOGUS:
			e = expr_start(nlh, "no-such-expression");
			mnl_attr_nest_end(nlh, e);
			break;
		}
	}
	mnl_attr_nest_end(nlh, list);
	nl_next(nl);
}

static int nl_get_cb(const struct nlmsghdr *nlh, void *data)
{
	memcpy(data, nlh, nlh->nlmsg_len < 4096 ? nlh->nlmsg_len : 4096);
	return MNL_CB_OK;
}

/* One GET request; the answer is copied into @reply. */
static int nl_get(struct nl *nl, int type, int family, const char *name,
		  char *reply)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	int ret;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++nl->seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	switch (type) {
	case NFT_MSG_GETOBJ:
		mnl_attr_put_strz(nlh, NFTA_OBJ_TABLE, TABLE);
		mnl_attr_put_strz(nlh, NFTA_OBJ_NAME, name);
		mnl_attr_put_u32(nlh, NFTA_OBJ_TYPE, htonl(NFT_OBJECT_COUNTER));
		break;
	case NFT_MSG_GETCHAIN:
		mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, TABLE);
		mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, name);
		break;
	default:
		mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, TABLE);
		break;
	}
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ret = mnl_socket_recvfrom(nl->sock, buf, sizeof(buf));
		if (ret <= 0)
			return -errno;
		ret = mnl_cb_run(buf, ret, nlh->nlmsg_seq, nl->portid,
				 nl_get_cb, reply);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

/* Packets counted by the named counter "c", or -errno. */
static int64_t counter_packets(struct nl *nl, int family)
{
	char reply[4096];
	struct nlattr *a, *b;
	struct nlmsghdr *nlh = (struct nlmsghdr *)reply;
	int err = nl_get(nl, NFT_MSG_GETOBJ, family, "c", reply);

	if (err)
		return err;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_OBJ_DATA)
			continue;
		mnl_attr_for_each_nested(b, a)
			if (mnl_attr_get_type(b) == NFTA_COUNTER_PACKETS)
				return be64toh(mnl_attr_get_u64(b));
	}
	return -ENODATA;
}

/* The cgroup id a chain reports, 0 if none, or -errno. */
static int64_t chain_cgroup_id(struct nl *nl, const char *chain)
{
	char reply[4096];
	struct nlattr *a, *b;
	struct nlmsghdr *nlh = (struct nlmsghdr *)reply;
	int err = nl_get(nl, NFT_MSG_GETCHAIN, CG_NFPROTO_CGROUP, chain, reply);

	if (err)
		return err;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_CHAIN_HOOK)
			continue;
		mnl_attr_for_each_nested(b, a)
			if (mnl_attr_get_type(b) == CG_NFTA_HOOK_CGROUP_ID)
				return be64toh(mnl_attr_get_u64(b));
	}
	return 0;
}

struct table_count {
	int family;
	int n;
};

static int table_count_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	struct table_count *tc = data;

	if (nfg->nfgen_family == tc->family)
		tc->n++;
	return MNL_CB_OK;
}

/* Tables of @family that a table dump for @req_family reports. */
static int dump_count(struct nl *nl, int req_family, int family)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct table_count tc = { .family = family };
	struct nfgenmsg *nfg;
	int ret;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETTABLE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++nl->seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = req_family;
	nfg->version = NFNETLINK_V0;
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ret = mnl_socket_recvfrom(nl->sock, buf, sizeof(buf));
		if (ret <= 0)
			return -errno;
		ret = mnl_cb_run(buf, ret, nl->seq, nl->portid,
				 table_count_cb, &tc);
	} while (ret > 0);
	return ret < 0 ? -errno : tc.n;
}

/* --- cgroups, sockets, BPF ---------------------------------------------- */

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, s, strlen(s)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

static int join(const char *dir)
{
	char path[512], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	return write_str(path, pid);
}

static uint64_t cgroup_id(const char *dir)
{
	struct stat st;

	return stat(dir, &st) ? 0 : st.st_ino;
}

static void lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	ioctl(fd, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	ioctl(fd, SIOCSIFFLAGS, &ifr);
	close(fd);
}

static int bpf_prog_attach(const char *cgdir, int ret, int mark, int atype)
{
	struct bpf_insn insns[] = {
		/* skb->mark = mark (if any); return ret */
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_1,
		  .off = offsetof(struct __sk_buff, mark), .imm = mark },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0,
		  .imm = ret },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr = {};
	int prog, cg, err;

	attr.prog_type = BPF_PROG_TYPE_CGROUP_SKB;
	attr.expected_attach_type = atype;
	attr.insns = (uintptr_t)(mark ? insns : insns + 1);
	attr.insn_cnt = mark ? 3 : 2;
	attr.license = (uintptr_t)"GPL";
	prog = syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (prog < 0)
		return -errno;
	cg = open(cgdir, O_RDONLY | O_DIRECTORY);
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = cg;
	attr.attach_bpf_fd = prog;
	attr.attach_type = atype;
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	err = syscall(__NR_bpf, BPF_PROG_ATTACH, &attr, sizeof(attr)) ? -errno : 0;
	close(cg);
	close(prog);
	return err;
}

/* --- the fixture ---------------------------------------------------------- */

FIXTURE(cg) {
	struct nl nl;
	char root[64];		/* private cgroup2 mount */
	char p[128];		/* root/p: the bound cgroup */
	char c[192];		/* root/p/c */
	struct sockaddr_storage addr;
	socklen_t alen;
};

FIXTURE_VARIANT(cg) {
	int family;		/* of the sockets */
	const char *ip;
	int nfproto;		/* what meta nfproto says of the packets */
};

FIXTURE_VARIANT_ADD(cg, ipv4) {
	.family = AF_INET, .ip = "127.0.0.1", .nfproto = NFPROTO_IPV4,
};

FIXTURE_VARIANT_ADD(cg, ipv6) {
	.family = AF_INET6, .ip = "::1", .nfproto = NFPROTO_IPV6,
};

FIXTURE_VARIANT_ADD(cg, v4mapped) {
	.family = AF_INET6, .ip = "::ffff:127.0.0.1", .nfproto = NFPROTO_IPV4,
};

FIXTURE_SETUP(cg)
{
	struct nl *nl = &self->nl;
	int err;

	if (unshare(CLONE_NEWNET | CLONE_NEWNS))
		SKIP(return, "unshare: %s (needs root)", strerror(errno));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));

	/* before anything is made: teardown does not follow a skip */
	ASSERT_EQ(0, nl_open(nl));
	nl_begin(nl);
	put_table(nl, CG_NFPROTO_CGROUP, NFT_MSG_NEWTABLE, 0);
	err = nl_commit(nl);
	if (err == -EAFNOSUPPORT || err == -EOPNOTSUPP)
		SKIP(return, "this kernel has no cgroup table family");
	ASSERT_EQ(0, err);
	lo_up();

	/* the mount point lives and dies with this mount namespace */
	ASSERT_EQ(0, mount("none", "/tmp", "tmpfs", 0, NULL));
	snprintf(self->root, sizeof(self->root), "/tmp/nft_cgroup.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->root));
	ASSERT_EQ(0, mount("none", self->root, "cgroup2", 0, NULL)) {
		TH_LOG("mount cgroup2: %s", strerror(errno));
	}
	snprintf(self->p, sizeof(self->p), "%s/nft_cg_p%d", self->root, getpid());
	snprintf(self->c, sizeof(self->c), "%s/c", self->p);
	ASSERT_EQ(0, mkdir(self->p, 0755));
	ASSERT_EQ(0, mkdir(self->c, 0755));

	if (variant->family == AF_INET) {
		struct sockaddr_in *s = (void *)&self->addr;

		s->sin_family = AF_INET;
		s->sin_port = htons(PORT);
		inet_pton(AF_INET, variant->ip, &s->sin_addr);
		self->alen = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (void *)&self->addr;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(PORT);
		inet_pton(AF_INET6, variant->ip, &s->sin6_addr);
		self->alen = sizeof(*s);
	}
}

FIXTURE_TEARDOWN(cg)
{
	join(self->root);
	rmdir(self->c);
	rmdir(self->p);
}

/* A socket of the variant's family, created in cgroup @dir. */
static int sock_in(FIXTURE_DATA(cg) *self, const FIXTURE_VARIANT(cg) *variant,
		   const char *dir, int type)
{
	int fd;

	if (join(dir))
		return -1;
	fd = socket(variant->family, type | SOCK_NONBLOCK, 0);
	join(self->root);
	return fd;
}

static int receiver(FIXTURE_DATA(cg) *self, const FIXTURE_VARIANT(cg) *variant,
		    const char *dir)
{
	int fd = sock_in(self, variant, dir, SOCK_DGRAM);

	if (fd >= 0 && bind(fd, (void *)&self->addr, self->alen)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* 0 if sent, else -errno */
static int send_one(FIXTURE_DATA(cg) *self, int fd)
{
	return sendto(fd, "x", 1, 0, (void *)&self->addr, self->alen) == 1 ?
	       0 : -errno;
}

/* 1 if a datagram arrived within 300 ms */
static int arrived(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char b[16];

	if (poll(&pfd, 1, 300) != 1)
		return 0;
	return recv(fd, b, sizeof(b), 0) > 0;
}

/* the chain "ch" on @dir at @hook: rule "meta nfproto X counter c <v>" */
static int bind_chain(FIXTURE_DATA(cg) *self, const FIXTURE_VARIANT(cg) *variant,
		      const char *dir, int hook, int verdict_x, int *extra)
{
	struct chain ch = {
		.name = "ch", .family = CG_NFPROTO_CGROUP, .hooknum = hook,
		.idlen = 8, .cgid = cgroup_id(dir), .policy = NF_ACCEPT,
	};
	int rule[] = { X_NFPROTO, variant->nfproto, X_COUNTER, verdict_x, X_END };

	nl_begin(&self->nl);
	put_counter_obj(&self->nl, CG_NFPROTO_CGROUP, "c");
	put_chain(&self->nl, &ch);
	put_rule(&self->nl, CG_NFPROTO_CGROUP, "ch", extra ? extra : rule);
	return nl_commit(&self->nl);
}

#define COUNTER() counter_packets(&self->nl, CG_NFPROTO_CGROUP)

TEST_F(cg, egress_drop_gives_eperm)
{
	int rx = receiver(self, variant, self->root);
	int in = sock_in(self, variant, self->p, SOCK_DGRAM);
	int out = sock_in(self, variant, self->root, SOCK_DGRAM);

	ASSERT_LE(0, rx);
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL)) TH_LOG("%s", self->nl.errmsg);
	EXPECT_EQ(-EPERM, send_one(self, in));
	EXPECT_EQ(0, arrived(rx));
	EXPECT_EQ(1, COUNTER());
	/* a socket of another cgroup is not filtered */
	EXPECT_EQ(0, send_one(self, out));
	EXPECT_EQ(1, arrived(rx));
	EXPECT_EQ(1, COUNTER());
}

TEST_F(cg, ingress_drop_is_not_delivered)
{
	int rx = receiver(self, variant, self->p);
	int tx = sock_in(self, variant, self->root, SOCK_DGRAM);

	ASSERT_LE(0, rx);
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_INGRESS,
				X_DROP, NULL));
	EXPECT_EQ(0, send_one(self, tx));
	EXPECT_EQ(0, arrived(rx));
	EXPECT_EQ(1, COUNTER());
}

TEST_F(cg, accept_counts_and_delivers)
{
	int rx = receiver(self, variant, self->p);
	int tx = sock_in(self, variant, self->p, SOCK_DGRAM);

	ASSERT_LE(0, rx);
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_INGRESS,
				X_ACCEPT, NULL));
	EXPECT_EQ(0, send_one(self, tx));
	EXPECT_EQ(1, arrived(rx));
	EXPECT_EQ(1, COUNTER());
}

TEST_F(cg, tcp_syn_dropped_at_listener)
{
	int l = sock_in(self, variant, self->p, SOCK_STREAM);
	int c = sock_in(self, variant, self->root, SOCK_STREAM);
	struct pollfd pfd = { .events = POLLOUT };
	int one = 1, err;
	socklen_t el = sizeof(err);

	ASSERT_LE(0, l);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ASSERT_EQ(0, bind(l, (void *)&self->addr, self->alen));
	ASSERT_EQ(0, listen(l, 4));
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_INGRESS,
				X_DROP, NULL));
	ASSERT_EQ(-1, connect(c, (void *)&self->addr, self->alen));
	ASSERT_EQ(EINPROGRESS, errno);
	pfd.fd = c;
	EXPECT_EQ(0, poll(&pfd, 1, 500));	/* still connecting */
	EXPECT_LE(1, COUNTER());
	getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &el);
	EXPECT_EQ(0, err);
}

TEST_F(cg, socket_created_before_joining_is_not_filtered)
{
	int rx = receiver(self, variant, self->root);
	int early = socket(variant->family, SOCK_DGRAM, 0);

	ASSERT_LE(0, rx);
	ASSERT_EQ(0, join(self->p));
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	EXPECT_EQ(0, send_one(self, early));
	EXPECT_EQ(1, arrived(rx));
	EXPECT_EQ(0, COUNTER());
	join(self->root);
}

TEST_F(cg, parent_chain_sees_child_sockets)
{
	int rx = receiver(self, variant, self->root);
	int child = sock_in(self, variant, self->c, SOCK_DGRAM);

	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	EXPECT_EQ(-EPERM, send_one(self, child));
	EXPECT_EQ(0, arrived(rx));
}

TEST_F(cg, child_chain_does_not_see_parent_sockets)
{
	int rx = receiver(self, variant, self->root);
	int parent = sock_in(self, variant, self->p, SOCK_DGRAM);

	ASSERT_EQ(0, bind_chain(self, variant, self->c, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	EXPECT_EQ(0, send_one(self, parent));
	EXPECT_EQ(1, arrived(rx));
	EXPECT_EQ(0, COUNTER());
}

TEST_F(cg, other_netns_is_not_filtered)
{
	int rx, tx;

	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	lo_up();
	rx = receiver(self, variant, self->root);
	tx = sock_in(self, variant, self->p, SOCK_DGRAM);
	ASSERT_LE(0, rx);
	EXPECT_EQ(0, send_one(self, tx));
	EXPECT_EQ(1, arrived(rx));
	EXPECT_EQ(0, COUNTER());	/* asked in the table's netns */
}

TEST_F(cg, bpf_runs_first_and_nft_sees_its_mark)
{
	int rule[] = { X_MARK, 42, X_COUNTER, X_DROP, X_END };
	int rx = receiver(self, variant, self->root);
	int tx = sock_in(self, variant, self->p, SOCK_DGRAM);
	int err = bpf_prog_attach(self->p, 1, 42, BPF_CGROUP_INET_EGRESS);

	if (err)
		SKIP(return, "cgroup BPF: %s", strerror(-err));
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				0, rule));
	EXPECT_EQ(-EPERM, send_one(self, tx));
	EXPECT_EQ(0, arrived(rx));
	EXPECT_EQ(1, COUNTER());
}

TEST_F(cg, bpf_drop_is_not_seen_by_nft)
{
	int rx = receiver(self, variant, self->root);
	int tx = sock_in(self, variant, self->p, SOCK_DGRAM);
	int err = bpf_prog_attach(self->p, 0, 0, BPF_CGROUP_INET_EGRESS);

	if (err)
		SKIP(return, "cgroup BPF: %s", strerror(-err));
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_ACCEPT, NULL));
	EXPECT_EQ(-EPERM, send_one(self, tx));
	EXPECT_EQ(0, arrived(rx));
	EXPECT_EQ(0, COUNTER());
}

TEST_F(cg, bpf_congestion_notification_passes_nft_accept)
{
	int rx = receiver(self, variant, self->root);
	int tx = sock_in(self, variant, self->p, SOCK_DGRAM);
	int err = bpf_prog_attach(self->p, 3, 0, BPF_CGROUP_INET_EGRESS);

	if (err)
		SKIP(return, "cgroup BPF: %s", strerror(-err));
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_ACCEPT, NULL));
	EXPECT_EQ(0, send_one(self, tx));
	EXPECT_EQ(1, arrived(rx));
	EXPECT_EQ(1, COUNTER());
}

TEST_F(cg, aborted_batch_leaves_no_hook)
{
	struct chain ch = {
		.name = "ch", .family = CG_NFPROTO_CGROUP,
		.hooknum = CG_NF_CGROUP_EGRESS, .idlen = 8,
		.cgid = cgroup_id(self->p), .policy = NF_DROP,
	};
	int bogus[] = { X_BOGUS, X_END };
	int rx = receiver(self, variant, self->root);
	int tx = sock_in(self, variant, self->p, SOCK_DGRAM);

	nl_begin(&self->nl);
	put_chain(&self->nl, &ch);
	put_rule(&self->nl, CG_NFPROTO_CGROUP, "ch", bogus);
	EXPECT_NE(0, nl_commit(&self->nl));
	EXPECT_EQ(-ENOENT, chain_cgroup_id(&self->nl, "ch"));
	EXPECT_EQ(0, send_one(self, tx));
	EXPECT_EQ(1, arrived(rx));
}

TEST_F(cg, dormant_table_does_not_filter)
{
	int rx = receiver(self, variant, self->root);
	int tx = sock_in(self, variant, self->p, SOCK_DGRAM);

	nl_begin(&self->nl);
	put_table(&self->nl, CG_NFPROTO_CGROUP, NFT_MSG_NEWTABLE,
		  NFT_TABLE_F_DORMANT);
	ASSERT_EQ(0, nl_commit(&self->nl));
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	EXPECT_EQ(0, send_one(self, tx));
	EXPECT_EQ(1, arrived(rx));

	nl_begin(&self->nl);
	put_table(&self->nl, CG_NFPROTO_CGROUP, NFT_MSG_NEWTABLE, 0);
	ASSERT_EQ(0, nl_commit(&self->nl));
	EXPECT_EQ(-EPERM, send_one(self, tx));
}

TEST_F(cg, deleted_table_stops_filtering)
{
	int rx = receiver(self, variant, self->root);
	int tx = sock_in(self, variant, self->p, SOCK_DGRAM);

	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	EXPECT_EQ(-EPERM, send_one(self, tx));
	nl_begin(&self->nl);
	put_table(&self->nl, CG_NFPROTO_CGROUP, NFT_MSG_DELTABLE, 0);
	ASSERT_EQ(0, nl_commit(&self->nl));
	EXPECT_EQ(0, send_one(self, tx));
	EXPECT_EQ(1, arrived(rx));
}

TEST_F(cg, rmdir_of_a_bound_cgroup)
{
	char q[192];
	uint64_t id;

	snprintf(q, sizeof(q), "%s/q", self->p);
	ASSERT_EQ(0, mkdir(q, 0755));
	id = cgroup_id(q);
	ASSERT_EQ(0, bind_chain(self, variant, q, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	EXPECT_EQ(0, rmdir(q));
	EXPECT_EQ((int64_t)id, chain_cgroup_id(&self->nl, "ch"));
	nl_begin(&self->nl);
	put_table(&self->nl, CG_NFPROTO_CGROUP, NFT_MSG_DELTABLE, 0);
	EXPECT_EQ(0, nl_commit(&self->nl));
}

TEST_F(cg, dump_shows_the_cgroup_id)
{
	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	EXPECT_EQ((int64_t)cgroup_id(self->p), chain_cgroup_id(&self->nl, "ch"));
}

TEST_F(cg, conntrack_and_log_work_in_the_family)
{
	int rule[] = { X_CT_STATE, X_LOG, X_COUNTER, X_ACCEPT, X_END };
	int rx = receiver(self, variant, self->root);
	int tx = sock_in(self, variant, self->p, SOCK_DGRAM);

	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				0, rule)) TH_LOG("%s", self->nl.errmsg);
	EXPECT_EQ(0, send_one(self, tx));
	EXPECT_EQ(1, arrived(rx));
	EXPECT_EQ(1, COUNTER());
}

/*
 * Requests for all families (nft list ruleset, nft flush ruleset) include
 * the family, as every other one: a dump lists its tables, a flush
 * deletes them and unbinds their chains.
 */
TEST_F(cg, requests_for_all_families_include_the_family)
{
	int rx = receiver(self, variant, self->root);
	int tx = sock_in(self, variant, self->p, SOCK_DGRAM);

	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	EXPECT_EQ(1, dump_count(&self->nl, CG_NFPROTO_CGROUP, CG_NFPROTO_CGROUP));
	EXPECT_EQ(1, dump_count(&self->nl, NFPROTO_UNSPEC, CG_NFPROTO_CGROUP));
	EXPECT_EQ(-EPERM, send_one(self, tx));
	/* nft flush ruleset */
	nl_begin(&self->nl);
	put_table(&self->nl, NFPROTO_UNSPEC, NFT_MSG_DELTABLE, 0);
	EXPECT_EQ(0, nl_commit(&self->nl));
	EXPECT_EQ(0, dump_count(&self->nl, NFPROTO_UNSPEC, CG_NFPROTO_CGROUP));
	EXPECT_EQ(0, send_one(self, tx));
	EXPECT_EQ(1, arrived(rx));
}

/* --- bad input: an errno and an extack, nothing bound ------------------- */

struct bad_chain {
	const char *what;
	struct chain ch;
	int err;
};

static void try_bad_chain(struct __test_metadata *_metadata,
			  FIXTURE_DATA(cg) *self, const struct bad_chain *b)
{
	struct nl *nl = &self->nl;
	int err;

	nl_begin(nl);
	if (b->ch.family != CG_NFPROTO_CGROUP)
		put_table(nl, b->ch.family, NFT_MSG_NEWTABLE, 0);
	put_chain(nl, &b->ch);
	err = nl_commit(nl);
	EXPECT_EQ(b->err, err) TH_LOG("%s: %s", b->what, strerror(-err));
	EXPECT_NE(0, nl->errmsg[0]) TH_LOG("%s: no extack message", b->what);
	EXPECT_EQ(-ENOENT, chain_cgroup_id(nl, b->ch.name));
}

TEST_F(cg, bad_chains_are_refused)
{
	uint64_t p = cgroup_id(self->p);
	char dead[192];
	uint64_t dead_id;

	snprintf(dead, sizeof(dead), "%s/dead", self->p);
	ASSERT_EQ(0, mkdir(dead, 0755));
	dead_id = cgroup_id(dead);
	ASSERT_EQ(0, rmdir(dead));

	const struct bad_chain bad[] = {
		{ "no cgroup id", { "b", CG_NFPROTO_CGROUP, 1, 0, 0, 0, NULL, 1, 0 },
		  -EINVAL },
		{ "unknown cgroup id", { "b", CG_NFPROTO_CGROUP, 1, 0, 8,
		  0xfffffffffffull, NULL, 1, 0 }, -ENOENT },
		{ "removed cgroup", { "b", CG_NFPROTO_CGROUP, 1, 0, 8, dead_id,
		  NULL, 1, 0 }, -ENOENT },
		{ "4-byte cgroup id", { "b", CG_NFPROTO_CGROUP, 1, 0, 4, p,
		  NULL, 1, 0 }, -ERANGE },
		{ "hook 2", { "b", CG_NFPROTO_CGROUP, 2, 0, 8, p, NULL, 1, 0 },
		  -EOPNOTSUPP },
		{ "hook 0xfffffffe", { "b", CG_NFPROTO_CGROUP, -2, 0, 8, p,
		  NULL, 1, 0 }, -EOPNOTSUPP },
		{ "no hook number", { "b", CG_NFPROTO_CGROUP, -1, 0, 8, p,
		  NULL, 1, 0 }, -ENOENT },
		{ "a device", { "b", CG_NFPROTO_CGROUP, 1, 0, 8, p, "lo", 1, 0 },
		  -EOPNOTSUPP },
		{ "hardware offload", { "b", CG_NFPROTO_CGROUP, 1, 0, 8, p,
		  NULL, 1, NFT_CHAIN_HW_OFFLOAD }, -EOPNOTSUPP },
		{ "cgroup id on inet", { "b", NFPROTO_INET, NF_INET_LOCAL_OUT,
		  0, 8, p, NULL, 1, 0 }, -EOPNOTSUPP },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		try_bad_chain(_metadata, self, &bad[i]);
}

TEST_F(cg, cgroup_of_a_chain_cannot_change)
{
	struct chain ch = {
		.name = "ch", .family = CG_NFPROTO_CGROUP,
		.hooknum = CG_NF_CGROUP_EGRESS, .idlen = 8,
		.cgid = cgroup_id(self->c), .policy = NF_ACCEPT,
	};

	ASSERT_EQ(0, bind_chain(self, variant, self->p, CG_NF_CGROUP_EGRESS,
				X_DROP, NULL));
	nl_begin(&self->nl);
	put_chain(&self->nl, &ch);
	EXPECT_EQ(-EOPNOTSUPP, nl_commit(&self->nl));
	EXPECT_NE(0, self->nl.errmsg[0]);
	EXPECT_EQ((int64_t)cgroup_id(self->p), chain_cgroup_id(&self->nl, "ch"));
}

TEST_F(cg, cgroup_outside_the_cgroup_namespace)
{
	struct chain ch = {
		.name = "ch", .family = CG_NFPROTO_CGROUP,
		.hooknum = CG_NF_CGROUP_EGRESS, .idlen = 8,
		.cgid = cgroup_id(self->p), .policy = NF_ACCEPT,
	};

	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (!pid) {
		/* the cgroup namespace's root is c: p is outside of it */
		if (join(self->c) || unshare(CLONE_NEWCGROUP))
			_exit(2);
		nl_begin(&self->nl);
		put_chain(&self->nl, &ch);
		_exit(nl_commit(&self->nl) == -ENOENT && self->nl.errmsg[0] ?
		      0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ENOENT, chain_cgroup_id(&self->nl, "ch"));
}

TEST_F(cg, expressions_that_cannot_work_here_are_refused)
{
	static const struct { const char *what; int x[4]; int err; } bad[] = {
		{ "queue", { X_QUEUE, X_END }, -EOPNOTSUPP },
		{ "reject", { X_REJECT, X_END }, -ENOENT },
		{ "socket", { X_SOCKET, X_END }, -EOPNOTSUPP },
		{ "payload set", { X_PAYLOAD_SET, X_END }, -EOPNOTSUPP },
	};
	struct chain ch = {
		.name = "ch", .family = CG_NFPROTO_CGROUP,
		.hooknum = CG_NF_CGROUP_EGRESS, .idlen = 8,
		.cgid = cgroup_id(self->p), .policy = NF_ACCEPT,
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int err;

		nl_begin(&self->nl);
		put_chain(&self->nl, &ch);
		put_rule(&self->nl, CG_NFPROTO_CGROUP, "ch", bad[i].x);
		err = nl_commit(&self->nl);
		EXPECT_EQ(bad[i].err, err) TH_LOG("%s: %s", bad[i].what,
						  strerror(-err));
		EXPECT_EQ(-ENOENT, chain_cgroup_id(&self->nl, "ch"));
	}
}

TEST_HARNESS_MAIN
