// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What nft sends, seen on its way to the kernel: the compile's sets, rules
 * and elements without dumping them back.
 *
 * The compile reads back what nft made in the shadow namespace
 * (front/compile.c, front/readback.c). A dump of a chain's rules or a
 * set's elements is quadratic: each part of it is a new walk from the
 * start that skips what earlier parts sent, so a million elements took
 * minutes to read where nft loads them in seconds; and the commit's
 * notifications, which are linear, hold a page of kernel memory per
 * element until the commit ends (8 GiB for a million). What nft made is
 * in its batch, though, as the same attributes: so nft runs in a thread
 * of its own whose sendmsg() calls stop at a seccomp filter that hands
 * them to this file (SECCOMP_RET_USER_NOTIF), which copies the batch and
 * lets the call go on to the kernel unchanged
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE). Nothing is decided from the copy;
 * the kernel still validates and commits all of it.
 *
 * The copy stands for the dumps only when it is all the story: a batch
 * that only adds (nothing deleted, flushed or replaced: those need the
 * kernel's word on what is left), every element once. Then, if every rule
 * is appended to a chain it names and the shadow held nothing before nft
 * ran, it stands for every set, rule and element, anonymous sets named as
 * nf_tables names them; else for the named sets' elements. Otherwise the
 * dumps are read as before.
 *
 * The stream is made while the kernel takes the batch in nft's thread
 * (the longer part of nft's run), and a rule without an expression whose
 * set names or defaults the stream changes (lookup, dynset, objref, log)
 * goes to it as nft sent it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>

#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>

#include "base/list.h"
#include "base/hash.h"
#include "front/capture.h"
#include "nl/netlink.h"

#if defined(__x86_64__)
#define CAPTURE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CAPTURE_ARCH AUDIT_ARCH_AARCH64
#endif

/*
 * A verdict map's data length in the kernel's dumps: its struct
 * nft_verdict (a code and a chain pointer) on a 64-bit kernel.
 */
#define VERDICT_LEN 16

/* seccomp's structures, as large as this kernel's may be */
#define NOTIF_ROOM 512

struct runner {
	int (*fn)(void *arg);
	void *arg;
	int ret;
	bool capture;		/* install the filter */
	bool whole;		/* make_stream()'s */
	int listener;		/* the filter's notifications; <0: none */
	int ready;		/* eventfd: listener known */
	int done;		/* eventfd: fn returned */
};

static int install_filter(void)
{
#ifdef CAPTURE_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CAPTURE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmsg, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(f), .filter = f,
	};
	long fd;

	/* this thread's, and it ends with the thread */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	/*
	 * Once its call is taken, the thread waits for the answer without
	 * signals ending the wait (5.19): else a stop and a continue (the
	 * freezer, a debugger, ^Z) restart the call, which comes again, and
	 * the batch would be copied twice.
	 */
	fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_NEW_LISTENER |
		     SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (fd < 0 && errno == EINVAL)
		fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	return fd < 0 ? -errno : (int)fd;
#else
	return -EOPNOTSUPP;
#endif
}

/* An eventfd's counter is far from full: the write cannot fail. */
static void signal_fd(int fd)
{
	uint64_t one = 1;
	ssize_t w = write(fd, &one, sizeof(one));

	(void)w;
}

static void *runner_main(void *p)
{
	struct runner *r = p;

	r->listener = r->capture ? install_filter() : -EOPNOTSUPP;
	signal_fd(r->ready);
	r->ret = r->fn(r->arg);
	signal_fd(r->done);
	return NULL;
}

static bool is_nfnetlink(int fd)
{
	int v;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) || v != AF_NETLINK)
		return false;
	len = sizeof(v);
	return !getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len) &&
	       v == NETLINK_NETFILTER;
}

/* What a batch may hold for its copy to be what the kernel holds. */
static bool only_adds(uint16_t type)
{
	switch (type) {
	case NFT_MSG_NEWTABLE:
	case NFT_MSG_NEWCHAIN:
	case NFT_MSG_NEWRULE:
	case NFT_MSG_NEWSET:
	case NFT_MSG_NEWSETELEM:
	case NFT_MSG_NEWOBJ:
	case NFT_MSG_NEWFLOWTABLE:
		return true;
	}
	return false;
}

/*
 * A rule goes to the end of its chain, named: then the chain's rules are
 * in the order of the batch. One put elsewhere (insert, a position, a
 * replacement of a handle) needs the kernel's word on the order.
 */
static bool appended(const struct nlmsghdr *nlh)
{
	const struct nlattr *a;
	bool chain = false;

	if (!(nlh->nlmsg_flags & NLM_F_APPEND) ||
	    (nlh->nlmsg_flags & NLM_F_REPLACE))
		return false;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		switch (mnl_attr_get_type(a)) {
		case NFTA_RULE_POSITION:
		case NFTA_RULE_POSITION_ID:
		case NFTA_RULE_HANDLE:
			return false;
		case NFTA_RULE_CHAIN:
			chain = true;
			break;
		}
	}
	return chain;
}

/*
 * A copy of a message; an elements message as a dump has it: libnftnl
 * numbers the elements of a nest it builds (1, 2, ...), which the kernel
 * does not read, and takes only NFTA_LIST_ELEM when it parses one.
 */
static void keep(struct cgfw_capture *cap, const struct nlmsghdr *nlh)
{
	size_t at = cap->batch.len;
	struct nlmsghdr *copy;
	struct nlattr *a, *e;

	cgfw_sb_addn(&cap->batch, (const char *)nlh,
		     NLMSG_ALIGN(nlh->nlmsg_len));
	if (cap->batch.oom ||
	    NFNL_MSG_TYPE(nlh->nlmsg_type) != NFT_MSG_NEWSETELEM)
		return;
	copy = (struct nlmsghdr *)(cap->batch.buf + at);
	mnl_attr_for_each(a, copy, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_SET_ELEM_LIST_ELEMENTS)
			continue;
		mnl_attr_for_each_nested(e, a)
			e->nla_type = NFTA_LIST_ELEM | NLA_F_NESTED;
	}
}

/* The messages of one sendmsg() on an nfnetlink socket. */
static void take(struct cgfw_capture *cap, const struct msghdr *mh)
{
	struct strbuf all;
	const struct nlmsghdr *nlh;
	uint16_t type;
	size_t i;
	int left;

	cap->streamed = false;	/* anything more: made again */
	cgfw_sb_init(&all);
	for (i = 0; i < mh->msg_iovlen; i++)
		cgfw_sb_addn(&all, mh->msg_iov[i].iov_base,
			     mh->msg_iov[i].iov_len);
	nlh = (const void *)all.buf;
	left = all.len;
	for (; cap->adds_only && mnl_nlmsg_ok(nlh, left);
	     nlh = mnl_nlmsg_next(nlh, &left)) {
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN) {
			cap->batches++;
			continue;
		}
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_END) {
			cap->batches_ended++;
			continue;
		}
		type = NFNL_MSG_TYPE(nlh->nlmsg_type);
		if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES ||
		    !only_adds(type)) {
			cap->adds_only = false;
			break;
		}
		if (type == NFT_MSG_NEWRULE && !appended(nlh))
			cap->in_order = false;
		if (type == NFT_MSG_NEWRULE || type == NFT_MSG_NEWSET ||
		    type == NFT_MSG_NEWSETELEM)
			keep(cap, nlh);
	}
	if (left || all.oom || cap->batch.oom)
		cap->adds_only = false;
	cgfw_sb_release(&all);
}

/* One call of nft's thread: copied, and let go on. false: cannot answer. */
static bool answer(struct cgfw_capture *cap, int listener,
		   struct seccomp_notif *req, struct seccomp_notif_resp *resp,
		   size_t req_size, size_t resp_size)
{
	memset(req, 0, req_size);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req))
		return errno == EINTR || errno == ENOENT;
	/*
	 * The thread is stopped in the call until the answer, and shares
	 * this memory: its arguments are read in place, while the call is
	 * still there to answer.
	 */
	if (cap->adds_only && req->data.nr == __NR_sendmsg &&
	    !ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) &&
	    is_nfnetlink((int)req->data.args[0]))
		take(cap, (const struct msghdr *)(uintptr_t)req->data.args[1]);
	memset(resp, 0, resp_size);
	resp->id = req->id;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (!ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp))
		return true;
	/* ENOENT: a signal ended the call, which comes again */
	cap->adds_only = false;
	return errno == ENOENT;
}

static void make_stream(struct cgfw_capture *cap, bool whole);

/*
 * Once a batch has ended, the stream is made of it while the kernel takes
 * it in nft's thread, on another core: the kernel's part is the longer.
 * If nft sends more, or fails, it is made again, or not used.
 */
static void stream_early(struct cgfw_capture *cap, bool whole)
{
	if (cap->streamed || !cap->adds_only || !cap->batches ||
	    cap->batches != cap->batches_ended || !cap->batch.len)
		return;
	make_stream(cap, whole);
	cap->streamed = true;
}

/*
 * Answer until nft's function returns. On an error that leaves a call
 * unanswered, the caller closes the listener: the call then fails
 * (ENOSYS) and nft says so, instead of waiting for ever.
 */
static void supervise(struct cgfw_capture *cap, struct runner *r)
{
	union {
		struct seccomp_notif n;
		char room[NOTIF_ROOM];
	} req;
	union {
		struct seccomp_notif_resp n;
		char room[NOTIF_ROOM];
	} resp;
	struct pollfd p[2] = {
		{ .fd = r->listener, .events = POLLIN },
		{ .fd = r->done, .events = POLLIN },
	};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents & POLLIN) {
			if (!answer(cap, r->listener, &req.n, &resp.n,
				    sizeof(req), sizeof(resp)))
				break;
			stream_early(cap, r->whole);
		} else if (p[1].revents) {
			return;
		}
	}
	cap->adds_only = false;
}

/* seccomp's structures fit NOTIF_ROOM (they are far smaller) */
static bool sizes_fit(void)
{
	struct seccomp_notif_sizes sizes;

	return !syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) &&
	       sizes.seccomp_notif <= NOTIF_ROOM &&
	       sizes.seccomp_notif_resp <= NOTIF_ROOM;
}

/* Hashes of each element's set and key, sorted. */
struct keys {
	uint64_t *v;
	size_t n, cap;
};

static int key_add(struct keys *k, uint64_t h)
{
	uint64_t *v;

	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		v = realloc(k->v, k->cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		k->v = v;
	}
	k->v[k->n++] = h;
	return 0;
}

static uint64_t elem_hash(uint64_t h, const struct nlattr *elem)
{
	const struct nlattr *a;
	uint32_t flags;

	mnl_attr_for_each_nested(a, elem) {
		uint16_t type = mnl_attr_get_type(a);

		if (type == NFTA_SET_ELEM_FLAGS &&
		    mnl_attr_get_payload_len(a) >= sizeof(flags)) {
			flags = mnl_attr_get_u32(a) &
				htonl(NFT_SET_ELEM_INTERVAL_END |
				      NFT_SET_ELEM_CATCHALL);
			h = cgfw_fnv1a(h, &type, sizeof(type));
			h = cgfw_fnv1a(h, &flags, sizeof(flags));
		} else if (type == NFTA_SET_ELEM_KEY ||
			   type == NFTA_SET_ELEM_KEY_END) {
			h = cgfw_fnv1a(h, &type, sizeof(type));
			h = cgfw_fnv1a(h, mnl_attr_get_payload(a),
				  mnl_attr_get_payload_len(a));
		}
	}
	return h;
}

/*
 * Every element once, each message naming its table and set: else what
 * the kernel holds is not the copy (an element sent twice, as `add
 * element` of one already there does, is one element). A hash that
 * matches by chance only costs the dump.
 */
static bool each_once(const struct cgfw_capture *cap)
{
	const struct nlmsghdr *nlh = (const void *)cap->batch.buf;
	const struct nlattr *a, *e;
	struct keys k = { 0 };
	int left = cap->batch.len;
	bool ok = true, anon;
	uint64_t h;
	size_t i, named;

	for (; ok && mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		if (NFNL_MSG_TYPE(nlh->nlmsg_type) != NFT_MSG_NEWSETELEM)
			continue;
		h = CGFW_FNV1A_INIT;
		named = 0;
		anon = false;
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
			uint16_t type = mnl_attr_get_type(a);

			if (type == NFTA_SET_ELEM_LIST_TABLE ||
			    type == NFTA_SET_ELEM_LIST_SET) {
				h = cgfw_fnv1a(h, mnl_attr_get_payload(a),
					  mnl_attr_get_payload_len(a));
				named++;
				anon |= type == NFTA_SET_ELEM_LIST_SET &&
					strchr(mnl_attr_get_str(a), '%');
			}
		}
		/*
		 * An anonymous set is its id; a named one, declared twice,
		 * has two ids and is one set.
		 */
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
			if (anon &&
			    mnl_attr_get_type(a) == NFTA_SET_ELEM_LIST_SET_ID)
				h = cgfw_fnv1a(h, mnl_attr_get_payload(a),
					  mnl_attr_get_payload_len(a));
		ok = named == 2;
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
			if (!ok ||
			    mnl_attr_get_type(a) != NFTA_SET_ELEM_LIST_ELEMENTS)
				continue;
			mnl_attr_for_each_nested(e, a)
				ok = ok && !key_add(&k, elem_hash(h, e));
		}
	}
	if (ok && k.n) {
		qsort(k.v, k.n, sizeof(*k.v), cgfw_cmp_u64);
		for (i = 1; ok && i < k.n; i++)
			ok = k.v[i] != k.v[i - 1];
	}
	free(k.v);
	return ok;
}

/* ---- the whole: sets, rules and elements, anonymous sets named ---- */

/*
 * nf_tables names an anonymous set by nft's format ("__set%d") with the
 * lowest number no set of its table has (nf_tables_set_alloc_name()):
 * in a batch that only adds, the nth set of a format in a table gets n,
 * unless a set named by the user reads as that format ("__set7"), which
 * leaves the whole to the dumps.
 */
struct anon_name {
	uint64_t table;		/* hash of the table's name */
	uint32_t id;		/* nft's id of the set in the batch */
	char name[NFT_SET_MAXNAMELEN];
};

struct anon_format {
	uint64_t table;
	char format[NFT_SET_MAXNAMELEN];
	unsigned int next;
};

struct naming {
	struct anon_name *names;
	size_t n, cap;
	struct anon_format *formats;
	size_t n_formats;
	struct keys named;	/* the user's set names: table and name */
	bool ok;
};

static uint64_t str_hash(const char *s)
{
	return cgfw_fnv1a(CGFW_FNV1A_INIT, s, strlen(s));
}

static int cmp_anon(const void *a, const void *b)
{
	const struct anon_name *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->table < y->table ? -1 : x->table > y->table;
}

/* One %d and nothing else: the kernel's rule for a format. */
static bool is_format(const char *name)
{
	const char *p = strchr(name, '%');

	return p && p[1] == 'd' && !strchr(p + 2, '%');
}

static bool name_anonymous(struct naming *nm, const char *table,
			   const char *format, uint32_t id, char *out)
{
	uint64_t th = str_hash(table);
	struct anon_format *f = NULL, *nf;
	struct anon_name *v;
	size_t i;

	for (i = 0; i < nm->n_formats && !f; i++)
		if (nm->formats[i].table == th &&
		    !strcmp(nm->formats[i].format, format))
			f = &nm->formats[i];
	if (!f) {
		nf = realloc(nm->formats, (nm->n_formats + 1) * sizeof(*nf));
		if (!nf)
			return false;
		nm->formats = nf;
		f = &nf[nm->n_formats++];
		memset(f, 0, sizeof(*f));
		f->table = th;
		snprintf(f->format, sizeof(f->format), "%s", format);
	}
	if (nm->n == nm->cap) {
		nm->cap = nm->cap ? 2 * nm->cap : 256;
		v = realloc(nm->names, nm->cap * sizeof(*v));
		if (!v)
			return false;
		nm->names = v;
	}
	v = &nm->names[nm->n++];
	v->table = th;
	v->id = id;
	if (snprintf(v->name, sizeof(v->name), f->format, f->next++) >=
	    (int)sizeof(v->name))
		return false;
	memcpy(out, v->name, sizeof(v->name));
	return true;
}

static const char *anonymous_name(const struct naming *nm, const char *table,
				  uint32_t id)
{
	struct anon_name key = { .table = str_hash(table), .id = id };
	const struct anon_name *v;

	v = bsearch(&key, nm->names, nm->n, sizeof(key), cmp_anon);
	return v ? v->name : NULL;
}

/*
 * A message to the stream, as libnftnl builds it: @room bytes at its end
 * (libnftnl's builders do not check for room).
 */
static struct nlmsghdr *stream_msg(struct strbuf *sb, size_t room,
				   const struct nlmsghdr *from)
{
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(from);

	if (!cgfw_sb_reserve(sb, room + MNL_SOCKET_BUFFER_SIZE))
		return NULL;
	return nftnl_nlmsg_build_hdr(sb->buf + sb->len, from->nlmsg_type,
				     g->nfgen_family, 0, from->nlmsg_seq);
}

static void stream_done(struct strbuf *sb, const struct nlmsghdr *nlh)
{
	sb->len += NLMSG_ALIGN(nlh->nlmsg_len);
	sb->buf[sb->len] = '\0';	/* reserved, as strbuf keeps it */
}

static bool stream_set(struct cgfw_capture *cap, struct naming *nm,
		       const struct nlmsghdr *from)
{
	struct nftnl_set *s = nftnl_set_alloc();
	char name[NFT_SET_MAXNAMELEN];
	struct nlmsghdr *nlh;
	const char *table, *given;
	bool ok = false;

	if (!s || nftnl_set_nlmsg_parse(from, s) < 0)
		goto out;
	table = nftnl_set_get_str(s, NFTNL_SET_TABLE);
	given = nftnl_set_get_str(s, NFTNL_SET_NAME);
	if (!table || !given)
		goto out;
	if (strchr(given, '%')) {
		if (!is_format(given) || !nftnl_set_is_set(s, NFTNL_SET_ID) ||
		    !name_anonymous(nm, table, given,
				    nftnl_set_get_u32(s, NFTNL_SET_ID), name))
			goto out;
		nftnl_set_set_str(s, NFTNL_SET_NAME, name);
	} else if (key_add(&nm->named, cgfw_fnv1a(str_hash(table), given,
					       strlen(given)))) {
		goto out;
	}
	/* the kernel's size of a verdict, which nft does not send */
	if ((nftnl_set_get_u32(s, NFTNL_SET_FLAGS) & NFT_SET_MAP) &&
	    nftnl_set_get_u32(s, NFTNL_SET_DATA_TYPE) == NFT_DATA_VERDICT &&
	    !nftnl_set_get_u32(s, NFTNL_SET_DATA_LEN))
		nftnl_set_set_u32(s, NFTNL_SET_DATA_LEN, VERDICT_LEN);
	nlh = stream_msg(&cap->stream, from->nlmsg_len + NFT_SET_MAXNAMELEN,
			 from);
	if (nlh) {
		nftnl_set_nlmsg_build_payload(nlh, s);
		stream_done(&cap->stream, nlh);
		ok = true;
	}
out:
	if (s)
		nftnl_set_free(s);
	return ok;
}

/* The user's names read as no format of their table, and each is once. */
static bool names_apart(struct naming *nm, const struct cgfw_capture *cap)
{
	const struct nlmsghdr *nlh = (const void *)cap->batch.buf;
	int left = cap->batch.len;
	struct nftnl_set *s;
	const char *table, *name, *pct;
	bool ok = true;
	size_t i;

	for (; ok && mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		if (NFNL_MSG_TYPE(nlh->nlmsg_type) != NFT_MSG_NEWSET)
			continue;
		s = nftnl_set_alloc();
		ok = s && nftnl_set_nlmsg_parse(nlh, s) >= 0;
		table = ok ? nftnl_set_get_str(s, NFTNL_SET_TABLE) : NULL;
		name = ok ? nftnl_set_get_str(s, NFTNL_SET_NAME) : NULL;
		ok = table && name;
		for (i = 0; ok && !strchr(name, '%') && i < nm->n_formats; i++) {
			pct = strchr(nm->formats[i].format, '%');
			ok = nm->formats[i].table != str_hash(table) ||
			     strncmp(name, nm->formats[i].format,
				     pct - nm->formats[i].format);
		}
		if (s)
			nftnl_set_free(s);
	}
	if (ok && nm->named.n) {
		qsort(nm->named.v, nm->named.n, sizeof(uint64_t), cgfw_cmp_u64);
		for (i = 1; ok && i < nm->named.n; i++)
			ok = nm->named.v[i] != nm->named.v[i - 1];
	}
	return ok;
}

static bool rename_ref(const struct naming *nm, const char *table,
		       struct nftnl_expr *e, uint16_t name_attr,
		       uint16_t id_attr)
{
	const char *name = nftnl_expr_get_str(e, name_attr), *real;

	if (!name || !strchr(name, '%'))
		return true;
	if (!nftnl_expr_is_set(e, id_attr))
		return false;
	real = anonymous_name(nm, table, nftnl_expr_get_u32(e, id_attr));
	if (!real)
		return false;
	nftnl_expr_set_str(e, name_attr, real);
	return true;
}

/* What nft leaves out and the kernel's dump shows, as the dump has it. */
static void fill_defaults(struct nftnl_expr *e, const char *kind)
{
	if (!strcmp(kind, "lookup") &&
	    !nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_FLAGS))
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, 0);
	else if (!strcmp(kind, "log") &&
		 !nftnl_expr_is_set(e, NFTNL_EXPR_LOG_GROUP) &&
		 !nftnl_expr_is_set(e, NFTNL_EXPR_LOG_LEVEL))
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_LEVEL, 4);	/* warn */
	else if (!strcmp(kind, "dynset") &&
		 !nftnl_expr_is_set(e, NFTNL_EXPR_DYNSET_TIMEOUT))
		nftnl_expr_set_u64(e, NFTNL_EXPR_DYNSET_TIMEOUT, 0);
}

struct rule_names {
	const struct naming *nm;
	const char *table;
};

static int rename_expr(struct nftnl_expr *e, void *data)
{
	const struct rule_names *rn = data;
	const struct naming *nm = rn->nm;
	const char *table = rn->table;
	const char *kind = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	bool ok = true;

	if (!strcmp(kind, "lookup"))
		ok = rename_ref(nm, table, e, NFTNL_EXPR_LOOKUP_SET,
				NFTNL_EXPR_LOOKUP_SET_ID);
	else if (!strcmp(kind, "dynset"))
		ok = rename_ref(nm, table, e, NFTNL_EXPR_DYNSET_SET_NAME,
				NFTNL_EXPR_DYNSET_SET_ID);
	else if (!strcmp(kind, "objref"))
		ok = rename_ref(nm, table, e, NFTNL_EXPR_OBJREF_SET_NAME,
				NFTNL_EXPR_OBJREF_SET_ID);
	fill_defaults(e, kind);
	return ok ? 0 : -1;
}

/*
 * Does the rule hold an expression that rename_expr() or fill_defaults()
 * changes? Most rules of a long list do not, and go to the stream as
 * they are: parsed and built again, they took most of this file's time.
 */
static bool renamed(const struct nlmsghdr *from)
{
	static const char *const kinds[] = {
		"lookup", "dynset", "objref", "log",
	};

	return cgfw_rule_has_expr(from, kinds, ARRAY_SIZE(kinds));
}

static bool stream_rule(struct cgfw_capture *cap, const struct naming *nm,
			const struct nlmsghdr *from)
{
	struct nftnl_rule *r;
	struct nlmsghdr *nlh, *named = NULL;
	const struct nlmsghdr *parsed;
	struct rule_names rn = { .nm = nm };
	bool ok = false;

	if (!renamed(from)) {
		cgfw_sb_addn(&cap->stream, (const char *)from,
			     NLMSG_ALIGN(from->nlmsg_len));
		return !cap->stream.oom;
	}
	r = nftnl_rule_alloc();
	parsed = cgfw_rule_names_ended(from, &named);
	if (!r || !parsed || nftnl_rule_nlmsg_parse(parsed, r) < 0)
		goto out;
	rn.table = nftnl_rule_get_str(r, NFTNL_RULE_TABLE);
	if (!rn.table || nftnl_expr_foreach(r, rename_expr, &rn) < 0)
		goto out;
	nlh = stream_msg(&cap->stream, from->nlmsg_len + 4096, from);
	if (nlh) {
		nftnl_rule_nlmsg_build_payload(nlh, r);
		stream_done(&cap->stream, nlh);
		ok = true;
	}
out:
	free(named);
	if (r)
		nftnl_rule_free(r);
	return ok;
}

/* An elements message with its set's name as the kernel gave it. */
static bool stream_elems(struct cgfw_capture *cap, const struct naming *nm,
			 const struct nlmsghdr *from)
{
	const char *table = NULL, *set = NULL, *real;
	const struct nlattr *a;
	struct nlmsghdr *nlh;
	uint32_t id = 0;
	bool has_id = false;
	char *at;

	mnl_attr_for_each(a, from, sizeof(struct nfgenmsg)) {
		switch (mnl_attr_get_type(a)) {
		case NFTA_SET_ELEM_LIST_TABLE:
			table = mnl_attr_get_str(a);
			break;
		case NFTA_SET_ELEM_LIST_SET:
			set = mnl_attr_get_str(a);
			break;
		case NFTA_SET_ELEM_LIST_SET_ID:
			id = ntohl(mnl_attr_get_u32(a));
			has_id = true;
			break;
		}
	}
	if (!table || !set)
		return false;
	if (!strchr(set, '%')) {
		cgfw_sb_addn(&cap->stream, (const char *)from,
			     NLMSG_ALIGN(from->nlmsg_len));
		return !cap->stream.oom;
	}
	real = has_id ? anonymous_name(nm, table, id) : NULL;
	if (!real)
		return false;
	nlh = stream_msg(&cap->stream, from->nlmsg_len + NFT_SET_MAXNAMELEN,
			 from);
	if (!nlh)
		return false;
	at = mnl_nlmsg_get_payload(nlh);
	memcpy(at, mnl_nlmsg_get_payload(from), sizeof(struct nfgenmsg));
	mnl_attr_for_each(a, from, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) == NFTA_SET_ELEM_LIST_SET)
			mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, real);
		else
			mnl_attr_put(nlh, a->nla_type,
				     mnl_attr_get_payload_len(a),
				     mnl_attr_get_payload(a));
	}
	stream_done(&cap->stream, nlh);
	return true;
}

/* Sets (renamed), then rules, then elements, as the dumps give them. */
static bool stream_whole(struct cgfw_capture *cap)
{
	struct naming nm = { .ok = true };
	const struct nlmsghdr *nlh;
	uint16_t pass[] = { NFT_MSG_NEWSET, NFT_MSG_NEWRULE,
			    NFT_MSG_NEWSETELEM };
	bool ok = true;
	size_t p;
	int left;

	for (p = 0; ok && p < ARRAY_SIZE(pass); p++) {
		if (pass[p] == NFT_MSG_NEWRULE) {
			ok = names_apart(&nm, cap);
			if (nm.n)
				qsort(nm.names, nm.n, sizeof(*nm.names),
				      cmp_anon);
		}
		nlh = (const void *)cap->batch.buf;
		left = cap->batch.len;
		for (; ok && mnl_nlmsg_ok(nlh, left);
		     nlh = mnl_nlmsg_next(nlh, &left)) {
			if (NFNL_MSG_TYPE(nlh->nlmsg_type) != pass[p])
				continue;
			if (pass[p] == NFT_MSG_NEWSET)
				ok = stream_set(cap, &nm, nlh);
			else if (pass[p] == NFT_MSG_NEWRULE)
				ok = stream_rule(cap, &nm, nlh);
			else
				ok = stream_elems(cap, &nm, nlh);
		}
	}
	free(nm.names);
	free(nm.formats);
	free(nm.named.v);
	return ok && !cap->stream.oom;
}

/* The named sets' elements alone. */
static bool stream_named_elems(struct cgfw_capture *cap)
{
	const struct nlmsghdr *nlh = (const void *)cap->batch.buf;
	int left = cap->batch.len;

	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left))
		if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWSETELEM)
			cgfw_sb_addn(&cap->stream, (const char *)nlh,
				     NLMSG_ALIGN(nlh->nlmsg_len));
	return !cap->stream.oom;
}

static void make_stream(struct cgfw_capture *cap, bool whole)
{
	cgfw_sb_release(&cap->stream);
	cgfw_sb_init(&cap->stream);
	cap->level = CGFW_CAPTURE_NONE;
	cap->streamed = false;
	/* a batch seen whole, or nothing is known */
	if (!cap->adds_only || !cap->batches ||
	    cap->batches != cap->batches_ended || !each_once(cap))
		return;
	if (whole && cap->in_order && stream_whole(cap)) {
		cap->level = CGFW_CAPTURE_WHOLE;
		return;
	}
	cgfw_sb_release(&cap->stream);
	cgfw_sb_init(&cap->stream);
	if (stream_named_elems(cap)) {
		cap->level = CGFW_CAPTURE_ELEMS;
		return;
	}
	cgfw_sb_release(&cap->stream);	/* none of it: the dumps read it */
	cgfw_sb_init(&cap->stream);
}

/*
 * nft's thread, with the stack nft had on the main thread: its parser
 * recurses with the input's nesting.
 */
#define RUNNER_STACK (64u << 20)

static int start(pthread_t *thread, struct runner *r)
{
	pthread_attr_t attr;
	int ret;

	if (pthread_attr_init(&attr))
		return -1;
	ret = pthread_attr_setstacksize(&attr, RUNNER_STACK) ? :
	      pthread_create(thread, &attr, runner_main, r);
	pthread_attr_destroy(&attr);
	return ret;
}

void cgfw_capture_run(int (*fn)(void *arg), void *arg, bool whole,
		      struct cgfw_capture *cap)
{
	struct runner r = {
		.fn = fn, .arg = arg, .listener = -1, .whole = whole,
	};
	pthread_t thread;
	uint64_t v;

	memset(cap, 0, sizeof(*cap));
	cgfw_sb_init(&cap->batch);
	cgfw_sb_init(&cap->stream);
	cap->in_order = true;
	r.capture = sizes_fit() && !getenv("CGFW_READBACK_DUMP");
	r.ready = eventfd(0, EFD_CLOEXEC);
	r.done = eventfd(0, EFD_CLOEXEC);
	if (r.ready < 0 || r.done < 0 || start(&thread, &r)) {
		cap->ret = fn(arg);
		goto out;
	}
	while (read(r.ready, &v, sizeof(v)) < 0 && errno == EINTR)
		;
	if (r.listener >= 0) {
		cap->adds_only = true;
		supervise(cap, &r);
	}
	/*
	 * Without its listener a call the filter stops fails (ENOSYS)
	 * rather than waiting for an answer that will not come.
	 */
	if (r.listener >= 0)
		close(r.listener);
	pthread_join(thread, NULL);
	cap->ret = r.ret;
	if (cap->ret) {
		cgfw_sb_release(&cap->stream);
		cgfw_sb_init(&cap->stream);
		cap->level = CGFW_CAPTURE_NONE;
	} else if (!cap->adds_only || !cap->streamed) {
		make_stream(cap, whole);
	}	/* else made while the kernel took the batch, of all of it */
	cgfw_sb_release(&cap->batch);
	cgfw_sb_init(&cap->batch);
out:
	if (r.ready >= 0)
		close(r.ready);
	if (r.done >= 0)
		close(r.done);
}

bool cgfw_capture_has(const struct nftnl_set *s, void *data)
{
	const struct cgfw_capture *cap = data;

	return cap->level == CGFW_CAPTURE_WHOLE ||
	       (cap->level == CGFW_CAPTURE_ELEMS &&
		!(nftnl_set_get_u32(s, NFTNL_SET_FLAGS) & NFT_SET_ANONYMOUS));
}

void cgfw_capture_release(struct cgfw_capture *cap)
{
	cgfw_sb_release(&cap->batch);
	cgfw_sb_release(&cap->stream);
	cap->level = CGFW_CAPTURE_NONE;
}
