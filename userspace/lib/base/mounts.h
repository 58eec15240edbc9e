/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mounts this process sees (base/mounts.c). */
#ifndef CGFW_BASE_MOUNTS_H
#define CGFW_BASE_MOUNTS_H

#include <stddef.h>

/*
 * The first mount of file system @fstype (statfs magic @magic) listed in
 * /proc/self/mountinfo that is really visible at its mount point (a mount
 * over /sys/fs/cgroup hides the hybrid /sys/fs/cgroup/unified below it,
 * which mountinfo still lists). @buf gets its path; @root, if not NULL,
 * the root of the mounted subtree (PATH_MAX bytes). 0, -ENOENT, or
 * -ENAMETOOLONG if @buf is too small.
 */
int cgfw_mount_find(const char *fstype, unsigned long magic, char *buf,
		    size_t size, char *root);

#endif /* CGFW_BASE_MOUNTS_H */
