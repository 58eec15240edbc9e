// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Netlink: nf_tables batches and dumps over libmnl.
 *
 * A batch remembers, for every message, where in the user's text the object
 * came from. When the kernel refuses a message, its error names the message
 * by sequence number, and the error is reported at that place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>

#include "nl/netlink.h"

#define BATCH_PAGE (1 << 20)

/*
 * A socket bound to @portid: the pid, for the socket that holds tables (it
 * is the owner nft and cgfw show); -EADDRINUSE if another has it.
 */
static int open_bound(struct cgfw_ctx *ctx, struct mnl_socket **out,
		      pid_t portid)
{
	struct mnl_socket *nl;
	int one = 1, ret;

	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl) {
		ret = -errno;
		cgfw_err(ctx, "cannot open a netfilter netlink socket: %s",
			 strerror(errno));
		return ret;
	}
	if (mnl_socket_bind(nl, 0, portid) < 0) {
		ret = -errno;
		mnl_socket_close(nl);
		if (ret != -EADDRINUSE)
			cgfw_err(ctx, "cannot bind the netlink socket: %s",
				 strerror(-ret));
		return ret;
	}
	/* errors with a message and the offending attribute */
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	*out = nl;
	return 0;
}

int cgfw_nl_open(struct cgfw_ctx *ctx, struct mnl_socket **out)
{
	return open_bound(ctx, out, MNL_SOCKET_AUTOPID);
}

static void holder_close(void *nl)
{
	mnl_socket_close(nl);
}

int cgfw_nl_writer(struct cgfw_ctx *ctx, struct mnl_socket **out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int ret;

	if (!ctx->hold_tables)
		return cgfw_nl_open(ctx, out);
	if (!ctx->holder) {
		ret = open_bound(ctx, out, getpid());
		if (ret == -EADDRINUSE)
			ret = cgfw_nl_open(ctx, out);
		if (ret)
			return ret;
		ctx->holder = *out;
		ctx->holder_close = holder_close;
		return 0;
	}
	/* what an interrupted exchange left unread is not for the next */
	while (recv(mnl_socket_get_fd(ctx->holder), buf, sizeof(buf),
		    MSG_DONTWAIT) > 0)
		;
	*out = ctx->holder;
	return 0;
}

void cgfw_nl_writer_close(struct cgfw_ctx *ctx, struct mnl_socket *nl)
{
	if (nl && nl != ctx->holder)
		mnl_socket_close(nl);
}

int cgfw_nl_batch_init(struct cgfw_nl_batch *nb)
{
	memset(nb, 0, sizeof(*nb));
	nb->bufsize = BATCH_PAGE;
	nb->buf = malloc(nb->bufsize);
	if (!nb->buf)
		return -ENOMEM;
	nb->seq = time(NULL);
	nftnl_batch_begin(nb->buf, nb->seq++);
	nb->len = NLMSG_ALIGN(((struct nlmsghdr *)nb->buf)->nlmsg_len);
	return 0;
}

void cgfw_nl_batch_release(struct cgfw_nl_batch *nb)
{
	free(nb->buf);
	free(nb->origins);
	memset(nb, 0, sizeof(*nb));
}

/*
 * Make room for one more message of at most @need bytes. A batch is one
 * contiguous buffer (the kernel takes it in one sendmsg), so it grows.
 */
static int batch_reserve(struct cgfw_nl_batch *nb, size_t need)
{
	size_t size = nb->bufsize;
	char *p;

	if (nb->bufsize - nb->len >= need)
		return 0;
	while (size - nb->len < need)
		size *= 2;
	p = realloc(nb->buf, size);
	if (!p)
		return -ENOMEM;
	nb->buf = p;
	nb->bufsize = size;
	return 0;
}

struct nlmsghdr *cgfw_nl_batch_next(struct cgfw_nl_batch *nb, uint16_t type,
				    uint16_t family, uint16_t flags,
				    const struct cgfw_loc *loc, const char *what)
{
	struct cgfw_nl_origin *o;

	if (nb->err)
		return NULL;
	/*
	 * libnftnl's builders do not check for room: leave enough for the
	 * largest message we build (a rule, or a chunk of set elements).
	 */
	nb->err = batch_reserve(nb, CGFW_NL_MAX_MSG);
	if (nb->err)
		return NULL;
	if (nb->n_origins == nb->cap_origins) {
		size_t cap = nb->cap_origins ? nb->cap_origins * 2 : 64;

		o = realloc(nb->origins, cap * sizeof(*o));
		if (!o) {
			nb->err = -ENOMEM;
			return NULL;
		}
		nb->origins = o;
		nb->cap_origins = cap;
	}
	o = &nb->origins[nb->n_origins++];
	o->seq = nb->seq;
	o->loc = loc;
	o->what = what;
	nb->last = nb->len;
	return nftnl_nlmsg_build_hdr(nb->buf + nb->len, type, family, flags,
				     nb->seq++);
}

void cgfw_nl_batch_done(struct cgfw_nl_batch *nb)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)(nb->buf + nb->len);

	if (nb->err)
		return;
	if (nlh->nlmsg_len > CGFW_NL_MAX_MSG) {
		nb->err = -EMSGSIZE;
		return;
	}
	nb->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

static const struct cgfw_nl_origin *origin_of(const struct cgfw_nl_batch *nb,
					      uint32_t seq)
{
	size_t i;

	for (i = 0; i < nb->n_origins; i++)
		if (nb->origins[i].seq == seq)
			return &nb->origins[i];
	return NULL;
}

/* Pull NLMSGERR_ATTR_MSG out of an error message's extended ACK. */
static const char *extack_msg(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	size_t off = sizeof(*e);
	int len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += mnl_nlmsg_get_payload_len(&e->msg);
	attr = (const struct nlattr *)((const char *)e + off);
	len = (int)mnl_nlmsg_get_payload_len(nlh) - (int)off;
	for (; mnl_attr_ok(attr, len); attr = mnl_attr_next(attr)) {
		len -= MNL_ALIGN(attr->nla_len);
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG)
			return mnl_attr_get_str(attr);
	}
	return NULL;
}

int cgfw_nl_batch_commit(struct cgfw_ctx *ctx, struct mnl_socket *nl,
			 struct cgfw_nl_batch *nb, const struct cgfw_source *src)
{
	char rbuf[MNL_SOCKET_BUFFER_SIZE * 4];
	const struct cgfw_nl_origin *o;
	const struct nlmsghdr *nlh;
	struct nlmsghdr *last;
	int ret, first_err = 0, fd, bufsz;
	struct timeval answer_timeout = { .tv_sec = 30 };
	uint32_t last_seq;
	bool done = false;
	struct strbuf why;
	const char *msg;
	ssize_t n;

	if (nb->err) {
		cgfw_err(ctx, "cannot build the netlink batch: %s",
			 strerror(-nb->err));
		return nb->err;
	}
	if (!nb->n_origins)
		return 0;
	/*
	 * Only the last message asks for an ACK: the kernel reports every
	 * message that fails anyway, and the last one's answer comes last.
	 * An ACK for each would overflow the socket's buffer on large
	 * rulesets, and then nobody knows whether the batch took effect.
	 */
	last = (struct nlmsghdr *)(nb->buf + nb->last);
	last->nlmsg_flags |= NLM_F_ACK;
	last_seq = last->nlmsg_seq;
	nb->err = batch_reserve(nb, NLMSG_HDRLEN + 64);
	if (nb->err)
		return nb->err;
	nftnl_batch_end(nb->buf + nb->len, nb->seq++);
	nb->len += NLMSG_ALIGN(((struct nlmsghdr *)(nb->buf + nb->len))->nlmsg_len);

	/* the whole batch in one message */
	fd = mnl_socket_get_fd(nl);
	bufsz = nb->len + 65536;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsz, sizeof(bufsz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	bufsz = 1 << 22;	/* room for the errors of a failed batch */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsz, sizeof(bufsz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	/* nf_tables answers before sendmsg returns: never wait for ever */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &answer_timeout,
		   sizeof(answer_timeout));

	if (mnl_socket_sendto(nl, nb->buf, nb->len) < 0) {
		ret = -errno;
		cgfw_err(ctx, "cannot send the ruleset to the kernel: %s",
			 strerror(errno));
		return ret;
	}

	while (!done) {
		n = mnl_socket_recvfrom(nl, rbuf, sizeof(rbuf));
		if (n < 0) {
			ret = -errno;
			cgfw_err(ctx, "no answer from nf_tables: %s",
				 strerror(errno));
			return first_err ? : ret;
		}
		for (nlh = (const struct nlmsghdr *)rbuf; mnl_nlmsg_ok(nlh, n);
		     nlh = mnl_nlmsg_next(nlh, (int *)&n)) {
			const struct nlmsgerr *e;

			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			e = mnl_nlmsg_get_payload(nlh);
			o = origin_of(nb, nlh->nlmsg_seq);
			/* the last message, or the batch refused as a whole */
			if (nlh->nlmsg_seq == last_seq || !o)
				done = true;
			if (!e->error || first_err)
				continue;
			/* the first failure is the cause; later ones follow */
			msg = extack_msg(nlh);
			cgfw_sb_init(&why);
			cgfw_sb_addf(&why, "the kernel refused %s: %s",
				     o && o->what ? o->what : "the ruleset",
				     strerror(-e->error));
			if (msg)
				cgfw_sb_addf(&why, " (%s)", msg);
			cgfw_sb_adds(&why, "; nothing was changed");
			cgfw_err_at(ctx, src, o ? o->loc : NULL, "%s",
				    why.buf ? why.buf : "out of memory");
			cgfw_sb_release(&why);
			first_err = e->error;
		}
	}
	return first_err;
}

int cgfw_nl_dump(struct mnl_socket *nl, struct nlmsghdr *req,
		 int (*cb)(const struct nlmsghdr *nlh, void *data), void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE * 4];
	unsigned int portid = mnl_socket_get_portid(nl);
	uint32_t seq = req->nlmsg_seq;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(nl, req, req->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, n, seq, portid, cb, data);
		if (ret < 0)
			return -errno;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

/* Is the string attribute @a @s, with or without its NUL? */
static bool attr_is(const struct nlattr *a, const char *s)
{
	size_t len = mnl_attr_get_payload_len(a), n = strlen(s);

	return strnlen(mnl_attr_get_payload(a), len) == n &&
	       !memcmp(mnl_attr_get_payload(a), s, n);
}

/* Is @name (an NFTA_EXPR_NAME) objref's? */
static bool is_objref(const struct nlattr *name)
{
	return attr_is(name, "objref");
}

/* Copy attribute @a into @nlh; an objref's names with their NUL. */
static void copy_attr(struct nlmsghdr *nlh, const struct nlattr *a,
		      int depth, bool objref)
{
	const struct nlattr *x, *name = NULL;
	struct nlattr *nest;
	uint16_t type = mnl_attr_get_type(a);

	if (depth == 3 && objref && (type == NFTA_OBJREF_IMM_NAME ||
				     type == NFTA_OBJREF_SET_NAME)) {
		mnl_attr_put(nlh, a->nla_type, mnl_attr_get_payload_len(a),
			     mnl_attr_get_payload(a));
		nest = (struct nlattr *)((char *)nlh + nlh->nlmsg_len -
			MNL_ALIGN(a->nla_len));
		if (!mnl_attr_get_payload_len(a) ||
		    ((char *)mnl_attr_get_payload(a))
		    [mnl_attr_get_payload_len(a) - 1]) {
			/* one more byte, 0: the padding has room or grows */
			nlh->nlmsg_len -= MNL_ALIGN(nest->nla_len);
			nest->nla_len++;
			((char *)nest)[nest->nla_len - 1] = 0;
			nlh->nlmsg_len += MNL_ALIGN(nest->nla_len);
		}
		return;
	}
	/* the expressions' list, an element, an objref's data: nests */
	if ((depth == 0 && type == NFTA_RULE_EXPRESSIONS) ||
	    (depth == 1 && type == NFTA_LIST_ELEM) ||
	    (depth == 2 && type == NFTA_EXPR_DATA && objref)) {
		nest = mnl_attr_nest_start(nlh, type);
		if (depth == 1)
			mnl_attr_for_each_nested(x, a)
				if (mnl_attr_get_type(x) == NFTA_EXPR_NAME)
					name = x;
		objref = depth == 2 || (name && is_objref(name));
		mnl_attr_for_each_nested(x, a)
			copy_attr(nlh, x, depth + 1, objref);
		mnl_attr_nest_end(nlh, nest);
		return;
	}
	mnl_attr_put(nlh, a->nla_type, mnl_attr_get_payload_len(a),
		     mnl_attr_get_payload(a));
}

/*
 * libnftnl 1.2.4 writes an objref's names (counter name "c1") without
 * their NUL (mnl_attr_put_str()) and reads them with strdup(): from nft's
 * batch, where the kernel's dumps have the NUL, a name of 4, 8, ... bytes
 * ran into what follows (and the stream of nft's batch that the compile
 * reads, front/capture.c, has them as nft sent them). A copy of @from
 * with those names ended, in a malloc()ed buffer.
 */
static struct nlmsghdr *rule_with_names(const struct nlmsghdr *from)
{
	/* a name grows by 4 bytes at most: an attribute of 4 at least */
	struct nlmsghdr *nlh = calloc(1, 2 * (size_t)from->nlmsg_len + 64);
	const struct nlattr *a;

	if (!nlh)
		return NULL;
	memcpy(nlh, from, MNL_NLMSG_HDRLEN + sizeof(struct nfgenmsg));
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg));
	mnl_attr_for_each(a, from, sizeof(struct nfgenmsg))
		copy_attr(nlh, a, 0, false);
	return nlh;
}

/* Is @e, an element of a rule's expression list, of one of @kinds? */
static bool expr_of(const struct nlattr *e, const char *const *kinds,
		    size_t n)
{
	const struct nlattr *x;
	size_t i;

	mnl_attr_for_each_nested(x, e) {
		if (mnl_attr_get_type(x) != NFTA_EXPR_NAME)
			continue;
		for (i = 0; i < n; i++)
			if (attr_is(x, kinds[i]))
				return true;
	}
	return false;
}

bool cgfw_rule_has_expr(const struct nlmsghdr *nlh, const char *const *kinds,
			size_t n)
{
	const struct nlattr *a, *e;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != NFTA_RULE_EXPRESSIONS)
			continue;
		mnl_attr_for_each_nested(e, a)
			if (expr_of(e, kinds, n))
				return true;
	}
	return false;
}

const struct nlmsghdr *cgfw_rule_names_ended(const struct nlmsghdr *from,
					     struct nlmsghdr **copy)
{
	static const char *const objref[] = { "objref" };

	*copy = NULL;
	if (!cgfw_rule_has_expr(from, objref, 1))
		return from;
	*copy = rule_with_names(from);
	return *copy;
}
