/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The program the bpf backend attached for a table on a cgroup: through
 * the pinned link /sys/fs/bpf/cgfw/TABLE/link-DIR-ID (docs/design.rst).
 * For tests and benchmarks that run it with BPF_PROG_TEST_RUN.
 */
#ifndef CGFW_BPFPROG_H
#define CGFW_BPFPROG_H

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

/* A new fd of the program, or -1. */
static inline int attached_prog(const char *table, const char *dir,
				const char *cgroup_path)
{
	struct bpf_link_info info = { 0 };
	uint32_t len = sizeof(info);
	char path[PATH_MAX];
	struct stat st;
	int link, fd;

	if (stat(cgroup_path, &st))
		return -1;
	snprintf(path, sizeof(path), "/sys/fs/bpf/cgfw/%s/link-%s-%llu",
		 table, dir, (unsigned long long)st.st_ino);
	link = bpf_obj_get(path);
	if (link < 0)
		return -1;
	fd = bpf_obj_get_info_by_fd(link, &info, &len) ? -1 :
	     bpf_prog_get_fd_by_id(info.prog_id);
	close(link);
	return fd;
}

#endif
