// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgfw daemon: the rules directory (one file a table or more, *.nft) is
 * the desired state; the daemon makes the kernel hold it, and keeps it
 * so as cgroups come and go and as files are edited, and when other
 * programs change nf_tables.
 *
 * Files. The directory is read again on every change in it (inotify):
 * a file whose text changed is compiled and its tables applied, each
 * apply one transaction; one that does not compile, or that declares a
 * table another file has, keeps what was applied from it before (said,
 * with the place). A file that is gone keeps its tables for SETTLE_MS: an
 * editor's save (the old file renamed aside, a new one written) or a
 * rename over it brings it back first; after that its tables go (those
 * no other file declares). A file is read only if it is a regular file
 * (opened without blocking: a FIFO is refused, not waited on), reached
 * through links that stay inside the directory (a Kubernetes ConfigMap
 * volume: a.nft -> ..data/a.nft, ..data -> ..2026_12_06_...; swapping
 * ..data is one change of the directory), and, unless --no-strict-modes,
 * owned by root and not writable by group or others.
 *
 * Cgroups. A cgroup removed and made again at its path (systemd
 * restarting a service, a runtime re-creating a container) is another
 * cgroup, with another id: what was applied for the old one filters
 * nothing. The daemon watches, with inotify, the directory above each
 * bound path (the nearest one that exists): a cgroup made or removed there
 * is a mkdir or rmdir in it. On each event it finds every chain's cgroup
 * again by its path (cgfw_ruleset__rebind(), one stat() a chain) and
 * applies again the tables whose cgroups changed, from the ruleset
 * compiled when the file was read: no compile on the way. A table whose
 * cgroup does not exist waits for it.
 *
 * nf_tables. Unless --no-hold, its context holds the nft tables it
 * writes (cgfw_ctx_opts.hold_tables: nf_tables' owner flag, Linux 6.9):
 * no other process can change them and nft flush ruleset, as
 * nftables.service runs on start, reload and stop, passes them by. For
 * tables it does not hold it listens to nf_tables' notifications
 * (NFNLGRP_NFTABLES, and NFNLGRP_NFTABLES_CGROUP for the native family's
 * tables): when another process changes or deletes one, the
 * file's tables are applied again, within MONITOR_MS. Nothing tells of a
 * bpf link that another tool detaches: every CHECK_MS the bindings of
 * the tables in force are listed, and an unbound one applied again.
 *
 * Chains with policy drop are guarded (cgfw_guards__sync(), bpf/guard.c):
 * until the table is bound to a cgroup made again at the chain's path, a
 * program on the parent drops its packets. The guards are told after
 * every change, and removed when the daemon stops.
 *
 * One daemon runs at a time (a flock on /run/cgfw/daemon). SIGHUP reads
 * the directory again; SIGTERM and SIGINT end the daemon and leave the
 * tables as they are. With systemd (Type=notify), it says READY=1 once
 * every file was tried, and its status.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include "daemon.h"

#define DIR_EVENTS (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | \
		    IN_DELETE | IN_CREATE | IN_ATTRIB)
#define CG_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
		   IN_ONLYDIR)
/* a file gone this long takes its tables with it */
#define SETTLE_MS 2000
/* nf_tables changed by another process: looked at after this long */
#define MONITOR_MS 100
/* bpf programs detached by another tool: looked for this often */
#define CHECK_MS 1000
/* as the library: rule files past this size are a mistake */
#define MAX_TEXT (256u << 20)
#define RUN_DIR "/run/cgfw"
#define DAEMON_LOCK RUN_DIR "/daemon"

/* One rules file. */
struct entry {
	char *file;			/* its name in the directory */
	struct cgfw_ruleset *rs;	/* the last text that compiled, or NULL */
	uint64_t seen;			/* hash of the text last read */
	bool keep;			/* that text was refused: rs is older */
	bool applied;			/* rs, at its cgroups now, is in force */
	bool installed;			/* applied once (maybe stale now) */
	bool found;			/* seen in this reading of the dir */
	bool retry;			/* refused for another file's table */
	bool tampered;			/* another program changed its tables */
	bool touched;			/* by the commit being read */
	char *text;			/* read, not compiled yet */
	size_t len;
	size_t waiting;			/* chains whose path has no cgroup */
	double gone;			/* when it was found gone, or 0 */
};

struct daemon {
	struct cgfw_ctx *ctx;
	const struct cgfw_daemon_opts *o;
	const char *dir;
	char realdir[PATH_MAX];
	int ino, dir_wd, sig, mon;
	double mon_due;			/* when to look at nf_tables, or 0 */
	double check_due;		/* when to look at the bindings, or 0 */
	/* the bpf tables' log records, to the kernel log */
	struct cgfw_log_reader *log;
	int kmsg;			/* /dev/kmsg, or -1: standard error */
	char devkmsg[32];		/* kernel.printk_devkmsg */
	double log_due;			/* when to look for tables that log */
	double expire_due;		/* when to take out expired elements */
	bool expire_failed;		/* and the last time, it could not */
	bool lost;			/* notifications were lost */
	struct entry *v;
	size_t n;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("cgfw daemon: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The library's message, one line per line, without its last newline. */
static void say_error(const struct daemon *d)
{
	const char *msg = cgfw_ctx__error(d->ctx);
	int len = strlen(msg);

	while (len && msg[len - 1] == '\n')
		len--;
	fprintf(stderr, "%.*s\n", len, *msg ? msg : strerror(errno));
}

/* systemd's notification socket ($NOTIFY_SOCKET), if there is one */
static void notify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[256];
	socklen_t len;
	va_list ap;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') ||
	    strlen(path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, path);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract */
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
	       len);
	close(fd);
}

static void notify_status(const struct daemon *d, const char *state)
{
	size_t i, applied = 0, waiting = 0, kept = 0;

	for (i = 0; i < d->n; i++) {
		applied += d->v[i].applied;
		waiting += !!d->v[i].waiting;
		kept += d->v[i].keep;
	}
	notify("%sSTATUS=%zu of %zu rule files applied, %zu waiting for a cgroup, %zu refused (the policy before kept)",
	       state, applied, d->n, waiting, kept);
}

static bool is_rules_file(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len > 4 && !strcmp(name + len - 4, ".nft");
}

static struct entry *find(struct daemon *d, const char *file)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].file, file))
			return &d->v[i];
	return NULL;
}

/* FNV-1a: has the text changed since it was last read? */
static uint64_t hash(const char *buf, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--)
		h = (h ^ (unsigned char)*buf++) * 0x100000001b3ULL;
	return h | 1;	/* 0: never read */
}

/* The file, other than @e, whose tables in force include @table. */
static const struct entry *owner(const struct daemon *d,
				 const struct entry *e, const char *table)
{
	const char *t;
	size_t i, k;

	for (i = 0; i < d->n; i++) {
		if (&d->v[i] == e || !d->v[i].rs)
			continue;
		for (k = 0; (t = cgfw_ruleset__table(d->v[i].rs, k)); k++)
			if (!strcmp(t, table))
				return &d->v[i];
	}
	return NULL;
}

/* Delete the tables of @old that @new (NULL: none) and no other file has. */
static void delete_tables(struct daemon *d, const struct entry *e,
			  const struct cgfw_ruleset *old,
			  const struct cgfw_ruleset *new)
{
	const char *t, *u;
	size_t i, j;

	for (i = 0; (t = cgfw_ruleset__table(old, i)); i++) {
		for (j = 0; (u = cgfw_ruleset__table(new, j)); j++)
			if (!strcmp(t, u))
				break;
		if (u || owner(d, e, t))
			continue;
		if (!cgfw_table__delete(d->ctx, t))
			say("table '%s' deleted", t);
		else if (errno != ENOENT)	/* ENOENT: it was never applied */
			say_error(d);
	}
}

/*
 * Bind @e's chains to the cgroups at their paths now, and apply it if
 * that changed anything (or it was not in force). @since: when the event
 * that led here was read, for the log.
 */
static void sync_entry(struct daemon *d, struct entry *e, double since)
{
	size_t waiting, i;
	const char *p;
	struct stat st;
	int changed;

	if (!e->rs)
		return;
	changed = cgfw_ruleset__rebind(d->ctx, e->rs);
	if (changed < 0) {
		say_error(d);
		return;
	}
	waiting = cgfw_ruleset__waiting(e->rs);
	if (waiting) {
		if (waiting != e->waiting) {
			for (i = 0; (p = cgfw_ruleset__cgroup(e->rs, i)); i++)
				if (stat(p, &st))
					say("%s: waiting for cgroup %s", e->file, p);
		}
		e->waiting = waiting;
		e->applied = false;
		return;
	}
	e->waiting = 0;
	if (e->applied && !changed)
		return;
	CGFW_OPTS(cgfw_apply_opts, ao, .backend = d->o->backend);
	if (cgfw_ruleset__apply(d->ctx, e->rs, &ao)) {
		say_error(d);
		e->applied = false;
		return;
	}
	say("%s: %s, %.1f ms after the event", e->file,
	    e->installed ? "bound to the cgroups at its paths again" : "applied",
	    now_ms() - since);
	e->applied = e->installed = true;
}

static struct entry *add_entry(struct daemon *d, const char *file)
{
	struct entry *v = realloc(d->v, (d->n + 1) * sizeof(*v)), *e;

	if (!v)
		return NULL;
	d->v = v;
	e = &d->v[d->n];
	memset(e, 0, sizeof(*e));
	e->file = strdup(file);
	if (!e->file)
		return NULL;
	d->n++;
	return e;
}

/*
 * The text of rules file @file, if it may be applied: reached inside the
 * directory, a regular file (opened without blocking), and root's alone
 * unless --no-strict-modes. -ENOENT: it is not there (a link to nothing
 * too); any other error is said.
 */
static int read_rules(struct daemon *d, const char *file, char **out,
		      size_t *len)
{
	char path[PATH_MAX], real[PATH_MAX], *buf = NULL, *nb;
	size_t dl = strlen(d->realdir), size = 0, n = 0;
	struct stat st;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", d->dir, file);
	if (!realpath(path, real))
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
	if (strncmp(real, d->realdir, dl) || real[dl] != '/') {
		say("%s: a link to %s, outside %s: not followed (links are followed only inside the rules directory)",
		    file, real, d->dir);
		return -EPERM;
	}
	fd = open(real, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		say("%s: not a regular file: not read", file);
		close(fd);
		return -EINVAL;
	}
	if (d->o->strict && (st.st_uid != geteuid() || (st.st_mode & 022))) {
		say("%s: owned by uid %u, mode %04o: a rules file must be root's and writable by root alone (chown root, chmod go-w), or the daemon run with --no-strict-modes",
		    file, (unsigned int)st.st_uid,
		    (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	do {
		if (n == size) {
			size = size ? size * 2 : 65536;
			nb = n < MAX_TEXT ? realloc(buf, size + 1) : NULL;
			if (!nb) {
				say("%s: %s", file, n < MAX_TEXT ?
				    "out of memory" : "larger than 256 MiB: not read");
				free(buf);
				close(fd);
				return -EFBIG;
			}
			buf = nb;
		}
		r = read(fd, buf + n, size - n);
		if (r > 0)
			n += r;
	} while (r > 0 || (r < 0 && errno == EINTR));
	close(fd);
	if (r < 0) {
		say("%s: %s", file, strerror(errno));
		free(buf);
		return -EIO;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* Compile the text of @e, and apply it if it may replace what is there. */
static void load(struct daemon *d, struct entry *e, const char *buf,
		 size_t len, double since)
{
	CGFW_OPTS(cgfw_compile_opts, co, .allow_missing_cgroups = true);
	const struct entry *o;
	struct cgfw_ruleset *rs;
	char path[PATH_MAX];
	const char *t;
	size_t k;

	snprintf(path, sizeof(path), "%s/%s", d->dir, e->file);
	e->seen = hash(buf, len);
	if (cgfw_ruleset__compile(d->ctx, path, buf, len, &co, &rs)) {
		say_error(d);
		goto refused;
	}
	for (k = 0; (t = cgfw_ruleset__table(rs, k)); k++) {
		o = owner(d, e, t);
		if (o && !o->gone) {
			say("%s: table '%s' is %s's already (a table belongs to one file): not applied; remove it from one of them",
			    e->file, t, o->file);
			cgfw_ruleset__free(rs);
			e->retry = true;	/* again when the other goes */
			goto refused;
		}
	}
	if (e->rs) {
		delete_tables(d, e, e->rs, rs);
		cgfw_ruleset__free(e->rs);
	}
	e->rs = rs;
	e->keep = e->retry = false;
	e->applied = false;
	e->waiting = 0;
	sync_entry(d, e, since);
	return;
refused:
	e->keep = !!e->rs;
	if (e->rs)
		say("%s: keeping what was applied from it before", e->file);
}

/* The rules file of @e is gone for good: so are its tables. */
static void unload(struct daemon *d, struct entry *e)
{
	struct cgfw_ruleset *rs = e->rs;

	e->rs = NULL;	/* not an owner of its own tables any more */
	if (rs) {
		delete_tables(d, e, rs, NULL);
		cgfw_ruleset__free(rs);
	}
	free(e->file);
	free(e->text);
	*e = d->v[--d->n];
}

/*
 * A watch on the nearest directory that exists above each bound path: the
 * cgroup made or removed at the path, or a parent on the way to it, shows
 * there. Watches on removed directories go by
 * themselves; adding one that is there changes nothing.
 */
static void watch_cgroups(struct daemon *d)
{
	char p[PATH_MAX], *slash;
	const char *path;
	struct stat st;
	size_t i, k;

	for (i = 0; i < d->n; i++) {
		if (!d->v[i].rs)
			continue;
		for (k = 0; (path = cgfw_ruleset__cgroup(d->v[i].rs, k)); k++) {
			snprintf(p, sizeof(p), "%s", path);
			while ((slash = strrchr(p, '/')) && slash != p) {
				*slash = '\0';
				if (!stat(p, &st))
					break;
			}
			inotify_add_watch(d->ino, p, CG_EVENTS);
		}
	}
}

/* The guards of the chains with policy drop, as the tables are now. */
static void guard(struct daemon *d)
{
	struct cgfw_ruleset **rs;
	bool *in_force;
	size_t i, n = 0;

	if (!d->o->guard)
		return;
	rs = calloc(d->n + 1, sizeof(*rs));
	in_force = calloc(d->n + 1, sizeof(*in_force));
	for (i = 0; rs && in_force && i < d->n; i++) {
		if (!d->v[i].rs)
			continue;
		rs[n] = d->v[i].rs;
		in_force[n++] = d->v[i].applied;
	}
	if (!rs || !in_force)
		say("out of memory");
	else if (cgfw_guards__sync(d->ctx, rs, in_force, n))
		say_error(d);
	free(rs);
	free(in_force);
}

static void sync_all(struct daemon *d, double since)
{
	size_t i;

	watch_cgroups(d);
	for (i = 0; i < d->n; i++)
		sync_entry(d, &d->v[i], since);
	guard(d);
}

/* The ms until a gone file's tables go (0: now), or -1 if none waits. */
static int settle_left(const struct daemon *d, double now)
{
	double left = -1, l;
	size_t i;

	for (i = 0; i < d->n; i++) {
		if (!d->v[i].gone)
			continue;
		l = d->v[i].gone + SETTLE_MS - now;
		l = l > 0 ? l : 0;
		if (left < 0 || l < left)
			left = l;
	}
	return left < 0 ? -1 : (int)left + ((int)left < left);
}

/*
 * Make the tables what the directory says: every rules file read, the
 * changed ones compiled and applied, the ones gone past SETTLE_MS taken
 * away with their tables.
 */
static int reconcile(struct daemon *d, double since)
{
	double now = now_ms();
	bool unloaded = false;
	struct dirent *de;
	struct entry *e;
	size_t i, len;
	char *buf;
	DIR *dir;
	int ret;

	dir = opendir(d->dir);
	if (!dir) {
		say("cannot read the rules directory %s: %s; the tables stay as they are",
		    d->dir, strerror(errno));
		for (i = 0; i < d->n; i++)	/* try again in SETTLE_MS */
			if (d->v[i].gone)
				d->v[i].gone = now;
		return -1;
	}
	for (i = 0; i < d->n; i++)
		d->v[i].found = false;
	/*
	 * First every file there, then what is gone, then the texts: a file
	 * renamed to another name is gone before the new name's text is
	 * read, so the new name takes its tables over (one transaction)
	 * instead of being refused for them and applied only after they
	 * were deleted
	 */
	while ((de = readdir(dir))) {
		if (!is_rules_file(de->d_name))
			continue;
		ret = read_rules(d, de->d_name, &buf, &len);
		if (ret == -ENOENT)
			continue;
		e = find(d, de->d_name);
		if (!e)
			e = add_entry(d, de->d_name);
		if (!e) {
			say("out of memory");
			if (!ret)
				free(buf);
			continue;
		}
		e->found = true;
		if (e->gone)
			say("%s: back, %.0f ms after it went", e->file,
			    now - e->gone);
		e->gone = 0;
		free(e->text);
		e->text = ret ? NULL : buf;
		e->len = ret ? 0 : len;
		if (ret)
			e->keep = !!e->rs;
	}
	closedir(dir);
	for (i = 0; i < d->n; i++)
		if (!d->v[i].found && d->v[i].installed && !d->v[i].gone) {
			d->v[i].gone = now;
			say("%s: gone; its tables stay %d ms in case it comes back (an editor's save, a rename), then go",
			    d->v[i].file, SETTLE_MS);
		}
	for (i = 0; i < d->n; i++) {
		e = &d->v[i];
		if (e->text && hash(e->text, e->len) != e->seen)
			load(d, e, e->text, e->len, since);
		free(e->text);
		e->text = NULL;
	}
	for (i = d->n; i--;) {
		e = &d->v[i];
		if (e->found)
			continue;
		if (!e->installed) {
			unload(d, e);	/* nothing of it was ever applied */
			continue;
		}
		if (now - e->gone >= SETTLE_MS) {
			say("%s: still gone after %d ms: its tables go",
			    e->file, SETTLE_MS);
			unload(d, e);
			unloaded = true;
		}
	}
	/* the files refused for a table of one that went: read again */
	if (unloaded) {
		for (i = 0; i < d->n; i++)
			if (d->v[i].retry)
				d->v[i].seen = 0;
		return reconcile(d, since);
	}
	sync_all(d, since);
	if (!d->n)
		say("no rules files (*.nft) in %s yet", d->dir);
	return 0;
}

/* The events read at once: a change of the directory, or of the cgroups. */
static void events(struct daemon *d)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	bool files = false, cgroups = false;
	double t = now_ms();
	struct stat st;
	char path[PATH_MAX];
	ssize_t len;
	char *p;

	len = read(d->ino, buf, sizeof(buf));
	if (len <= 0)
		return;
	for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
		ev = (const struct inotify_event *)p;
		if (ev->mask & IN_Q_OVERFLOW) {
			files = cgroups = true;	/* events were lost */
			continue;
		}
		if (ev->wd != d->dir_wd) {
			cgroups = true;
			continue;
		}
		/* a file made is read when it is closed, a link at once */
		if (ev->mask == IN_CREATE && ev->len) {
			snprintf(path, sizeof(path), "%s/%s", d->dir, ev->name);
			if (!lstat(path, &st) && S_ISREG(st.st_mode))
				continue;
		}
		files = true;	/* any name: ..data of a ConfigMap too */
	}
	if (files)
		reconcile(d, t);
	else if (cgroups)
		sync_all(d, t);
	notify_status(d, "");
}

/* ---- nf_tables changed by others ---- */

/*
 * The kernel series (kernel-patches/) sends the cgroup family's events to
 * a group of their own, which userspace that predates the family does not
 * hear; the end of each commit (NFT_MSG_NEWGEN) stays in NFNLGRP_NFTABLES.
 */
#ifndef NFNLGRP_NFTABLES_CGROUP
#define NFNLGRP_NFTABLES_CGROUP	(NFNLGRP_NFTRACE + 1)
#endif

/* A socket that hears every nf_tables change of this network namespace. */
static int monitor_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int grp = NFNLGRP_NFTABLES, rcvbuf = 16 << 20, fd;
	int cgrp = NFNLGRP_NFTABLES_CGROUP;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    NETLINK_NETFILTER);
	if (fd < 0)
		return -1;
	/* room for the notifications of a large apply (its own too) */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp,
		       sizeof(grp)) ||
	    /* EINVAL: a kernel without the family, nor its group */
	    (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &cgrp,
			sizeof(cgrp)) && errno != EINVAL)) {
		close(fd);
		return -1;
	}
	return fd;
}

#define NLA_DATA(a) ((const char *)(a) + NLA_HDRLEN)

/* The attribute @type of an nf_tables message, or NULL. */
static const struct nlattr *nft_attr(const struct nlmsghdr *nlh, int type)
{
	const char *p = (const char *)NLMSG_DATA(nlh) +
			NLMSG_ALIGN(sizeof(struct nfgenmsg));
	const char *end = (const char *)nlh + nlh->nlmsg_len;
	const struct nlattr *a;

	while (p + NLA_HDRLEN <= end) {
		a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

/* Does a table named @name, as nf_tables has it, belong to @e? */
static bool table_of(const struct entry *e, const char *name)
{
	const char *t;
	size_t k;

	if (!e->rs)
		return false;
	for (k = 0; (t = cgfw_ruleset__table(e->rs, k)); k++)
		if (!strcmp(name, t) ||	/* the native family's */
		    (!strncmp(name, "cgfw_", 5) && !strcmp(name + 5, t)))
			return true;	/* the emulation's, in inet */
	return false;
}

/*
 * The notifications of one or more commits: the tables each touched, and
 * who committed (NFT_MSG_NEWGEN ends a commit, with its pid). A commit of
 * another process that touched a table of ours makes the file's tables
 * be applied again (MONITOR_MS later, once the burst is over).
 */
static void monitor_read(struct daemon *d)
{
	char buf[65536] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlmsghdr *nlh;
	const struct nlattr *a;
	bool any = false, ours;
	char name[256];
	ssize_t len;
	size_t i;
	int type;

	while ((len = recv(d->mon, buf, sizeof(buf), 0)) > 0 ||
	       (len < 0 && errno == ENOBUFS)) {
		if (len < 0) {
			/*
			 * notifications lost (its own big applies can do
			 * that too): monitor_act() looks at every table
			 */
			d->lost = any = true;
			continue;
		}
		for (nlh = (const struct nlmsghdr *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES)
				continue;
			/*
			 * what the packet path announces (a quota that ran
			 * out) is no commit: it comes from no socket
			 */
			if (!nlh->nlmsg_pid)
				continue;
			type = NFNL_MSG_TYPE(nlh->nlmsg_type);
			if (type == NFT_MSG_NEWGEN) {
				/* the end of a commit: whose? */
				a = nft_attr(nlh, NFTA_GEN_PROC_PID);
				ours = a && a->nla_len >= NLA_HDRLEN + 4 &&
					    ntohl(*(const uint32_t *)NLA_DATA(a)) ==
					    (uint32_t)getpid();

				for (i = 0; i < d->n; i++) {
					if (!ours && d->v[i].touched &&
					    d->v[i].applied) {
						d->v[i].applied = false;
						d->v[i].tampered = true;
						any = true;
					}
					d->v[i].touched = false;
				}
				continue;
			}
			/*
			 * every object's table is its attribute 1; what a
			 * commit touched is kept until its NEWGEN, which
			 * may come in a later read
			 */
			a = nft_attr(nlh, 1);
			if (!a || a->nla_len <= NLA_HDRLEN)
				continue;
			snprintf(name, sizeof(name), "%.*s",
				 (int)(a->nla_len - NLA_HDRLEN),
				 NLA_DATA(a));
			for (i = 0; i < d->n; i++)
				if (table_of(&d->v[i], name))
					d->v[i].touched = true;
		}
	}
	if (any && !d->mon_due)
		d->mon_due = now_ms() + MONITOR_MS;
}

/* Are the tables of @e all installed? (after notifications were lost) */
static bool tables_there(struct daemon *d, const struct entry *e)
{
	struct cgfw_listing *l;
	const char *t;
	size_t k;

	for (k = 0; (t = cgfw_ruleset__table(e->rs, k)); k++) {
		CGFW_OPTS(cgfw_list_opts, lo, .table = t);
		if (cgfw_listing__new(d->ctx, &lo, &l))
			return errno != ENOENT;	/* ENOENT: gone */
		cgfw_listing__free(l);
	}
	return true;
}

/*
 * Are the tables of @e bound where they were applied? A bpf program
 * detached by another tool (bpftool link detach) leaves its table unbound
 * with its cgroup still there, and nothing tells the daemon.
 */
static bool bound_still(struct daemon *d, const struct entry *e)
{
	struct cgfw_listing *l;
	const char *t;
	size_t k, unbound;

	for (k = 0; (t = cgfw_ruleset__table(e->rs, k)); k++) {
		CGFW_OPTS(cgfw_list_opts, lo, .table = t,
			  .bindings_only = true);
		if (cgfw_listing__new(d->ctx, &lo, &l))
			return errno != ENOENT;	/* ENOENT: gone */
		unbound = cgfw_listing__unbound(l);
		cgfw_listing__free(l);
		if (unbound)
			return false;
	}
	return true;
}

static void monitor_act(struct daemon *d);

/* Every CHECK_MS: the tables in force are still bound (bpf backends). */
static void check_bindings(struct daemon *d)
{
	bool any = false;
	size_t i;

	d->check_due = now_ms() + CHECK_MS;
	for (i = 0; i < d->n; i++) {
		if (!d->v[i].applied || d->v[i].waiting ||
		    bound_still(d, &d->v[i]))
			continue;
		d->v[i].applied = false;
		d->v[i].tampered = true;
		any = true;
	}
	if (any)
		monitor_act(d);
}

/* Apply again what another process changed. */
static void monitor_act(struct daemon *d)
{
	double t = now_ms();
	size_t i;

	d->mon_due = 0;
	for (i = 0; d->lost && i < d->n; i++)
		if (d->v[i].applied && !tables_there(d, &d->v[i])) {
			d->v[i].applied = false;
			d->v[i].tampered = true;
		}
	d->lost = false;
	for (i = 0; i < d->n; i++) {
		if (d->v[i].tampered)
			say("%s: its tables were changed, or detached, by another program: applying them again",
			    d->v[i].file);
		d->v[i].tampered = false;
	}
	sync_all(d, t);
	notify_status(d, "");
}

/* ---- start ---- */

/*
 * One daemon at a time: a flock on /run/cgfw/daemon (root's directory,
 * 0700), which holds the pid of the daemon that has it.
 */
static int take_daemon_lock(void)
{
	char pid[32] = "";
	struct stat st;
	ssize_t n;
	int fd;

	if ((mkdir(RUN_DIR, 0700) && errno != EEXIST) || lstat(RUN_DIR, &st)) {
		say("cannot make %s: %s", RUN_DIR, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		say("%s is not root's alone (uid %u, mode %04o): remove it and start again",
		    RUN_DIR, (unsigned int)st.st_uid,
		    (unsigned int)(st.st_mode & 07777));
		return -1;
	}
	fd = open(DAEMON_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		say("cannot open %s: %s", DAEMON_LOCK, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		say("another cgfw daemon (pid %s) is running: one at a time; stop it first",
		    *pid ? pid : "?");
		close(fd);
		return -1;
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, strlen(pid), 0) < 0)
		say("cannot write %s: %s", DAEMON_LOCK, strerror(errno));
	return fd;
}

/* In strict mode, nobody but root may change what is in the directory. */
static int check_dir(const struct daemon *d)
{
	struct stat st;

	if (stat(d->dir, &st)) {
		say("cannot read the rules directory %s: %s (make it, or give another with -d)",
		    d->dir, strerror(errno));
		return -1;
	}
	if (d->o->strict && (st.st_uid != geteuid() || (st.st_mode & 022))) {
		say("the rules directory %s is owned by uid %u, mode %04o: another user could remove or replace its files; make it root's and writable by root alone (chown root, chmod go-w), or run with --no-strict-modes",
		    d->dir, (unsigned int)st.st_uid,
		    (unsigned int)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

/*
 * The kernel log, for the bpf tables' log lines, where the kernel takes
 * all of them: with printk_devkmsg=ratelimit (its default) it keeps 10
 * lines in 5 s from us and drops the rest without a word, so they go to
 * standard error (the journal) instead. -1: standard error.
 */
static int open_kmsg(struct daemon *d)
{
	FILE *f = fopen("/proc/sys/kernel/printk_devkmsg", "re");

	snprintf(d->devkmsg, sizeof(d->devkmsg), "unknown");
	if (f) {
		if (fgets(d->devkmsg, sizeof(d->devkmsg), f))
			d->devkmsg[strcspn(d->devkmsg, "\n")] = '\0';
		fclose(f);
	}
	if (strcmp(d->devkmsg, "on"))
		return -1;
	return open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
}

/* A bpf table's log line, where nf_log would have put it. */
static void log_line(int level, const char *line, void *data)
{
	struct daemon *d = data;
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf), "<%d>%s\n", level, line);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	if (d->kmsg < 0 || write(d->kmsg, buf, n) < 0)
		fprintf(stderr, "<%d>%s\n", level, line);	/* the journal's */
}

/*
 * The tables that log now (after each apply, and every LOG_SCAN_MS for
 * those applied by hand); @pfd polls their records.
 */
#define LOG_SCAN_MS 2000
static void log_scan(struct daemon *d, struct pollfd *pfd)
{
	size_t before = cgfw_log_reader__tables(d->log);

	d->log_due = now_ms() + LOG_SCAN_MS;
	if (cgfw_log_reader__refresh(d->log))
		say_error(d);
	pfd->fd = cgfw_log_reader__fd(d->log);
	if (cgfw_log_reader__tables(d->log) == before)
		return;
	if (d->kmsg >= 0)
		say("reading the log records of %zu bpf tables into the kernel log",
		    cgfw_log_reader__tables(d->log));
	else
		say("reading the log records of %zu bpf tables into standard error (the kernel log takes 10 lines in 5 s from a program while kernel.printk_devkmsg is %s, not on)",
		    cgfw_log_reader__tables(d->log), d->devkmsg);
}

/*
 * The bpf tables' expired set elements out of their maps, every
 * EXPIRE_MS, as nf_tables' sets collect theirs.
 */
#define EXPIRE_MS 2000
static void expire(struct daemon *d)
{
	bool failed;

	d->expire_due = now_ms() + EXPIRE_MS;
	failed = cgfw_sets__expire(d->ctx, NULL);
	if (failed && !d->expire_failed)	/* once, until it works */
		say_error(d);
	d->expire_failed = failed;
}

int cgfw_cli_daemon(struct cgfw_ctx *ctx, const struct cgfw_daemon_opts *o)
{
	struct daemon d = { .ctx = ctx, .o = o, .dir = o->dir,
			    .ino = -1, .sig = -1, .mon = -1, .kmsg = -1 };
	struct signalfd_siginfo si;
	struct pollfd pfd[4];
	int lock, timeout, left;
	sigset_t mask;
	bool run = true;
	size_t i;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (check_dir(&d) || !realpath(d.dir, d.realdir))
		return 1;
	lock = take_daemon_lock();
	if (lock < 0)
		return 1;
	d.sig = signalfd(-1, &mask, SFD_CLOEXEC);
	d.ino = inotify_init1(IN_CLOEXEC);
	d.mon = monitor_open();
	if (d.sig < 0 || d.ino < 0 || d.mon < 0) {
		say("cannot watch: %s", strerror(errno));
		return 1;
	}
	d.dir_wd = inotify_add_watch(d.ino, d.dir, DIR_EVENTS | IN_ONLYDIR);
	if (d.dir_wd < 0) {
		say("cannot watch the rules directory %s: %s (make it, or give another with -d)",
		    d.dir, strerror(errno));
		return 1;
	}
	if (reconcile(&d, now_ms()))
		return 1;
	say("watching %s, the cgroups of %zu rules files and nf_tables",
	    d.dir, d.n);
	notify_status(&d, "READY=1\n");

	pfd[0] = (struct pollfd){ .fd = d.ino, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = d.sig, .events = POLLIN };
	pfd[2] = (struct pollfd){ .fd = d.mon, .events = POLLIN };
	pfd[3] = (struct pollfd){ .fd = -1, .events = POLLIN };
	d.kmsg = open_kmsg(&d);
	if (cgfw_log_reader__new(ctx, log_line, &d, NULL, &d.log))
		say_error(&d);
	else
		log_scan(&d, &pfd[3]);
	/* only bpf links can be detached without nf_tables saying so */
	if (o->backend != CGFW_BACKEND_NFT &&
	    o->backend != CGFW_BACKEND_NFT_NATIVE &&
	    o->backend != CGFW_BACKEND_NFT_EMULATED)
		d.check_due = now_ms() + CHECK_MS;
	while (run) {
		timeout = settle_left(&d, now_ms());
		if (d.mon_due) {
			left = (int)(d.mon_due - now_ms());
			left = left > 0 ? left : 0;
			timeout = timeout < 0 || left < timeout ? left : timeout;
		}
		if (d.check_due) {
			left = (int)(d.check_due - now_ms());
			left = left > 0 ? left : 0;
			timeout = timeout < 0 || left < timeout ? left : timeout;
		}
		if (d.log) {
			left = (int)(d.log_due - now_ms());
			left = left > 0 ? left : 0;
			timeout = timeout < 0 || left < timeout ? left : timeout;
		}
		left = (int)(d.expire_due - now_ms());
		left = left > 0 ? left : 0;
		timeout = timeout < 0 || left < timeout ? left : timeout;
		if (poll(pfd, 4, timeout < 0 ? -1 : timeout + 1) < 0) {
			if (errno == EINTR)
				continue;
			say("poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents & POLLIN)
			events(&d);
		if (pfd[2].revents & POLLIN)
			monitor_read(&d);
		if (pfd[3].fd >= 0 && pfd[3].revents & POLLIN &&
		    cgfw_log_reader__read(d.log))
			say_error(&d);
		if (d.log && now_ms() >= d.log_due)
			log_scan(&d, &pfd[3]);
		if (now_ms() >= d.expire_due)
			expire(&d);
		if (d.mon_due && now_ms() >= d.mon_due)
			monitor_act(&d);
		if (d.check_due && now_ms() >= d.check_due)
			check_bindings(&d);
		if (!settle_left(&d, now_ms())) {
			reconcile(&d, now_ms());
			notify_status(&d, "");
			if (d.log)
				log_scan(&d, &pfd[3]);
		}
		if (!(pfd[1].revents & POLLIN) ||
		    read(d.sig, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			notify("RELOADING=1");
			say("reading %s again", d.dir);
			for (i = 0; i < d.n; i++)
				d.v[i].seen = 0;
			reconcile(&d, now_ms());
			notify_status(&d, "READY=1\n");
		} else {
			run = false;
		}
	}
	notify("STOPPING=1");
	/* nobody would tell the guards about new cgroups: they go */
	if (o->guard && cgfw_guards__sync(ctx, NULL, NULL, 0))
		say_error(&d);
	say("stopping; the tables stay as they are");
	for (i = 0; i < d.n; i++) {
		cgfw_ruleset__free(d.v[i].rs);
		free(d.v[i].file);
	}
	free(d.v);
	if (d.log) {	/* what the programs wrote until now */
		cgfw_log_reader__read(d.log);
		cgfw_log_reader__free(d.log);
	}
	if (d.kmsg >= 0)
		close(d.kmsg);
	close(d.ino);
	close(d.sig);
	close(d.mon);
	close(lock);
	return 0;
}
