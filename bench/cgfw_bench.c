// SPDX-License-Identifier: GPL-2.0
/*
 * cgfw benchmarks: one driver, one run, every configuration interleaved
 * (docs/benchmarks.rst has the method and the results).
 *
 *   cgfw_bench [--quick] [--rounds N] [--secs S] [--groups G,...]
 *              [--paths P,...] [--rules N,...] [--sets N,...]
 *              [--cgroups N,...] [--update N] [--out DIR] [-v] [--list]
 *              [--group-rounds G=N,...]
 *
 * Groups: hook (nothing bound, empty chain or program, one rule; each
 * direction, IPv4 and IPv6, UDP and TCP), rules (1 to 10,000, friendly
 * and mixed shapes), sets (hash and interval, 1 to 1,000,000 elements),
 * cgroups (1 to 1,000 bound at one level, a 10-level hierarchy), update
 * (one element into a 100,000-element set). Paths: paths.c.
 *
 * A setup is one (path, ruleset); its probes are measured after it is
 * applied. Each round applies and measures every setup once, in an order
 * rotated from round to round; a setup that fails to apply is reported
 * with its error and skipped in later rounds. After a setup is removed,
 * its live probes run once more with nothing installed: the difference to
 * that baseline, next to the value in time, is what a setup costs (with
 * --quick there is no such baseline: the difference to the round's
 * "none" is). Writes
 * DIR/raw.csv (every value, as it comes), DIR/summary.csv (median,
 * quartiles, extremes, the difference to the adjacent baseline and to the
 * group's "none" paired by round), DIR/env.txt.
 *
 * cgfw_bench --ab BIN [--rules N] [--rounds N]: instead of the plan,
 * two builds' test runs of the mixed list of N rules (default 10,000)
 * in one process (ab.c); CGFW is build A's cgfw, BIN build B's.
 *
 * Runs as root in its own network and mount namespace, with cgroup2 on
 * /sys/fs/cgroup and its own bpf file system on /sys/fs/bpf. Timings are
 * for comparing within one run only.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cgfwcmd.h"
#include "netprobe.h"

#define MAX_ROUNDS 32
#define MAX_PR 12
#define HIER 10

char cg_root[256];
const char *cg_mount = "/sys/fs/cgroup";
bool verbose;

static struct cgref flat[MAX_CG], hier[HIER];
static int n_flat;

struct setup {
	const char *group, *shape;
	const struct path *path;
	struct ruleset rs;
	int n;			/* in the CSV: rules, elements or cgroups */
	int proto;
	struct probe pr[MAX_PR];
	int n_pr;
	double v[MAX_ROUNDS][MAX_PR];
	double base[MAX_ROUNDS][MAX_PR];	/* right after, nothing installed */
	double apply_ms[MAX_ROUNDS], kmem_kb[MAX_ROUNDS];
	bool ran[MAX_ROUNDS];
	struct progstat ps;
	char err[300];
	bool failed;
};

static struct setup *setups;
static int n_setups;

static struct {
	int rounds;
	double secs;
	bool quick;
	char groups[256], paths[512];
	int rules[16], n_rules;
	int sets[16], n_sets;
	int cgs[16], n_cgs;
	int update;
	const char *out;
	const char *ab;		/* --ab: build B's cgfw binary */
	char group_rounds[128];	/* "hook=9,sets=3": more or fewer for some */
	bool native, systemd, list;
} opt = {
	.rounds = 7, .secs = 0.5, .update = 100000, .out = "build/bench",
	.group_rounds = "rules=5,cgroups=5,sets=3,update=5",
	.groups = "hook,rules,sets,cgroups,update",
};

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (!*list)
		return true;
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

/* The rounds a group's setups run: --rounds, or --group-rounds G=N. */
static int group_rounds(const char *group)
{
	const char *p = opt.group_rounds;
	size_t n = strlen(group);

	while ((p = strstr(p, group))) {
		if ((p == opt.group_rounds || p[-1] == ',') && p[n] == '=') {
			int r = atoi(p + n + 1);

			return r < 1 ? 1 : r > opt.rounds ? opt.rounds : r;
		}
		p += n;
	}
	return opt.rounds;
}

static int parse_ints(const char *s, int *v, int max)
{
	int n = 0;
	char *e;

	while (*s && n < max) {
		v[n++] = strtol(s, &e, 10);
		s = *e ? e + 1 : e;
	}
	return n;
}

static int max_of(const int *v, int n)
{
	int m = 0, i;

	for (i = 0; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* ---- the plan ---- */

static struct setup *add_setup(const char *group, const char *pname,
			       const char *shape, enum kind kind, enum dir dir,
			       int n)
{
	const struct path *p = path_by_name(pname);
	struct setup *s;

	if (!p || !in_list(opt.paths, pname) ||
	    ((p->flags & P_NATIVE) && !opt.native) ||
	    ((p->flags & P_SYSTEMD) && !opt.systemd))
		return NULL;
	if (p != path_by_name("none")) {
		if (kind == K_EMPTY && (p->flags & P_NO_EMPTY))
			return NULL;
		if ((kind == K_HASH || kind == K_INTERVAL) &&
		    (p->flags & P_NO_SETS))
			return NULL;
		if (kind == K_HASH && (p->flags & P_NO_HASH))
			return NULL;
	}
	setups = realloc(setups, (n_setups + 1) * sizeof(*setups));
	s = &setups[n_setups++];
	memset(s, 0, sizeof(*s));
	s->group = group;
	s->shape = shape;
	s->path = p;
	s->rs.kind = kind;
	s->rs.dir = dir;
	s->rs.n = n;
	s->n = n;
	s->rs.cg = &flat[0];
	s->rs.n_cg = 1;
	s->rs.sender = &flat[0];
	for (int r = 0; r < MAX_ROUNDS; r++)
		for (int i = 0; i < MAX_PR; i++)
			s->v[r][i] = s->base[r][i] = -1;
	return s;
}

/* The probe added, or NULL (no setup, a probe of that name already, or
 * a test run where the path has no program) */
static struct probe *add_probe(struct setup *s, const char *name,
			       enum probe_kind kind, enum dir dir,
			       const struct pkt *k, const char *unit)
{
	struct probe *pr;
	int i;

	if (!s)
		return NULL;
	for (i = 0; i < s->n_pr; i++)
		if (!strcmp(s->pr[i].name, name))
			return NULL;
	if (kind == PR_TESTRUN && !s->path->prog_fd)
		return NULL;
	if (s->n_pr == MAX_PR)
		abort();
	pr = &s->pr[s->n_pr++];
	snprintf(pr->name, sizeof(pr->name), "%s", name);
	pr->kind = kind;
	pr->dir = dir;
	if (k)
		pr->pkt = *k;
	pr->expect = 1;
	pr->unit = unit;
	return pr;
}

static void pkt_udp(struct pkt *k, int v6, int proto)
{
	shape_friendly.miss(1, v6, k);
	k->proto = proto;
}

/* The group's "none", and the live probes of every peer on it too. */
static struct setup *group_none(const char *group)
{
	int i;

	for (i = 0; i < n_setups; i++)
		if (!strcmp(setups[i].group, group) &&
		    !strcmp(setups[i].path->name, "none"))
			return &setups[i];
	return add_setup(group, "none", "none", K_NONE, EGRESS, 0);
}

static void live(const char *group, struct setup *s, const char *name,
		 enum probe_kind kind, enum dir dir, const struct pkt *k)
{
	const char *unit = kind == PR_TCP ? "ns/transaction" : "ns/pkt";
	/* made before the group's first peer: the array does not move */
	struct setup *none = group_none(group);

	add_probe(none, name, kind, dir, k, unit);
	add_probe(s, name, kind, dir, k, unit);
}

static void plan_hook(void)
{
	static const char *const paths[] = {
		"prog-empty", "bpf", "nft-native", "nft-emulated", "both",
		"composed", "nft-socket", "nft-socket-vmap", "ipt-nft",
		"ipt-legacy", "systemd", "systemd-unit", NULL,
	};
	static const char elsewhere[] = "prog-empty,bpf,nft-native,nft-emulated";
	struct pkt u4, u6, t4, t6;
	int i, d, proto;

	pkt_udp(&u4, 0, 17);
	pkt_udp(&u6, 1, 17);
	pkt_udp(&t4, 0, 6);
	pkt_udp(&t6, 1, 6);
	group_none("hook");
	for (i = 0; paths[i]; i++) {
		for (d = EGRESS; d <= INGRESS; d++) {
			const char *a = d == EGRESS ? "eg" : "in";
			char n4[16], n6[16];
			struct setup *s;

			snprintf(n4, sizeof(n4), "udp4-%s", a);
			snprintf(n6, sizeof(n6), "udp6-%s", a);
			s = add_setup("hook", paths[i], "empty", K_EMPTY, d, 0);
			live("hook", s, n4, PR_UDP, d, &u4);
			live("hook", s, n6, PR_UDP, d, &u6);
			if (!opt.quick) {
				live("hook", s, "tcp4", PR_TCP, d, &t4);
				live("hook", s, "tcp6", PR_TCP, d, &t6);
			}
			add_probe(s, "tr4", PR_TESTRUN, d, &u4, "ns/run");
			add_probe(s, "tr6", PR_TESTRUN, d, &u6, "ns/run");
			/*
			 * Bound to a sibling, packets from a cgroup with
			 * nothing bound: what the paths' global switches
			 * (static keys, netfilter hooks) cost everyone else
			 */
			if (in_list(elsewhere, paths[i])) {
				s = add_setup("hook", paths[i], "elsewhere",
					      K_EMPTY, d, 0);
				if (s) {
					s->rs.cg = &flat[1];
					s->rs.sender = &flat[0];
				}
				live("hook", s, n4, PR_UDP, d, &u4);
				live("hook", s, n6, PR_UDP, d, &u6);
			}
			if (!strcmp(paths[i], "prog-empty"))
				continue;
			for (proto = 17; proto; proto = proto == 17 ? 6 : 0) {
				if (opt.quick && proto == 6 && d == INGRESS)
					continue;
				s = add_setup("hook", paths[i], "one", K_RULES,
					      d, 1);
				if (!s)
					continue;
				s->proto = proto;
				s->rs.rules = shape_friendly.rules(1, proto);
				if (proto == 17) {
					live("hook", s, n4, PR_UDP, d, &u4);
					s = &setups[n_setups - 1];
					live("hook", s, n6, PR_UDP, d, &u6);
					s = &setups[n_setups - 1];
					add_probe(s, "tr4", PR_TESTRUN, d, &u4,
						  "ns/run");
					add_probe(s, "tr6", PR_TESTRUN, d, &u6,
						  "ns/run");
				} else {
					live("hook", s, "tcp4", PR_TCP, d, &t4);
					s = &setups[n_setups - 1];
					live("hook", s, "tcp6", PR_TCP, d, &t6);
					s = &setups[n_setups - 1];
					add_probe(s, "tr4-tcp", PR_TESTRUN, d,
						  &t4, "ns/run");
					add_probe(s, "tr6-tcp", PR_TESTRUN, d,
						  &t6, "ns/run");
				}
			}
		}
	}
}

/*
 * The classifier's packets on a mixed list of @n rules: a hit early, a
 * hit late and a miss, IPv4 and IPv6 (tr4-early ... tr6-miss), each
 * with the verdict nft gives it.
 */
static void mixed_testruns(struct setup *s, int n, int maxn)
{
	static const char *const kinds[] = { "early", "late", "miss" };
	char name[32];
	struct probe *pr;
	struct pkt p;
	int kind, v6, verdict;

	for (v6 = 0; v6 < 2; v6++)
		for (kind = 0; kind < 3; kind++) {
			verdict = mixed_bench_packet(n, maxn, kind, v6, &p);
			if (verdict < 0)
				continue;
			snprintf(name, sizeof(name), "tr%d-%s", v6 ? 6 : 4,
				 kinds[kind]);
			pr = add_probe(s, name, PR_TESTRUN, EGRESS, &p,
				       "ns/run");
			if (pr)
				pr->expect = verdict;
		}
}

static void plan_rules(void)
{
	static const char *const paths[] = {
		"bpf", "nft-native", "nft-emulated", "both", "composed",
		"nft-socket", "nft-socket-vmap", "ipt-nft", "ipt-legacy", NULL,
	};
	const struct shape *shapes[] = { &shape_friendly, &shape_mixed };
	int maxn = max_of(opt.rules, opt.n_rules), i, j, k;

	group_none("rules");
	for (k = 0; k < 2; k++) {
		const struct shape *sh = shapes[k];
		char lname[32], tname[32];
		struct pkt p;

		if (sh->miss(maxn, 0, &p)) {
			fprintf(stderr, "bench: no packet misses the %s rules\n",
				sh->name);
			continue;
		}
		snprintf(lname, sizeof(lname), "udp4-eg-%s", sh->name);
		snprintf(tname, sizeof(tname), "tr4-%s", sh->name);
		live("rules", NULL, lname, PR_UDP, EGRESS, &p);
		for (i = 0; paths[i]; i++)
			for (j = 0; j < opt.n_rules; j++) {
				struct setup *s = add_setup("rules", paths[i],
							    sh->name, K_RULES,
							    EGRESS, opt.rules[j]);

				if (!s)
					continue;
				s->proto = 17;
				s->rs.rules = sh->rules(maxn, 17);
				live("rules", s, lname, PR_UDP, EGRESS, &p);
				s = &setups[n_setups - 1];
				add_probe(s, tname, PR_TESTRUN, EGRESS, &p,
					  "ns/run");
				if (sh == &shape_mixed)
					mixed_testruns(s, opt.rules[j], maxn);
			}
	}
}

static void gap_pkt(struct pkt *p, int n)
{
	memset(p, 0, sizeof(*p));
	p->proto = 17;
	set_gap_addr(n, p->daddr, sizeof(p->daddr));
	strcpy(p->saddr, p->daddr);
	p->sport = 40000;
	p->dport = 9999;
}

static void plan_sets(void)
{
	static const char *const paths[] = {
		"bpf", "nft-native", "nft-emulated", "nft-socket", "systemd",
		"systemd-unit", NULL,
	};
	int maxn = max_of(opt.sets, opt.n_sets), i, j, k;
	struct pkt p;

	gap_pkt(&p, maxn);
	group_none("sets");
	live("sets", NULL, "udp4-eg-set", PR_UDP, EGRESS, &p);
	for (k = K_HASH; k <= K_INTERVAL; k++)
		for (i = 0; paths[i]; i++)
			for (j = 0; j < opt.n_sets; j++) {
				struct setup *s = add_setup("sets", paths[i],
					k == K_HASH ? "hash" : "interval", k,
					EGRESS, opt.sets[j]);

				if (!s)
					continue;
				gap_pkt(&p, opt.sets[j]);
				add_probe(s, "udp4-eg-set", PR_UDP, EGRESS, &p,
					  "ns/pkt");
				add_probe(s, "tr4-set", PR_TESTRUN, EGRESS, &p,
					  "ns/run");
			}
}

static void plan_cgroups(void)
{
	static const char *const paths[] = {
		"bpf", "nft-native", "nft-emulated", "nft-socket",
		"nft-socket-vmap", "ipt-nft", "ipt-legacy", "systemd",
		"systemd-unit", NULL,
	};
	struct pkt u4;
	int i, j, h;

	pkt_udp(&u4, 0, 17);
	group_none("cgroups");
	live("cgroups", NULL, "udp4-eg", PR_UDP, EGRESS, &u4);
	for (i = 0; paths[i]; i++) {
		for (j = 0; j < opt.n_cgs; j++) {
			struct setup *s = add_setup("cgroups", paths[i], "flat",
						    K_RULES, EGRESS, 1);

			if (!s)
				continue;
			s->proto = 17;
			s->rs.rules = shape_friendly.rules(1, 17);
			s->rs.n_cg = opt.cgs[j];
			s->n = opt.cgs[j];
			s->rs.sender = &flat[opt.cgs[j] - 1];
			add_probe(s, "udp4-eg", PR_UDP, EGRESS, &u4, "ns/pkt");
			add_probe(s, "tr4", PR_TESTRUN, EGRESS, &u4, "ns/run");
		}
		for (h = 0; h < 2; h++) {
			struct setup *s = add_setup("cgroups", paths[i],
				h ? "hier-all" : "hier-top", K_RULES, EGRESS, 1);

			if (!s)
				continue;
			s->proto = 17;
			s->rs.rules = shape_friendly.rules(1, 17);
			s->rs.cg = hier;
			s->rs.n_cg = h ? HIER : 1;
			s->n = s->rs.n_cg;
			s->rs.sender = &hier[HIER - 1];
			add_probe(s, "udp4-eg", PR_UDP, EGRESS, &u4, "ns/pkt");
		}
	}
}

static void plan_update(void)
{
	static const char *const paths[] = {
		"bpf", "nft-native", "nft-emulated", "both", "nft-socket",
		"systemd", "systemd-unit", NULL,
	};
	int i;

	for (i = 0; paths[i]; i++) {
		bool sd = !strncmp(paths[i], "systemd", 7);
		struct setup *s = add_setup("update", paths[i],
					    sd ? "interval" : "hash",
					    sd ? K_INTERVAL : K_HASH, EGRESS,
					    opt.update);

		if (!s)
			continue;
		if (s->path->update)
			add_probe(s, "update", PR_UPDATE, EGRESS, NULL, "us");
		if (s->path->update_raw)
			add_probe(s, "update-raw", PR_UPDATE_RAW, EGRESS, NULL,
				  "us");
		if (s->path->reapply)
			add_probe(s, "reapply", PR_REAPPLY, EGRESS, NULL, "us");
	}
}

/* ---- running it ---- */

/* Kernel memory that nf_tables objects and BPF maps and programs take:
 * unreclaimable slab, vmalloc, per-CPU (reclaimable slab, dentries and
 * inodes, moves with whatever else the machine does). */
static double kmem_kb(void)
{
	char line[256];
	double v = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SUnreclaim:", 11) ||
		    !strncmp(line, "VmallocUsed:", 12) ||
		    !strncmp(line, "Percpu:", 7))
			v += strtod(strchr(line, ':') + 1, NULL);
	fclose(f);
	return v;
}

static const char *dir_str(enum dir d)
{
	return d == EGRESS ? "egress" : "ingress";
}

static void csv_field(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static const char *fmt_secs(double s, char *buf, size_t size)
{
	if (s >= 3600)
		snprintf(buf, size, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, size, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, size, "%ds", (int)s);
	return buf;
}

static void run_setup(struct setup *s, int round, int slot, FILE *raw)
{
	const struct path *p = s->path;
	bool legacy = p->flags & P_LEGACY_NS;
	char err[300] = "";
	double k0, t0;
	int i, ret;

	if (legacy && netns_enter_legacy()) {
		snprintf(s->err, sizeof(s->err), "legacy namespace: %s",
			 strerror(errno));
		s->failed = true;
		return;
	}
	k0 = kmem_kb();
	t0 = now();
	ret = p->apply(&s->rs, err, sizeof(err));
	s->apply_ms[round] = (now() - t0) * 1e3;
	s->kmem_kb[round] = kmem_kb() - k0;
	s->ran[round] = true;
	if (ret) {
		snprintf(s->err, sizeof(s->err), "apply: %s", err);
		s->failed = true;
		fprintf(stderr, "\nbench: %s %s %s n=%d: %s\n", s->group, p->name,
			s->shape, s->n, s->err);
	} else {
		if (p->stat && !s->ps.xlated && !s->ps.memlock)
			p->stat(&s->rs, &s->ps);
		for (i = 0; i < s->n_pr; i++) {
			s->v[round][i] = probe_run(&s->pr[i], p, &s->rs, err,
						   sizeof(err));
			if (s->v[round][i] < 0 && !*s->err)
				snprintf(s->err, sizeof(s->err), "%s: %s",
					 s->pr[i].name, err);
		}
	}
	p->clear(&s->rs);
	if (legacy)
		netns_leave_legacy();
	/* the live probes again, nothing installed, in the main namespace:
	 * the baseline next to the value in time (not in the quick plan:
	 * there the cost is the difference to the round's "none") */
	for (i = 0; !ret && !opt.quick && i < s->n_pr; i++)
		if (s->pr[i].kind == PR_UDP || s->pr[i].kind == PR_TCP)
			s->base[round][i] = probe_run(&s->pr[i],
						      path_by_name("none"),
						      &s->rs, err, sizeof(err));
	for (i = 0; i < (ret ? 1 : s->n_pr); i++) {
		fprintf(raw, "%d,%d,%s,%s,%s,%d,%s,%s,%s,%s,", round, slot,
			s->group, p->name, s->shape, s->n, dir_str(s->rs.dir),
			s->proto == 6 ? "tcp" : s->proto == 17 ? "udp" : "",
			ret ? "" : s->pr[i].name, ret ? "" : s->pr[i].unit);
		if (!ret && s->v[round][i] >= 0)
			fprintf(raw, "%.1f", s->v[round][i]);
		fputc(',', raw);
		if (!ret && s->base[round][i] >= 0)
			fprintf(raw, "%.1f", s->base[round][i]);
		fprintf(raw, ",%.1f,%.0f,", s->apply_ms[round],
			s->kmem_kb[round]);
		csv_field(raw, ret ? s->err : s->v[round][i] < 0 ? err : "");
		fputc('\n', raw);
	}
	fflush(raw);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* median and quartiles of @n sorted values (linear interpolation) */
static double quant(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;

	if (n == 0)
		return NAN;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

static const struct setup *none_of(const struct setup *s)
{
	int i;

	for (i = 0; i < n_setups; i++)
		if (!strcmp(setups[i].group, s->group) &&
		    !strcmp(setups[i].path->name, "none"))
			return &setups[i];
	return NULL;
}

static void summary(FILE *f)
{
	int i, j, r;

	fprintf(f, "group,path,label,shape,n,dir,proto,probe,unit,rounds,median,q1,q3,min,max,delta,delta_q1,delta_q3,delta_round,apply_ms,kmem_kb,memlock_kb,xlated,jited,verified,error\n");
	for (i = 0; i < n_setups; i++) {
		const struct setup *s = &setups[i], *none = none_of(s);
		double am[MAX_ROUNDS], km[MAX_ROUNDS];
		int na = 0;

		for (r = 0; r < opt.rounds; r++)
			if (s->ran[r]) {
				am[na] = s->apply_ms[r];
				km[na++] = s->kmem_kb[r];
			}
		qsort(am, na, sizeof(double), cmp_d);
		qsort(km, na, sizeof(double), cmp_d);
		for (j = 0; j < (s->n_pr ? s->n_pr : 1); j++) {
			const struct probe *pr = s->n_pr ? &s->pr[j] : NULL;
			double v[MAX_ROUNDS], d[MAX_ROUNDS], a[MAX_ROUNDS];
			int nv = 0, nd = 0, na2 = 0, k = -1, m;

			for (m = 0; pr && none && s != none && m < none->n_pr; m++)
				if (!strcmp(none->pr[m].name, pr->name))
					k = m;
			for (r = 0; pr && r < opt.rounds; r++) {
				if (!s->ran[r] || s->v[r][j] < 0)
					continue;
				v[nv++] = s->v[r][j];
				if (k >= 0 && none->ran[r] && none->v[r][k] > 0)
					d[nd++] = s->v[r][j] - none->v[r][k];
				if (s->base[r][j] > 0)
					a[na2++] = s->v[r][j] - s->base[r][j];
			}
			qsort(v, nv, sizeof(double), cmp_d);
			qsort(d, nd, sizeof(double), cmp_d);
			qsort(a, na2, sizeof(double), cmp_d);
			fprintf(f, "%s,%s,", s->group, s->path->name);
			csv_field(f, s->path->label);
			fprintf(f, ",%s,%d,%s,%s,%s,%s,%d,", s->shape, s->n,
				dir_str(s->rs.dir),
				s->proto == 6 ? "tcp" : s->proto == 17 ? "udp" : "",
				pr ? pr->name : "", pr ? pr->unit : "", nv);
			if (nv)
				fprintf(f, "%.1f,%.1f,%.1f,%.1f,%.1f,",
					quant(v, nv, .5), quant(v, nv, .25),
					quant(v, nv, .75), v[0], v[nv - 1]);
			else
				fprintf(f, ",,,,,");
			if (na2)
				fprintf(f, "%.1f,%.1f,%.1f,", quant(a, na2, .5),
					quant(a, na2, .25), quant(a, na2, .75));
			else
				fprintf(f, ",,,");
			if (nd)
				fprintf(f, "%.1f,", quant(d, nd, .5));
			else
				fprintf(f, ",");
			if (na)
				fprintf(f, "%.1f,%.0f,", quant(am, na, .5),
					quant(km, na, .5));
			else
				fprintf(f, ",,");
			if (s->ps.memlock || s->ps.xlated)
				fprintf(f, "%.1f,%u,%u,%u,", s->ps.memlock / 1024.0,
					s->ps.xlated, s->ps.jited,
					s->ps.verified);
			else
				fprintf(f, ",,,,");
			csv_field(f, s->err);
			fputc('\n', f);
		}
	}
}

static void env(FILE *f)
{
	char line[256], rev[64] = "", lavg[64] = "";
	struct utsname u;
	FILE *p;

	uname(&u);
	p = fopen("/proc/loadavg", "r");
	if (p && fgets(lavg, sizeof(lavg), p))
		lavg[strcspn(lavg, "\n")] = '\0';
	if (p)
		fclose(p);
	p = popen("git rev-parse --short HEAD 2>/dev/null", "r");
	if (p && fgets(rev, sizeof(rev), p))
		rev[strcspn(rev, "\n")] = '\0';
	if (p)
		pclose(p);
	fprintf(f, "kernel: %s %s\n", u.release, u.version);
	p = fopen("/proc/cpuinfo", "r");
	while (p && fgets(line, sizeof(line), p))
		if (!strncmp(line, "model name", 10)) {
			fprintf(f, "cpu:%s", strchr(line, ':') + 1);
			break;
		}
	if (p)
		fclose(p);
	fprintf(f, "cpus: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	p = fopen("/proc/sys/net/core/bpf_jit_enable", "r");
	if (p && fgets(line, sizeof(line), p))
		fprintf(f, "bpf_jit_enable: %s", line);
	if (p)
		fclose(p);
	fprintf(f, "commit: %s\nloadavg: %s\nnative family: %s\nsystemd as PID 1: %s\n",
		rev, lavg, opt.native ? "yes" : "no",
		opt.systemd ? "yes" : "no");
	fprintf(f, "rounds: %d%s%s\nsecs per probe: %.2f\nquick: %s\ngroups: %s\npaths: %s\n",
		opt.rounds, *opt.group_rounds ? ", " : "", opt.group_rounds,
		opt.secs, opt.quick ? "yes" : "no", opt.groups,
		*opt.paths ? opt.paths : "all");
	fprintf(f, "mixed shape: %s\n", shape_mixed.generator);
}

static int bench(void)
{
	char path[PATH_MAX], eta[32];
	FILE *raw, *sum;
	int r, i, done = 0, total;
	bool tty = isatty(2);
	double t0 = now();

	if (!opt.list && probes_init())
		return 1;
	probes_set_secs(opt.secs);
	if (in_list(opt.groups, "hook"))
		plan_hook();
	if (in_list(opt.groups, "rules"))
		plan_rules();
	if (in_list(opt.groups, "sets"))
		plan_sets();
	if (in_list(opt.groups, "cgroups"))
		plan_cgroups();
	if (in_list(opt.groups, "update"))
		plan_update();
	if (opt.list) {
		for (i = 0; i < n_setups; i++) {
			const struct setup *s = &setups[i];
			int j;

			printf("%-7s %-15s %-8s n=%-7d %-7s", s->group,
			       s->path->name, s->shape, s->n, dir_str(s->rs.dir));
			for (j = 0; j < s->n_pr; j++)
				printf(" %s", s->pr[j].name);
			printf("\n");
		}
		printf("%d setups, %d rounds\n", n_setups, opt.rounds);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/env.txt", opt.out);
	sum = fopen(path, "a");
	if (sum && *mixed_packet)
		fprintf(sum, "mixed packet: %s\n", mixed_packet);
	if (sum)
		fclose(sum);
	snprintf(path, sizeof(path), "%s/raw.csv", opt.out);
	raw = fopen(path, "w");
	if (!raw) {
		perror(path);
		return 1;
	}
	fprintf(raw, "round,slot,group,path,shape,n,dir,proto,probe,unit,value,base,apply_ms,kmem_kb,error\n");
	for (i = 0, total = 0; i < n_setups; i++)
		total += group_rounds(setups[i].group);
	fprintf(stderr, "bench: %d setups, %d rounds, %.2f s a probe\n",
		n_setups, opt.rounds, opt.secs);
	for (r = 0; r < opt.rounds; r++) {
		int off = n_setups * r / opt.rounds;

		for (i = 0; i < n_setups; i++) {
			struct setup *s = &setups[(i + off) % n_setups];
			double el = now() - t0;

			if (r >= group_rounds(s->group))
				continue;
			done++;
			if (s->failed)
				continue;
			fprintf(stderr, "%sbench [%*d/%d] round %d/%d  %-7s %-15s %-8s n=%-7d %-7s  %s left%s",
				tty ? "\r\033[K" : "", (int)strlen("99999"),
				done, total, r + 1, opt.rounds, s->group,
				s->path->name, s->shape, s->n,
				dir_str(s->rs.dir),
				done > 1 ? fmt_secs(el / (done - 1) *
						    (total - done + 1), eta,
						    sizeof(eta)) : "?",
				tty ? "" : "\n");
			run_setup(s, r, i, raw);
		}
	}
	fprintf(stderr, "%sbench: done in %s\n", tty ? "\r\033[K" : "",
		fmt_secs(now() - t0, eta, sizeof(eta)));
	fclose(raw);
	snprintf(path, sizeof(path), "%s/summary.csv", opt.out);
	sum = fopen(path, "w");
	if (!sum) {
		perror(path);
		return 1;
	}
	summary(sum);
	fclose(sum);
	snprintf(path, sizeof(path), "%s/env.txt", opt.out);
	sum = fopen(path, "a");
	if (sum) {
		char lavg[64] = "";
		FILE *p = fopen("/proc/loadavg", "r");

		if (p && fgets(lavg, sizeof(lavg), p))
			fprintf(sum, "loadavg at the end: %s", lavg);
		if (p)
			fclose(p);
		fprintf(sum, "duration: %.0f s\n", now() - t0);
		fclose(sum);
	}
	probes_fini();
	return 0;
}

static void make_cgroups(int n)
{
	char path[PATH_MAX], rel[256];
	int i;

	snprintf(cg_root, sizeof(cg_root), "cgfw-bench-%d", getpid());
	snprintf(path, sizeof(path), "%s/%s", cg_mount, cg_root);
	mkdir(path, 0755);
	n_flat = n;
	for (i = 0; i < n; i++) {
		snprintf(flat[i].rel, sizeof(flat[i].rel), "%s/c%d", cg_root, i);
		flat[i].level = 2;
		snprintf(path, sizeof(path), "%s/%s", cg_mount, flat[i].rel);
		mkdir(path, 0755);
	}
	snprintf(rel, sizeof(rel), "%s", cg_root);
	for (i = 0; i < HIER; i++) {
		char next[256];

		snprintf(next, sizeof(next), "%s/h%d", rel, i + 1);
		snprintf(rel, sizeof(rel), "%s", next);
		snprintf(hier[i].rel, sizeof(hier[i].rel), "%s", rel);
		hier[i].level = i + 2;
		snprintf(path, sizeof(path), "%s/%s", cg_mount, rel);
		mkdir(path, 0755);
	}
}

static void remove_cgroups(void)
{
	char path[PATH_MAX];
	int i;

	for (i = HIER - 1; i >= 0; i--) {
		snprintf(path, sizeof(path), "%s/%s", cg_mount, hier[i].rel);
		rmdir(path);
	}
	for (i = 0; i < n_flat; i++) {
		snprintf(path, sizeof(path), "%s/%s", cg_mount, flat[i].rel);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/%s", cg_mount, cg_root);
	if (rmdir(path))
		fprintf(stderr, "bench: rmdir %s: %s\n", path, strerror(errno));
}

static void usage(void)
{
	fprintf(stderr,
		"usage: cgfw_bench [--quick] [--rounds N] [--secs S] [--groups G,...]\n"
		"                  [--paths P,...] [--rules N,...] [--sets N,...]\n"
		"                  [--cgroups N,...] [--update N] [--out DIR] [-v]\n"
		"                  [--group-rounds G=N,...] [--list]\n"
		"       cgfw_bench --ab BIN [--rules N] [--rounds N]\n"
		"groups: hook rules sets cgroups update\n"
		"paths: ");
	for (int i = 0; all_paths[i]; i++)
		fprintf(stderr, "%s ", all_paths[i]->name);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "secs", required_argument, NULL, 's' },
		{ "groups", required_argument, NULL, 'g' },
		{ "paths", required_argument, NULL, 'p' },
		{ "rules", required_argument, NULL, 'R' },
		{ "sets", required_argument, NULL, 'S' },
		{ "cgroups", required_argument, NULL, 'C' },
		{ "update", required_argument, NULL, 'U' },
		{ "out", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "list", no_argument, NULL, 'l' },
		{ "group-rounds", required_argument, NULL, 'G' },
		{ "ab", required_argument, NULL, 'A' },
		{ 0 },
	};
	bool rounds_given = false, secs_given = false;
	int ab_n;
	char path[PATH_MAX];
	int c, st;
	pid_t pid;
	FILE *f;

	while ((c = getopt_long(argc, argv, "qr:s:g:p:R:S:C:U:o:vlG:A:", lo, NULL)) != -1) {
		switch (c) {
		case 'q':
			opt.quick = true;
			break;
		case 'r':
			opt.rounds = atoi(optarg);
			rounds_given = true;
			if (!strcmp(opt.group_rounds,
				    "rules=5,cgroups=5,sets=3,update=5"))
				*opt.group_rounds = '\0';
			break;
		case 's':
			opt.secs = atof(optarg);
			secs_given = true;
			break;
		case 'g':
			snprintf(opt.groups, sizeof(opt.groups), "%s", optarg);
			break;
		case 'p':
			snprintf(opt.paths, sizeof(opt.paths), "none,%s", optarg);
			break;
		case 'R':
			opt.n_rules = parse_ints(optarg, opt.rules, 16);
			break;
		case 'S':
			opt.n_sets = parse_ints(optarg, opt.sets, 16);
			break;
		case 'C':
			opt.n_cgs = parse_ints(optarg, opt.cgs, 16);
			break;
		case 'U':
			opt.update = atoi(optarg);
			break;
		case 'o':
			opt.out = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'l':
			opt.list = true;
			break;
		case 'G':
			snprintf(opt.group_rounds, sizeof(opt.group_rounds),
				 "%s", optarg);
			break;
		case 'A':
			opt.ab = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (opt.quick) {
		if (!rounds_given)
			opt.rounds = 2;
		if (!strcmp(opt.group_rounds, "rules=5,cgroups=5,sets=3,update=5"))
			*opt.group_rounds = '\0';
		if (!secs_given)
			opt.secs = 0.1;
	}
	if (opt.ab && !rounds_given)
		opt.rounds = 41;
	ab_n = opt.n_rules ? max_of(opt.rules, opt.n_rules) : 10000;
	if (!opt.ab && (opt.rounds < 1 || opt.rounds > MAX_ROUNDS))
		opt.rounds = opt.rounds < 1 ? 1 : MAX_ROUNDS;
#define DEFAULTS(arr, n, ...) do {					\
		static const int q[] = { __VA_ARGS__ };			\
		if (!(n)) {						\
			memcpy(arr, q, sizeof(q));			\
			n = sizeof(q) / sizeof(q[0]);			\
		}							\
	} while (0)
	if (opt.quick) {
		DEFAULTS(opt.rules, opt.n_rules, 1, 100, 1000);
		DEFAULTS(opt.sets, opt.n_sets, 1, 1000);
		DEFAULTS(opt.cgs, opt.n_cgs, 1, 100);
		if (opt.update == 100000)
			opt.update = 10000;
	}
	DEFAULTS(opt.rules, opt.n_rules, 1, 10, 100, 1000, 10000);
	DEFAULTS(opt.sets, opt.n_sets, 1, 100, 10000, 100000, 1000000);
	DEFAULTS(opt.cgs, opt.n_cgs, 1, 10, 100, 1000);
	if (max_of(opt.cgs, opt.n_cgs) > MAX_CG) {
		fprintf(stderr, "bench: at most %d cgroups\n", MAX_CG);
		return 2;
	}

	if (unshare(CLONE_NEWNET | CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		perror("bench: namespaces (run as root)");
		return 1;
	}
	/* The hybrid layout's cgroup2 mount goes from this namespace before
	 * cgroup2 is mounted over /sys/fs/cgroup: hidden, it would still be
	 * listed first in mountinfo, and a cgroup named "unified" in the
	 * hierarchy makes it look visible to cgfw. */
	umount2("/sys/fs/cgroup/unified", MNT_DETACH);
	if (probe_cgroup2_on_sys_fs_cgroup()) {
		perror("bench: namespaces (run as root)");
		return 1;
	}
	/* a bpf file system of our own: nobody else's cgfw flush sees our
	 * pins, and ours see nobody else's */
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		perror("bench: bpf file system");
		return 1;
	}
	probe_lo_up();
	opt.native = native_family();
	opt.systemd = systemd_pid1();
	mkdir(opt.out, 0755);
	snprintf(path, sizeof(path), "%s/env.txt", opt.out);
	f = fopen(path, "w");
	if (f) {
		env(f);
		fclose(f);
	}
	make_cgroups(max_of(opt.cgs, opt.n_cgs) > 4 ?
		     max_of(opt.cgs, opt.n_cgs) : 4);
	pid = fork();	/* the parent stays out of the cgroups to remove them */
	if (!pid && opt.ab) {
		const char *a = getenv("CGFW");

		c = ab_run(a ? a : "build/cgfw", opt.ab, ab_n,
			   opt.rounds < 1 ? 1 : opt.rounds, flat);
		_exit(c | fflush(NULL));
	}
	if (!pid)
		_exit(bench() | fflush(NULL));
	waitpid(pid, &st, 0);
	remove_cgroups();
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
