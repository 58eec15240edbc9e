// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The set elements nft sends, seen on their way to the kernel.
 *
 * The compile reads back what nft made in the shadow namespace
 * (front/compile.c, front/readback.c). For a set's elements a dump is
 * quadratic: each part of it is a new walk of the set from its start
 * that skips what earlier parts sent, so a million elements took minutes
 * to read where nft loads them in seconds; and the commit's notifications,
 * which are linear, hold a page of kernel memory per element until the
 * commit ends (8 GiB for a million). The elements are in nft's batch,
 * though, as the same attributes: so nft runs in a thread of its own
 * whose sendmsg() calls stop at a seccomp filter that hands them to this
 * file (SECCOMP_RET_USER_NOTIF), which copies the batch and lets the
 * call go on to the kernel unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
 * Nothing is decided from what is copied; the kernel still validates and
 * commits all of it.
 *
 * The copy stands for the named sets' elements only when it is all the
 * story: a batch that only adds (nothing deleted or flushed: those need
 * the kernel's word on what is left), with every element once. Otherwise,
 * and for anonymous sets (the kernel names them, nft's batch does not),
 * the elements are dumped as before.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
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
#include <libnftnl/set.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>

#include "front/capture.h"

#if defined(__x86_64__)
#define CAPTURE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CAPTURE_ARCH AUDIT_ARCH_AARCH64
#endif

/* seccomp's structures, as large as this kernel's may be */
#define NOTIF_ROOM 512

struct runner {
	int (*fn)(void *arg);
	void *arg;
	int ret;
	bool capture;		/* install the filter */
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
		.len = sizeof(f) / sizeof(f[0]), .filter = f,
	};
	long fd;

	/* this thread's, and it ends with the thread */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
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

/* What a batch may hold for its copy to be every element. */
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
 * A copy of an elements message as a dump has it: libnftnl numbers the
 * elements of a nest it builds (1, 2, ...), which the kernel does not
 * read, and takes only NFTA_LIST_ELEM when it parses one.
 */
static void keep(struct cgfw_capture *cap, const struct nlmsghdr *nlh)
{
	size_t at = cap->elems.len;
	struct nlmsghdr *copy;
	struct nlattr *a, *e;

	cgfw_sb_addn(&cap->elems, (const char *)nlh,
		     NLMSG_ALIGN(nlh->nlmsg_len));
	if (cap->elems.oom)
		return;
	copy = (struct nlmsghdr *)(cap->elems.buf + at);
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
	size_t i;
	int left;

	cgfw_sb_init(&all);
	for (i = 0; i < mh->msg_iovlen; i++)
		cgfw_sb_addn(&all, mh->msg_iov[i].iov_base,
			     mh->msg_iov[i].iov_len);
	nlh = (const void *)all.buf;
	left = all.len;
	for (; cap->usable && mnl_nlmsg_ok(nlh, left);
	     nlh = mnl_nlmsg_next(nlh, &left)) {
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN ||
		    nlh->nlmsg_type == NFNL_MSG_BATCH_END)
			continue;
		if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES ||
		    !only_adds(NFNL_MSG_TYPE(nlh->nlmsg_type)))
			cap->usable = false;
		else if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWSETELEM)
			keep(cap, nlh);
	}
	if (left || all.oom || cap->elems.oom)
		cap->usable = false;
	cgfw_sb_release(&all);
}

static void answer(struct cgfw_capture *cap, int listener,
		   struct seccomp_notif *req, struct seccomp_notif_resp *resp,
		   size_t req_size, size_t resp_size)
{
	memset(req, 0, req_size);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req)) {
		if (errno != EINTR && errno != ENOENT)
			cap->usable = false;
		return;
	}
	/*
	 * The thread is stopped in the call until the answer, and shares
	 * this memory: its arguments are read in place.
	 */
	if (req->data.nr == __NR_sendmsg &&
	    is_nfnetlink((int)req->data.args[0]))
		take(cap, (const struct msghdr *)(uintptr_t)req->data.args[1]);
	memset(resp, 0, resp_size);
	resp->id = req->id;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	/* ENOENT: a signal ended the call, which will come again: a copy
	 * twice, which the check of the elements finds */
	ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

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
			cap->usable = false;
			break;
		}
		if (p[0].revents & POLLIN)
			answer(cap, r->listener, &req.n, &resp.n,
			       sizeof(req), sizeof(resp));
		else if (p[1].revents)
			break;
	}
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

static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

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
			h = fnv1a(h, &type, sizeof(type));
			h = fnv1a(h, &flags, sizeof(flags));
		} else if (type == NFTA_SET_ELEM_KEY ||
			   type == NFTA_SET_ELEM_KEY_END) {
			h = fnv1a(h, &type, sizeof(type));
			h = fnv1a(h, mnl_attr_get_payload(a),
				  mnl_attr_get_payload_len(a));
		}
	}
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Every element once, each message naming its table and set: else what
 * the kernel holds is not the copy (an element sent twice, as `add
 * element` of one already there does, is one element). A hash that
 * matches by chance only costs the dump.
 */
static bool each_once(const struct cgfw_capture *cap)
{
	const struct nlmsghdr *nlh = (const void *)cap->elems.buf;
	const struct nlattr *a, *e;
	struct keys k = { 0 };
	int left = cap->elems.len;
	bool ok = true;
	uint64_t h;
	size_t i, named;

	for (; ok && mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		h = 0xcbf29ce484222325ull;
		named = 0;
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
			uint16_t type = mnl_attr_get_type(a);

			if (type == NFTA_SET_ELEM_LIST_TABLE ||
			    type == NFTA_SET_ELEM_LIST_SET) {
				h = fnv1a(h, mnl_attr_get_payload(a),
					  mnl_attr_get_payload_len(a));
				named++;
			}
		}
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
		qsort(k.v, k.n, sizeof(*k.v), cmp_u64);
		for (i = 1; ok && i < k.n; i++)
			ok = k.v[i] != k.v[i - 1];
	}
	free(k.v);
	return ok;
}

void cgfw_capture_run(int (*fn)(void *arg), void *arg,
		      struct cgfw_capture *cap)
{
	struct runner r = { .fn = fn, .arg = arg, .listener = -1 };
	pthread_t thread;
	uint64_t v;

	r.capture = sizes_fit();
	cgfw_sb_init(&cap->elems);
	cap->usable = false;
	r.ready = eventfd(0, EFD_CLOEXEC);
	r.done = eventfd(0, EFD_CLOEXEC);
	if (r.ready < 0 || r.done < 0 ||
	    pthread_create(&thread, NULL, runner_main, &r)) {
		cap->ret = fn(arg);
		goto out;
	}
	if (read(r.ready, &v, sizeof(v)) == sizeof(v) && r.listener >= 0) {
		cap->usable = true;
		supervise(cap, &r);
	}
	/* without its listener a call the filter stops fails (ENOSYS)
	 * rather than waiting for an answer that will not come */
	if (r.listener >= 0)
		close(r.listener);
	pthread_join(thread, NULL);
	cap->ret = r.ret;
	cap->usable = cap->usable && each_once(cap);
out:
	if (r.ready >= 0)
		close(r.ready);
	if (r.done >= 0)
		close(r.done);
}

bool cgfw_capture_has(const struct nftnl_set *s, void *data)
{
	const struct cgfw_capture *cap = data;

	return cap->usable &&
	       !(nftnl_set_get_u32(s, NFTNL_SET_FLAGS) & NFT_SET_ANONYMOUS);
}

void cgfw_capture_release(struct cgfw_capture *cap)
{
	cgfw_sb_release(&cap->elems);
	cap->usable = false;
}
