// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the rewrite (front/rewrite.c) on any input. It must
 * never crash, and what it writes must keep the input's lines: the same
 * length, a newline where the input has one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "front/rewrite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgfw_source src = { .name = "fuzz.nft" };
	struct rw_result rw;
	struct cgfw_ctx *ctx;
	size_t i;

	if (cgfw_ctx__new(&ctx, NULL))
		return 0;
	src.text = malloc(size + 1);
	if (!src.text)
		goto out;
	memcpy(src.text, data, size);
	src.text[size] = '\0';
	src.len = size;
	if (!cgfw_rewrite(ctx, &src, &rw)) {
		if (rw.len != size)
			abort();
		for (i = 0; i < size; i++)
			if ((src.text[i] == '\n') != (rw.text[i] == '\n'))
				abort();
		cgfw_rw_result_release(&rw);
	}
	free(src.text);
out:
	cgfw_ctx__free(ctx);
	return 0;
}
