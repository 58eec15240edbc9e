// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the whole compile path on any input, as
 * cgfw_ruleset__compile() runs it: the rewrite, libnftables in its child
 * process and shadow namespace, the read back, the binding, and the
 * bytecode printed. Whatever the input does to libnftables, cgfw (this
 * process) must not crash or leak, and a failure must say why. Needs root
 * (the shadow namespace): without it every input fails the same way.
 *
 * With CGFW_FUZZ_FIND_NFT_CRASHES set, an input on which libnftables
 * crashes (cgfw reports it and goes on) is kept as a finding too: that is
 * how selftests/fuzz/nft-crashes/ was found, whose inputs the tests give cgfw
 * to show that it survives them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cgfw/cgfw.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgfw_ruleset *rs = NULL;
	struct cgfw_ctx *ctx;
	char *text = NULL;

	if (cgfw_ctx__new(&ctx, NULL))
		return 0;
	if (!cgfw_ruleset__compile(ctx, "fuzz.nft", (const char *)data, size,
				   NULL, &rs)) {
		if (cgfw_ruleset__bytecode(rs, &text))
			abort();
		free(text);
		cgfw_ruleset__free(rs);
	} else if (!*cgfw_ctx__error(ctx)) {
		abort();	/* a failure that does not say why */
	} else if (getenv("CGFW_FUZZ_FIND_NFT_CRASHES") &&
		   !strncmp(cgfw_ctx__error(ctx),
			    "fuzz.nft: Error: nft (libnftables) crashed", 42)) {
		abort();	/* the message is cgfw's, not the input's */
	}
	cgfw_ctx__free(ctx);
	return 0;
}
