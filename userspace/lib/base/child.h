/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Work done in a child process: code that may crash or run away (a
 * library the caller gives arbitrary input to) runs in a child with memory
 * and time limits, and sends what it found through a pipe as records.
 */
#ifndef CGFW_BASE_CHILD_H
#define CGFW_BASE_CHILD_H

#include <stdint.h>

#include "base/strbuf.h"

struct cgfw_child_limits {
	uint64_t mem_bytes;		/* address space; 0: no limit */
	unsigned int cpu_seconds;	/* 0: no limit */
	unsigned int wall_seconds;	/* 0: no limit */
};

/* How the child ended, when it did not return normally. */
struct cgfw_child_end {
	int signal;		/* killed by this signal, or 0 */
	bool timed_out;		/* killed for the wall-clock limit */
	bool cpu_limit;		/* SIGXCPU: the CPU limit */
	bool no_result;		/* ended without a result record */
};

/*
 * Run @fn(@arg, @fd) in a child: what it writes to @fd comes back in @out.
 * Returns what @fn returned (0 or -errno), or -ECHILD if the child did not
 * end by returning from @fn; then @end says how it ended.
 */
int cgfw_child_run(int (*fn)(void *arg, int fd), void *arg,
		   const struct cgfw_child_limits *lim, struct strbuf *out,
		   struct cgfw_child_end *end);

/* Records in the pipe: a type, a length, the bytes. */
struct cgfw_child_rec {
	uint32_t type;
	uint32_t len;
	const void *data;
};

int cgfw_child_send(int fd, uint32_t type, const void *data, uint32_t len);
/* The next record of @buf from *@pos; false at the end (or a torn one). */
bool cgfw_child_next(const struct strbuf *buf, size_t *pos,
		     struct cgfw_child_rec *rec);
/* "killed by signal 11 (Segmentation fault)", for messages */
void cgfw_child_describe(const struct cgfw_child_end *end, char *buf,
			 size_t size);

#endif /* CGFW_BASE_CHILD_H */
