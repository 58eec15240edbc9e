// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Loading a compiled table: its maps created and filled (a limit's state
 * with the table's BTF, bpf/compile/object.c), its description written
 * (bpf/desc.h), its programs loaded, the verifier's log mapped to the rule
 * that made the failing instruction. Nothing is attached here
 * (bpf/install.c).
 *
 * Only libbpf's low-level calls are used: they print nothing, so the
 * library's messages all go through the context.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "bpf/desc.h"
#include "bpf/table.h"

#define LOG_SIZE (1u << 22)

int cgfw_bpf_name_ok(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		     const struct ir_table *t)
{
	if (strchr(t->name, '/') || strchr(t->name, '.') || t->name[0] == '_') {
		cgfw_err_at(ctx, &rs->src, &t->loc,
			    "table name '%s' cannot name a directory in bpffs (no '/' or '.', and no '_' first); rename the table",
			    t->name);
		return -EINVAL;
	}
	/* a table is also "_gone-NAME" while a delete sets it aside */
	if (strlen(t->name) > CGFW_BPF_NAME_MAX) {
		cgfw_err_at(ctx, &rs->src, &t->loc,
			    "table name '%.40s...' (%zu characters) is too long for the bpf backend, which names directories in bpffs after it; use at most %d characters",
			    t->name, strlen(t->name), CGFW_BPF_NAME_MAX);
		return -ENAMETOOLONG;
	}
	return 0;
}

/*
 * The table's BTF in the kernel, for a limit's state; its fd. A meter's
 * hash map (codegen.h) keys its limits by the set's key: an array of its
 * bytes, its type in @keys[map]; with timeouts, its value's in
 * @values[map].
 */
static int load_btf(struct cgfw_ctx *ctx, const struct bpf_table *bt,
		    uint32_t *key, uint32_t *value, uint32_t *keys,
		    uint32_t *values)
{
	LIBBPF_OPTS(bpf_btf_load_opts, o);
	uint32_t limit_value[2];
	struct btf *btf = cgfw_bpf_btf(bt, 1, key, limit_value, NULL);
	const void *raw;
	uint32_t len;
	size_t i;
	char *log;
	int fd, u8 = -1, id;

	if (!btf)
		return -ENOMEM;
	for (i = 0; i < bt->n_maps; i++) {
		if (!bt->maps[i].spin_lock ||
		    bt->maps[i].type != BPF_MAP_TYPE_HASH)
			continue;
		if (u8 < 0)
			u8 = btf__add_int(btf, "unsigned char", 1, 0);
		id = u8 < 0 ? u8 : btf__add_array(btf, *key, u8,
						   bt->maps[i].key_size);
		keys[i] = id;
		values[i] = limit_value[!!bt->maps[i].time_off];
		if (id < 0) {
			btf__free(btf);
			return -ENOMEM;
		}
	}
	*value = limit_value[0];
	raw = btf__raw_data(btf, &len);
	fd = raw ? bpf_btf_load(raw, len, &o) : -ENOMEM;
	if (fd < 0 && fd != -ENOMEM) {
		log = calloc(1, 65536);
		if (log) {
			o.log_buf = log;
			o.log_size = 65536;
			o.log_level = 1;
			bpf_btf_load(raw, len, &o);
			cgfw_err(ctx, "the kernel refused the BTF of a limit's state: %s; %s",
				 strerror(-fd), log);
			free(log);
		}
	}
	btf__free(btf);
	return fd;
}

/* The program whose classifier's blob is map @map, or -1. */
static int cls_prog_of(const struct bpf_table *bt, size_t map)
{
	size_t k;

	for (k = 0; k < bt->n_progs; k++)
		if (bt->progs[k].cls && bt->progs[k].cls_map == map)
			return k;
	return -1;
}

#define ENOTSUPP_KERNEL 524	/* the kernel's ENOTSUPP: no such batch op */

/*
 * A map's elements: in batches of up to 64k (one syscall each, where a
 * million elements one by one took seconds), or one by one where the
 * kernel has no batch update for the map (and for per-CPU values).
 */
static int fill_map(const struct bpf_map_spec *m)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o, .elem_flags = BPF_ANY);
	bool batch = m->type != BPF_MAP_TYPE_PERCPU_ARRAY &&
		     m->type != BPF_MAP_TYPE_PERCPU_HASH;
	uint32_t done = 0, n;
	int ret = 0;

	while (batch && done < m->n_elems) {
		n = m->n_elems - done < 65536 ? m->n_elems - done : 65536;
		ret = bpf_map_update_batch(m->fd,
					   (uint8_t *)m->keys + (size_t)done * m->key_size,
					   (uint8_t *)m->values + (size_t)done * m->value_size,
					   &n, &o);
		if (ret && !done && !n &&
		    (ret == -EINVAL || ret == -ENOTSUPP_KERNEL ||
		     ret == -EOPNOTSUPP)) {
			batch = false;	/* no batch for this map here */
			ret = 0;
		} else if (ret) {
			return ret;
		}
		done += n;	/* 0 when the batch was refused */
	}
	for (; !ret && done < m->n_elems; done++)
		ret = bpf_map_update_elem(m->fd,
					  (uint8_t *)m->keys + (size_t)done * m->key_size,
					  (uint8_t *)m->values + (size_t)done * m->value_size,
					  BPF_ANY);
	return ret;
}

/*
 * The maps, made and filled; *@failed: the one that was not. A blob the
 * kernel refuses is no error yet (cgfw_bpf_load() goes rule by rule).
 */
static int create_maps(struct cgfw_ctx *ctx, struct bpf_table *bt,
		       size_t *failed)
{
	uint32_t key_id = 0, value_id = 0, *keys = NULL;
	struct bpf_map_spec *m;
	int btf_fd = -1, ret = 0;
	size_t i;

	for (i = 0; !ret && i < bt->n_maps; i++) {
		LIBBPF_OPTS(bpf_map_create_opts, o);

		m = &bt->maps[i];
		if (m->inline_only || m->desc)
			continue;
		o.map_flags = m->flags;
		if (m->spin_lock) {
			if (btf_fd < 0) {
				/* each map's key type, then its value's */
				keys = calloc(2 * bt->n_maps, sizeof(*keys));
				btf_fd = keys ? load_btf(ctx, bt, &key_id,
							 &value_id, keys,
							 keys + bt->n_maps) :
						-ENOMEM;
			}
			if (btf_fd < 0) {
				ret = btf_fd;
				break;
			}
			o.btf_fd = btf_fd;
			o.btf_key_type_id = keys[i] ? : key_id;
			o.btf_value_type_id = keys[bt->n_maps + i] ? : value_id;
		}
		m->fd = bpf_map_create(m->type, m->name, m->key_size,
				       m->value_size, m->max_entries, &o);
		*failed = i;
		if (m->fd < 0) {
			ret = m->fd;
			if (cls_prog_of(bt, i) < 0)
				cgfw_err(ctx, "cannot create BPF map %s (%u entries of %u+%u bytes): %s",
					 m->name, m->max_entries, m->key_size,
					 m->value_size, strerror(-ret));
			break;
		}
		cgfw_bpf_arm_timeouts(m);
		ret = fill_map(m);
		if (ret && cls_prog_of(bt, i) < 0)
			cgfw_err(ctx, "cannot fill BPF map %s: %s", m->name,
				 strerror(-ret));
	}
	if (btf_fd >= 0)
		close(btf_fd);	/* the maps hold their own reference */
	free(keys);
	return ret;
}

static uint32_t map_id(int fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ?
	       info.id : 0;
}

static uint32_t chain_idx(const struct ir_table *t, const struct ir_chain *c)
{
	const struct ir_chain *x;
	uint32_t i = 0;

	list_for_each_entry(x, &t->chains, list) {
		if (x == c)
			return i;
		i++;
	}
	return UINT32_MAX;
}

/*
 * Where each rule of a table is in its chain, sorted by address: the
 * description names a counter slot's rule by its place, for thousands of
 * slots.
 */
struct rule_pos {
	const struct ir_rule *rule;
	int32_t idx;
};

static int cmp_pos(const void *a, const void *b)
{
	const struct rule_pos *x = a, *y = b;

	return (x->rule > y->rule) - (x->rule < y->rule);
}

static struct rule_pos *rule_positions(const struct ir_table *t, size_t *n)
{
	const struct ir_chain *c;
	const struct ir_rule *r;
	struct rule_pos *pos;
	size_t k = 0;
	int32_t i;

	list_for_each_entry(c, &t->chains, list)
		list_for_each_entry(r, &c->rules, list)
			k++;
	pos = malloc((k ? k : 1) * sizeof(*pos));
	if (!pos)
		return NULL;
	k = 0;
	list_for_each_entry(c, &t->chains, list) {
		i = 0;
		list_for_each_entry(r, &c->rules, list)
			pos[k++] = (struct rule_pos){ .rule = r, .idx = i++ };
	}
	qsort(pos, k, sizeof(*pos), cmp_pos);
	*n = k;
	return pos;
}

/* @r's place in its chain, -1 for none */
static int32_t rule_idx(const struct rule_pos *pos, size_t n,
			const struct ir_rule *r)
{
	struct rule_pos key = { .rule = r }, *p;

	if (!r)
		return -1;
	p = bsearch(&key, pos, n, sizeof(*pos), cmp_pos);
	return p ? p->idx : -1;
}

/* A set's attributes, elements left out, as a NEWSET message. */
static int set_msg(const struct ir_set *s, char *buf, size_t size,
		   uint32_t *len)
{
	struct nlmsghdr *nlh;

	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_NEWSET, NFPROTO_INET, 0, 0);
	nftnl_set_nlmsg_build_payload(nlh, s->nl);
	if (nlh->nlmsg_len > size)
		return -E2BIG;
	*len = nlh->nlmsg_len;
	return 0;
}

struct find_expr {
	const void *expr;
	bool found;
};

static int is_expr(struct nftnl_expr *e, void *data)
{
	struct find_expr *f = data;

	f->found |= (const void *)e == f->expr;
	return 0;
}

/* The named counters, quotas and limits of @bt: their slots. */
static void describe_objs(struct strbuf *sb, const struct bpf_table *bt)
{
	const struct bpf_state *states[] = {
		&bt->counter_objs, &bt->quotas, &bt->limits,
	};
	const struct ir_obj *o;
	struct desc_obj d;
	struct nftnl_obj *nl;
	size_t i, k;

	list_for_each_entry(o, &bt->table->objs, list) {
		nl = o->nl;
		memset(&d, 0, sizeof(d));
		d.type = nftnl_obj_get_u32(nl, NFTNL_OBJ_TYPE);
		d.name = (char *)nftnl_obj_get_str(nl, NFTNL_OBJ_NAME);
		for (i = 0; i < ARRAY_SIZE(states); i++)
			for (k = 0; k < states[i]->n; k++)
				if (states[i]->exprs[k] == o) {
					d.map_id = map_id(bt->maps[states[i]->map].fd);
					d.slot = k;
				}
		if (d.type == NFT_OBJECT_QUOTA) {
			d.bytes = nftnl_obj_get_u64(nl, NFTNL_OBJ_QUOTA_BYTES);
			d.flags = nftnl_obj_get_u32(nl, NFTNL_OBJ_QUOTA_FLAGS);
		} else if (d.type == NFT_OBJECT_LIMIT) {
			d.bytes = nftnl_obj_get_u64(nl, NFTNL_OBJ_LIMIT_RATE);
			d.unit = nftnl_obj_get_u64(nl, NFTNL_OBJ_LIMIT_UNIT);
			d.burst = nftnl_obj_get_u32(nl, NFTNL_OBJ_LIMIT_BURST);
			d.flags = nftnl_obj_get_u32(nl, NFTNL_OBJ_LIMIT_FLAGS);
			d.limit_type = nftnl_obj_get_u32(nl, NFTNL_OBJ_LIMIT_TYPE);
		}
		cgfw_desc_put_obj(sb, &d);
	}
}

/* Quota @k of @bt: its slot, and the rule it belongs to. */
static void describe_quota(struct strbuf *sb, const struct bpf_table *bt,
			   size_t k)
{
	struct find_expr f = { .expr = bt->quotas.exprs[k] };
	const struct ir_chain *c;
	const struct ir_rule *r;
	uint32_t ci = 0;
	int32_t ri;

	list_for_each_entry(c, &bt->table->chains, list) {
		ri = -1;
		list_for_each_entry(r, &c->rules, list) {
			ri++;
			nftnl_expr_foreach(r->nl, is_expr, &f);
			if (!f.found)
				continue;
			cgfw_desc_put_quota(sb, &(struct desc_quota){
				.map_id = map_id(bt->maps[bt->quotas.map].fd),
				.slot = k, .chain = ci, .rule = ri,
				.bytes = nftnl_expr_get_u64(
					(struct nftnl_expr *)f.expr,
					NFTNL_EXPR_QUOTA_BYTES),
			});
			return;
		}
		ci++;
	}
}

struct find_name {
	const char *name;
	bool found;
};

static int is_named(struct nftnl_expr *e, void *data)
{
	struct find_name *f = data;

	f->found |= !strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), f->name);
	return 0;
}

/* Does rule @r have an expression @name? */
static bool has_expr(const struct ir_rule *r, const char *name)
{
	struct find_name f = { .name = name };

	nftnl_expr_foreach(r->nl, is_named, &f);
	return f.found;
}

/* What the generation @gen of @bt is, for "cgfw list" and "cgfw update". */
static int describe(const struct bpf_table *bt, uint64_t gen,
		    uint32_t with_nft, struct strbuf *sb)
{
	const struct ir_table *t = bt->table;
	const struct bpf_prog_spec *p;
	const struct ir_chain *c;
	const struct ir_rule *r;
	struct rule_pos *pos;
	char buf[8192];
	uint32_t i = 0, len;
	size_t k, j, n_pos;
	int ret;

	cgfw_desc_put_header(sb, gen, with_nft, t->name, bt->conntrack);
	list_for_each_entry(c, &t->chains, list) {
		cgfw_desc_put_chain(sb, &(struct desc_chain){
			.name = c->name, .base = c->base, .dir = c->dir,
			.policy = c->policy, .priority = c->priority,
			.cgroup_path = c->cgroup.path,
			.cgroup_id = c->cgroup.id,
		});
		list_for_each_entry(r, &c->rules, list)
			cgfw_desc_put_rule(sb, &(struct desc_rule){
				.chain = i, .text = r->text,
				.counter = has_expr(r, "counter"),
				.quota = has_expr(r, "quota"),
			});
		i++;
	}
	for (k = 0; k < bt->n_maps; k++) {
		const struct bpf_map_spec *m = &bt->maps[k];

		if (!m->set || m->set->anonymous)
			continue;
		ret = set_msg(m->set, buf, sizeof(buf), &len);
		if (ret)
			return ret;
		cgfw_desc_put_set(sb, &(struct desc_set){
			.name = (char *)cgfw_ir_set_name(m->set),
			.map_id = map_id(m->fd), .nlset = buf,
			.nlset_len = len, .meter = m->meter,
		});
	}
	pos = rule_positions(t, &n_pos);
	if (!pos)
		return -ENOMEM;
	for (k = 0; k < bt->n_progs; k++) {
		p = &bt->progs[k];
		cgfw_desc_put_prog(sb, &(struct desc_prog){
			.dir = p->dir, .cgroup_id = p->cgroup->id,
			.counters_id = map_id(bt->maps[p->counters_map].fd),
		});
		for (j = 0; j < p->n_slots; j++)
			cgfw_desc_put_slot(sb, &(struct desc_slot){
				.prog = k, .slot = j,
				.chain = chain_idx(t, p->slots[j].chain),
				.rule = rule_idx(pos, n_pos, p->slots[j].rule),
			});
	}
	free(pos);
	for (k = 0; k < bt->quotas.n; k++)
		describe_quota(sb, bt, k);
	describe_objs(sb, bt);
	for (k = 0; k < bt->logs.n; k++) {
		struct nftnl_expr *e = (struct nftnl_expr *)bt->logs.exprs[k];

		cgfw_desc_put_log(sb, &(struct desc_log){
			.id = k,
			.prefix = (char *)(nftnl_expr_is_set(e, NFTNL_EXPR_LOG_PREFIX) ?
				  nftnl_expr_get_str(e, NFTNL_EXPR_LOG_PREFIX) : ""),
			.level = nftnl_expr_is_set(e, NFTNL_EXPR_LOG_LEVEL) ?
				 nftnl_expr_get_u32(e, NFTNL_EXPR_LOG_LEVEL) : 4,
			.ring_id = map_id(bt->maps[bt->log_ring].fd),
			.lost_id = map_id(bt->maps[bt->logs.map].fd),
		});
	}
	return sb->oom ? -ENOMEM : 0;
}

/* The description's map, sized for it, filled and frozen. */
static int create_desc(struct cgfw_ctx *ctx, struct bpf_table *bt,
		       uint64_t gen, uint32_t with_nft)
{
	struct bpf_map_spec *m = &bt->maps[bt->desc_map];
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = m->flags);
	struct strbuf sb;
	int ret;

	cgfw_sb_init(&sb);
	ret = describe(bt, gen, with_nft, &sb);
	if (!ret) {
		cgfw_desc_map_size(sb.len, &m->value_size, &m->max_entries);
		m->fd = bpf_map_create(m->type, m->name, m->key_size,
				       m->value_size, m->max_entries, &o);
		ret = m->fd < 0 ? m->fd : cgfw_desc_store(m->fd, &sb);
	}
	if (ret)
		cgfw_err(ctx, "cannot keep the description of table '%s' with its programs: %s",
			 bt->table->name, strerror(-ret));
	cgfw_sb_release(&sb);
	return ret;
}

/* Where the verifier stopped: the last "N: " instruction of its log. */
static long last_insn(const char *log)
{
	const char *p = log;
	long n = -1, v;
	char *end;

	while (p && *p) {
		v = strtol(p, &end, 10);
		if (end != p && *end == ':')
			n = v;
		else if (!strncmp(p, "unreachable insn ", 17))
			n = strtol(p + 17, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return n;
}

static void verifier_error(struct cgfw_ctx *ctx, const struct bpf_table *bt,
			   const struct bpf_prog_spec *p, const char *log,
			   int err)
{
	const char *rule = "the program";
	long insn = last_insn(log);
	const char *tail = log + strlen(log);
	size_t i;
	int lines = 0;

	for (i = 0; i < p->em.n_notes && insn >= 0; i++)
		if ((long)p->em.notes[i].insn <= insn)
			rule = p->em.notes[i].text;
	while (tail > log && lines < 16)
		if (*--tail == '\n')
			lines++;
	/*
	 * Its limits on the work of checking (docs/classifier.rst): where it
	 * stopped is only where the budget ran out, not what is wrong.
	 */
	if (strstr(log, "BPF program is too large.") ||
	    strstr(log, "jumps is too complex.")) {
		cgfw_err_at(ctx, &bt->rs->src, &bt->table->loc,
			    "the %s program of table '%s' for cgroup %s is more than the kernel's verifier checks (%s; it gave up at %s): rules that differ only in their values, next to each other, become one lookup or a tree, a set takes many values in one rule, or use the nft backend (-b nft); the end of its log:\n%s",
			    cgfw_dir_str(p->dir), bt->table->name,
			    p->cgroup->path, strerror(-err), rule, tail);
		return;
	}
	cgfw_err_at(ctx, &bt->rs->src, &bt->table->loc,
		    "the kernel's verifier refused the %s program of table '%s' for cgroup %s (%s), at instruction %ld, from %s; the end of its log:\n%s",
		    cgfw_dir_str(p->dir), bt->table->name, p->cgroup->path,
		    strerror(-err), insn, rule, tail);
}

/*
 * The maps of the named objects' states, and of the sets whose boxes the
 * programs compare with (no program looks them up), bound to every
 * program of the table: listed from any of them (cgfw list), and kept
 * while one runs, whether its rules use them or not.
 */
static int bind_state(struct cgfw_ctx *ctx, const struct bpf_table *bt,
		      const struct bpf_prog_spec *p)
{
	const struct bpf_state *states[] = {
		&bt->counter_objs, &bt->quotas, &bt->limits,
	};
	size_t i;
	int ret;

	for (i = 0; i < bt->n_maps; i++) {
		if (!bt->maps[i].boxes || bt->maps[i].fd < 0)
			continue;
		ret = bpf_prog_bind_map(p->fd, bt->maps[i].fd, NULL);
		if (ret) {
			cgfw_err(ctx, "cannot bind the map of set '%s' of table '%s' to its program: %s",
				 cgfw_ir_set_name(bt->maps[i].set),
				 bt->table->name, strerror(-ret));
			return ret;
		}
	}
	if (list_empty(&bt->table->objs))
		return 0;
	for (i = 0; i < ARRAY_SIZE(states); i++) {
		if (states[i]->map == SIZE_MAX)
			continue;
		ret = bpf_prog_bind_map(p->fd, bt->maps[states[i]->map].fd,
					NULL);
		if (ret) {
			cgfw_err(ctx, "cannot bind the map of table '%s''s named objects to its program: %s",
				 bt->table->name, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int load_prog(struct cgfw_ctx *ctx, struct bpf_table *bt,
		     struct bpf_prog_spec *p)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = p->dir == CGFW_EGRESS ?
			BPF_CGROUP_INET_EGRESS : BPF_CGROUP_INET_INGRESS);
	struct bpf_insn *insns;
	char *log;
	size_t i;
	int ret;

	/* map indexes become the maps' file descriptors, in a copy */
	insns = malloc(p->em.n * sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	memcpy(insns, p->em.insns, p->em.n * sizeof(*insns));
	for (i = 0; i < p->em.n; i++) {
		if (insns[i].code == (BPF_LD | BPF_DW | BPF_IMM) &&
		    (insns[i].src_reg == BPF_PSEUDO_MAP_FD ||
		     insns[i].src_reg == BPF_PSEUDO_MAP_VALUE) &&
		    insns[i].imm >= MAP_IDX_BIAS) {
			insns[i].imm = bt->maps[insns[i].imm - MAP_IDX_BIAS].fd;
			i++;
		}
	}
	p->fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "cgfw", "GPL", insns,
			      p->em.n, &o);
	ret = p->fd >= 0 ? 0 : p->fd;
	/* a refused classifier: cgfw_bpf_load() tries rule by rule */
	if (ret && ret != -ENOMEM && !p->cls) {
		/* again with the verifier's log, to say why */
		log = calloc(1, LOG_SIZE);
		if (log) {
			o.log_buf = log;
			o.log_size = LOG_SIZE;
			o.log_level = 1;
			p->fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "cgfw",
					      "GPL", insns, p->em.n, &o);
			/*
			 * the first load's error: this one's may be the log's
			 * own (ENOSPC when the log is full)
			 */
			if (p->fd >= 0)
				ret = 0;
			else
				verifier_error(ctx, bt, p, log, ret);
			free(log);
		}
	}
	free(insns);
	return ret ? : bind_state(ctx, bt, p);
}

/*
 * A program with the classifier that the kernel refuses (a verifier that
 * gives up on its loops sooner than the one it was measured with: 6.12's
 * "sequence of 8193 jumps is too complex", where 6.18 loads it), or whose
 * blob's map it refuses (the kernel bounds an array's value size), is
 * made again rule by rule, as it would have been without the
 * classifier: the whole table, its maps and description with it, since
 * the program's counter slots and maps change. Only a refusal without the
 * classifier is an error.
 */
int cgfw_bpf_load(struct cgfw_ctx *ctx, struct bpf_table *bt, uint64_t gen,
		  uint32_t with_nft)
{
	struct bpf_prog_spec *p;
	size_t i, m = 0;
	int ret, k;

	for (;;) {
		ret = create_maps(ctx, bt, &m);
		k = ret ? cls_prog_of(bt, m) : -1;
		ret = ret ? : create_desc(ctx, bt, gen, with_nft);
		for (i = 0; !ret && i < bt->n_progs; i++)
			ret = load_prog(ctx, bt, &bt->progs[i]);
		if (!ret)
			return 0;
		if (k < 0 && i && bt->progs[i - 1].cls)
			k = i - 1;
		if (k < 0)
			return ret;
		p = &bt->progs[k];
		cgfw_log(ctx, CGFW_LOG_INFO,
			 "table '%s': the kernel refused the classifier in the %s program for cgroup %s (%s); that program is made rule by rule",
			 bt->table->name, cgfw_dir_str(p->dir), p->cgroup->path,
			 strerror(-ret));
		ret = cgfw_bpf_recompile(ctx, bt, k);
		if (ret)
			return ret;
	}
}
