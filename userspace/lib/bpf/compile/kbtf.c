// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The running kernel's BTF (kbtf.h): what __sk_buff does not give a
 * CGROUP_SKB program, it reads from the kernel's struct sk_buff, made a
 * typed pointer by the kfunc bpf_cast_to_kern_ctx(), at the offsets the
 * kernel's BTF gives. The ids and offsets hold for this kernel only (an
 * object for another cannot carry them: object.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "base/list.h"
#include "bpf/compile/kbtf.h"

/*
 * The byte offset of member @name of struct @id, in anonymous ones too;
 * *@type its type, qualifiers and typedefs resolved.
 */
static int member_off(const struct btf *btf, uint32_t id, const char *name,
		      int *type)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;
	const char *n;
	int i, off;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return -ESRCH;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++) {
		n = btf__name_by_offset(btf, m[i].name_off);
		if (n && !strcmp(n, name)) {
			*type = btf__resolve_type(btf, m[i].type);
			return btf_member_bit_offset(t, i) / 8;
		}
		if (n && *n)
			continue;
		off = member_off(btf, btf__resolve_type(btf, m[i].type), name,
				 type);
		if (off >= 0)
			return btf_member_bit_offset(t, i) / 8 + off;
	}
	return -ESRCH;
}

/*
 * The offset of @path ("a.b.c") in struct @st; through an array member,
 * its first element's.
 */
static int struct_member(const struct btf *btf, const char *st,
			 const char *path, int16_t *out)
{
	int id = btf__find_by_name_kind(btf, st, BTF_KIND_STRUCT);
	const struct btf_type *t;
	char buf[64], *name, *save;
	int off = 0, o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (name = strtok_r(buf, ".", &save); name && id >= 0;
	     name = strtok_r(NULL, ".", &save)) {
		o = member_off(btf, id, name, &id);
		if (o < 0)
			return -ESRCH;
		off += o;
		t = btf__type_by_id(btf, id);
		if (t && btf_is_array(t))
			id = btf__resolve_type(btf, btf_array(t)->type);
	}
	if (id < 0 || off > INT16_MAX)
		return -ESRCH;
	*out = off;
	return 0;
}

/* The size of struct @st, or -ESRCH. */
static int struct_size(const struct btf *btf, const char *st)
{
	int id = btf__find_by_name_kind(btf, st, BTF_KIND_STRUCT);

	return id < 0 ? -ESRCH : btf__resolve_size(btf, id);
}

/*
 * nf_conn's members that ct.c reads (mark and zone only with
 * CONFIG_NF_CONNTRACK_MARK and _ZONES: -1 without).
 */
static int load_ct(const struct btf *btf, struct cgfw_kbtf_ct *ct)
{
	int hash = struct_size(btf, "nf_conntrack_tuple_hash");
	int ret;

	ret = struct_member(btf, "sk_buff", "_nfct", &ct->skb_nfct);
	ret = ret ? : struct_member(btf, "nf_conn", "status", &ct->status);
	ret = ret ? : struct_member(btf, "nf_conn", "tuplehash.tuple",
				    &ct->tuple[0]);
	ret = ret ? : hash > 0 && ct->tuple[0] + hash <= INT16_MAX ? 0 : -ESRCH;
	if (ret)
		return ret;
	ct->tuple[1] = ct->tuple[0] + hash;
	if (struct_member(btf, "nf_conn", "mark", &ct->mark))
		ct->mark = -1;
	if (struct_member(btf, "nf_conn", "zone", &ct->zone))
		ct->zone = -1;
	ret = struct_member(btf, "nf_conntrack_tuple", "src.u3", &ct->src_u3);
	ret = ret ? : struct_member(btf, "nf_conntrack_tuple", "src.u",
				    &ct->src_u);
	ret = ret ? : struct_member(btf, "nf_conntrack_tuple", "src.l3num",
				    &ct->l3num);
	ret = ret ? : struct_member(btf, "nf_conntrack_tuple", "dst.u3",
				    &ct->dst_u3);
	ret = ret ? : struct_member(btf, "nf_conntrack_tuple", "dst.u",
				    &ct->dst_u);
	ret = ret ? : struct_member(btf, "nf_conntrack_tuple", "dst.protonum",
				    &ct->protonum);
	return ret;
}

/*
 * Whether this kernel loads what gen_device() emits: a kfunc call (a JIT
 * is needed) and bpf_probe_read_kernel_str() (not under lockdown's
 * confidentiality mode); -EPERM if not.
 */
static int probe(const struct cgfw_kbtf *kb)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 6,
		  .src_reg = 1 },
		{ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL,
		  .imm = kb->cast_to_kern_ctx },
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = 3,
		  .src_reg = 0, .off = kb->skb_dev },
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = 10, .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 1,
		  .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 1, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 2, .imm = 8 },
		{ .code = BPF_JMP | BPF_CALL,
		  .imm = BPF_FUNC_probe_read_kernel_str },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = BPF_CGROUP_INET_EGRESS);
	int fd;

	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "cgfw_kbtf", "GPL",
			   insns, ARRAY_SIZE(insns), &o);
	if (fd < 0)
		return -EPERM;
	close(fd);
	return 0;
}

static int load(struct cgfw_kbtf *kb)
{
	/* the running kernel's own, not a vmlinux file found elsewhere */
	struct btf *btf = btf__parse("/sys/kernel/btf/vmlinux", NULL);
	int id, ret;

	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, "bpf_cast_to_kern_ctx",
				    BTF_KIND_FUNC);
	ret = id < 0 ? -ESRCH : 0;
	kb->cast_to_kern_ctx = id;
	ret = ret ? : struct_member(btf, "sk_buff", "dev", &kb->skb_dev);
	ret = ret ? : struct_member(btf, "net_device", "name", &kb->dev_name);
	ret = ret ? : struct_member(btf, "net_device", "type", &kb->dev_type);
	ret = ret ? : struct_member(btf, "net_device", "group",
				    &kb->dev_group);
	kb->ct_err = ret ? : load_ct(btf, &kb->ct);
	btf__free(btf);
	return ret ? : probe(kb);
}

static struct cgfw_kbtf kbtf;
static int kbtf_err;
static pthread_once_t kbtf_once = PTHREAD_ONCE_INIT;

static void load_once(void)
{
	kbtf_err = load(&kbtf);
}

const struct cgfw_kbtf *cgfw_kbtf(int *err)
{
	pthread_once(&kbtf_once, load_once);
	*err = kbtf_err;
	return kbtf_err ? NULL : &kbtf;
}
