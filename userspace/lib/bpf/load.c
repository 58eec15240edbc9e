// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Loading, attaching and finding again what the bpf backend installed.
 *
 * Everything of table NAME is pinned under /sys/fs/bpf/cgfw/NAME/:
 *	link-<dir>-<cgroup id>	the bpf_link on the cgroup
 *	count-<dir>-<cgroup id>	its per-CPU counters
 *	set-<set>		the table's named sets
 *	desc			what "cgfw list" shows (an array map)
 * Removing a link's pin detaches its program. A table is replaced program
 * by program with bpf_link_update(): each (cgroup, direction) swaps its
 * program in one step, with no moment without a filter and none with two.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/magic.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>

#include "bpf/table.h"

#define BPFFS "/sys/fs/bpf"
#define PIN_ROOT BPFFS "/cgfw"
#define LOG_SIZE (1u << 22)

int bpf_table_name_ok(struct cgfw_ctx *ctx, const struct cgfw_ruleset *rs,
		      const struct ir_table *t)
{
	if (strchr(t->name, '/') || t->name[0] == '.') {
		ctx_err_at(ctx, &rs->src, &t->loc,
			   "table name '%s' cannot name a directory of pins; rename the table",
			   t->name);
		return -EINVAL;
	}
	return 0;
}

/* Mount bpffs on /sys/fs/bpf if nothing is there, as bpftool does. */
static int ensure_bpffs(struct cgfw_ctx *ctx)
{
	struct statfs sfs;

	if (statfs(BPFFS, &sfs) || sfs.f_type != BPF_FS_MAGIC) {
		mkdir(BPFFS, 0700);
		if (mount("bpf", BPFFS, "bpf", 0, "mode=0700")) {
			int ret = -errno;

			ctx_err(ctx, "no bpf file system at %s, and mounting one failed: %s; mount it (mount -t bpf bpf %s)",
				BPFFS, strerror(errno), BPFFS);
			return ret;
		}
	}
	if (mkdir(PIN_ROOT, 0700) && errno != EEXIST) {
		int ret = -errno;

		ctx_err(ctx, "cannot make %s: %s", PIN_ROOT, strerror(errno));
		return ret;
	}
	return 0;
}

static void table_dir(char *buf, size_t size, const char *table)
{
	snprintf(buf, size, PIN_ROOT "/%s", table);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * BTF for a map whose values start with a bpf_spin_lock (a limit's state,
 * struct limit_state in codegen.c): the verifier wants to see the lock.
 */
static struct btf *spin_lock_btf(uint32_t *key_id, uint32_t *value_id)
{
	struct btf *btf = btf__new_empty();
	int i, u64, lock, val;

	if (!btf)
		return NULL;
	i = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	u64 = btf__add_int(btf, "unsigned long long", 8, 0);
	lock = btf__add_struct(btf, "bpf_spin_lock", 4);
	if (i < 0 || u64 < 0 || lock < 0 ||
	    btf__add_field(btf, "val", i, 0, 0))
		goto err;
	val = btf__add_struct(btf, "cgfw_limit", 24);
	if (val < 0 || btf__add_field(btf, "lock", lock, 0, 0) ||
	    btf__add_field(btf, "pad", i, 32, 0) ||
	    btf__add_field(btf, "tokens", u64, 64, 0) ||
	    btf__add_field(btf, "last", u64, 128, 0) ||
	    btf__load_into_kernel(btf))
		goto err;
	*key_id = i;
	*value_id = val;
	return btf;
err:
	btf__free(btf);
	return NULL;
}

static int create_maps(struct cgfw_ctx *ctx, struct bpf_table *bt)
{
	struct bpf_map_spec *m;
	struct btf *btf;
	size_t i, j;
	int ret;

	for (i = 0; i < bt->n_maps; i++) {
		LIBBPF_OPTS(bpf_map_create_opts, o);

		m = &bt->maps[i];
		if (m->inline_only)
			continue;
		o.map_flags = m->flags;
		btf = NULL;
		if (m->spin_lock) {
			btf = spin_lock_btf(&o.btf_key_type_id,
					    &o.btf_value_type_id);
			if (!btf) {
				ctx_err(ctx, "cannot load the BTF of a limit's state into the kernel");
				return -EINVAL;
			}
			o.btf_fd = btf__fd(btf);
		}
		m->fd = bpf_map_create(m->type, m->name, m->key_size,
				       m->value_size, m->max_entries, &o);
		btf__free(btf);	/* the map holds its own reference */
		if (m->fd < 0) {
			ret = m->fd;
			ctx_err(ctx, "cannot create BPF map %s (%u entries of %u+%u bytes): %s",
				m->name, m->max_entries, m->key_size,
				m->value_size, strerror(-ret));
			return ret;
		}
		for (j = 0; j < m->n_elems; j++) {
			ret = bpf_map_update_elem(
				m->fd, (uint8_t *)m->keys + j * m->key_size,
				(uint8_t *)m->values + j * m->value_size,
				BPF_ANY);
			if (ret) {
				ctx_err(ctx, "cannot fill BPF map %s: %s",
					m->name, strerror(-ret));
				return ret;
			}
		}
	}
	return 0;
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
	ctx_err_at(ctx, &bt->rs->src, &bt->table->loc,
		   "the kernel's verifier refused the %s program of table '%s' for cgroup %s (%s), at instruction %ld, from %s; the end of its log:\n%s",
		   cgfw_dir_str(p->dir), bt->table->name, p->cgroup->path,
		   strerror(-err), insn, rule, tail);
}

static int load_prog(struct cgfw_ctx *ctx, struct bpf_table *bt,
		     struct bpf_prog_spec *p, int *fd)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = p->dir == CGFW_EGRESS ?
			BPF_CGROUP_INET_EGRESS : BPF_CGROUP_INET_INGRESS);
	struct bpf_insn *insns = p->em.insns;
	char *log;
	size_t i;
	int ret;

	/* map indexes become the maps' file descriptors */
	for (i = 0; i < p->em.n; i++) {
		if (insns[i].code == (BPF_LD | BPF_DW | BPF_IMM) &&
		    insns[i].src_reg == BPF_PSEUDO_MAP_FD &&
		    insns[i].imm >= MAP_IDX_BIAS) {
			insns[i].imm = bt->maps[insns[i].imm - MAP_IDX_BIAS].fd;
			i++;
		}
	}
	*fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "cgfw", "GPL", insns,
			    p->em.n, &o);
	if (*fd >= 0)
		return 0;
	/* again with the verifier's log, to say why */
	log = calloc(1, LOG_SIZE);
	if (!log)
		return -ENOMEM;
	o.log_buf = log;
	o.log_size = LOG_SIZE;
	o.log_level = 1;
	*fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "cgfw", "GPL", insns,
			    p->em.n, &o);
	ret = *fd >= 0 ? 0 : *fd;
	if (ret)
		verifier_error(ctx, bt, p, log, ret);
	free(log);
	return ret;
}

/* "link-egress-1234" */
static void prog_key(char *buf, size_t size, const char *what,
		     const struct bpf_prog_spec *p)
{
	snprintf(buf, size, "%s-%s-%" PRIu64, what, cgfw_dir_str(p->dir),
		 p->cgroup->id);
}

/* Replace the pin at @path with @fd (the old object lives until unused). */
static int repin(int fd, const char *path)
{
	unlink(path);
	return bpf_obj_pin(fd, path);
}

static void rule_text(struct strbuf *sb, const struct cgfw_source *src,
		      const struct ir_rule *r)
{
	const char *p = src->text, *e;
	unsigned int line = 1;

	if (!r->loc.line) {
		sb_adds(sb, "(a rule)");
		return;
	}
	while (line < r->loc.line && (p = strchr(p, '\n'))) {
		p++;
		line++;
	}
	if (!p)
		return;
	p += r->loc.col - 1;
	/* to the end of the rule: a newline, or ';' outside braces/quotes */
	for (e = p; *e && *e != '\n' && *e != '#'; e++) {
		if (*e == '"') {
			e = strchrnul(e + 1, '"');
			if (!*e)
				break;
		} else if (*e == ';') {
			break;
		}
	}
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	sb_addn(sb, p, e - p);
}

/*
 * What "cgfw list" shows, kept in the kernel with the programs:
 *	chain NAME base DIR PRIORITY POLICY PATH | chain NAME regular
 *	rule CHAIN TEXT
 *	set NAME ELEMENTS		(a named set: its map is set-NAME)
 *	setdecl NAME DECLARATION	(nft's "set NAME { type ...; }")
 *	slot PROGKEY INDEX CHAIN RULE	(RULE: number in its chain, -1 policy)
 */
static char *describe(const struct bpf_table *bt)
{
	const struct ir_chain *c;
	const struct ir_rule *r;
	const struct bpf_prog_spec *p;
	struct strbuf sb;
	char key[64];
	size_t i, j;
	int n;

	sb_init(&sb);
	list_for_each_entry(c, &bt->table->chains, list) {
		if (c->base)
			sb_addf(&sb, "chain %s base %s %d %u %s\n", c->name,
				cgfw_dir_str(c->dir), c->priority, c->policy,
				c->cgroup.path);
		else
			sb_addf(&sb, "chain %s regular\n", c->name);
		list_for_each_entry(r, &c->rules, list) {
			sb_addf(&sb, "rule %s ", c->name);
			rule_text(&sb, &bt->rs->src, r);
			sb_adds(&sb, "\n");
		}
	}
	for (i = 0; i < bt->n_maps; i++) {
		const char *name;
		char *decl;

		if (!bt->maps[i].set || bt->maps[i].set->anonymous)
			continue;
		name = nftnl_set_get_str(bt->maps[i].set->nl, NFTNL_SET_NAME);
		sb_addf(&sb, "set %s %u\n", name, bt->maps[i].n_elems);
		/* its declaration, to compile elements added later */
		decl = bt->rs->listing ?
		       set_decl_from_listing(bt->rs->listing, bt->table->name,
					     name) : NULL;
		if (decl)
			sb_addf(&sb, "setdecl %s %s\n", name, decl);
		free(decl);
	}
	for (i = 0; i < bt->n_progs; i++) {
		p = &bt->progs[i];
		prog_key(key, sizeof(key), "count", p);
		for (j = 0; j < p->n_slots; j++) {
			n = -1;
			if (p->slots[j].rule) {
				n = 0;
				list_for_each_entry(r, &p->slots[j].chain->rules,
						    list) {
					if (r == p->slots[j].rule)
						break;
					n++;
				}
			}
			sb_addf(&sb, "slot %s %zu %s %d\n", key, j,
				p->slots[j].chain->name, n);
		}
	}
	return sb_detach(&sb);
}

static int pin_desc(struct cgfw_ctx *ctx, const struct bpf_table *bt,
		    const char *dir)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_RDONLY_PROG);
	char *text = describe(bt), path[1024];
	uint32_t zero = 0;
	int fd, ret;

	if (!text)
		return -ENOMEM;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cgfw_desc", 4,
			    strlen(text) + 1, 1, &o);
	ret = fd < 0 ? fd : bpf_map_update_elem(fd, &zero, text, BPF_ANY);
	snprintf(path, sizeof(path), "%s/desc", dir);
	ret = ret ? : repin(fd, path);
	if (ret)
		ctx_err(ctx, "cannot keep the description of table '%s' in %s: %s",
			bt->table->name, path, strerror(-ret));
	if (fd >= 0)
		close(fd);
	free(text);
	return ret;
}

/* Attach @fd for @p: swap it into the existing link, or make one. */
static int attach(struct cgfw_ctx *ctx, const struct bpf_prog_spec *p,
		  const char *dir, int fd, int *old_prog)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	struct bpf_link_info info = { 0 };
	uint32_t len = sizeof(info);
	char key[64], path[1024];
	int link, cg, ret;

	prog_key(key, sizeof(key), "link", p);
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	*old_prog = -1;
	link = bpf_obj_get(path);
	if (link >= 0) {
		if (!bpf_obj_get_info_by_fd(link, &info, &len))
			*old_prog = bpf_prog_get_fd_by_id(info.prog_id);
		ret = bpf_link_update(link, fd, NULL);
		close(link);
		if (ret)
			ctx_err(ctx, "cannot swap the program on cgroup %s: %s",
				p->cgroup->path, strerror(-ret));
		return ret;
	}
	cg = open(p->cgroup->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0) {
		ret = -errno;
		ctx_err(ctx, "cannot open cgroup %s: %s", p->cgroup->path,
			strerror(errno));
		return ret;
	}
	link = bpf_link_create(fd, cg,
			       p->dir == CGFW_EGRESS ? BPF_CGROUP_INET_EGRESS :
						       BPF_CGROUP_INET_INGRESS,
			       &lo);
	close(cg);
	if (link < 0) {
		ctx_err(ctx, "cannot attach to cgroup %s: %s", p->cgroup->path,
			strerror(-link));
		return link;
	}
	ret = bpf_obj_pin(link, path);
	close(link);	/* the pin holds it now (or nothing does) */
	if (ret)
		ctx_err(ctx, "cannot pin %s: %s", path, strerror(-ret));
	return ret;
}

/* Remove pins of @dir that start with @prefix and are not in @keep. */
static void prune(const char *dir, const char *prefix, char **keep,
		  size_t n_keep)
{
	struct dirent *de;
	char path[1024];
	DIR *d = opendir(dir);
	size_t i;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		for (i = 0; i < n_keep; i++)
			if (!strcmp(keep[i], de->d_name))
				break;
		if (i < n_keep)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
}

int bpf_table_apply(struct cgfw_ctx *ctx, struct bpf_table *compiled)
{
	char dir[512], path[1024], **keep = NULL;
	int *fds = NULL, *old = NULL, ret;
	struct bpf_table bt = *compiled;
	const struct ir_table *t = bt.table;
	size_t i, done = 0;

	memset(compiled, 0, sizeof(*compiled));	/* ours to release now */
	fds = calloc(bt.n_progs + 1, sizeof(*fds));
	old = calloc(bt.n_progs + 1, sizeof(*old));
	keep = calloc(2 * bt.n_progs + 1, sizeof(*keep));
	ret = fds && old && keep ? 0 : -ENOMEM;
	for (i = 0; i < bt.n_progs; i++)
		fds[i] = old[i] = -1;

	/* everything is loaded and verified before anything is attached */
	ret = ret ? : ensure_bpffs(ctx);
	ret = ret ? : create_maps(ctx, &bt);
	for (i = 0; !ret && i < bt.n_progs; i++)
		ret = load_prog(ctx, &bt, &bt.progs[i], &fds[i]);
	if (ret)
		goto out;

	table_dir(dir, sizeof(dir), t->name);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		ret = -errno;
		ctx_err(ctx, "cannot make %s: %s", dir, strerror(errno));
		goto out;
	}
	for (done = 0; done < bt.n_progs; done++) {
		ret = attach(ctx, &bt.progs[done], dir, fds[done], &old[done]);
		if (ret)
			goto rollback;
	}
	for (i = 0; i < bt.n_progs; i++) {
		char key[64];

		prog_key(key, sizeof(key), "link", &bt.progs[i]);
		keep[2 * i] = strdup(key);
		prog_key(key, sizeof(key), "count", &bt.progs[i]);
		keep[2 * i + 1] = strdup(key);
		snprintf(path, sizeof(path), "%s/%s", dir, key);
		repin(bt.maps[bt.progs[i].counters_map].fd, path);
	}
	for (i = 0; i < bt.n_maps; i++) {
		if (!bt.maps[i].set || bt.maps[i].set->anonymous)
			continue;
		snprintf(path, sizeof(path), "%s/set-%s", dir,
			 nftnl_set_get_str(bt.maps[i].set->nl,
					   NFTNL_SET_NAME));
		repin(bt.maps[i].fd, path);
	}
	/* cgroups this table no longer binds: their links go */
	prune(dir, "link-", keep, 2 * bt.n_progs);
	prune(dir, "count-", keep, 2 * bt.n_progs);
	ret = pin_desc(ctx, &bt, dir);
	goto out;

rollback:
	/* put the old programs back where they were swapped */
	while (done--) {
		char key[64];
		int link;

		prog_key(key, sizeof(key), "link", &bt.progs[done]);
		snprintf(path, sizeof(path), "%s/%s", dir, key);
		if (old[done] < 0) {
			unlink(path);
			continue;
		}
		link = bpf_obj_get(path);
		if (link >= 0) {
			bpf_link_update(link, old[done], NULL);
			close(link);
		}
	}
out:
	for (i = 0; fds && i < bt.n_progs; i++) {
		close_fd(&fds[i]);
		close_fd(&old[i]);
	}
	for (i = 0; i < bt.n_maps; i++)
		close_fd(&bt.maps[i].fd);
	for (i = 0; keep && i < 2 * bt.n_progs; i++)
		free(keep[i]);
	free(keep);
	free(fds);
	free(old);
	bpf_table_release(&bt);
	return ret;
}

int bpf_table_pin(struct cgfw_ctx *ctx, struct bpf_table *bt, const char *dir,
		  struct strbuf *pinned)
{
	char path[1024];
	size_t i;
	int fd, ret;

	ret = create_maps(ctx, bt);
	for (i = 0; !ret && i < bt->n_progs; i++) {
		ret = load_prog(ctx, bt, &bt->progs[i], &fd);
		if (ret)
			break;
		snprintf(path, sizeof(path), "%s/%s-%s-%llu", dir,
			 bt->table->name, cgfw_dir_str(bt->progs[i].dir),
			 (unsigned long long)bt->progs[i].cgroup->id);
		ret = bpf_obj_pin(fd, path);
		if (ret)
			ctx_err(ctx, "cannot pin %s: %s (is %s on a bpf file system?)",
				path, strerror(-ret), dir);
		else
			sb_addf(pinned, "%s\n", path);
		close(fd);
	}
	for (i = 0; i < bt->n_maps; i++)
		close_fd(&bt->maps[i].fd);
	return ret;
}

static int remove_dir(const char *dir)
{
	struct dirent *de;
	char path[1024];
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	return rmdir(dir) ? -errno : 0;
}

int bpf_table_remove(struct cgfw_ctx *ctx, const char *name)
{
	struct dirent *de;
	char dir[512];
	DIR *d;
	int ret = 0;

	if (name) {
		if (strchr(name, '/') || name[0] == '.')
			return -ENOENT;
		table_dir(dir, sizeof(dir), name);
		ret = remove_dir(dir);
		if (ret && ret != -ENOENT)
			ctx_err(ctx, "cannot remove %s: %s", dir,
				strerror(-ret));
		return ret;
	}
	d = opendir(PIN_ROOT);
	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		table_dir(dir, sizeof(dir), de->d_name);
		ret = remove_dir(dir);
		if (ret)
			ctx_err(ctx, "cannot remove %s: %s", dir,
				strerror(-ret));
	}
	closedir(d);
	return ret;
}

/* ---- listing ---- */

static char *read_desc(const char *dir)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info), zero = 0;
	char path[1024], *text = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/desc", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return NULL;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		text = calloc(1, info.value_size + 1);
		if (text && bpf_map_lookup_elem(fd, &zero, text)) {
			free(text);
			text = NULL;
		}
	}
	close(fd);
	return text;
}

/* Packets and bytes of one slot of a pinned per-CPU counters map. */
static int read_slot(const char *dir, const char *key, uint32_t slot,
		     uint64_t *packets, uint64_t *bytes)
{
	int ncpu = libbpf_num_possible_cpus(), fd, i, ret;
	char path[1024];
	uint64_t *v;

	if (ncpu <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return fd;
	v = calloc(ncpu, 16);
	ret = v ? bpf_map_lookup_elem(fd, &slot, v) : -ENOMEM;
	for (i = 0; !ret && i < ncpu; i++) {
		*packets += v[2 * i];
		*bytes += v[2 * i + 1];
	}
	free(v);
	close(fd);
	return ret;
}

/* Elements in a pinned set map now (updates change them). */
static unsigned int count_elems(const char *dir, const char *set)
{
	char path[1024], key[64], next[64];
	unsigned int n = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/set-%s", dir, set);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (!bpf_map_get_next_key(fd, NULL, key)) {
		n = 1;
		while (!bpf_map_get_next_key(fd, key, next)) {
			memcpy(key, next, sizeof(key));
			n++;
		}
	}
	close(fd);
	return n;
}

int bpf_set_decl(struct cgfw_ctx *ctx, const char *table, const char *set,
		 char **decl)
{
	char dir[512], head[300], *desc, *p, *e;

	(void)ctx;
	if (strchr(table, '/') || table[0] == '.')
		return -ENOENT;
	table_dir(dir, sizeof(dir), table);
	desc = read_desc(dir);
	if (!desc)
		return -ENOENT;
	snprintf(head, sizeof(head), "\nsetdecl %s ", set);
	p = strstr(desc, head);	/* never the first line: "chain" or "set" is */
	if (!p) {
		free(desc);
		return -ENOENT;
	}
	p += strlen(head);
	e = strchrnul(p, '\n');
	*decl = strndup(p, e - p);
	free(desc);
	return *decl ? 0 : -ENOMEM;
}

/* Elements of @s (add or delete) into or out of the pinned map. */
static int update_map(struct cgfw_ctx *ctx, const struct upd_cmds *u,
		      const struct upd_set *s, int fd, struct nftnl_set *elems,
		      bool del)
{
	struct ir_set set = { .nl = elems };
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info), i;
	struct bpf_map_spec m;
	int ret;

	ret = bpf_set_spec(ctx, &u->src, s->loc, NULL, &set, &m);
	if (!ret && (bpf_obj_get_info_by_fd(fd, &info, &len) ||
		     info.key_size != m.key_size ||
		     info.value_size != m.value_size)) {
		ctx_err_at(ctx, &u->src, s->loc,
			   "the map of set '%s' does not fit these elements; re-apply table '%s'",
			   s->set, s->table);
		ret = -EINVAL;
	}
	for (i = 0; !ret && i < m.n_elems; i++) {
		void *k = (uint8_t *)m.keys + i * m.key_size;

		if (del) {
			ret = bpf_map_delete_elem(fd, k);
			if (ret == -ENOENT)
				ret = 0;
			continue;
		}
		ret = bpf_map_update_elem(fd, k,
					  (uint8_t *)m.values + i * m.value_size,
					  BPF_ANY);
		if (ret == -E2BIG)
			ctx_err_at(ctx, &u->src, s->loc,
				   "set '%s' is full (%u entries); re-apply table '%s' to make room",
				   s->set, info.max_entries, s->table);
		else if (ret)
			ctx_err_at(ctx, &u->src, s->loc,
				   "cannot update the map of set '%s': %s",
				   s->set, strerror(-ret));
	}
	free(m.keys);
	free(m.values);
	return ret;
}

/*
 * Deletions, then additions, map by map: each element goes in or out on
 * its own (a BPF map has no transactions); the programs stay as they are.
 */
int bpf_update(struct cgfw_ctx *ctx, const struct upd_cmds *u)
{
	const struct upd_set *s;
	char dir[512], path[1024];
	bool held = false;
	struct stat st;
	int fd, ret = 0;

	list_for_each_entry(s, &u->sets, list) {
		if (strchr(s->table, '/') || s->table[0] == '.')
			continue;
		table_dir(dir, sizeof(dir), s->table);
		if (stat(dir, &st))
			continue;
		held = true;
		snprintf(path, sizeof(path), "%s/set-%s", dir, s->set);
		fd = bpf_obj_get(path);
		if (fd < 0) {
			ctx_err_at(ctx, &u->src, s->loc,
				   "table '%s' has no named set '%s' in the bpf backend",
				   s->table, s->set);
			return -EINVAL;
		}
		if (s->del)
			ret = update_map(ctx, u, s, fd, s->del, true);
		if (!ret && s->add)
			ret = update_map(ctx, u, s, fd, s->add, false);
		close(fd);
		if (ret)
			return ret;
	}
	return held ? 0 : -ENOENT;
}

struct desc_chain {
	char *name;
	char **rules;
	uint64_t (*counts)[2];	/* per rule, and [n_rules] the policy */
	size_t n_rules;
	bool has_policy;
};

/*
 * The listing of one table as nft would print it: rules with their
 * counters filled in, and the policy as the last rule of a bound chain.
 */
static int list_table(const char *name, const char *dir, struct inst_table *t)
{
	char *desc = read_desc(dir), *line, *save = NULL, *p;
	struct desc_chain *chains = NULL, *c = NULL;
	size_t n_chains = 0, i, j;
	struct strbuf sb, sets;
	int ret = 0;

	if (!desc)
		return -ENOENT;
	memset(t, 0, sizeof(*t));
	sb_init(&sets);
	t->backend = "bpf";
	t->policy_rule = true;	/* its counter, printed as a rule */
	t->name = strdup(name);
	t->kernel_name = strdup(dir);
	for (line = strtok_r(desc, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "chain ", 6)) {
			char cname[256], kind[16], d[16], path[4096];
			int prio;
			unsigned int pol;
			void *v;

			if (sscanf(line, "chain %255s %15s", cname, kind) != 2)
				continue;
			v = realloc(chains, (n_chains + 1) * sizeof(*chains));
			if (!v) {
				ret = -ENOMEM;
				break;
			}
			chains = v;
			c = &chains[n_chains++];
			memset(c, 0, sizeof(*c));
			c->name = strdup(cname);
			if (strcmp(kind, "base") ||
			    sscanf(line, "chain %*s base %15s %d %u %4095[^\n]",
				   d, &prio, &pol, path) != 4)
				continue;
			c->has_policy = true;
			v = realloc(t->chains, (t->n_chains + 1) *
						       sizeof(*t->chains));
			if (!v) {
				ret = -ENOMEM;
				break;
			}
			t->chains = v;
			t->chains[t->n_chains++] = (struct inst_chain){
				.name = strdup(cname),
				.base = true,
				.dir = strcmp(d, "egress") ? CGFW_INGRESS :
							     CGFW_EGRESS,
				.cgroup_path = strdup(path),
				.priority = prio,
				.policy = pol,
			};
		} else if (!strncmp(line, "rule ", 5) && c) {
			void *v = realloc(c->rules, (c->n_rules + 1) *
							    sizeof(*c->rules));

			if (!v) {
				ret = -ENOMEM;
				break;
			}
			c->rules = v;
			p = strchr(line + 5, ' ');
			c->rules[c->n_rules++] = strdup(p ? p + 1 : "");
		} else if (!strncmp(line, "set ", 4)) {
			char sname[256];
			unsigned int n;

			if (sscanf(line, "set %255s %u", sname, &n) == 2)
				sb_addf(&sets, "\tset %s {\n\t\t# %u elements, map %s/set-%s\n\t}\n",
					sname, count_elems(dir, sname), dir,
					sname);
		} else if (!strncmp(line, "slot ", 5)) {
			char key[128], cname[256];
			unsigned int slot;
			int rule;
			uint64_t pk = 0, by = 0;

			if (sscanf(line, "slot %127s %u %255s %d", key, &slot,
				   cname, &rule) != 4)
				continue;
			for (i = 0; i < n_chains; i++)
				if (!strcmp(chains[i].name, cname))
					break;
			if (i == n_chains || read_slot(dir, key, slot, &pk, &by))
				continue;
			if (!chains[i].counts) {
				chains[i].counts = calloc(chains[i].n_rules + 1,
							  sizeof(*chains[i].counts));
				if (!chains[i].counts)
					continue;
			}
			j = rule < 0 ? chains[i].n_rules : (size_t)rule;
			if (j <= chains[i].n_rules) {
				chains[i].counts[j][0] += pk;
				chains[i].counts[j][1] += by;
			}
		}
	}

	/* nft's shape: "table ... {", chains, their rules, "}" */
	sb_init(&sb);
	sb_addf(&sb, "table bpf %s {\n", name);
	if (sets.buf)
		sb_adds(&sb, sets.buf);
	sb_release(&sets);
	for (i = 0; i < n_chains; i++) {
		c = &chains[i];
		sb_addf(&sb, "\tchain %s {\n", c->name);
		for (j = 0; j < c->n_rules; j++) {
			char *r = c->rules[j], *cnt = strstr(r, "counter");

			/* a rule no program reaches counts nothing */
			if (cnt && (cnt == r || cnt[-1] == ' ') &&
			    (!cnt[7] || cnt[7] == ' '))
				sb_addf(&sb, "\t\t%.*scounter packets %" PRIu64
					" bytes %" PRIu64 "%s\n",
					(int)(cnt - r), r,
					c->counts ? c->counts[j][0] : 0,
					c->counts ? c->counts[j][1] : 0,
					cnt + 7);
			else
				sb_addf(&sb, "\t\t%s\n", r);
		}
		if (c->has_policy)
			sb_addf(&sb, "\t\tcounter packets %" PRIu64
				" bytes %" PRIu64 " policy\n",
				c->counts ? c->counts[c->n_rules][0] : 0,
				c->counts ? c->counts[c->n_rules][1] : 0);
		sb_adds(&sb, "\t}\n");
	}
	sb_adds(&sb, "}\n");
	t->nft_text = sb_detach(&sb);
	if (!t->name || !t->kernel_name || !t->nft_text)
		ret = -ENOMEM;

	for (i = 0; i < n_chains; i++) {
		for (j = 0; j < chains[i].n_rules; j++)
			free(chains[i].rules[j]);
		free(chains[i].rules);
		free(chains[i].counts);
		free(chains[i].name);
	}
	free(chains);
	free(desc);
	return ret;
}

int bpf_list(struct cgfw_ctx *ctx, const char *name, struct cgfw_listing *l)
{
	struct inst_table t;
	struct dirent *de;
	char dir[512];
	DIR *d = opendir(PIN_ROOT);
	int ret = 0;

	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (name && strcmp(name, de->d_name)))
			continue;
		table_dir(dir, sizeof(dir), de->d_name);
		ret = list_table(de->d_name, dir, &t);
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		ret = ret ? : listing_add(l, &t);
		if (ret) {
			inst_table_release(&t);
			ctx_err(ctx, "cannot read the pins of %s: %s", dir,
				strerror(-ret));
		}
	}
	closedir(d);
	return ret;
}
