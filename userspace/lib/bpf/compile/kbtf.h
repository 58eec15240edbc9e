/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The running kernel's BTF, for what a program reads of the kernel's own
 * structures: a kfunc's id and the offsets of the fields it reads.
 */
#ifndef CGFW_BPF_KBTF_H
#define CGFW_BPF_KBTF_H

#include <stdint.h>

/*
 * A program's reads of the packet's connection-tracking entry (ct.c):
 * offsets in struct sk_buff, struct nf_conn (-1: this kernel's has no
 * such member) and struct nf_conntrack_tuple.
 */
struct cgfw_kbtf_ct {
	int16_t skb_nfct;		/* sk_buff: _nfct */
	int16_t status, mark, zone;	/* nf_conn */
	int16_t tuple[2];		/* nf_conn: tuplehash[dir].tuple */
	int16_t src_u3, src_u, l3num;	/* in the tuple: src.* */
	int16_t dst_u3, dst_u, protonum; /* dst.* */
};

/* A program's reads of the packet's device (codegen.c, gen_device()). */
struct cgfw_kbtf {
	int32_t cast_to_kern_ctx;	/* kfunc bpf_cast_to_kern_ctx() */
	int16_t skb_dev;		/* offsetof(struct sk_buff, dev) */
	int16_t dev_name, dev_type, dev_group;	/* of struct net_device */
	int ct_err;		/* 0, or why there is no ct below */
	struct cgfw_kbtf_ct ct;
};

/*
 * This kernel's, read from /sys/kernel/btf/vmlinux once per process; NULL
 * with *@err -ENOENT if it has no BTF, -ESRCH if a name is missing,
 * -EPERM if it does not load such a program (no JIT for the kfunc call,
 * or lockdown forbids reading the kernel's memory). ct_err says the same
 * of the connection-tracking reads alone (-ESRCH: no nf_conn).
 */
const struct cgfw_kbtf *cgfw_kbtf(int *err);

#endif /* CGFW_BPF_KBTF_H */
