// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Guards: no packet of a chain's cgroup passes unfiltered while its table
 * is not bound to it.
 *
 * A cgroup made again at a chain's path is a new cgroup, and its
 * processes can send before the table is bound to it (cgfw daemon binds
 * it a few milliseconds later). A guard is a CGROUP_SKB program on the
 * chain's parent cgroup, in the chain's direction. Programs on a cgroup
 * run for its descendants too, from the first packet of a cgroup made
 * below it; so the guard sees the new cgroup's packets before anything
 * else knows it exists. It asks which child of the parent the packet's
 * socket belongs to (bpf_skb_ancestor_cgroup_id() at the child's level)
 * and passes it only if that child is in its map: the children that
 * existed when it was last told, except a guarded chain's cgroup while the
 * table is not bound to it. Everything else, a child it was not told
 * about yet, is dropped; the parent's own packets pass. The guard only
 * drops: what passes it, the tables decide.
 *
 * Pinned in /sys/fs/bpf/cgfw-guard as link-<dir>-<parent id> and
 * map-<dir>-<parent id>; removing the link's pin detaches the guard.
 */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include <bpf/bpf.h>
#include <linux/netfilter.h>

#include "bpf/table.h"

#define GUARD_ROOT CGFW_BPFFS "/cgfw-guard"
#define GUARD_CHILDREN 65536

/* A guard to have: a parent cgroup and a direction. */
struct guard {
	char *parent;
	unsigned int level;	/* the parent's */
	enum cgfw_dir dir;
	char key[64];		/* <dir>-<parent id> */
};

/* A guarded chain: its cgroup, and whether its table is bound to it. */
struct held {
	const struct ir_chain *c;
	bool in_force;
};

struct want {
	struct guard *g;
	size_t n_g;
	struct held *h;
	size_t n_h;
};

static void want_release(struct want *w)
{
	size_t i;

	for (i = 0; i < w->n_g; i++)
		free(w->g[i].parent);
	free(w->g);
	free(w->h);
}

static int add_chain(struct want *w, const struct ir_chain *c, bool in_force)
{
	char *dup, *parent;
	struct guard *g;
	struct held *h;
	struct stat st;
	size_t i;

	h = realloc(w->h, (w->n_h + 1) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	w->h = h;
	w->h[w->n_h++] = (struct held){ .c = c, .in_force = in_force };
	dup = strdup(c->cgroup.path);
	if (!dup)
		return -ENOMEM;
	parent = strdup(dirname(dup));
	free(dup);
	if (!parent)
		return -ENOMEM;
	for (i = 0; i < w->n_g; i++) {
		if (w->g[i].dir == c->dir && !strcmp(w->g[i].parent, parent)) {
			free(parent);
			return 0;
		}
	}
	if (stat(parent, &st)) {
		free(parent);	/* no parent: nothing to guard from */
		return 0;
	}
	g = realloc(w->g, (w->n_g + 1) * sizeof(*g));
	if (!g) {
		free(parent);
		return -ENOMEM;
	}
	w->g = g;
	g = &w->g[w->n_g++];
	g->parent = parent;
	g->level = c->cgroup.level - 1;
	g->dir = c->dir;
	snprintf(g->key, sizeof(g->key), "%s-%llu", cgfw_dir_str(c->dir),
		 (unsigned long long)st.st_ino);
	return 0;
}

/* Drop the packets of a child of the parent at @level not in @map. */
static int load_guard(struct cgfw_ctx *ctx, unsigned int level, int map)
{
	const struct bpf_insn insns[] = {
		I_MOV64_IMM(BPF_REG_2, level + 1),
		I_CALL(BPF_FUNC_skb_ancestor_cgroup_id),
		/* the parent's own packets, or its ancestors' */
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0,
		  .off = 9, .imm = 0 },
		I_STX(BPF_DW, BPF_REG_10, BPF_REG_0, -8),
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map },
		{ 0 },
		I_MOV64_REG(BPF_REG_2, BPF_REG_10),
		I_ALU64_IMM(BPF_ADD, BPF_REG_2, -8),
		I_CALL(BPF_FUNC_map_lookup_elem),
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_0,
		  .off = 2, .imm = 0 },
		I_MOV64_IMM(BPF_REG_0, 0),	/* a child it was not told of */
		I_EXIT(),
		I_MOV64_IMM(BPF_REG_0, 1),
		I_EXIT(),
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "cgfw_guard", "GPL",
			       insns, ARRAY_SIZE(insns), NULL);

	if (fd < 0)
		cgfw_err(ctx, "cannot load a guard program: %s", strerror(-fd));
	return fd;
}

/*
 * The guard's map: the one pinned with its link, or a new one, which
 * attach_guard() attaches once it holds the children.
 */
static int open_guard(struct cgfw_ctx *ctx, const struct guard *g)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_NO_PREALLOC);
	char link_pin[PATH_MAX], map_pin[PATH_MAX];
	int map, link, ret;

	snprintf(link_pin, sizeof(link_pin), GUARD_ROOT "/link-%s", g->key);
	snprintf(map_pin, sizeof(map_pin), GUARD_ROOT "/map-%s", g->key);
	map = bpf_obj_get(map_pin);
	link = bpf_obj_get(link_pin);
	if (map >= 0 && link >= 0) {
		close(link);
		return map;
	}
	/* half a guard (a kill between the pins): made again */
	if (map >= 0)
		close(map);
	if (link >= 0)
		close(link);
	cgfw_bpf_unpin(link_pin);
	unlink(map_pin);
	map = bpf_map_create(BPF_MAP_TYPE_HASH, "cgfw_guard", sizeof(uint64_t),
			     1, GUARD_CHILDREN, &mo);
	if (map < 0) {
		cgfw_err(ctx, "cannot make a guard's map: %s", strerror(-map));
		return map;
	}
	ret = bpf_obj_pin(map, map_pin);
	if (ret) {
		cgfw_err(ctx, "cannot pin %s: %s", map_pin, strerror(-ret));
		close(map);
		return ret;
	}
	return map;
}

static int attach_guard(struct cgfw_ctx *ctx, const struct guard *g, int map)
{
	char link_pin[PATH_MAX];
	int prog, cg, link, ret;

	snprintf(link_pin, sizeof(link_pin), GUARD_ROOT "/link-%s", g->key);
	link = bpf_obj_get(link_pin);
	if (link >= 0) {
		close(link);
		return 0;
	}
	prog = load_guard(ctx, g->level, map);
	if (prog < 0)
		return prog;
	cg = open(g->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0) {
		ret = -errno;
		close(prog);
		return ret == -ENOENT ? 0 : ret;	/* gone meanwhile */
	}
	link = bpf_link_create(prog, cg, g->dir == CGFW_EGRESS ?
			       BPF_CGROUP_INET_EGRESS : BPF_CGROUP_INET_INGRESS,
			       NULL);
	close(cg);
	close(prog);
	if (link < 0) {
		cgfw_err(ctx, "cannot attach a guard to %s: %s", g->parent,
			 strerror(-link));
		return link;
	}
	ret = bpf_obj_pin(link, link_pin);
	close(link);
	if (ret)
		cgfw_err(ctx, "cannot pin %s: %s", link_pin, strerror(-ret));
	return ret;
}

/* May packets of the child @path (cgroup @id) pass the guard? */
static bool passes(const struct want *w, const char *path, uint64_t id)
{
	size_t i;

	for (i = 0; i < w->n_h; i++)
		if (!strcmp(w->h[i].c->cgroup.path, path))
			return w->h[i].in_force && w->h[i].c->cgroup.id == id;
	return true;	/* a child no chain guards */
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Tell the guard of @g about the children of its parent now: those that
 * pass go in first, then what no longer passes (a guarded chain's cgroup
 * its table left, a child removed) goes out.
 */
static int tell(const struct want *w, const struct guard *g, int map)
{
	char path[PATH_MAX * 2];
	uint64_t key, next, *ok = NULL, *v;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	uint8_t one = 1;
	int ret = 0, more;
	DIR *d;

	d = opendir(g->parent);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", g->parent, de->d_name);
		if (stat(path, &st) || !passes(w, path, st.st_ino))
			continue;
		key = st.st_ino;
		ret = bpf_map_update_elem(map, &key, &one, BPF_ANY);
		if (ret)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(ok, cap * sizeof(*ok));
			if (!v) {
				ret = -ENOMEM;
				break;
			}
			ok = v;
		}
		ok[n++] = key;
	}
	closedir(d);
	qsort(ok, n, sizeof(*ok), cmp_id);
	for (more = !ret && !bpf_map_get_next_key(map, NULL, &next); more;) {
		key = next;
		more = !bpf_map_get_next_key(map, &key, &next);
		if (!bsearch(&key, ok, n, sizeof(*ok), cmp_id))
			bpf_map_delete_elem(map, &key);
	}
	free(ok);
	return ret;
}

/* The guards no chain needs any more: detached. */
static void remove_others(const struct want *w)
{
	char path[PATH_MAX + 300];
	struct dirent *de;
	bool keep;
	size_t i;
	DIR *d;

	d = opendir(GUARD_ROOT);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		keep = false;
		for (i = 0; i < w->n_g && !keep; i++)
			keep = !strcmp(strchr(de->d_name, '-') ?
				       strchr(de->d_name, '-') + 1 : "",
				       w->g[i].key);
		if (keep)
			continue;
		snprintf(path, sizeof(path), GUARD_ROOT "/%s", de->d_name);
		cgfw_bpf_unpin(path);
	}
	if (d)
		closedir(d);
	if (!w->n_g)
		rmdir(GUARD_ROOT);
}

CGFW_API int cgfw_guards__sync(struct cgfw_ctx *ctx,
			       struct cgfw_ruleset *const *rs,
			       const bool *in_force, size_t n)
{
	const struct ir_table *t;
	const struct ir_chain *c;
	struct want w = { 0 };
	size_t i;
	int ret = 0, map;

	if (!ctx || (n && (!rs || !in_force)))
		return libcgfw_err(-EINVAL);
	cgfw_ctx_reset(ctx);
	for (i = 0; !ret && i < n; i++) {
		list_for_each_entry(t, &rs[i]->tables, list) {
			list_for_each_entry(c, &t->chains, list) {
				if (ret || !c->base || c->policy != NF_DROP ||
				    !c->cgroup.level)
					continue;
				ret = add_chain(&w, c, in_force[i]);
			}
		}
	}
	if (!ret && w.n_g) {
		ret = cgfw_bpf_ensure_root(ctx);
		if (!ret && mkdir(GUARD_ROOT, 0700) && errno != EEXIST) {
			ret = -errno;
			cgfw_err(ctx, "cannot make %s: %s", GUARD_ROOT,
				 strerror(errno));
		}
	}
	for (i = 0; !ret && i < w.n_g; i++) {
		map = open_guard(ctx, &w.g[i]);
		if (map < 0) {
			ret = map;
			break;
		}
		ret = tell(&w, &w.g[i], map);
		ret = ret ? : attach_guard(ctx, &w.g[i], map);
		close(map);
	}
	if (!ret)
		remove_others(&w);
	if (ret && !ctx->err.len)
		cgfw_err(ctx, "cannot set the guards: %s", strerror(-ret));
	want_release(&w);
	return libcgfw_err(ret);
}
