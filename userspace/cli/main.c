// SPDX-License-Identifier: GPL-2.0-or-later
/* cgfw: the command line, a thin layer over libcgfw. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cgfw/cgfw.h>

#include "daemon.h"

enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,
	EXIT_USAGE = 2,
};

struct cli {
	struct cgfw_ctx *ctx;
	const char *prog;
};

struct cmd {
	const char *name;
	int (*fn)(struct cli *cli, int argc, char **argv);
	const char *usage;
	const char *help;
};

#define BACKEND_SPEC "auto|nft|bpf|both|nft-native|nft-emulated"

static int usage_error(const struct cli *cli, const struct cmd *c,
		       const char *fmt, const char *arg)
{
	fprintf(stderr, "%s %s: ", cli->prog, c->name);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nUsage: %s %s %s\n", cli->prog, c->name, c->usage);
	return EXIT_USAGE;
}

static int lib_error(const struct cli *cli)
{
	const char *msg = cgfw_ctx__error(cli->ctx);

	if (*msg)
		fputs(msg, stderr);
	else
		fprintf(stderr, "Error: %s\n", strerror(errno));
	return EXIT_ERROR;
}

/* Options shared by the commands: -b BACKEND, -j, -o FILE, --pin DIR. */
struct opts {
	enum cgfw_backend backend;
	bool backend_given;
	bool json;
	bool handles;
	const char *output;
	const char *pin;
	const char *dir;
	bool no_guard;
	bool no_strict;
	bool no_hold;
};

static const struct cmd *current;

static int parse_opts(struct cli *cli, int argc, char **argv,
		      const char *optstring, struct opts *o, int *first_arg)
{
	static const struct option longopts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "handle", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "pin", required_argument, NULL, 'P' },
		{ "dir", required_argument, NULL, 'd' },
		{ "no-guard", no_argument, NULL, 'G' },
		{ "no-strict-modes", no_argument, NULL, 'S' },
		{ "no-hold", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		/* a long option is this command's only if its letter is */
		if (c != '?' && !strchr(optstring, c))
			c = '?';
		switch (c) {
		case 'b':
			if (cgfw_backend__from_str(optarg, &o->backend))
				return usage_error(cli, current,
						   "unknown backend '%s' (" BACKEND_SPEC ")",
						   optarg);
			o->backend_given = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'a':
			o->handles = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'P':
			o->pin = optarg;
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'G':
			o->no_guard = true;
			break;
		case 'S':
			o->no_strict = true;
			break;
		case 'H':
			o->no_hold = true;
			break;
		default:
			return usage_error(cli, current, "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	*first_arg = optind;
	return EXIT_OK;
}

static int compile_arg(struct cli *cli, int argc, char **argv, int i,
		       struct cgfw_ruleset **rs)
{
	if (argc - i != 1)
		return usage_error(cli, current, "%s",
				   argc - i ? "one FILE, please" :
					      "which FILE? ('-' reads standard input)");
	if (cgfw_ruleset__compile_file(cli->ctx, argv[i], NULL, rs))
		return lib_error(cli);
	return EXIT_OK;
}

static int do_apply(struct cli *cli, int argc, char **argv)
{
	struct cgfw_ruleset *rs = NULL;
	struct opts o;
	int i, ret;

	ret = parse_opts(cli, argc, argv, "+b:", &o, &i);
	ret = ret ? : compile_arg(cli, argc, argv, i, &rs);
	if (ret)
		return ret;
	CGFW_OPTS(cgfw_apply_opts, ao, .backend = o.backend);
	if (cgfw_ruleset__apply(cli->ctx, rs, &ao))
		ret = lib_error(cli);
	cgfw_ruleset__free(rs);
	return ret;
}

/*
 * Compiled by nft (in a shadow namespace: what nf_tables takes); with -b
 * bpf or both, also into programs, so that a rule the bpf backend cannot
 * compile is said with its place.
 */
static int do_check(struct cli *cli, int argc, char **argv)
{
	struct cgfw_ruleset *rs = NULL;
	struct opts o;
	int i, ret;

	ret = parse_opts(cli, argc, argv, "+b:", &o, &i);
	ret = ret ? : compile_arg(cli, argc, argv, i, &rs);
	CGFW_OPTS(cgfw_apply_opts, ao, .backend = o.backend);
	if (!ret && cgfw_ruleset__check(cli->ctx, rs, &ao))
		ret = lib_error(cli);
	cgfw_ruleset__free(rs);
	return ret;
}

static int do_compile(struct cli *cli, int argc, char **argv)
{
	struct cgfw_ruleset *rs = NULL;
	char *text = NULL;
	struct opts o;
	int i, ret;

	ret = parse_opts(cli, argc, argv, "+b:o:P:", &o, &i);
	if (ret)
		return ret;
	if (o.backend == CGFW_BACKEND_BOTH || o.backend == CGFW_BACKEND_AUTO) {
		if (o.backend_given)
			return usage_error(cli, current, "%s",
					   "compile shows one backend: -b nft or -b bpf");
		o.backend = CGFW_BACKEND_NFT;
	}
	if ((o.output || o.pin) && o.backend != CGFW_BACKEND_BPF)
		return usage_error(cli, current, "%s",
				   "-o and --pin are for the bpf backend: add -b bpf");
	ret = compile_arg(cli, argc, argv, i, &rs);
	if (ret)
		return ret;
	if (o.output)
		ret = cgfw_ruleset__bpf_object(cli->ctx, rs, o.output, &text);
	else if (o.pin)
		ret = cgfw_ruleset__bpf_pin(cli->ctx, rs, o.pin, &text);
	else if (o.backend == CGFW_BACKEND_BPF)
		ret = cgfw_ruleset__bpf_asm(cli->ctx, rs, &text);
	else
		ret = cgfw_ruleset__bytecode(rs, &text);
	if (ret) {
		ret = lib_error(cli);
	} else {
		if (o.output && !*text)
			printf("# %s: load it with 'bpftool prog loadall %s DIR'; it needs nothing else\n",
			       o.output, o.output);
		else if (o.output)
			printf("# %s: load it with 'bpftool prog loadall %s DIR', then fill its sets\n# (until then they are empty):\n",
			       o.output, o.output);
		fputs(text, stdout);
	}
	free(text);
	cgfw_ruleset__free(rs);
	return ret;
}

static int do_update(struct cli *cli, int argc, char **argv)
{
	struct opts o;
	char buf[1 << 16];
	size_t len = 0;
	ssize_t n;
	int i, ret, fd;

	ret = parse_opts(cli, argc, argv, "+", &o, &i);
	if (ret)
		return ret;
	if (argc - i != 1)
		return usage_error(cli, current, "%s",
				   "which FILE? ('-' reads standard input)");
	fd = strcmp(argv[i], "-") ? open(argv[i], O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		fprintf(stderr, "Error: cannot open %s: %s\n", argv[i],
			strerror(errno));
		return EXIT_ERROR;
	}
	while ((n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += n;
	if (fd)
		close(fd);
	if (n < 0 || len == sizeof(buf)) {
		fprintf(stderr, "Error: cannot read %s: %s\n", argv[i],
			n < 0 ? strerror(errno) :
			"larger than 64 KiB; split the update, or re-apply the table");
		return EXIT_ERROR;
	}
	if (cgfw_update(cli->ctx, argv[i], buf, len, NULL))
		return lib_error(cli);
	return EXIT_OK;
}

static int do_list(struct cli *cli, int argc, char **argv)
{
	struct cgfw_listing *l;
	char *text = NULL;
	struct opts o;
	int i, ret;

	ret = parse_opts(cli, argc, argv, "+ja", &o, &i);
	if (ret)
		return ret;
	if (argc - i > 1)
		return usage_error(cli, current, "%s", "at most one TABLE");
	CGFW_OPTS(cgfw_list_opts, lo, .table = argc - i ? argv[i] : NULL);
	CGFW_OPTS(cgfw_format_opts, fo, .json = o.json, .handles = o.handles);
	if (cgfw_listing__new(cli->ctx, &lo, &l))
		return lib_error(cli);
	if (cgfw_listing__format(l, &fo, &text))
		ret = lib_error(cli);
	else
		fputs(text, stdout);
	free(text);
	cgfw_listing__free(l);
	return ret;
}

static int do_delete(struct cli *cli, int argc, char **argv)
{
	struct opts o;
	int i, ret;

	ret = parse_opts(cli, argc, argv, "+", &o, &i);
	if (ret)
		return ret;
	if (argc - i != 1)
		return usage_error(cli, current, "%s", "which TABLE?");
	if (cgfw_table__delete(cli->ctx, argv[i]))
		return lib_error(cli);
	return EXIT_OK;
}

static int do_flush(struct cli *cli, int argc, char **argv)
{
	struct opts o;
	int i, ret;

	ret = parse_opts(cli, argc, argv, "+", &o, &i);
	if (ret)
		return ret;
	if (argc - i)
		return usage_error(cli, current, "unexpected '%s'", argv[i]);
	if (cgfw_flush(cli->ctx))
		return lib_error(cli);
	return EXIT_OK;
}

static int do_status(struct cli *cli, int argc, char **argv)
{
	CGFW_OPTS(cgfw_status, st);
	char *text = NULL;
	struct opts o;
	int i, ret;

	ret = parse_opts(cli, argc, argv, "+j", &o, &i);
	if (ret)
		return ret;
	if (argc - i)
		return usage_error(cli, current, "unexpected '%s'", argv[i]);
	CGFW_OPTS(cgfw_format_opts, fo, .json = o.json);
	if (cgfw_status__probe(cli->ctx, &st) ||
	    cgfw_status__format(&st, &fo, &text))
		return lib_error(cli);
	fputs(text, stdout);
	free(text);
	return EXIT_OK;
}

static void print_cb(enum cgfw_log_level level, const char *msg, void *data)
{
	(void)data;
	fprintf(stderr, "cgfw: %s%s\n", level == CGFW_LOG_WARN ? "warning: " : "",
		msg);
}

/* The command's context, in place of the one it has (if any). */
static int new_ctx(struct cli *cli, bool hold_tables)
{
	CGFW_OPTS(cgfw_ctx_opts, copts, .print = print_cb,
		  .log_level = CGFW_LOG_INFO, .hold_tables = hold_tables);

	cgfw_ctx__free(cli->ctx);
	cli->ctx = NULL;
	if (cgfw_ctx__new(&cli->ctx, &copts)) {
		fprintf(stderr, "cgfw: %s\n", strerror(errno));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

static int do_daemon(struct cli *cli, int argc, char **argv)
{
	struct opts o;
	int i, ret;

	struct cgfw_daemon_opts d;

	ret = parse_opts(cli, argc, argv, "+b:d:GSH", &o, &i);
	if (ret)
		return ret;
	if (i != argc)
		return usage_error(cli, current, "unexpected argument '%s'",
				   argv[i]);
	/* its tables are its own while it runs */
	if (!o.no_hold && new_ctx(cli, true))
		return EXIT_ERROR;
	d = (struct cgfw_daemon_opts){
		.dir = o.dir ? o.dir : "/etc/cgfw",
		.backend = o.backend,
		.guard = !o.no_guard,
		.strict = !o.no_strict,
	};
	return cgfw_cli_daemon(cli->ctx, &d);
}

static int do_help(struct cli *cli, int argc, char **argv);

static const struct cmd cmds[] = {
	{ "apply", do_apply, "[-b " BACKEND_SPEC "] FILE|-",
	  "apply a ruleset; a table cgfw installed before is replaced atomically" },
	{ "check", do_check, "[-b " BACKEND_SPEC "] FILE|-", "parse and compile as apply would (with bpf, into programs too), apply nothing" },
	{ "compile", do_compile, "[-b nft|bpf] [-o FILE.o | --pin DIR] FILE|-",
	  "print the nf_tables bytecode (nft) or the BPF programs (bpf) of every rule, with its source line" },
	{ "update", do_update, "FILE|-",
	  "change installed tables in place: 'add element cgroup TABLE SET { ... }', and with the nft backend 'add rule', 'insert rule', 'replace rule', 'delete rule', 'flush chain'" },
	{ "list", do_list, "[-j] [-a] [TABLE]",
	  "show what cgfw installed, in nft syntax with live counters" },
	{ "delete", do_delete, "TABLE", "remove one table cgfw installed" },
	{ "flush", do_flush, "", "remove every table cgfw installed, and nothing else" },
	{ "status", do_status, "[-j]", "what this machine supports" },
	{ "daemon", do_daemon, "[-b " BACKEND_SPEC "] [-d DIR] [--no-guard] [--no-strict-modes] [--no-hold]",
	  "apply every DIR/*.nft (default /etc/cgfw) and keep each table bound to its cgroup paths as they are removed and made again; chains with policy drop are guarded until then; runs in the foreground" },
	{ "help", do_help, "", "this text" },
	{ NULL, NULL, NULL, NULL },
};

static int do_help(struct cli *cli, int argc, char **argv)
{
	const struct cmd *c;

	(void)argc;
	(void)argv;
	printf("Usage: %s COMMAND [OPTIONS] [ARGS]\n\n", cli->prog);
	for (c = cmds; c->name; c++)
		printf("  %s %-9s %s\n      %s\n", cli->prog, c->name, c->usage,
		       c->help);
	printf("\n  %s --version\n", cli->prog);
	printf("\nExit status: 0 success, 1 error, 2 bad usage. See cgfw(8).\n");
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	struct cli cli = { .prog = "cgfw" };
	const struct cmd *c;
	int ret;

	if (argc < 2) {
		do_help(&cli, 0, NULL);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return do_help(&cli, 0, NULL);
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("cgfw %s (libcgfw %s)\n", CGFW_VERSION, cgfw_version());
		return EXIT_OK;
	}
	for (c = cmds; c->name; c++)
		if (!strcmp(c->name, argv[1]))
			break;
	if (!c->name) {
		fprintf(stderr, "%s: unknown command '%s'; '%s help' lists them\n",
			cli.prog, argv[1], cli.prog);
		return EXIT_USAGE;
	}
	if (new_ctx(&cli, false))
		return EXIT_ERROR;
	current = c;
	ret = c->fn(&cli, argc - 1, argv + 1);
	cgfw_ctx__free(cli.ctx);
	return ret;
}
