/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lock that serializes cgfw commands: one per network namespace (the
 * nft tables are per namespace), and one on cgfw's directory in bpffs
 * (the bpf tables are per bpffs). Both are the kernel's: an abstract unix
 * socket bound in the namespace and a flock(2), released when the process
 * ends, however it ends: no lock survives a kill -9.
 */
#ifndef CGFW_BASE_LOCK_H
#define CGFW_BASE_LOCK_H

#include "base/ctx.h"

struct cgfw_lock {
	int sock;	/* the namespace's lock, or -1 */
	int dir;	/* the bpffs directory's, or -1 */
};

/*
 * Take both, waiting as long as another cgfw holds them (saying so once,
 * through the print callback). @bpffs_dir NULL or absent: that one is not
 * taken.
 */
int cgfw_lock(struct cgfw_ctx *ctx, const char *bpffs_dir,
	      struct cgfw_lock *l);
void cgfw_unlock(struct cgfw_lock *l);

#endif /* CGFW_BASE_LOCK_H */
