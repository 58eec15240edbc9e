/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cgfw daemon: keep the tables of a rules directory bound to their paths. */
#ifndef CGFW_CLI_DAEMON_H
#define CGFW_CLI_DAEMON_H

#include <stdbool.h>

#include <cgfw/cgfw.h>

struct cgfw_daemon_opts {
	const char *dir;		/* the rules directory */
	enum cgfw_backend backend;
	bool guard;			/* guard chains with policy drop */
	/* rules files: root's, not writable by group or others (sshd's
	 * StrictModes)
	 */
	bool strict;
};

/* Runs until SIGTERM or SIGINT: 0, or 1 if it could not start. */
int cgfw_cli_daemon(struct cgfw_ctx *ctx, const struct cgfw_daemon_opts *o);

#endif /* CGFW_CLI_DAEMON_H */
