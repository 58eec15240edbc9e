// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Compile: the second stage of the front end.
 *
 * The rewritten text goes through libnftables, nft's own parser and
 * compiler, inside a shadow network namespace where no packet ever flows;
 * nf_tables in the kernel validates it there, and what it made is read
 * back: from nft's own batch where that is the whole story
 * (front/capture.c), else by dumps (front/readback.c). All of it runs in
 * a child process with memory and time limits (base/child.c):
 * libnftables aborts or crashes on some
 * malformed input, and that must not take the caller with it. The child
 * sends nft's error text, or the dump of the shadow namespace, which the
 * parent reads into the IR.
 *
 * nft's error messages carry line and column; since the rewrite keeps
 * both, they are shown against the user's own file.
 */
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <nftables/libnftables.h>

#include "base/child.h"
#include "front/capture.h"
#include "front/compile.h"
#include "front/readback.h"
#include "nl/netlink.h"

/* What the child sends. */
enum {
	REC_NFT_ERROR = 1,	/* nft's error text */
	REC_SETUP_ERROR,	/* errno, the shadow could not be set up */
	REC_NLMSG,		/* a message of the shadow's dump */
	REC_SETUP_WHY,		/* the kernel's reason */
};

/*
 * The limits of the child: nft builds its whole syntax tree in memory (a
 * set of a million elements takes a few GiB), and nothing it does takes
 * minutes.
 */
static const struct cgfw_child_limits nft_limits = {
	.mem_bytes = 16ull << 30,
	.cpu_seconds = 600,
	.wall_seconds = 900,
};

int cgfw_netns_enter_shadow(struct cgfw_ctx *ctx, int *saved)
{
	int fd, ret;

	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		cgfw_err(ctx, "cannot open /proc/self/ns/net: %s",
			 strerror(errno));
		return ret;
	}
	if (unshare(CLONE_NEWNET)) {
		ret = -errno;
		if (ret == -EPERM)
			cgfw_err(ctx, "compiling needs a private network namespace, and creating one needs CAP_SYS_ADMIN; run cgfw as root");
		else
			cgfw_err(ctx, "cannot create the shadow network namespace: %s",
				 strerror(errno));
		close(fd);
		return ret;
	}
	*saved = fd;
	return 0;
}

int cgfw_netns_leave_shadow(int saved)
{
	int ret = 0;

	if (setns(saved, CLONE_NEWNET))
		ret = -errno;
	close(saved);
	return ret;
}

/*
 * The name nft gives the text in its messages: the child's memfd, by
 * its number (whatever it is: RLIMIT_NOFILE may be low).
 */
#define TEXT_NAME "/proc/self/fd/"

/*
 * nft's error records look like
 *	NAME:LINE:COL[-COL]: Error: message
 *	<the source line>
 *	<carets>
 * Re-emit each with the user's file name and the user's own line.
 */
static void translate_errors(struct cgfw_ctx *ctx,
			     const struct cgfw_source *src,
			     const char *text, size_t len)
{
	const size_t plen = strlen(TEXT_NAME);
	size_t nlen;
	const char *p = text, *eol, *msg, *end = text + len;
	bool skip_context = false;
	struct cgfw_loc loc;
	unsigned int a, b, c;
	int used;

	for (; p < end; p = eol < end ? eol + 1 : eol) {
		eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		nlen = !strncmp(p, TEXT_NAME, plen) ?
		       plen + strspn(p + plen, "0123456789") : 0;
		if (nlen > plen && p[nlen] == ':') {
			memset(&loc, 0, sizeof(loc));
			used = 0;
			if (sscanf(p + nlen, ":%u:%u-%u:%n", &a, &b, &c,
				   &used) == 3 && used)
				loc = (struct cgfw_loc){ a, b, c };
			else
				used = 0;
			if (!used && sscanf(p + nlen, ":%u:%u:%n", &a, &b,
					    &used) == 2 && used)
				loc = (struct cgfw_loc){ a, b, b };
			msg = p + nlen + used;
			while (*msg == ' ')
				msg++;
			if (!strncmp(msg, "Error: ", 7))
				msg += 7;
			cgfw_err_at(ctx, src, loc.line ? &loc : NULL, "%.*s",
				    (int)(eol - msg), msg);
			skip_context = loc.line != 0;
			continue;
		}
		if (skip_context)
			continue;	/* nft's copy of the (rewritten) line */
		if (eol > p)
			cgfw_sb_addf(&ctx->err, "%.*s\n", (int)(eol - p), p);
	}
}

struct job {
	const struct shadow_job *job;
	int fd;
	struct strbuf out;	/* messages not sent yet */
};

/*
 * The messages gathered, as one record: a write per message costs more
 * than the message, when there are a million.
 */
static int flush_msgs(struct job *j)
{
	int ret = 0;

	if (j->out.oom)
		ret = -ENOMEM;
	else if (j->out.len)
		ret = cgfw_child_send(j->fd, REC_NLMSG, j->out.buf, j->out.len);
	cgfw_sb_release(&j->out);
	cgfw_sb_init(&j->out);
	return ret;
}

static int send_msg(const struct nlmsghdr *nlh, void *data)
{
	struct job *j = data;

	cgfw_sb_addn(&j->out, (const char *)nlh, NLMSG_ALIGN(nlh->nlmsg_len));
	return j->out.oom || j->out.len >= (1 << 18) ? flush_msgs(j) : 0;
}

static int setup_error(int fd, int err, const char *why)
{
	cgfw_child_send(fd, REC_SETUP_ERROR, &err, sizeof(err));
	if (why && *why)
		cgfw_child_send(fd, REC_SETUP_WHY, why, strlen(why));
	return err;
}

struct nft_run {
	struct nft_ctx *nft;
	const char *file;
};

static int run_nft(void *arg)
{
	struct nft_run *run = arg;

	return nft_run_cmd_from_filename(run->nft, run->file);
}

/*
 * In the child: a shadow namespace, the setup batch, nft (its sets, rules
 * and elements seen as it sends them, front/capture.c), the dumps of what
 * that leaves unknown.
 */
static int child_job(void *arg, int fd)
{
	struct job j = { .job = arg, .fd = fd, .out = { 0 } };
	const struct shadow_job *job = j.job;
	struct readback_opts ro = { .tap = send_msg, .tap_data = &j };
	struct cgfw_ruleset rs = { .src = { .name = "shadow" } };
	struct cgfw_ctx quiet = { 0 };
	struct cgfw_capture cap;
	struct nft_run run;
	struct mnl_socket *nl;
	const char *err;
	char fdname[64];
	int tfd, ret;

	if (unshare(CLONE_NEWNET))
		return setup_error(fd, -errno, NULL);
	/*
	 * nft's thread builds the whole syntax tree: in an arena of its
	 * own, which grows by an mprotect() of a few pages at a time (5%
	 * of the compile of 100,000 rules), so in the main one, with a
	 * wide pad (this process ends with the compile).
	 */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_TOP_PAD, 64 << 20);
	if (job->setup && job->setup->n_origins) {
		ret = cgfw_nl_open(&quiet, &nl);
		ret = ret ? : cgfw_nl_batch_commit(&quiet, nl, job->setup,
						   &rs.src);
		if (!ret)
			mnl_socket_close(nl);
		if (ret)
			return setup_error(fd, ret, quiet.err.buf);
	}
	/* nft reads a file by name: give it the text as one */
	tfd = memfd_create("cgfw-rewritten", 0);
	if (tfd < 0)
		return setup_error(fd, -errno, "cannot make a memory file for nft's input");
	if (write(tfd, job->text, job->len) != (ssize_t)job->len)
		return setup_error(fd, -EIO, NULL);
	snprintf(fdname, sizeof(fdname), TEXT_NAME "%d", tfd);
	run.nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!run.nft)
		return setup_error(fd, -ENOMEM, NULL);
	nft_ctx_buffer_output(run.nft);
	nft_ctx_buffer_error(run.nft);
	run.file = fdname;
	/* with a setup, the shadow held sets before nft ran */
	cgfw_capture_run(run_nft, &run, !job->setup || !job->setup->n_origins,
			 &cap);
	if (cap.ret) {
		err = nft_ctx_get_error_buffer(run.nft);
		cgfw_child_send(fd, REC_NFT_ERROR, err, strlen(err));
		return -EINVAL;
	}
	ro.have_elems = cgfw_capture_has;
	ro.have_data = &cap;
	ro.no_sets = cap.level == CGFW_CAPTURE_WHOLE;
	ro.no_rules = ro.no_sets;
	cgfw_ir_init(&rs);
	ret = cgfw_readback(&quiet, &rs, &ro);
	ret = ret ? : flush_msgs(&j);
	/* after the tables and chains they go to, as dumps would have them */
	if (!ret && cap.level != CGFW_CAPTURE_NONE && cap.stream.len)
		ret = cgfw_child_send(fd, REC_NLMSG, cap.stream.buf,
				      cap.stream.len);
	cgfw_capture_release(&cap);
	cgfw_sb_release(&j.out);
	cgfw_ir_release(&rs);
	return ret;
}

int cgfw_shadow_compile(struct cgfw_ctx *ctx, const struct cgfw_source *src,
			const struct shadow_job *job, struct cgfw_ruleset *out)
{
	char why[128];
	struct cgfw_child_end end;
	struct cgfw_child_rec rec;
	struct strbuf reply;
	size_t pos = 0;
	int ret, r;

	cgfw_sb_init(&reply);
	ret = cgfw_child_run(child_job, (void *)job, &nft_limits, &reply,
			     &end);
	while (cgfw_child_next(&reply, &pos, &rec)) {
		switch (rec.type) {
		case REC_NFT_ERROR:
			translate_errors(ctx, src, rec.data, rec.len);
			if (!ctx->err.len)
				cgfw_err_at(ctx, src, NULL,
					    "nft could not compile the rules");
			break;
		case REC_SETUP_ERROR:
			memcpy(&r, rec.data, sizeof(r));
			if (r == -EPERM)
				cgfw_err(ctx, "compiling needs a private network namespace, and creating one needs CAP_SYS_ADMIN; run cgfw as root");
			else
				cgfw_err(ctx, "cannot prepare the shadow network namespace: %s",
					 strerror(-r));
			break;
		case REC_SETUP_WHY:
			cgfw_sb_addf(&ctx->err, "%.*s", (int)rec.len,
				     (const char *)rec.data);
			break;
		case REC_NLMSG:
			if (!ret) {
				r = cgfw_readback_stream(out, rec.data, rec.len);
				ret = ret ? : r;
			}
			break;
		}
	}
	cgfw_sb_release(&reply);
	if (ret == -ECHILD) {
		cgfw_child_describe(&end, why, sizeof(why));
		cgfw_err_at(ctx, src, NULL,
			    "nft (libnftables) %s while compiling this input; nothing was changed. This is a fault of libnftables on this input: please report it with the file",
			    why);
		return -EINVAL;
	}
	if (ret == -ENOMEM && !ctx->err.len)
		cgfw_err(ctx, "out of memory reading the compiled rules back");
	if (ret && !ctx->err.len)
		cgfw_err_at(ctx, src, NULL, "cannot compile: %s",
			    strerror(-ret));
	return ret;
}
