// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the bpf backend installs, in bpffs. Table NAME is the directory
 * /sys/fs/bpf/cgfw/NAME:
 *
 *	link-<dir>-<cgroup id>	a bpf_link of a program on a cgroup; removing
 *				the pin detaches it
 *	_next/prog-<dir>-<id>	the next generation, during an apply
 *	_next/_gen-<gen>-<nft>	the apply it is of: its generation, and its
 *				nft family (0: none)
 *	_prev/prog-<dir>-<id>	what a link ran before the apply switched it
 *
 * and in /sys/fs/bpf/cgfw (no table's name begins with '_'):
 *
 *	_commit-<gen>		while the apply of that generation commits
 *	_gone-<table>		a table that a delete has set aside: its
 *				links still attached until it is removed
 *	_flush			while a flush sets tables aside
 *
 * Everything else a generation has (maps, counters, its description) is
 * reached from its programs, so whatever runs on a cgroup is described by
 * what it carries (bpf/desc.h). An apply loads the whole new generation,
 * pins its programs in a directory of its own and renames that to _next
 * (one step), then swaps each link to its new program with
 * bpf_link_update() (each link in one step, never without a program; the
 * old program kept in _prev), and once the whole apply has taken effect
 * removes the links the table no longer has, _prev and last _next. Until
 * then it can be put back as it was (an apply with nft too whose
 * nf_tables part the kernel refused). If it is killed on the way, _next
 * says what it was doing, and the next cgfw command finishes it if the
 * mark of its commit is there (and its nft part took effect), else puts
 * it back (backend.c). A directory goes in one step, renamed before it is
 * emptied: a part of _next would read as a generation without the
 * programs that are gone, and finishing it would detach their links.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/magic.h>

#include "base/lock.h"
#include "bpf/desc.h"
#include "bpf/table.h"

/* bpffs takes no names with a dot */
#define NEXT "_next"
#define PREV "_prev"
#define STAGE "_stage-"
#define GEN "_gen-"
#define COMMIT "_commit-"
#define GONE "_gone-"
#define FLUSH CGFW_PIN_ROOT "/_flush"

static void table_dir(char *buf, size_t size, const char *table)
{
	snprintf(buf, size, CGFW_PIN_ROOT "/%s", table);
}

void cgfw_bpf_key(char *buf, size_t size, const char *what, enum cgfw_dir dir,
		  uint64_t cgid)
{
	snprintf(buf, size, "%s-%s-%" PRIu64, what, cgfw_dir_str(dir), cgid);
}

/* This process in the mount namespace of PID 1 (of its pid namespace) */
static bool in_init_mntns(void)
{
	char self[64] = "", init[64] = "";

	return readlink("/proc/self/ns/mnt", self, sizeof(self) - 1) > 0 &&
	       readlink("/proc/1/ns/mnt", init, sizeof(init) - 1) > 0 &&
	       !strcmp(self, init);
}

/*
 * Mount bpffs on /sys/fs/bpf if nothing is there, as bpftool does; but
 * only where the machine sees it: one mounted in a mount namespace of its
 * own (unshare -m, a unit's ProtectSystem=) would take the pins, and so
 * the tables, with it when that namespace ends.
 */
int cgfw_bpf_ensure_root(struct cgfw_ctx *ctx)
{
	struct statfs sfs;
	int ret;

	if (statfs(CGFW_BPFFS, &sfs) || sfs.f_type != BPF_FS_MAGIC) {
		if (!in_init_mntns()) {
			cgfw_err(ctx, "no bpf file system at %s in this mount namespace, and one mounted here would vanish with the namespace, and the tables with it; mount one where init sees it (mount -t bpf -o mode=0700 bpf %s) and run the command again",
				 CGFW_BPFFS, CGFW_BPFFS);
			return -ENOENT;
		}
		mkdir(CGFW_BPFFS, 0700);
		if (mount("bpf", CGFW_BPFFS, "bpf", 0, "mode=0700")) {
			ret = -errno;
			cgfw_err(ctx, "no bpf file system at %s, and mounting one failed: %s; mount one (mount -t bpf none %s)",
				 CGFW_BPFFS, strerror(errno), CGFW_BPFFS);
			return ret;
		}
	}
	return cgfw_private_dir(ctx, CGFW_PIN_ROOT);
}

/*
 * Remove the pin @path. A link is detached first: the last reference to
 * a link dropped by unlink() is put by a kernel work item a moment later,
 * and until then its program would still run; bpf_link_detach() takes it
 * off its cgroup before this returns.
 */
void cgfw_bpf_unpin(const char *path)
{
	int fd = bpf_obj_get(path);

	if (fd >= 0) {
		bpf_link_detach(fd);	/* EINVAL: not a link */
		close(fd);
	}
	unlink(path);
}

/* Remove @dir and what it holds (pins and directories of pins). */
static int remove_tree(const char *dir)
{
	struct dirent *de;
	char path[PATH_MAX];
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR)
			remove_tree(path);
		else if (!strncmp(de->d_name, "link-", 5))
			cgfw_bpf_unpin(path);
		else
			unlink(path);
	}
	closedir(d);
	return rmdir(dir) ? -errno : 0;
}

/* Remove @dir/@sub whole: renamed first, to a name tidy() removes. */
static void remove_whole(const char *dir, const char *sub)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 48];

	snprintf(from, sizeof(from), "%s/%s", dir, sub);
	snprintf(to, sizeof(to), "%s/" STAGE "%d%s", dir, (int)getpid(), sub);
	remove_tree(to);
	if (!rename(from, to))
		remove_tree(to);
}

int cgfw_bpf_stage(struct cgfw_ctx *ctx, const struct bpf_table *bt,
		   const struct cgfw_apply_info *ai)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 32], next[PATH_MAX + 8], key[64];
	char path[PATH_MAX + 128];
	const struct bpf_prog_spec *p;
	size_t i;
	int ret;

	table_dir(dir, sizeof(dir), bt->table->name);
	snprintf(tmp, sizeof(tmp), "%s/" STAGE "%d", dir, (int)getpid());
	snprintf(next, sizeof(next), "%s/" NEXT, dir);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		ret = -errno;
		cgfw_err(ctx, "cannot make %s: %s", dir, strerror(errno));
		return ret;
	}
	remove_tree(tmp);
	if (mkdir(tmp, 0700)) {
		ret = -errno;
		cgfw_err(ctx, "cannot make %s: %s", tmp, strerror(errno));
		return ret;
	}
	/* which apply this is, also if it has no program */
	snprintf(path, sizeof(path), "%s/" GEN "%" PRIu64 "-%u", tmp, ai->gen,
		 ai->nft_family);
	if (mkdir(path, 0700)) {
		ret = -errno;
		cgfw_err(ctx, "cannot make %s: %s", path, strerror(errno));
		remove_tree(tmp);
		return ret;
	}
	for (i = 0; i < bt->n_progs; i++) {
		p = &bt->progs[i];
		cgfw_bpf_key(key, sizeof(key), "prog", p->dir, p->cgroup->id);
		snprintf(path, sizeof(path), "%s/%s", tmp, key);
		ret = bpf_obj_pin(p->fd, path);
		if (ret) {
			cgfw_err(ctx, "cannot pin %s: %s", path, strerror(-ret));
			remove_tree(tmp);
			return ret;
		}
	}
	/* all or nothing: the generation appears whole */
	if (rename(tmp, next)) {
		ret = -errno;
		cgfw_err(ctx, "cannot make %s the next generation: %s", next,
			 strerror(errno));
		remove_tree(tmp);
		return ret;
	}
	return 0;
}

bool cgfw_bpf_staged(const char *name)
{
	char next[PATH_MAX];
	struct stat st;

	snprintf(next, sizeof(next), CGFW_PIN_ROOT "/%s/" NEXT, name);
	return !stat(next, &st);
}

/*
 * The names in the root that begin with @prefix, without it (a malloc()ed
 * NULL-ended list); if @staged, only tables with a staged generation.
 */
static char **root_names(const char *prefix, bool staged)
{
	DIR *d = opendir(CGFW_PIN_ROOT);
	char **v = calloc(1, sizeof(*v)), **nv;
	size_t n = 0, len = strlen(prefix);
	struct dirent *de;

	while (d && v && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strncmp(de->d_name, prefix, len) ||
		    (staged && !cgfw_bpf_staged(de->d_name)))
			continue;
		nv = realloc(v, (n + 2) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n] = strdup(de->d_name + len);
		v[n + 1] = NULL;
		if (v[n])
			n++;
	}
	if (d)
		closedir(d);
	return v;
}

char **cgfw_bpf_staged_tables(void)
{
	return root_names("", true);
}

int cgfw_bpf_pending(struct cgfw_ctx *ctx, const char *name,
		     struct cgfw_apply_info *ai, bool *begun)
{
	unsigned long long gen;
	char path[PATH_MAX];
	struct dirent *de;
	unsigned int nft;
	DIR *dir;

	(void)ctx;
	snprintf(path, sizeof(path), CGFW_PIN_ROOT "/%s/" NEXT, name);
	dir = opendir(path);
	if (!dir)
		return -ENOENT;
	/* without its _gen- (not made by this cgfw): an apply never begun */
	*ai = (struct cgfw_apply_info){ .bpf = true };
	while ((de = readdir(dir))) {
		if (sscanf(de->d_name, GEN "%llu-%u", &gen, &nft) == 2) {
			ai->gen = gen;
			ai->nft_family = nft;
			break;
		}
	}
	closedir(dir);
	*begun = ai->gen && cgfw_bpf_marked(ai->gen);
	return 0;
}

/* A half-made stage of a killed apply, and an empty table directory. */
static void tidy(const char *dir)
{
	char path[PATH_MAX + 256];
	struct dirent *de;
	bool empty = true;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strncmp(de->d_name, STAGE, strlen(STAGE))) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			remove_tree(path);
			continue;
		}
		empty = false;
	}
	closedir(d);
	if (empty)
		rmdir(dir);
}

void cgfw_bpf_unstage(const char *name)
{
	char dir[PATH_MAX];

	table_dir(dir, sizeof(dir), name);
	/* _next last: until it goes, the apply is not over */
	remove_whole(dir, PREV);
	remove_whole(dir, NEXT);
	tidy(dir);
}

/* ---- the mark of an apply that commits ---- */

static void commit_mark(char *buf, size_t size, uint64_t gen)
{
	snprintf(buf, size, CGFW_PIN_ROOT "/" COMMIT "%" PRIu64, gen);
}

/* Remove what the root holds under names that begin with @prefix. */
static void remove_prefixed(const char *prefix)
{
	char path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d = opendir(CGFW_PIN_ROOT);

	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), CGFW_PIN_ROOT "/%s", de->d_name);
		remove_tree(path);
	}
	if (d)
		closedir(d);
}

int cgfw_bpf_mark(struct cgfw_ctx *ctx, uint64_t gen)
{
	char path[PATH_MAX];
	int ret;

	remove_prefixed(COMMIT);	/* one is left by a kill after its apply */
	commit_mark(path, sizeof(path), gen);
	if (mkdir(path, 0700) && errno != EEXIST) {
		ret = -errno;
		cgfw_err(ctx, "cannot make %s: %s", path, strerror(errno));
		return ret;
	}
	return 0;
}

bool cgfw_bpf_marked(uint64_t gen)
{
	char path[PATH_MAX];
	struct stat st;

	commit_mark(path, sizeof(path), gen);
	return !stat(path, &st);
}

void cgfw_bpf_unmark(void)
{
	char **names = cgfw_bpf_staged_tables();
	bool none = names && !names[0];
	size_t i;

	for (i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
	if (none)
		remove_prefixed(COMMIT);
}

/* ---- switching the links ---- */

static uint32_t prog_id_of_link(int link)
{
	struct bpf_link_info info = { 0 };
	uint32_t len = sizeof(info);

	return bpf_obj_get_info_by_fd(link, &info, &len) ? 0 : info.prog_id;
}

/* Detached from its cgroup (bpftool link detach, or the cgroup gone)? */
static bool link_severed(int link)
{
	struct bpf_link_info info = { 0 };
	uint32_t len = sizeof(info);

	return !bpf_obj_get_info_by_fd(link, &info, &len) &&
	       info.type == BPF_LINK_TYPE_CGROUP && !info.cgroup.cgroup_id;
}

static uint32_t prog_id(int fd)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/*
 * The cgroup of a staged program, opened by the path it was bound by and
 * checked to be the cgroup of that id: -ESTALE if another one is there.
 */
static int open_cgroup(struct cgfw_ctx *ctx, int prog, enum cgfw_dir dir,
		       uint64_t cgid)
{
	struct desc d;
	const char *path = NULL;
	struct stat st;
	size_t i;
	int fd, ret;

	ret = cgfw_bpf_prog_desc(prog, &d);
	if (ret) {
		cgfw_err(ctx, "cannot read the description of a staged program: %s",
			 strerror(-ret));
		return ret;
	}
	for (i = 0; i < d.n_chains && !path; i++)
		if (d.chains[i].base && d.chains[i].dir == dir &&
		    d.chains[i].cgroup_id == cgid)
			path = d.chains[i].cgroup_path;
	fd = path ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) :
		    -(errno = ENOENT);
	if (fd >= 0 && (fstat(fd, &st) || st.st_ino != cgid)) {
		close(fd);
		fd = -(errno = ESTALE);
	}
	if (fd < 0) {
		ret = -errno;
		cgfw_err(ctx, "cannot attach to cgroup %s (id %" PRIu64 "): %s",
			 path ? path : "?", cgid,
			 ret == -ESTALE ? "it was removed, and another cgroup is at its path now" :
			 strerror(-ret));
	}
	cgfw_desc_release(&d);
	return fd < 0 ? -errno : fd;
}

/*
 * Attach the staged program prog-KEY through link-KEY of @dir: swap it into
 * the link (the link's program first pinned as _prev/prog-KEY, unless it
 * is there from an earlier try), or make the link (also in place of one
 * that another tool detached).
 */
static int attach_one(struct cgfw_ctx *ctx, const char *dir,
		      const char *name)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	char path[PATH_MAX + 512], prev[PATH_MAX + 512], key[64], dir_s[16];
	unsigned long long cgid;
	int prog, old, link, cg, ret = 0;
	struct stat st;
	enum cgfw_dir d;
	uint32_t old_id;

	if (sscanf(name, "prog-%15[a-z]-%llu", dir_s, &cgid) != 2)
		return 0;	/* not a program */
	d = strcmp(dir_s, "egress") ? CGFW_INGRESS : CGFW_EGRESS;
	snprintf(path, sizeof(path), "%s/" NEXT "/%s", dir, name);
	prog = bpf_obj_get(path);
	if (prog < 0) {
		cgfw_err(ctx, "cannot open %s: %s", path, strerror(-prog));
		return prog;
	}
	cgfw_bpf_key(key, sizeof(key), "link", d, cgid);
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	snprintf(prev, sizeof(prev), "%s/" PREV "/%s", dir, name);
	link = bpf_obj_get(path);
	if (link >= 0 && link_severed(link)) {
		/* a program that runs nowhere: attached again, by a new link */
		close(link);
		unlink(path);
		link = -1;
	}
	if (link >= 0) {
		old_id = prog_id_of_link(link);
		if (old_id != prog_id(prog)) {
			/* the program it had, kept to put it back */
			old = stat(prev, &st) && old_id ?
			      bpf_prog_get_fd_by_id(old_id) : -1;
			if (old >= 0) {
				ret = bpf_obj_pin(old, prev);
				close(old);
			}
			ret = ret ? : bpf_link_update(link, prog, NULL);
			if (ret)
				cgfw_err(ctx, "cannot swap the program on cgroup id %llu: %s",
					 cgid, strerror(-ret));
		}
		close(link);
		close(prog);
		return ret;
	}
	cg = open_cgroup(ctx, prog, d, cgid);
	if (cg < 0) {
		close(prog);
		return cg;
	}
	link = bpf_link_create(prog, cg, d == CGFW_EGRESS ?
			       BPF_CGROUP_INET_EGRESS : BPF_CGROUP_INET_INGRESS,
			       &lo);
	close(cg);
	close(prog);
	if (link < 0) {
		cgfw_err(ctx, "cannot attach to cgroup id %llu: %s", cgid,
			 strerror(-link));
		return link;
	}
	ret = bpf_obj_pin(link, path);
	close(link);	/* the pin holds it now (or nothing does) */
	if (ret)
		cgfw_err(ctx, "cannot pin %s: %s", path, strerror(-ret));
	return ret;
}

/* Links and old pins of @dir that the staged generation does not have. */
static void prune(const char *dir)
{
	char path[PATH_MAX + 256], prog[PATH_MAX + 256];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_name[0] == '_')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!strncmp(de->d_name, "link-", 5)) {
			snprintf(prog, sizeof(prog), "%s/" NEXT "/prog-%s", dir,
				 de->d_name + 5);
			if (!stat(prog, &st))
				continue;
		}
		/* a link the table no longer has, or a pin of old cgfw */
		cgfw_bpf_unpin(path);
	}
	closedir(d);
}

/*
 * Put a link back as it was before the switch: to the program kept in
 * _prev, or, if it had none there and runs the staged program, it was made
 * by the switch: unpinned (detached).
 */
static void unswitch_one(const char *dir, const char *link_name)
{
	char path[PATH_MAX + 256], prev[PATH_MAX + 256], next[PATH_MAX + 256];
	int link, prog;

	snprintf(path, sizeof(path), "%s/%s", dir, link_name);
	snprintf(prev, sizeof(prev), "%s/" PREV "/prog-%s", dir, link_name + 5);
	snprintf(next, sizeof(next), "%s/" NEXT "/prog-%s", dir, link_name + 5);
	link = bpf_obj_get(path);
	if (link < 0)
		return;
	prog = bpf_obj_get(prev);
	if (prog >= 0) {
		bpf_link_update(link, prog, NULL);
		close(prog);
	} else {
		prog = bpf_obj_get(next);
		if (prog >= 0 && prog_id_of_link(link) == prog_id(prog)) {
			bpf_link_detach(link);
			unlink(path);
		}
		if (prog >= 0)
			close(prog);
	}
	close(link);
}

void cgfw_bpf_unswitch(const char *name)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	table_dir(dir, sizeof(dir), name);
	d = opendir(dir);
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "link-", 5))
			unswitch_one(dir, de->d_name);
	if (d)
		closedir(d);
	cgfw_bpf_unstage(name);
}

int cgfw_bpf_switch(struct cgfw_ctx *ctx, const char *name)
{
	char dir[PATH_MAX], next[PATH_MAX + 8], prev[PATH_MAX + 8];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	table_dir(dir, sizeof(dir), name);
	snprintf(next, sizeof(next), "%s/" NEXT, dir);
	snprintf(prev, sizeof(prev), "%s/" PREV, dir);
	if (mkdir(prev, 0700) && errno != EEXIST) {
		ret = -errno;
		cgfw_err(ctx, "cannot make %s: %s", prev, strerror(errno));
		return ret;
	}
	d = opendir(next);
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d)))
		if (!strncmp(de->d_name, "prog-", 5))
			ret = attach_one(ctx, dir, de->d_name);
	closedir(d);
	return ret;
}

void cgfw_bpf_settle(const char *name)
{
	char dir[PATH_MAX];

	table_dir(dir, sizeof(dir), name);
	prune(dir);
	cgfw_bpf_unstage(name);
}

/* ---- removing, pinning ---- */

/* An apply's removal of a table it does not have (a delete sets aside). */
int cgfw_bpf_remove(struct cgfw_ctx *ctx, const char *name)
{
	char dir[PATH_MAX];
	int ret;

	if (!name || strchr(name, '/') || name[0] == '.' || name[0] == '_')
		return -ENOENT;
	table_dir(dir, sizeof(dir), name);
	ret = remove_tree(dir);
	if (ret && ret != -ENOENT)
		cgfw_err(ctx, "cannot remove %s: %s", dir, strerror(-ret));
	return ret;
}

static int set_aside_one(struct cgfw_ctx *ctx, const char *name)
{
	char dir[PATH_MAX], gone[PATH_MAX + 8];
	int ret;

	table_dir(dir, sizeof(dir), name);
	snprintf(gone, sizeof(gone), CGFW_PIN_ROOT "/" GONE "%s", name);
	remove_tree(gone);
	if (!rename(dir, gone))
		return 0;
	ret = -errno;
	if (ret != -ENOENT)
		cgfw_err(ctx, "cannot set %s aside to remove it: %s", dir,
			 strerror(-ret));
	return ret;
}

int cgfw_bpf_set_aside(struct cgfw_ctx *ctx, const char *name)
{
	struct dirent *de;
	DIR *d;
	int ret = -ENOENT, r;

	if (name)
		return strchr(name, '/') || name[0] == '.' || name[0] == '_' ?
		       -ENOENT : set_aside_one(ctx, name);
	/* a flush: its mark first, so that a kill is finished whole */
	if (mkdir(FLUSH, 0700) && errno != EEXIST) {
		if (errno == ENOENT)
			return -ENOENT;	/* no table at all */
		ret = -errno;
		cgfw_err(ctx, "cannot make %s: %s", FLUSH, strerror(errno));
		return ret;
	}
	d = opendir(CGFW_PIN_ROOT);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_name[0] == '_')
			continue;
		r = set_aside_one(ctx, de->d_name);
		if (r && r != -ENOENT) {
			ret = r;
			break;
		}
		ret = 0;
	}
	if (d)
		closedir(d);
	return ret;
}

char **cgfw_bpf_set_aside_tables(bool *all)
{
	struct stat st;

	*all = !stat(FLUSH, &st);
	return root_names(GONE, false);
}

void cgfw_bpf_bury(void)
{
	remove_prefixed(GONE);
	rmdir(FLUSH);
}

int cgfw_bpf_pin_progs(struct cgfw_ctx *ctx, const struct bpf_table *bt,
		       const char *dir, struct strbuf *pinned)
{
	char path[PATH_MAX];
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < bt->n_progs; i++) {
		snprintf(path, sizeof(path), "%s/%s-%s-%" PRIu64, dir,
			 bt->table->name, cgfw_dir_str(bt->progs[i].dir),
			 bt->progs[i].cgroup->id);
		ret = bpf_obj_pin(bt->progs[i].fd, path);
		if (ret)
			cgfw_err(ctx, "cannot pin %s: %s (is %s on a bpf file system?)",
				 path, strerror(-ret), dir);
		else
			cgfw_sb_addf(pinned, "%s\n", path);
	}
	return ret;
}
