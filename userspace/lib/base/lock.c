// SPDX-License-Identifier: LGPL-2.1-or-later
/* The lock that serializes cgfw commands (base/lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/lock.h"

#define POLL_NS (20 * 1000 * 1000)

static void pause_a_bit(void)
{
	struct timespec ts = { .tv_nsec = POLL_NS };

	nanosleep(&ts, NULL);
}

/* A SIGTERM or SIGINT pending that the caller blocks: stop waiting. */
static bool told_to_stop(void)
{
	sigset_t set;

	return !sigpending(&set) &&
	       (sigismember(&set, SIGTERM) == 1 ||
		sigismember(&set, SIGINT) == 1);
}

/* The pid that holds a flock on @fd's file, from /proc/locks, or 0. */
static int holder(int fd)
{
	char line[256], id[64];
	struct stat st;
	FILE *f;
	int pid = 0, p;

	if (fd < 0 || fstat(fd, &st))
		return 0;
	snprintf(id, sizeof(id), " %02x:%02x:%llu ", major(st.st_dev),
		 minor(st.st_dev), (unsigned long long)st.st_ino);
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!pid && fgets(line, sizeof(line), f))
		if (strstr(line, " FLOCK ") && strstr(line, id) &&
		    sscanf(strstr(line, "WRITE") ?: "", "WRITE %d", &p) == 1)
			pid = p;
	fclose(f);
	return pid;
}

static void waiting(struct cgfw_ctx *ctx, bool *said, int fd,
		    const char *what)
{
	char msg[PATH_MAX + 96];
	int pid;

	if (*said)
		return;
	*said = true;
	pid = holder(fd);
	if (pid)
		snprintf(msg, sizeof(msg),
			 "waiting for another cgfw command (pid %d) to finish with %s",
			 pid, what);
	else
		snprintf(msg, sizeof(msg),
			 "waiting for another cgfw command to finish with %s",
			 what);
	cgfw_log(ctx, CGFW_LOG_INFO, "%s", msg);
}

/* flock(@fd) exclusively, waiting while another holds it. */
static int wait_flock(struct cgfw_ctx *ctx, int fd, const char *what)
{
	bool said = false;

	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK)
			return -errno;
		if (told_to_stop()) {
			cgfw_err(ctx, "stopped while waiting for the lock of %s",
				 what);
			return -EINTR;
		}
		waiting(ctx, &said, fd, what);
		pause_a_bit();
	}
	return 0;
}

/* @dir, there: a directory that only this process's user can change */
static int check_private(struct cgfw_ctx *ctx, const char *dir,
			 const struct stat *st)
{
	if (S_ISDIR(st->st_mode) && st->st_uid == geteuid() &&
	    !(st->st_mode & 022))
		return 0;
	cgfw_err(ctx, "%s is %s owned by uid %u, mode %04o: cgfw keeps its state only in a directory that root alone can change; if no cgfw of root's made it, remove it (rm -r %s) and run the command again",
		 dir, S_ISDIR(st->st_mode) ? "a directory" :
		 S_ISLNK(st->st_mode) ? "a symbolic link" : "a file",
		 (unsigned int)st->st_uid,
		 (unsigned int)(st->st_mode & 07777), dir);
	return -EPERM;
}

int cgfw_private_dir(struct cgfw_ctx *ctx, const char *dir)
{
	struct stat st;
	int ret;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		ret = -errno;
		cgfw_err(ctx, "cannot make %s: %s", dir, strerror(-ret));
		return ret;
	}
	if (lstat(dir, &st)) {
		ret = -errno;
		cgfw_err(ctx, "cannot read %s: %s", dir, strerror(-ret));
		return ret;
	}
	return check_private(ctx, dir, &st);
}

/* /run/cgfw/netns-<inode of this network namespace> */
static int lock_netns(struct cgfw_ctx *ctx, int *out)
{
	char path[64], what[96];
	struct stat st;
	int fd, ret;

	*out = -1;
	if (stat("/proc/self/ns/net", &st)) {
		ret = -errno;
		cgfw_err(ctx, "cannot read this network namespace (/proc/self/ns/net): %s",
			 strerror(-ret));
		return ret;
	}
	ret = cgfw_private_dir(ctx, CGFW_RUN_DIR);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), CGFW_RUN_DIR "/netns-%llu",
		 (unsigned long long)st.st_ino);
	snprintf(what, sizeof(what), "this network namespace (%s)", path);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		cgfw_err(ctx, "cannot take cgfw's lock %s: %s", path,
			 strerror(-ret));
		return ret;
	}
	ret = wait_flock(ctx, fd, what);
	if (ret) {
		if (ret != -EINTR)
			cgfw_err(ctx, "cannot take cgfw's lock %s: %s", path,
				 strerror(-ret));
		close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

static int lock_dir(struct cgfw_ctx *ctx, const char *dir, int *out)
{
	struct stat st;
	int fd, ret;

	*out = -1;
	if (lstat(dir, &st))
		return 0;	/* nothing of cgfw's there (yet) */
	ret = check_private(ctx, dir, &st);
	if (ret)
		return ret;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ret = wait_flock(ctx, fd, dir);
	if (ret) {
		close(fd);
		return ret == -EINTR ? ret : 0;
	}
	*out = fd;
	return 0;
}

/* Effective capability @cap of this process. */
static bool has_cap(int cap)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ULL << cap);
}

int cgfw_lock(struct cgfw_ctx *ctx, const char *bpffs_dir,
	      struct cgfw_lock *l)
{
	int ret;

	l->netns = l->dir = -1;
	if (!has_cap(12 /* CAP_NET_ADMIN */)) {
		cgfw_err(ctx, "reading or changing what cgfw installed needs CAP_NET_ADMIN (and CAP_SYS_ADMIN or CAP_BPF for the bpf backend); run cgfw as root");
		return -EPERM;
	}
	ret = lock_netns(ctx, &l->netns);
	if (!ret && bpffs_dir)
		ret = lock_dir(ctx, bpffs_dir, &l->dir);
	if (ret)
		cgfw_unlock(l);
	return ret;
}

void cgfw_unlock(struct cgfw_lock *l)
{
	if (l->dir >= 0)
		close(l->dir);	/* and with it the flock */
	if (l->netns >= 0)
		close(l->netns);
	l->netns = l->dir = -1;
}
