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

enum cgfw_capture_level {
	CGFW_CAPTURE_NONE,	/* everything is to be dumped */
	CGFW_CAPTURE_ELEMS,	/* the stream: the named sets' elements */
	CGFW_CAPTURE_WHOLE,	/* the stream: every set, rule and element */
};

struct cgfw_capture {
	struct strbuf batch;	/* nft's sets, rules and elements, as sent */
	bool adds_only;		/* nothing deleted, nothing lost */
	unsigned int batches, batches_ended;	/* begun, ended */
	bool in_order;		/* every rule appended to a named chain */
	struct strbuf stream;	/* messages for the read-back, as dumped */
	enum cgfw_capture_level level;
	bool streamed;		/* the stream made of every call so far */
	int ret;		/* the function's return */
};

/*
 * Run @fn(@arg) in a thread of its own whose sendmsg() calls are seen
 * before they go on to the kernel, and make of them what the read-back
 * would dump: every set, rule and element if @whole allows (nothing was
 * there before @fn: anonymous sets are named as in an empty table), else
 * the named sets' elements. When the calls cannot be seen (no seccomp
 * user notification), or what they hold is not the whole story, @fn runs
 * all the same and the level says what is left to dump.
 * CGFW_READBACK_DUMP in the environment dumps everything (to compare).
 */
void cgfw_capture_run(int (*fn)(void *arg), void *arg, bool whole,
		      struct cgfw_capture *cap);
/* @s's elements are in the stream. */
bool cgfw_capture_has(const struct nftnl_set *s, void *cap);
void cgfw_capture_release(struct cgfw_capture *cap);

#endif /* CGFW_FRONT_CAPTURE_H */
