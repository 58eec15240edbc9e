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
#include <string.h>

#include <bpf/btf.h>

#include "bpf/compile/kbtf.h"

/* The byte offset of member @name of struct @id, in anonymous ones too. */
static int member_off(const struct btf *btf, uint32_t id, const char *name)
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
		if (n && !strcmp(n, name))
			return btf_member_bit_offset(t, i) / 8;
		if (n && *n)
			continue;
		off = member_off(btf, btf__resolve_type(btf, m[i].type), name);
		if (off >= 0)
			return btf_member_bit_offset(t, i) / 8 + off;
	}
	return -ESRCH;
}

static int struct_member(const struct btf *btf, const char *st,
			 const char *name, int16_t *out)
{
	int id = btf__find_by_name_kind(btf, st, BTF_KIND_STRUCT);
	int off = id < 0 ? -ESRCH : member_off(btf, id, name);

	if (off < 0 || off > INT16_MAX)
		return -ESRCH;
	*out = off;
	return 0;
}

static int load(struct cgfw_kbtf *kb)
{
	struct btf *btf = btf__load_vmlinux_btf();
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
	btf__free(btf);
	return ret;
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
