// SPDX-License-Identifier: LGPL-2.1-or-later
/* The lock that serializes cgfw commands (base/lock.h). */
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/lock.h"

#define LOCK_NAME "cgfw/lock"	/* abstract: per network namespace */
#define POLL_NS (20 * 1000 * 1000)

static void pause_a_bit(void)
{
	struct timespec ts = { .tv_nsec = POLL_NS };

	nanosleep(&ts, NULL);
}

static socklen_t lock_addr(struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path + 1, LOCK_NAME, strlen(LOCK_NAME));
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(LOCK_NAME);
}

/* The pid of the holder: it listens, a connection tells who it is. */
static int holder(void)
{
	struct sockaddr_un sa;
	socklen_t len = lock_addr(&sa), cl;
	struct ucred cred;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), pid = 0;

	cl = sizeof(cred);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, len) &&
	    !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl))
		pid = cred.pid;
	if (fd >= 0)
		close(fd);
	return pid;
}

static void waiting(struct cgfw_ctx *ctx, bool *said, const char *what)
{
	char msg[160];
	int pid;

	if (*said)
		return;
	*said = true;
	pid = holder();
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

static int lock_netns(struct cgfw_ctx *ctx, int *out)
{
	struct sockaddr_un sa;
	socklen_t len = lock_addr(&sa);
	bool said = false;
	int fd, ret;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	while (bind(fd, (struct sockaddr *)&sa, len)) {
		if (errno != EADDRINUSE) {
			ret = -errno;
			close(fd);
			cgfw_err(ctx, "cannot take cgfw's lock of this network namespace: %s",
				 strerror(-ret));
			return ret;
		}
		waiting(ctx, &said, "this network namespace");
		pause_a_bit();
	}
	listen(fd, 64);	/* so that a waiter can see who holds it */
	*out = fd;
	return 0;
}

static int lock_dir(struct cgfw_ctx *ctx, const char *dir, int *out)
{
	bool said = false;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*out = -1;
	if (fd < 0)
		return 0;	/* nothing of cgfw's there (yet) */
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK) {
			close(fd);
			return 0;
		}
		waiting(ctx, &said, dir);
		pause_a_bit();
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

	l->sock = l->dir = -1;
	if (!has_cap(12 /* CAP_NET_ADMIN */)) {
		cgfw_err(ctx, "reading or changing what cgfw installed needs CAP_NET_ADMIN (and CAP_SYS_ADMIN or CAP_BPF for the bpf backend); run cgfw as root");
		return -EPERM;
	}
	ret = lock_netns(ctx, &l->sock);
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
	if (l->sock >= 0)
		close(l->sock);
	l->sock = l->dir = -1;
}
