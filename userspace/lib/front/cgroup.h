/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup v2: the mount, and a user's path resolved to (path, id, level). */
#ifndef CGFW_FRONT_CGROUP_H
#define CGFW_FRONT_CGROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "base/ctx.h"

/* Which packets a bound chain sees: those its cgroup sends or receives. */
enum cgfw_dir {
	CGFW_EGRESS,
	CGFW_INGRESS,
};

const char *cgfw_dir_str(enum cgfw_dir dir);

struct cgfw_cgroup {
	char *path;	/* absolute path of the cgroup directory */
	uint64_t id;	/* cgroup id (inode number of the directory) */
	unsigned int level;	/* depth below the cgroup2 root, root = 0 */
};

/* Find the cgroup2 mount point; 0 or -ENOENT. @buf gets the path. */
int cgfw_cgroup2_mount(char *buf, size_t size);
/*
 * Resolve a user path (absolute, or relative to the mount). With
 * @allow_missing, a path below the mount that does not exist (yet) gives
 * the cgroup id 0.
 */
int cgfw_cgroup_resolve(struct cgfw_ctx *ctx, const struct cgfw_source *src,
			const struct cgfw_loc *loc, const char *user_path,
			bool allow_missing, struct cgfw_cgroup *out);
void cgfw_cgroup_release(struct cgfw_cgroup *cg);
/* The path of the cgroup with this id under the mount, or a note. */
char *cgfw_cgroup_path_of_id(uint64_t id);

#endif /* CGFW_FRONT_CGROUP_H */
