/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Running the cgfw command line from the tests and benchmarks: the binary
 * under test (environment CGFW, default build/cgfw), a shell command with
 * its output captured, and whether the running kernel has the nf_tables
 * cgroup family.
 */
#ifndef CGFW_CGFWCMD_H
#define CGFW_CGFWCMD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static inline const char *cgfw_bin(void)
{
	const char *b = getenv("CGFW");

	return b ? b : "build/cgfw";
}

/* Run a shell command; its output goes to @out (if any). Exit status. */
static inline int run(char *out, size_t size, const char *fmt, ...)
{
	char cmd[8192];
	size_t n = 0;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (out && size) {
		n = fread(out, 1, size - 1, p);
		out[n] = '\0';
	}
	/* the rest, so the command never blocks on a full pipe */
	while (!feof(p) && !ferror(p)) {
		char sink[4096];

		if (!fread(sink, 1, sizeof(sink), p))
			break;
	}
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Does the running kernel have the nf_tables cgroup family? */
static inline bool native_family(void)
{
	char out[4096];

	return !run(out, sizeof(out), "%s status", cgfw_bin()) &&
	       strstr(out, "nft cgroup family (native):          yes");
}

#endif
