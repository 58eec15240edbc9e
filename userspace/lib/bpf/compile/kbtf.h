/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The running kernel's BTF, for what a program reads of the kernel's own
 * structures: a kfunc's id and the offsets of the fields it reads.
 */
#ifndef CGFW_BPF_KBTF_H
#define CGFW_BPF_KBTF_H

#include <stdint.h>

/* A program's reads of the packet's device (codegen.c, gen_device()). */
struct cgfw_kbtf {
	int32_t cast_to_kern_ctx;	/* kfunc bpf_cast_to_kern_ctx() */
	int16_t skb_dev;		/* offsetof(struct sk_buff, dev) */
	int16_t dev_name, dev_type, dev_group;	/* of struct net_device */
};

/*
 * This kernel's, read from /sys/kernel/btf/vmlinux once per process; NULL
 * with *@err -ENOENT if it has no BTF, -ESRCH if a name is missing,
 * -EPERM if it does not load such a program (no JIT for the kfunc call,
 * or lockdown forbids reading the kernel's memory).
 */
const struct cgfw_kbtf *cgfw_kbtf(int *err);

#endif /* CGFW_BPF_KBTF_H */
