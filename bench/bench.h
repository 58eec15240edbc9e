/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgfw benchmarks: what the driver's parts share (docs/benchmarks.rst).
 *
 *   shapes.c   rule shapes (friendly, mixed) behind one interface
 *   paths.c    the enforcement paths: cgfw's backends and today's tools,
 *              each rendering one abstract ruleset its own way
 *   sdfw.c     systemd's IPAddressDeny= program, re-created; an empty
 *              CGROUP_SKB program
 *   probes.c   what is measured: BPF_PROG_TEST_RUN, live UDP both ways,
 *              TCP request/response over veth, update latency
 *   cgfw_bench.c  the plan, the rotation, the statistics, the CSV
 */
#ifndef CGFW_BENCH_H
#define CGFW_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_CG 1024

enum dir { EGRESS, INGRESS };

/* One rule of a shape: a 5-tuple classifier entry. */
struct brule {
	int v6;			/* 0, 1, or -1: no address, both families */
	uint8_t src[16], dst[16];
	int slen, dlen;		/* prefix lengths, 0: any */
	int proto;		/* 0: any (then no ports), 6, 17 */
	int sport[2], dport[2];	/* inclusive; [0, 65535]: any */
	int drop;		/* else accept */
	int counter;
};

/* What a live probe or a test run sends. */
struct pkt {
	int v6, proto;
	char saddr[64], daddr[64];
	int sport, dport;
};

struct shape {
	const char *name;	/* in the CSV: friendly, mixed */
	const char *generator;	/* what made the rules */
	/* the first @n rules (every n gives a prefix of the same list) */
	const struct brule *(*rules)(int n, int proto);
	/* a UDP packet of family @v6 that none of the first @n rules match */
	int (*miss)(int n, int v6, struct pkt *p);
};

extern const struct shape shape_friendly, shape_mixed;
extern char mixed_packet[256];	/* what the mixed rows send, and why */
int mixed_bench_packet(int n, int maxn, int kind, int v6, struct pkt *p);

enum kind {
	K_NONE,		/* nothing installed */
	K_EMPTY,	/* a bound chain without rules (an empty program) */
	K_RULES,	/* rules of a shape */
	K_HASH,		/* one named set of addresses: ip daddr @s drop */
	K_INTERVAL,	/* the same with prefixes (flags interval) */
};

/* Cgroups below the benchmark's own one (level 1 of the hierarchy). */
struct cgref {
	char rel[256];		/* path relative to the cgroup2 root */
	int level;		/* for socket cgroupv2 level */
};

/* An abstract ruleset: what each path installs, in its own way. */
struct ruleset {
	enum kind kind;
	enum dir dir;
	const struct brule *rules;
	int n;			/* rules or set elements */
	const struct cgref *cg;	/* the bound cgroups */
	int n_cg;
	const struct cgref *sender;	/* where the measured sockets live */
};

void cgfw_table_name(const struct ruleset *rs, int c, char *buf, size_t size);

/* The set's elements: 10.0.0.0 + 8 i (/30 for intervals). */
void set_element(int i, bool interval, char *buf, size_t size);
/* An address between the elements, in the middle of them. */
void set_gap_addr(int n, char *buf, size_t size);

struct progstat {
	unsigned int xlated, jited, verified;	/* the sender's program */
	unsigned long long memlock;		/* programs and maps, bytes */
};

struct path {
	const char *name;
	const char *label;	/* for the plots */
	unsigned int flags;
	/* install @rs; on failure, a one-line reason in @err */
	int (*apply)(const struct ruleset *rs, char *err, size_t esz);
	void (*clear)(const struct ruleset *rs);
	/* the program that sees the sender's packets (test runs), or -1 */
	int (*prog_fd)(const struct ruleset *rs);
	void (*stat)(const struct ruleset *rs, struct progstat *ps);
	/* elements added in place, and the whole ruleset applied again */
	int (*update)(const struct ruleset *rs, int k, char *err, size_t esz);
	int (*update_raw)(const struct ruleset *rs, int k, double *secs,
			  char *err, size_t esz);
	int (*reapply)(const struct ruleset *rs, char *err, size_t esz);
	/* where the measured sockets live, if not rs->sender */
	const struct cgref *(*sender)(const struct ruleset *rs);
};

#define P_NATIVE	0x1	/* needs the kernel's cgroup family */
#define P_LEGACY_NS	0x2	/* runs in the iptables-legacy namespace */
#define P_NO_RULES	0x4	/* cannot express rules (systemd: addresses) */
#define P_NO_SETS	0x8
#define P_NO_HASH	0x10	/* systemd: prefixes only */
#define P_NO_EMPTY	0x20
#define P_SYSTEMD	0x40	/* needs systemd as PID 1 */

extern const struct path *const all_paths[];
const struct path *path_by_name(const char *name);

/* The table name, the file the rules went to (kept for re-apply). */
extern const char *bench_table;
extern char cg_root[256];	/* the benchmark's cgroup, relative */
extern const char *cg_mount;	/* /sys/fs/cgroup */
extern bool verbose;

/* sdfw.c */
int sdfw_apply(const struct ruleset *rs, char *err, size_t esz);
void sdfw_clear(const struct ruleset *rs);
int sdfw_prog_fd(const struct ruleset *rs);
void sdfw_stat(const struct ruleset *rs, struct progstat *ps);
int sdfw_update_raw(const struct ruleset *rs, int k, double *secs, char *err,
		    size_t esz);
void sd_rule_addr(int i, int lvl, bool v6, char *buf, size_t size);
bool systemd_pid1(void);
int sdunit_apply(const struct ruleset *rs, char *err, size_t esz);
void sdunit_clear(const struct ruleset *rs);
const struct cgref *sdunit_sender(const struct ruleset *rs);
int sdunit_prog_fd(const struct ruleset *rs);
void sdunit_stat(const struct ruleset *rs, struct progstat *ps);
int sdunit_update(const struct ruleset *rs, int k, char *err, size_t esz);
int empty_apply(const struct ruleset *rs, char *err, size_t esz);
void empty_clear(const struct ruleset *rs);
int empty_prog_fd(const struct ruleset *rs);
void empty_stat(const struct ruleset *rs, struct progstat *ps);
int prog_stat_fd(int fd, struct progstat *ps);

/* paths.c: the bpf backend of cgfw binary @bin; the sender's program */
int bpf_apply_bin(const char *bin, const struct ruleset *rs, char *err,
		  size_t esz);
int cgfw_prog_fd(const struct ruleset *rs);

/* ab.c: two builds' test runs, alternated in one process (--ab) */
int ab_run(const char *bin_a, const char *bin_b, int n, int rounds,
	   const struct cgref *cg);

/* probes.c */
/* fdinfo's "key:\tvalue" of @fd as a number, -1 if absent */
long long fdinfo_field(int fd, const char *key);
unsigned long long fdinfo_memlock(int fd);
enum probe_kind { PR_UDP, PR_TCP, PR_TESTRUN, PR_UPDATE, PR_UPDATE_RAW,
		  PR_REAPPLY };

struct probe {
	char name[32];		/* in the CSV */
	enum probe_kind kind;
	enum dir dir;		/* PR_UDP: which end is in the cgroup */
	struct pkt pkt;
	int expect;		/* PR_TESTRUN: the verdict, 1 pass, 0 drop */
	const char *unit;	/* ns/pkt, ns/transaction, ns/run, ms */
};

int probes_init(void);
void probes_fini(void);
void probes_set_secs(double secs);
/* one value of @pr for the current setup, or < 0 (reason in @err) */
double probe_run(const struct probe *pr, const struct path *p,
		 const struct ruleset *rs, char *err, size_t esz);
/* BPF_PROG_TEST_RUN of program @fd on @k, @repeat times: 0 or -errno */
int testrun_pkt(int fd, const struct pkt *k, int repeat, uint32_t *ns,
		uint32_t *ret);
/* netns for the iptables-legacy rows: enter it, leave it */
int netns_enter_legacy(void);
void netns_leave_legacy(void);
/* add an address to lo of the current namespaces (idempotent) */
void lo_addr(const char *addr, bool v6);

/* helpers: run a command, its stderr's first line into @err */
int sh(char *err, size_t esz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
double now(void);
char *tmpfile_path(const char *tag);

#endif
