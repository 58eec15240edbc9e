// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the bpf backend's description (bpf/desc.c) parsed
 * from any bytes, as cgfw list reads it from a map anyone with the
 * privileges could have written. It must never crash; what it accepts
 * must be whole (indexes in range).
 */
#include <stdint.h>
#include <stdlib.h>

#include "bpf/desc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct desc d;
	size_t i;

	if (cgfw_desc_parse(data, size, &d))
		return 0;
	for (i = 0; i < d.n_rules; i++)
		if (d.rules[i].chain >= d.n_chains)
			abort();
	for (i = 0; i < d.n_slots; i++)
		if (d.slots[i].prog >= d.n_progs ||
		    d.slots[i].chain >= d.n_chains)
			abort();
	cgfw_desc_release(&d);
	return 0;
}
