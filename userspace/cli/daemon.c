// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgfw daemon: every table of a rules directory (one file a table, *.nft)
 * applied, and kept bound to its cgroup paths for their whole life.
 *
 * A cgroup removed and made again at its path (systemd restarting a
 * service, a runtime re-creating a container) is another cgroup, with
 * another id: what was applied for the old one filters nothing. The daemon
 * watches, with inotify, the directory above each bound path (the nearest
 * one that exists): a cgroup made or removed there is a mkdir or rmdir in
 * it. On each event it finds every chain's cgroup again by its path
 * (cgfw_ruleset__rebind(), one stat() a chain) and applies again the
 * tables whose cgroups changed, from the ruleset compiled when the file
 * was read: no compile on the way. A table whose cgroup does not exist
 * waits for it. The rules directory is watched too: a file written or
 * moved in is compiled and applied (a bad one is reported with its place
 * and changes nothing), a file removed takes its tables with it. SIGHUP
 * reads the directory again. SIGTERM and SIGINT end the daemon and leave
 * the tables as they are.
 *
 * Chains with policy drop are guarded (cgfw_guards__sync(), bpf/guard.c):
 * until the table is bound to a cgroup made again at the chain's path, a
 * program on the parent drops its packets. The guards are told after
 * every change, and removed when the daemon stops.
 *
 * With systemd (Type=notify), it says READY=1 once every file was tried,
 * and its status: how many tables are applied and how many wait.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

#define DIR_EVENTS (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
#define CG_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
		   IN_ONLYDIR)

/* One rules file. */
struct entry {
	char *file;			/* its name in the directory */
	struct cgfw_ruleset *rs;	/* as compiled when it was read */
	bool applied;			/* rs, at its cgroups now, is in force */
	bool installed;			/* applied once (maybe stale now) */
	size_t waiting;			/* chains whose path has no cgroup */
};

struct daemon {
	struct cgfw_ctx *ctx;
	const char *dir;
	enum cgfw_backend backend;
	bool guard;
	int ino, dir_wd, sig;
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
	size_t i, applied = 0, waiting = 0;

	for (i = 0; i < d->n; i++) {
		applied += d->v[i].applied;
		waiting += !!d->v[i].waiting;
	}
	notify("%sSTATUS=%zu of %zu rule files applied, %zu waiting for a cgroup",
	       state, applied, d->n, waiting);
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

/* Delete the tables of @old that @new (NULL: none) does not have. */
static void delete_tables(struct daemon *d, const struct cgfw_ruleset *old,
			  const struct cgfw_ruleset *new)
{
	const char *t, *u;
	size_t i, j;

	for (i = 0; (t = cgfw_ruleset__table(old, i)); i++) {
		for (j = 0; (u = cgfw_ruleset__table(new, j)); j++)
			if (!strcmp(t, u))
				break;
		if (u)
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
	CGFW_OPTS(cgfw_apply_opts, ao, .backend = d->backend);
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

/* Read (again) the rules file @file, and apply it. */
static void load(struct daemon *d, const char *file, double since)
{
	CGFW_OPTS(cgfw_compile_opts, co, .allow_missing_cgroups = true);
	struct cgfw_ruleset *rs;
	char path[PATH_MAX];
	struct entry *e, *v;

	snprintf(path, sizeof(path), "%s/%s", d->dir, file);
	e = find(d, file);
	if (cgfw_ruleset__compile_file(d->ctx, path, &co, &rs)) {
		say_error(d);
		if (e)
			say("%s: keeping what was applied from it before", file);
		return;
	}
	if (!e) {
		v = realloc(d->v, (d->n + 1) * sizeof(*v));
		if (!v) {
			say("out of memory");
			cgfw_ruleset__free(rs);
			return;
		}
		d->v = v;
		e = &d->v[d->n];
		memset(e, 0, sizeof(*e));
		e->file = strdup(file);
		if (!e->file) {
			say("out of memory");
			cgfw_ruleset__free(rs);
			return;
		}
		d->n++;
	} else {
		delete_tables(d, e->rs, rs);
		cgfw_ruleset__free(e->rs);
	}
	e->rs = rs;
	e->applied = e->installed = false;
	e->waiting = 0;
	sync_entry(d, e, since);
}

/* The rules file @file is gone: so are its tables. */
static void unload(struct daemon *d, const char *file)
{
	struct entry *e = find(d, file);

	if (!e)
		return;
	delete_tables(d, e->rs, NULL);
	cgfw_ruleset__free(e->rs);
	free(e->file);
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
	size_t i;

	if (!d->guard)
		return;
	rs = calloc(d->n + 1, sizeof(*rs));
	in_force = calloc(d->n + 1, sizeof(*in_force));
	for (i = 0; rs && in_force && i < d->n; i++) {
		rs[i] = d->v[i].rs;
		in_force[i] = d->v[i].applied;
	}
	if (!rs || !in_force)
		say("out of memory");
	else if (cgfw_guards__sync(d->ctx, rs, in_force, d->n))
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

/* Every rules file of the directory, and none that is gone. */
static int scan(struct daemon *d)
{
	struct dirent *de;
	double t = now_ms();
	size_t i;
	DIR *dir;

	dir = opendir(d->dir);
	if (!dir) {
		say("cannot read the rules directory %s: %s", d->dir,
		    strerror(errno));
		return -1;
	}
	for (i = d->n; i--;) {
		struct stat st;
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", d->dir, d->v[i].file);
		if (stat(path, &st))
			unload(d, d->v[i].file);
	}
	while ((de = readdir(dir)))
		if (is_rules_file(de->d_name))
			load(d, de->d_name, t);
	closedir(dir);
	if (!d->n)
		say("no rules files (*.nft) in %s yet", d->dir);
	sync_all(d, t);
	return 0;
}

/* The events read at once: rules files first, then the cgroups. */
static void events(struct daemon *d)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	bool cgroups = false;
	double t = now_ms();
	ssize_t len;
	char *p;

	len = read(d->ino, buf, sizeof(buf));
	if (len <= 0)
		return;
	for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
		ev = (const struct inotify_event *)p;
		if (ev->mask & IN_Q_OVERFLOW) {
			cgroups = true;	/* events were lost: look at all */
			continue;
		}
		if (ev->wd != d->dir_wd) {
			cgroups = true;
			continue;
		}
		if (!ev->len || !is_rules_file(ev->name))
			continue;
		if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO))
			load(d, ev->name, t);
		else if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
			unload(d, ev->name);
		cgroups = true;	/* new paths to watch */
	}
	if (cgroups)
		sync_all(d, t);
	notify_status(d, "");
}

int cgfw_cli_daemon(struct cgfw_ctx *ctx, const char *dir,
		    enum cgfw_backend backend, bool guard)
{
	struct daemon d = { .ctx = ctx, .dir = dir, .backend = backend,
			    .guard = guard };
	struct signalfd_siginfo si;
	struct pollfd pfd[2];
	sigset_t mask;
	bool run = true;
	size_t i;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d.sig = signalfd(-1, &mask, SFD_CLOEXEC);
	d.ino = inotify_init1(IN_CLOEXEC);
	if (d.sig < 0 || d.ino < 0) {
		say("cannot watch: %s", strerror(errno));
		return 1;
	}
	d.dir_wd = inotify_add_watch(d.ino, dir, DIR_EVENTS | IN_ONLYDIR);
	if (d.dir_wd < 0) {
		say("cannot watch the rules directory %s: %s (make it, or give another with -d)",
		    dir, strerror(errno));
		return 1;
	}
	if (scan(&d))
		return 1;
	say("watching %s and the cgroups of %zu rules files", dir, d.n);
	notify_status(&d, "READY=1\n");

	pfd[0] = (struct pollfd){ .fd = d.ino, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = d.sig, .events = POLLIN };
	while (run) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			say("poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents & POLLIN)
			events(&d);
		if (!(pfd[1].revents & POLLIN) ||
		    read(d.sig, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			notify("RELOADING=1");
			say("reading %s again", dir);
			scan(&d);
			notify_status(&d, "READY=1\n");
		} else {
			run = false;
		}
	}
	notify("STOPPING=1");
	/* nobody would tell the guards about new cgroups: they go */
	if (d.guard && cgfw_guards__sync(ctx, NULL, NULL, 0))
		say_error(&d);
	say("stopping; the tables stay as they are");
	for (i = 0; i < d.n; i++) {
		cgfw_ruleset__free(d.v[i].rs);
		free(d.v[i].file);
	}
	free(d.v);
	close(d.ino);
	close(d.sig);
	return 0;
}
