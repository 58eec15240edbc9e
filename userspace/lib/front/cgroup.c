// SPDX-License-Identifier: LGPL-2.1-or-later
/* cgroup v2: find the mount, resolve a user's path to (path, id, level). */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <linux/magic.h>

#include "base/mounts.h"
#include "front/cgroup.h"

/* Number of components of a path: "/a//b/" is 2, "/" is 0. */
static unsigned int path_depth(const char *p)
{
	unsigned int n = 0;
	char prev = '/';

	for (; *p; prev = *p++)
		if (*p != '/' && prev == '/')
			n++;
	return n;
}

static bool has_dotdot(const char *p)
{
	const char *c;

	for (c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (!c[2] || c[2] == '/'))
			return true;
	return false;
}

/* The cgroup2 mount, and the depth of its subtree (0: all of it). */
static int find_mount(char *buf, size_t size, unsigned int *root_depth)
{
	char root[PATH_MAX];
	int ret;

	ret = cgfw_mount_find("cgroup2", CGROUP2_SUPER_MAGIC, buf, size, root);
	if (!ret && root_depth)
		*root_depth = path_depth(root);
	return ret;
}

int cgfw_cgroup2_mount(char *buf, size_t size)
{
	return find_mount(buf, size, NULL);
}

void cgfw_cgroup_release(struct cgfw_cgroup *cg)
{
	free(cg->path);
	memset(cg, 0, sizeof(*cg));
}

int cgfw_cgroup_resolve(struct cgfw_ctx *ctx, const struct cgfw_source *src,
			const struct cgfw_loc *loc, const char *user_path,
			bool allow_missing, struct cgfw_cgroup *out)
{
	char mnt[PATH_MAX], joined[PATH_MAX * 2], real[PATH_MAX];
	unsigned int root_depth = 0;
	struct stat st, mst;
	size_t mlen;
	int ret;

	ret = find_mount(mnt, sizeof(mnt), &root_depth);
	if (ret) {
		cgfw_err_at(ctx, src, loc,
			    "cgroup v2 is not mounted, so \"%s\" cannot be resolved; mount it (mount -t cgroup2 none /sys/fs/cgroup) and try again (under 'ip netns exec', which remounts /sys and hides it, use 'nsenter --net=/run/netns/NAME' instead)",
			    user_path);
		return ret;
	}
	if (!*user_path) {
		cgfw_err_at(ctx, src, loc,
			    "empty cgroup path; write a path below %s, or an absolute one",
			    mnt);
		return -EINVAL;
	}
	if (has_dotdot(user_path)) {
		cgfw_err_at(ctx, src, loc,
			    "cgroup paths must not contain '..'; write the path below %s without it",
			    mnt);
		return -EINVAL;
	}
	/* "/" as /proc/PID/cgroup writes it: the root, as "." is */
	if (!user_path[strspn(user_path, "/")])
		user_path = ".";
	if (user_path[0] == '/')
		snprintf(joined, sizeof(joined), "%s", user_path);
	else
		snprintf(joined, sizeof(joined), "%s/%s", mnt, user_path);

	if (!realpath(joined, real)) {
		ret = -errno;
		if (ret == -ENOENT && allow_missing &&
		    (!strcmp(mnt, "/") || (!strncmp(joined, mnt, strlen(mnt)) &&
					   joined[strlen(mnt)] == '/'))) {
			/* bound to nothing yet: it waits for the path */
			out->path = strdup(joined);
			out->id = 0;
			out->level = root_depth +
				path_depth(joined + (strcmp(mnt, "/") ?
						     strlen(mnt) : 0));
			return out->path ? 0 : -ENOMEM;
		}
		if (ret == -ENOENT || ret == -ENOTDIR)
			cgfw_err_at(ctx, src, loc,
				    "cgroup \"%s\" does not exist (looked for %s); create it (mkdir %s) or fix the path",
				    user_path, joined, joined);
		else
			cgfw_err_at(ctx, src, loc, "cannot resolve cgroup \"%s\" (%s): %s",
				    user_path, joined, strerror(-ret));
		return ret;
	}
	mlen = strlen(mnt);
	if (strcmp(mnt, "/") && (strncmp(real, mnt, mlen) ||
				 (real[mlen] && real[mlen] != '/'))) {
		cgfw_err_at(ctx, src, loc,
			    "\"%s\" is outside the cgroup v2 mount %s; give a path below it, or one relative to it",
			    user_path, mnt);
		return -EINVAL;
	}
	if (stat(real, &st) || stat(mnt, &mst) || !S_ISDIR(st.st_mode) ||
	    st.st_dev != mst.st_dev) {
		cgfw_err_at(ctx, src, loc,
			    "\"%s\" is not a cgroup v2 directory; give a directory below %s",
			    user_path, mnt);
		return -EINVAL;
	}
	out->path = strdup(real);
	if (!out->path)
		return -ENOMEM;
	out->id = st.st_ino;
	out->level = root_depth + path_depth(real + (strcmp(mnt, "/") ? mlen : 0));
	return 0;
}

/* Depth-first search below @dir for the directory with inode @id. */
static bool find_id(char *dir, size_t size, uint64_t id)
{
	size_t len = strlen(dir);
	struct dirent *de;
	struct stat st;
	bool found = false;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    len + strlen(de->d_name) + 2 > size)
			continue;
		snprintf(dir + len, size - len, "/%s", de->d_name);
		if (!stat(dir, &st) && st.st_ino == id)
			found = true;
		else
			found = find_id(dir, size, id);
		if (!found)
			dir[len] = '\0';
	}
	closedir(d);
	return found;
}

char *cgfw_cgroup_path_of_id(uint64_t id)
{
	char path[PATH_MAX], *out;
	struct stat st;

	if (cgfw_cgroup2_mount(path, sizeof(path)))
		goto not_found;
	if (!stat(path, &st) && st.st_ino == id)
		return strdup(path);
	if (find_id(path, sizeof(path), id))
		return strdup(path);
not_found:
	/* removed since: the chain still holds it, as a dying cgroup */
	if (asprintf(&out, "<cgroup id %llu, removed>",
		     (unsigned long long)id) < 0)
		return NULL;
	return out;
}

const char *cgfw_dir_str(enum cgfw_dir dir)
{
	return dir == CGFW_EGRESS ? "egress" : "ingress";
}
