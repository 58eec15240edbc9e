/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lock that serializes cgfw commands: one per network namespace (the
 * nft tables are per namespace), and one on cgfw's directory in bpffs
 * (the bpf tables are per bpffs). Both are flock(2)s on files only root
 * can reach: /run/cgfw/netns-<inode> (in /run/cgfw, 0700, root's) and
 * /sys/fs/bpf/cgfw (0700, root's). A flock is released when the process
 * ends, however it ends: no lock survives a kill -9; and no other user
 * can take either, so none can make cgfw wait.
 */
#ifndef CGFW_BASE_LOCK_H
#define CGFW_BASE_LOCK_H

#include "base/ctx.h"

#define CGFW_RUN_DIR	"/run/cgfw"

struct cgfw_lock {
	int netns;	/* the network namespace's lock file, or -1 */
	int dir;	/* the bpffs directory's, or -1 */
};

/*
 * Take both, waiting as long as another cgfw holds them (saying so once,
 * through the print callback). @bpffs_dir NULL or absent: that one is not
 * taken. A SIGTERM or SIGINT that the caller blocks (for a signalfd) and
 * that arrives while it waits ends the wait: -EINTR.
 */
int cgfw_lock(struct cgfw_ctx *ctx, const char *bpffs_dir,
	      struct cgfw_lock *l);
void cgfw_unlock(struct cgfw_lock *l);

/*
 * Make @dir (mode 0700) if it is not there, and check that only this
 * process's user (root) can change what is in it: a directory, not a
 * link, owned by the effective uid, not writable by group or others.
 * Anything else is refused with -EPERM and a message that says what to do.
 */
int cgfw_private_dir(struct cgfw_ctx *ctx, const char *dir);

#endif /* CGFW_BASE_LOCK_H */
