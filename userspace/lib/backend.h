/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backends behind one table of operations (nft/target.c,
 * bpf/backend.c), and what the operations over all of them share.
 *
 * An apply is a transaction over one or two backends: each first stages
 * what it will install (everything that can fail without changing what
 * runs: compiling, loading, the verifier), then commits it. backend.c
 * orders the commits and records the transaction where the next cgfw
 * command finds it, so that an apply that was killed is finished or
 * rolled back (docs/design.rst, "Trust").
 */
#ifndef CGFW_BACKEND_H
#define CGFW_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "backend_ops.h"

struct cgfw_lock;

/* cgfw's lock: of this network namespace, and of its pins in bpffs. */
int cgfw_backend_lock(struct cgfw_ctx *ctx, struct cgfw_lock *l);
/* The lock, and an interrupted apply finished: how every command starts. */
int cgfw_backend_begin(struct cgfw_ctx *ctx, struct cgfw_lock *l);

extern const struct backend_ops cgfw_backend_nft_emulated;
extern const struct backend_ops cgfw_backend_nft_native;
extern const struct backend_ops cgfw_backend_bpf;

/* Every backend that can hold tables: for list, delete, flush, update. */
const struct backend_ops *const *cgfw_backends(size_t *n);

#endif /* CGFW_BACKEND_H */
