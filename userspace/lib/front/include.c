// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Include: nft's 'include "FILE"' statements, expanded before the rewrite
 * (docs/design.rst, *The front end*).
 *
 * nft would read an included file as it is, where the cgroup family and
 * its hooks mean nothing; so each file is read here and its text put in
 * place of the statement, and the rest of the front end sees one text.
 * Lines are kept whole, so that each line of the text is a line of one
 * file: the statement is blanked where it stands and the file's lines go
 * after its line; the source's spans turn a line of the text back into
 * the file and line that messages name (cgfw_src_where()). What follows an
 * include on its line, other than another include or a comment, would
 * come after the file's lines: it is refused.
 *
 * As nft 1.0.6 (scanner_include_file()): a name that starts with "./" or
 * "../" is taken from the working directory, one that starts with "/" as
 * it is, any other under /etc; wildcards (* ? [) take every match in
 * alphabetical order, directories left out, and no match is no error,
 * where a plain name not found is; 16 levels at most. Unlike nft, an
 * included file must be a regular file that no one but its owner, root
 * or the caller, can change: cgfw runs as root, and another user's file
 * would be their rules in root's firewall.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front/include.h"

#define INCLUDE_DEPTH_MAX	16	/* nft's MAX_INCLUDE_DEPTH */
#define INCLUDE_DIR		"/etc"	/* nft's DEFAULT_INCLUDE_PATH */

struct expander {
	struct cgfw_ctx *ctx;
	struct cgfw_source *root;
	struct strbuf out;
	unsigned int out_line;	/* the line of the text being written */
	size_t max_len;
	struct cgfw_src_span *spans;
	size_t n_spans;
	int err;
};

static int expand(struct expander *x, const struct cgfw_source *src,
		  const char *file, unsigned int depth);

static void fail(struct expander *x, const struct cgfw_source *src,
		 const struct cgfw_loc *loc, int err, const char *fmt, ...)
	__printf(5, 6);

static void fail(struct expander *x, const struct cgfw_source *src,
		 const struct cgfw_loc *loc, int err, const char *fmt, ...)
{
	char msg[PATH_MAX + 256];
	va_list ap;

	if (x->err)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cgfw_err_at(x->ctx, src, loc, "%s", msg);
	x->err = err;
}

/* The text's lines from here on are @file's, from its line @line. */
static void span(struct expander *x, const char *file, unsigned int line)
{
	struct cgfw_src_span *sp;

	if (x->n_spans && x->spans[x->n_spans - 1].first == x->out_line)
		x->n_spans--;	/* an empty one: replaced */
	sp = realloc(x->spans, (x->n_spans + 1) * sizeof(*sp));
	if (!sp) {
		x->err = -ENOMEM;
		return;
	}
	x->spans = sp;
	x->spans[x->n_spans++] = (struct cgfw_src_span){
		.first = x->out_line, .line = line, .file = file,
	};
}

/* @name's file, kept for the spans; the name as messages show it */
static const char *keep_name(struct expander *x, const char *name)
{
	struct cgfw_source *r = x->root;
	char **files, *dup;
	size_t i;

	for (i = 0; i < r->n_files; i++)
		if (!strcmp(r->files[i], name))
			return r->files[i];
	dup = strdup(name);
	files = realloc(r->files, (r->n_files + 1) * sizeof(*files));
	if (!dup || !files) {
		free(dup);
		if (files)
			r->files = files;
		x->err = -ENOMEM;
		return NULL;
	}
	r->files = files;
	r->files[r->n_files++] = dup;
	return dup;
}

/* Read @path, which no one but its owner (root or us) may change. */
static int read_file(struct expander *x, const struct cgfw_source *src,
		     const struct cgfw_loc *loc, const char *path,
		     struct strbuf *sb)
{
	char chunk[65536];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		fail(x, src, loc, -errno, "cannot open the included file %s: %s",
		     path, strerror(errno));
		return x->err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fail(x, src, loc, -EINVAL,
		     "the included file %s is not a regular file", path);
	} else if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
		   (st.st_mode & 022)) {
		fail(x, src, loc, -EPERM,
		     "the included file %s is owned by uid %u, mode %04o: another user could change it; an included file must be writable by its owner alone, root or uid %u (chown, chmod go-w)",
		     path, st.st_uid, st.st_mode & 07777, geteuid());
	}
	while (!x->err && (n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			fail(x, src, loc, -errno, "cannot read %s: %s", path,
			     strerror(errno));
		} else if (x->out.len + sb->len + n > x->max_len) {
			fail(x, src, loc, -EFBIG,
			     "with %s the input is larger than %zu MiB", path,
			     x->max_len >> 20);
		} else {
			cgfw_sb_addn(sb, chunk, n);
		}
	}
	close(fd);
	if (!x->err && sb->oom)
		x->err = -ENOMEM;
	return x->err;
}

static int include_one(struct expander *x, const struct cgfw_source *src,
		       const struct cgfw_loc *loc, const char *path,
		       unsigned int depth)
{
	struct cgfw_source inc = { 0 };
	struct strbuf sb;
	const char *name;

	cgfw_sb_init(&sb);
	if (read_file(x, src, loc, path, &sb)) {
		cgfw_sb_release(&sb);
		return x->err;
	}
	name = keep_name(x, path);
	inc.name = (char *)name;
	inc.text = sb.buf ? sb.buf : (char *)"";
	inc.len = sb.len;
	if (name && cgfw_src_check_text(x->ctx, &inc))
		x->err = -EINVAL;
	else if (name)
		expand(x, &inc, name, depth + 1);
	cgfw_sb_release(&sb);
	return x->err;
}

static bool has_wildcard(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Every file @pattern names, as nft finds them. */
static int include_pattern(struct expander *x, const struct cgfw_source *src,
			   const struct cgfw_loc *loc, const char *name,
			   unsigned int depth)
{
	char path[PATH_MAX];
	glob_t gl;
	size_t i, len;
	int ret;

	if (depth + 1 >= INCLUDE_DEPTH_MAX) {	/* the first file is 1 */
		fail(x, src, loc, -ELOOP, "Include nested too deeply, max %u levels",
		     INCLUDE_DEPTH_MAX);
		return x->err;
	}
	if (!strncmp(name, "./", 2) || !strncmp(name, "../", 3) ||
	    name[0] == '/')
		ret = snprintf(path, sizeof(path), "%s", name);
	else
		ret = snprintf(path, sizeof(path), INCLUDE_DIR "/%s", name);
	if (ret < 0 || ret >= (int)sizeof(path)) {
		fail(x, src, loc, -ENAMETOOLONG, "Too long file path \"%s\"", name);
		return x->err;
	}
	ret = glob(path, GLOB_NOESCAPE | GLOB_MARK, NULL, &gl);
	if (ret == GLOB_NOMATCH) {
		if (!has_wildcard(path))
			fail(x, src, loc, -ENOENT, "File not found: %s", name);
		return x->err;
	}
	if (ret) {
		fail(x, src, loc, -EIO, "cannot list the files %s names", name);
		return x->err;
	}
	for (i = 0; i < gl.gl_pathc && !x->err; i++) {
		len = strlen(gl.gl_pathv[i]);
		if (len && gl.gl_pathv[i][len - 1] != '/')
			include_one(x, src, loc, gl.gl_pathv[i], depth);
	}
	globfree(&gl);
	return x->err;
}

struct line_scan {
	char *copy;		/* the line, its include statements blanked */
	size_t len;
	char **names;		/* the files named, in order */
	struct cgfw_loc *locs;
	size_t n;
	bool other_after;	/* a statement after an include */
	struct cgfw_loc other_loc;
};

static bool word_at(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(end - p) >= n && !memcmp(p, w, n) &&
	       (p + n == end || strchr(" \t\"", p[n]));
}

/*
 * The include statements of one line: a statement starts the line or
 * follows ';', '{' or '}'; strings and comments are passed by.
 */
static int scan_line(struct expander *x, const struct cgfw_source *src,
		     unsigned int line, struct line_scan *ls)
{
	char *p = ls->copy, *end = ls->copy + ls->len, *q;
	struct cgfw_loc loc, *locs;
	bool start = true;
	char **names;

	while (p < end && !x->err) {
		if (*p == ' ' || *p == '\t' || *p == '\r') {
			p++;
			continue;
		}
		if (*p == '#')
			break;
		if (start && word_at(p, end, "include")) {
			loc = (struct cgfw_loc){ line, p - ls->copy + 1,
						 p - ls->copy + 7 };
			q = p + 7;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			if (q == end || *q != '"' || !memchr(q + 1, '"', end - q - 1)) {
				fail(x, src, &loc, -EINVAL,
				     "include takes a file name in double quotes: include \"FILE\"");
				break;
			}
			q = memchr(q + 1, '"', end - q - 1);
			names = realloc(ls->names, (ls->n + 1) * sizeof(*names));
			if (names)
				ls->names = names;
			locs = names ? realloc(ls->locs, (ls->n + 1) * sizeof(loc)) :
				       NULL;
			if (!locs) {
				x->err = -ENOMEM;
				break;
			}
			ls->locs = locs;
			p = strchr(p, '"') + 1;
			ls->names[ls->n] = strndup(p, q - p);
			ls->locs[ls->n++] = loc;
			if (!ls->names[ls->n - 1]) {
				x->err = -ENOMEM;
				break;
			}
			memset(ls->copy + loc.col - 1, ' ', q + 1 - (ls->copy + loc.col - 1));
			p = q + 1;
			start = false;
			continue;
		}
		if (ls->n && !ls->other_after && *p != ';') {
			ls->other_after = true;
			ls->other_loc = (struct cgfw_loc){ line, p - ls->copy + 1,
							   p - ls->copy + 1 };
		}
		start = *p == ';' || *p == '{' || *p == '}';
		if (*p == '"') {
			q = memchr(p + 1, '"', end - p - 1);
			p = q ? q + 1 : end;
			continue;
		}
		p++;
	}
	if (!x->err && ls->other_after)
		fail(x, src, &ls->other_loc, -EINVAL,
		     "cgfw puts an included file after the line of its include: put what follows the include on a line of its own");
	return x->err;
}

static void line_scan_release(struct line_scan *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		free(ls->names[i]);
	free(ls->names);
	free(ls->locs);
	free(ls->copy);
}

static int expand(struct expander *x, const struct cgfw_source *src,
		  const char *file, unsigned int depth)
{
	const char *p = src->text, *end = src->text + src->len, *nl;
	struct line_scan ls;
	unsigned int line = 1;
	size_t i;

	span(x, file, 1);
	for (; p < end && !x->err; p = nl + 1, line++) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		memset(&ls, 0, sizeof(ls));
		ls.len = nl - p;
		ls.copy = malloc(ls.len + 1);
		if (!ls.copy) {
			x->err = -ENOMEM;
			break;
		}
		memcpy(ls.copy, p, ls.len);
		ls.copy[ls.len] = '\0';
		if (!memmem(p, ls.len, "include", 7) ||
		    !scan_line(x, src, line, &ls)) {
			cgfw_sb_addn(&x->out, ls.copy, ls.len);
			cgfw_sb_adds(&x->out, "\n");
			x->out_line++;
		}
		for (i = 0; i < ls.n && !x->err; i++)
			include_pattern(x, src, &ls.locs[i], ls.names[i], depth);
		if (ls.n && !x->err)
			span(x, file, line + 1);
		line_scan_release(&ls);
		if (nl == end)
			break;
	}
	if (x->out.oom && !x->err)
		x->err = -ENOMEM;
	return x->err;
}

int cgfw_include_expand(struct cgfw_ctx *ctx, struct cgfw_source *src,
			size_t max_len)
{
	struct expander x = {
		.ctx = ctx, .root = src, .out_line = 1, .max_len = max_len,
	};

	if (!memmem(src->text, src->len, "include", 7))
		return 0;
	cgfw_sb_init(&x.out);
	expand(&x, src, src->name, 0);
	if (!x.err && x.n_spans == 1) {	/* the word, no statement */
		free(x.spans);
		cgfw_sb_release(&x.out);
		return 0;
	}
	if (x.err) {
		free(x.spans);
		cgfw_sb_release(&x.out);
		return x.err;
	}
	free(src->text);
	src->text = x.out.buf ? x.out.buf : strdup("");
	src->len = x.out.len;
	src->spans = x.spans;
	src->n_spans = x.n_spans;
	return src->text ? 0 : -ENOMEM;
}
