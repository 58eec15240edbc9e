// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The bpf backend's log statements, read: each bpf table's programs write
 * a record for each packet a log statement sees to the table's ring
 * buffer (bpf/compile/codegen.c, gen_log()); this finds the ring buffers
 * of the tables installed now and turns each record into the line that
 * nf_log's syslog logger writes for the packet (nf_log_syslog.c):
 * "PREFIXIN= OUT=lo SRC=... DST=... LEN=... PROTO=UDP SPT=... DPT=...",
 * with the statement's level. The device is named from its index in the
 * reader's network namespace; a packet's link-layer header (MAC=) is not
 * recorded; IPv6 extension headers end the line at "PROTO=N".
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/netfilter.h>

#include "base/strbuf.h"
#include "bpf/compile/codegen.h"
#include "bpf/desc.h"
#include "bpf/table.h"

/* One table's ring buffer, and what its statements say. */
struct log_source {
	struct cgfw_log_reader *r;
	char *table;
	struct desc d;
	int fd;
};

/* Records a read takes at most: a flood does not keep its caller. */
#define READ_MAX 4096

struct cgfw_log_reader {
	struct cgfw_ctx *ctx;
	cgfw_log_line_fn fn;
	void *data;
	struct ring_buffer *rb;
	struct log_source *src;
	size_t n_src;
	size_t n_read;		/* in this read */
};

static uint16_t be16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* TCP, UDP, ICMP after the network header, as nf_log_syslog.c has them */
static void dump_l4(struct strbuf *sb, int proto, const uint8_t *p,
		    size_t n, size_t len_left, bool v6)
{
	static const char *const tcp_flags[] = {
		"CWR", "ECE", "URG", "ACK", "PSH", "RST", "SYN", "FIN",
	};
	size_t i;

	switch (proto) {
	case IPPROTO_TCP:
		cgfw_sb_adds(sb, "PROTO=TCP ");
		if (n < 20) {
			cgfw_sb_addf(sb, "INCOMPLETE [%zu bytes] ", len_left);
			return;
		}
		/* RES: the 4 reserved bits, as nf_log shifts them */
		cgfw_sb_addf(sb, "SPT=%u DPT=%u WINDOW=%u RES=0x%02x ",
			     be16(p), be16(p + 2), be16(p + 14),
			     (p[12] & 0x0f) << 2);
		for (i = 0; i < 8; i++)
			if (p[13] & (0x80 >> i))
				cgfw_sb_addf(sb, "%s ", tcp_flags[i]);
		cgfw_sb_addf(sb, "URGP=%u ", be16(p + 18));
		return;
	case IPPROTO_UDP:
		cgfw_sb_adds(sb, "PROTO=UDP ");
		if (n < 8) {
			cgfw_sb_addf(sb, "INCOMPLETE [%zu bytes] ", len_left);
			return;
		}
		cgfw_sb_addf(sb, "SPT=%u DPT=%u LEN=%u ", be16(p), be16(p + 2),
			     be16(p + 4));
		return;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		cgfw_sb_adds(sb, v6 ? "PROTO=ICMPv6 " : "PROTO=ICMP ");
		if (n < 4) {
			cgfw_sb_addf(sb, "INCOMPLETE [%zu bytes] ", len_left);
			return;
		}
		cgfw_sb_addf(sb, "TYPE=%u CODE=%u ", p[0], p[1]);
		/* echo request and reply */
		if (n >= 8 && (v6 ? p[0] == 128 || p[0] == 129 :
				    p[0] == 8 || p[0] == 0))
			cgfw_sb_addf(sb, "ID=%u SEQ=%u ", be16(p + 4),
				     be16(p + 6));
		return;
	}
	cgfw_sb_addf(sb, "PROTO=%u ", proto);
}

static void dump_ipv4(struct strbuf *sb, const struct cgfw_log_rec *rec)
{
	const uint8_t *p = rec->data;
	uint16_t frag;
	size_t ihl;
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];

	if (rec->caplen < 20) {
		cgfw_sb_adds(sb, "TRUNCATED");
		return;
	}
	ihl = (p[0] & 0x0f) * 4;
	inet_ntop(AF_INET, p + 12, a, sizeof(a));
	inet_ntop(AF_INET, p + 16, b, sizeof(b));
	cgfw_sb_addf(sb, "SRC=%s DST=%s ", a, b);
	cgfw_sb_addf(sb, "LEN=%u TOS=0x%02X PREC=0x%02X TTL=%u ID=%u ",
		     be16(p + 2), p[1] & 0x1e, p[1] & 0xe0, p[8], be16(p + 4));
	frag = be16(p + 6);
	if (frag & 0x8000)
		cgfw_sb_adds(sb, "CE ");
	if (frag & 0x4000)
		cgfw_sb_adds(sb, "DF ");
	if (frag & 0x2000)
		cgfw_sb_adds(sb, "MF ");
	if (frag & 0x1fff) {
		cgfw_sb_addf(sb, "FRAG:%u ", frag & 0x1fff);
		cgfw_sb_addf(sb, "PROTO=%u ", p[9]);
		return;
	}
	if (ihl < 20 || ihl > rec->caplen) {
		cgfw_sb_addf(sb, "PROTO=%u ", p[9]);
		return;
	}
	dump_l4(sb, p[9], p + ihl, rec->caplen - ihl,
		rec->len > ihl ? rec->len - ihl : 0, false);
}

/* An IPv6 address as the kernel's %pI6 prints it: 8 groups of 4 digits */
static void ipv6_full(const uint8_t *p, char *out)
{
	int i;

	for (i = 0; i < 8; i++)
		sprintf(out + 5 * i, "%04x%s", be16(p + 2 * i), i < 7 ? ":" : "");
}

static void dump_ipv6(struct strbuf *sb, const struct cgfw_log_rec *rec)
{
	const uint8_t *p = rec->data;
	char a[40], b[40];
	uint32_t w;

	if (rec->caplen < 40) {
		cgfw_sb_adds(sb, "TRUNCATED");
		return;
	}
	w = be32(p);
	ipv6_full(p + 8, a);
	ipv6_full(p + 24, b);
	cgfw_sb_addf(sb, "SRC=%s DST=%s ", a, b);
	cgfw_sb_addf(sb, "LEN=%u TC=%u HOPLIMIT=%u FLOWLBL=%u ",
		     be16(p + 4) + 40, (w & 0x0ff00000) >> 20, p[7],
		     w & 0x000fffff);
	dump_l4(sb, p[6], p + 40, rec->caplen - 40,
		rec->len > 40 ? rec->len - 40 : 0, true);
}

/* The line nf_log writes for the packet of @rec, logged by @l. */
static void format_rec(struct strbuf *sb, const struct desc_log *l,
		       const struct cgfw_log_rec *rec)
{
	char dev[IF_NAMESIZE] = "";

	if (rec->ifindex && !if_indextoname(rec->ifindex, dev))
		snprintf(dev, sizeof(dev), "if%u", rec->ifindex);
	cgfw_sb_addf(sb, "%sIN=%s OUT=%s ", l->prefix,
		     rec->dir == CGFW_INGRESS ? dev : "",
		     rec->dir == CGFW_INGRESS ? "" : dev);
	if (rec->nfproto == NFPROTO_IPV4)
		dump_ipv4(sb, rec);
	else if (rec->nfproto == NFPROTO_IPV6)
		dump_ipv6(sb, rec);
	if (rec->mark)
		cgfw_sb_addf(sb, "MARK=0x%x ", rec->mark);
}

static int on_record(void *ctx, void *data, size_t size)
{
	const struct log_source *s = ctx;
	const struct cgfw_log_rec *rec = data;
	const struct desc_log *l = NULL;
	struct strbuf sb;
	size_t i;

	if (size < sizeof(*rec))
		return 0;
	for (i = 0; i < s->d.n_logs; i++)
		if (s->d.logs[i].id == rec->id)
			l = &s->d.logs[i];
	if (!l || rec->caplen > CGFW_LOG_SNAP)
		return 0;
	cgfw_sb_init(&sb);
	format_rec(&sb, l, rec);
	if (!sb.oom)
		s->r->fn(l->level, sb.buf, s->r->data);
	cgfw_sb_release(&sb);
	/* enough for one read: the rest waits for the next */
	return ++s->r->n_read < READ_MAX ? 0 : -EAGAIN;
}

static void free_sources(struct log_source *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(src[i].table);
		cgfw_desc_release(&src[i].d);
		if (src[i].fd >= 0)
			close(src[i].fd);
	}
	free(src);
}

static void sources_release(struct cgfw_log_reader *r)
{
	ring_buffer__free(r->rb);
	r->rb = NULL;
	free_sources(r->src, r->n_src);
	r->src = NULL;
	r->n_src = 0;
}

/* Table @name's ring buffer, if its statements log. */
static int add_source(struct cgfw_log_reader *r, const char *name)
{
	struct log_source *s;
	struct desc d;
	int fd;

	if (cgfw_bpf_running_desc(name, &d))
		return 0;	/* gone meanwhile, or not a table */
	if (!d.n_logs) {
		cgfw_desc_release(&d);
		return 0;
	}
	fd = bpf_map_get_fd_by_id(d.logs[0].ring_id);
	s = fd < 0 ? NULL : realloc(r->src, (r->n_src + 1) * sizeof(*s));
	if (!s) {
		cgfw_desc_release(&d);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? 0 : -ENOMEM;
	}
	r->src = s;
	s = &s[r->n_src++];
	s->r = r;
	s->d = d;
	s->fd = fd;
	s->table = strdup(name);
	return s->table ? 0 : -ENOMEM;
}

/* The ring buffers @r reads: their ids, in order, @ids of @n (malloc()ed). */
static uint32_t *ring_ids(const struct log_source *src, size_t n)
{
	uint32_t *ids = calloc(n + 1, sizeof(*ids));
	size_t i;

	for (i = 0; ids && i < n; i++)
		ids[i] = src[i].d.logs[0].ring_id;
	return ids;
}

CGFW_API int cgfw_log_reader__refresh(struct cgfw_log_reader *r)
{
	struct log_source *old;
	uint32_t *before, *after;
	struct dirent *de;
	size_t i, n_old;
	DIR *dir;
	int ret = 0;

	if (!r)
		return libcgfw_err(-EINVAL);
	/* what is waiting is read before its buffer may go */
	cgfw_log_reader__read(r);
	before = ring_ids(r->src, r->n_src);
	old = r->src;
	n_old = r->n_src;
	r->src = NULL;
	r->n_src = 0;
	dir = opendir(CGFW_PIN_ROOT);
	while (dir && !ret && (de = readdir(dir)))
		if (de->d_name[0] != '.')
			ret = add_source(r, de->d_name);
	if (dir)
		closedir(dir);
	after = ring_ids(r->src, r->n_src);
	if (!ret && before && after && n_old == r->n_src &&
	    !memcmp(before, after, n_old * sizeof(*before))) {
		/* the same buffers: the ones read stay, the new copies go */
		struct log_source *same = r->src;
		size_t n = r->n_src;

		r->src = old;
		r->n_src = n_old;
		old = same;
		n_old = n;
		free_sources(old, n_old);
		free(before);
		free(after);
		return 0;
	}
	free(before);
	free(after);
	ring_buffer__free(r->rb);
	r->rb = NULL;
	free_sources(old, n_old);
	for (i = 0; !ret && i < r->n_src; i++) {
		if (!r->rb) {
			r->rb = ring_buffer__new(r->src[i].fd, on_record,
						 &r->src[i], NULL);
			ret = r->rb ? 0 : -errno;
		} else {
			ret = ring_buffer__add(r->rb, r->src[i].fd, on_record,
					       &r->src[i]);
		}
	}
	if (ret) {
		cgfw_err(r->ctx, "cannot read the bpf tables' log buffers: %s",
			 strerror(-ret));
		sources_release(r);
	}
	return libcgfw_err(ret);
}

CGFW_API int cgfw_log_reader__read(struct cgfw_log_reader *r)
{
	int ret;

	if (!r)
		return libcgfw_err(-EINVAL);
	if (!r->rb)
		return 0;
	r->n_read = 0;
	ret = ring_buffer__consume(r->rb);
	return ret < 0 && ret != -EAGAIN ? libcgfw_err(ret) : 0;
}

CGFW_API int cgfw_log_reader__fd(const struct cgfw_log_reader *r)
{
	return r && r->rb ? ring_buffer__epoll_fd(r->rb) : -1;
}

CGFW_API size_t cgfw_log_reader__tables(const struct cgfw_log_reader *r)
{
	return r ? r->n_src : 0;
}

CGFW_API int cgfw_log_reader__new(struct cgfw_ctx *ctx, cgfw_log_line_fn fn,
				  void *data,
				  const struct cgfw_log_reader_opts *opts,
				  struct cgfw_log_reader **out)
{
	struct cgfw_log_reader *r;

	if (!ctx || !fn || !out)
		return libcgfw_err(-EINVAL);
	if (!CGFW_OPTS_VALID(ctx, opts, cgfw_log_reader_opts))
		return libcgfw_err(-EINVAL);
	r = calloc(1, sizeof(*r));
	if (!r)
		return libcgfw_err(-ENOMEM);
	r->ctx = ctx;
	r->fn = fn;
	r->data = data;
	*out = r;
	return 0;
}

CGFW_API void cgfw_log_reader__free(struct cgfw_log_reader *r)
{
	if (!r)
		return;
	sources_release(r);
	free(r);
}
