// SPDX-License-Identifier: LGPL-2.1-or-later
/* Work in a child process with limits (base/child.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/child.h"

/* AddressSanitizer reserves terabytes of address space: no RLIMIT_AS */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* The child's last record: fn's return value. */
#define REC_RESULT 0xffffffffu

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n) {
		w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EPIPE;
		c += w;
		n -= w;
	}
	return 0;
}

int cgfw_child_send(int fd, uint32_t type, const void *data, uint32_t len)
{
	uint32_t hdr[2] = { type, len };

	return write_all(fd, hdr, sizeof(hdr)) ? :
	       len ? write_all(fd, data, len) : 0;
}

bool cgfw_child_next(const struct strbuf *buf, size_t *pos,
		     struct cgfw_child_rec *rec)
{
	uint32_t hdr[2];

	if (*pos + sizeof(hdr) > buf->len)
		return false;
	memcpy(hdr, buf->buf + *pos, sizeof(hdr));
	if (buf->len - *pos - sizeof(hdr) < hdr[1])
		return false;
	rec->type = hdr[0];
	rec->len = hdr[1];
	rec->data = buf->buf + *pos + sizeof(hdr);
	*pos += sizeof(hdr) + hdr[1];
	return true;
}

static void limit(int resource, uint64_t v)
{
	struct rlimit rl = { .rlim_cur = v, .rlim_max = v };

	if (v)
		setrlimit(resource, &rl);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int cgfw_child_run(int (*fn)(void *arg, int fd), void *arg,
		   const struct cgfw_child_limits *lim, struct strbuf *out,
		   struct cgfw_child_end *end)
{
	double deadline = lim->wall_seconds ? now() + lim->wall_seconds : 0;
	struct cgfw_child_rec rec;
	int fds[2], status, ret, wait_ms;
	struct pollfd pfd;
	char chunk[65536];
	size_t pos = 0;
	int32_t result = 0;
	bool got = false;
	ssize_t n;
	pid_t pid;

	memset(end, 0, sizeof(*end));
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	if (!pid) {
		/*
		 * The child: dies with its parent, within its limits, and
		 * by the signal of its crash (not through a handler the
		 * parent set, which would take it for the parent's own).
		 */
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		signal(SIGFPE, SIG_DFL);
		signal(SIGILL, SIG_DFL);
#ifndef UNDER_ASAN
		limit(RLIMIT_AS, lim->mem_bytes);
#endif
		limit(RLIMIT_CPU, lim->cpu_seconds);
		limit(RLIMIT_CORE, 0);
		result = fn(arg, fds[1]);
		cgfw_child_send(fds[1], REC_RESULT, &result, sizeof(result));
		_exit(0);
	}
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	for (;;) {
		wait_ms = -1;
		if (deadline) {
			double left = deadline - now();

			if (left <= 0) {
				end->timed_out = true;
				kill(pid, SIGKILL);
				break;
			}
			wait_ms = left * 1000 + 1;
		}
		ret = poll(&pfd, 1, wait_ms);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			continue;	/* the deadline is checked above */
		n = read(fds[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		cgfw_sb_addn(out, chunk, n);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		end->signal = WTERMSIG(status);
		end->cpu_limit = end->signal == SIGXCPU;
	}
	if (out->oom)
		return -ENOMEM;
	/* the result is the last record; what comes before is the caller's */
	while (cgfw_child_next(out, &pos, &rec)) {
		if (rec.type == REC_RESULT && rec.len == sizeof(result) &&
		    pos == out->len) {
			memcpy(&result, rec.data, sizeof(result));
			got = true;
		}
	}
	if (!got || end->signal || end->timed_out) {
		end->no_result = !got;
		return -ECHILD;
	}
	out->len -= 8 + sizeof(result);	/* the result record */
	return result;
}

void cgfw_child_describe(const struct cgfw_child_end *end, char *buf,
			 size_t size)
{
	if (end->timed_out)
		snprintf(buf, size, "took too long and was stopped");
	else if (end->cpu_limit)
		snprintf(buf, size, "used up its CPU time limit");
	else if (end->signal)
		snprintf(buf, size, "crashed (signal %d, %s)", end->signal,
			 strsignal(end->signal));
	else
		snprintf(buf, size, "ended without an answer");
}
