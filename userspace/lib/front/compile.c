// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Compile: the second stage of the front end (DESIGN.md 2.1).
 *
 * The rewritten text goes through libnftables, nft's own parser and
 * compiler, inside a shadow network namespace where no packet ever flows;
 * nf_tables in the kernel validates it there. nft's error messages carry
 * line and column; since the rewrite keeps both, they are shown against the
 * user's own file.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nftables/libnftables.h>

#include "front/compile.h"

int netns_enter_shadow(struct cgfw_ctx *ctx, int *saved)
{
	int fd, ret;

	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		ctx_err(ctx, "cannot open /proc/self/ns/net: %s",
			strerror(errno));
		return ret;
	}
	if (unshare(CLONE_NEWNET)) {
		ret = -errno;
		if (ret == -EPERM)
			ctx_err(ctx, "compiling needs a private network namespace, and creating one needs CAP_SYS_ADMIN; run cgfw as root");
		else
			ctx_err(ctx, "cannot create the shadow network namespace: %s",
				strerror(errno));
		close(fd);
		return ret;
	}
	*saved = fd;
	return 0;
}

int netns_leave_shadow(int saved)
{
	int ret = 0;

	if (setns(saved, CLONE_NEWNET))
		ret = -errno;
	close(saved);
	return ret;
}

/*
 * nft's error records look like
 *	NAME:LINE:COL[-COL]: Error: message
 *	<the source line>
 *	<carets>
 * Re-emit each with the user's file name and the user's own line.
 */
static void translate_errors(struct cgfw_ctx *ctx,
			     const struct cgfw_source *src,
			     const char *fdname, const char *text)
{
	size_t nlen = strlen(fdname);
	const char *p = text, *eol, *msg;
	bool skip_context = false;
	struct cgfw_loc loc;
	unsigned int a, b, c;
	int used;

	for (; *p; p = *eol ? eol + 1 : eol) {
		eol = strchrnul(p, '\n');
		if (!strncmp(p, fdname, nlen) && p[nlen] == ':') {
			memset(&loc, 0, sizeof(loc));
			used = 0;
			if (sscanf(p + nlen, ":%u:%u-%u:%n", &a, &b, &c,
				   &used) == 3 && used) {
				loc = (struct cgfw_loc){ a, b, c };
			} else if (used = 0, sscanf(p + nlen, ":%u:%u:%n",
						   &a, &b, &used) == 2 &&
				   used) {
				loc = (struct cgfw_loc){ a, b, b };
			}
			msg = p + nlen + used;
			while (*msg == ' ')
				msg++;
			if (!strncmp(msg, "Error: ", 7))
				msg += 7;
			ctx_err_at(ctx, src, loc.line ? &loc : NULL, "%.*s",
				   (int)(eol - msg), msg);
			skip_context = loc.line != 0;
			continue;
		}
		if (skip_context)
			continue;	/* nft's copy of the (rewritten) line */
		if (eol > p)
			sb_addf(&ctx->err, "%.*s\n", (int)(eol - p), p);
	}
}

int nft_list_text(const char *cmd, char **out)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	int ret;

	if (!nft)
		return -ENOMEM;
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	ret = nft_run_cmd_from_buffer(nft, cmd) ? -ENOENT : 0;
	if (!ret) {
		*out = strdup(nft_ctx_get_output_buffer(nft));
		if (!*out)
			ret = -ENOMEM;
	}
	nft_ctx_free(nft);
	return ret;
}

int nft_compile_text(struct cgfw_ctx *ctx, const struct cgfw_source *src,
		     const char *text, size_t len)
{
	char fdname[64];
	struct nft_ctx *nft;
	int fd, ret;

	/* nft reads a file by name: give it the rewritten text as one */
	fd = memfd_create("cgfw-rewritten", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len) {
		ret = -errno;
		close(fd);
		return ret ? : -EIO;
	}
	snprintf(fdname, sizeof(fdname), "/proc/self/fd/%d", fd);

	nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!nft) {
		close(fd);
		return -ENOMEM;
	}
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	ret = nft_run_cmd_from_filename(nft, fdname);
	if (ret) {
		translate_errors(ctx, src, fdname,
				 nft_ctx_get_error_buffer(nft));
		if (!ctx->err.len)
			ctx_err_at(ctx, src, NULL, "nft could not compile the rules");
		ret = -EINVAL;
	}
	nft_ctx_free(nft);
	close(fd);
	return ret;
}
