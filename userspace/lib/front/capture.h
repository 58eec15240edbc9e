/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The set elements nft sends, seen on their way to the kernel
 * (front/capture.c), so that the compile need not dump them back.
 */
#ifndef CGFW_FRONT_CAPTURE_H
#define CGFW_FRONT_CAPTURE_H

#include <stdbool.h>

#include "base/strbuf.h"

struct nftnl_set;

struct cgfw_capture {
	struct strbuf elems;	/* nft's NEWSETELEM messages, as sent */
	bool usable;		/* they are every element of the named sets */
	int ret;		/* the function's return */
};

/*
 * Run @fn(@arg) in a thread of its own whose sendmsg() calls are seen
 * before they go on to the kernel; fills @cap. When the calls cannot be
 * seen (no seccomp user notification), @fn runs all the same and
 * @cap->usable is false.
 */
void cgfw_capture_run(int (*fn)(void *arg), void *arg,
		      struct cgfw_capture *cap);
/* @s's elements are those captured (a named set, @cap usable). */
bool cgfw_capture_has(const struct nftnl_set *s, void *cap);
void cgfw_capture_release(struct cgfw_capture *cap);

#endif /* CGFW_FRONT_CAPTURE_H */
