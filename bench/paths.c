// SPDX-License-Identifier: GPL-2.0
/*
 * The enforcement paths, each installing one abstract ruleset (struct
 * ruleset) the way its users write it:
 *
 *   bpf, nft-native, nft-emulated, both
 *        cgfw apply -b BACKEND of "table cgroup bench { chain cK { type
 *        filter hook egress cgroup "PATH" ...; RULES } }", one bound
 *        chain per cgroup
 *   nft-socket
 *        an inet table as users write it today: in one output (input)
 *        base chain, "socket cgroupv2 level L "PATH" RULE" for every
 *        cgroup and every rule
 *   nft-socket-vmap
 *        the verdict-map form: "socket cgroupv2 level L vmap { "PATH" :
 *        jump cK, ... }", one chain of RULES per cgroup
 *   ipt-nft, ipt-legacy
 *        iptables-restore (Debian's iptables, over nf_tables) and
 *        iptables-legacy-restore of "-A OUTPUT -m cgroup --path PATH
 *        MATCHES -j ACCEPT" for every cgroup and rule (xt_cgroup's
 *        documented use); IPv6 rules through ip6tables
 *   systemd
 *        sdfw.c: systemd's IPAddressDeny= program and LPM tries, re-created
 *   systemd-unit
 *        sdunit.c: systemd itself, where it is PID 1
 *   prog-empty
 *        sdfw.c: a CGROUP_SKB program that returns 1
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bench.h"

const char *bench_table = "bench";
static const char user_table[] = "bench_user";

static const char *cgfw(void)
{
	const char *b = getenv("CGFW");

	return b ? b : "build/cgfw";
}

/* ---- rendering ---- */

static void addr_str(const uint8_t *a, int v6, int len, char *buf, size_t sz)
{
	char s[INET6_ADDRSTRLEN];

	inet_ntop(v6 ? AF_INET6 : AF_INET, a, s, sizeof(s));
	if (len == (v6 ? 128 : 32))
		snprintf(buf, sz, "%s", s);
	else
		snprintf(buf, sz, "%s/%d", s, len);
}

static bool any_port(const int *p)
{
	return p[0] == 0 && p[1] == 65535;
}

/* One rule's matches and verdict as nft writes them. */
static void nft_rule(FILE *f, const struct brule *r)
{
	const char *ip = r->v6 ? "ip6" : "ip";
	const char *l4 = r->proto == 6 ? "tcp" : "udp";
	char a[80];

	if (r->slen) {
		addr_str(r->src, r->v6, r->slen, a, sizeof(a));
		fprintf(f, "%s saddr %s ", ip, a);
	}
	if (r->dlen) {
		addr_str(r->dst, r->v6, r->dlen, a, sizeof(a));
		fprintf(f, "%s daddr %s ", ip, a);
	}
	if (r->proto) {
		if (!any_port(r->sport))
			fprintf(f, r->sport[0] == r->sport[1] ? "%s sport %d " :
				"%s sport %d-%d ", l4, r->sport[0], r->sport[1]);
		if (!any_port(r->dport))
			fprintf(f, r->dport[0] == r->dport[1] ? "%s dport %d " :
				"%s dport %d-%d ", l4, r->dport[0], r->dport[1]);
		if (any_port(r->sport) && any_port(r->dport))
			fprintf(f, "meta l4proto %s ", l4);
	}
	fprintf(f, "%s%s\n", r->counter ? "counter " : "",
		r->drop ? "drop" : "accept");
}

static void nft_set_decl(FILE *f, const struct ruleset *rs, int extra)
{
	bool iv = rs->kind == K_INTERVAL;
	char e[32];
	int i;

	fprintf(f, "\tset s {\n\t\ttype ipv4_addr;\n%s\t\telements = { ",
		iv ? "\t\tflags interval;\n" : "");
	for (i = 0; i < rs->n + extra; i++) {
		set_element(i, iv, e, sizeof(e));
		fprintf(f, "%s%s", i ? ", " : "", e);
	}
	fprintf(f, " }\n\t}\n");
}

static void nft_body(FILE *f, const struct ruleset *rs, const char *prefix)
{
	int i;

	if (rs->kind == K_RULES)
		for (i = 0; i < rs->n; i++) {
			fprintf(f, "\t\t%s", prefix);
			nft_rule(f, &rs->rules[i]);
		}
	else if (rs->kind == K_HASH || rs->kind == K_INTERVAL)
		fprintf(f, "\t\t%sip %s @s drop\n", prefix,
			rs->dir == EGRESS ? "daddr" : "saddr");
}

/* The table of bound cgroup @c: one table per cgroup when there are
 * several, as one would write one per service (and the bpf backend's
 * programs may use 64 maps a table) */
void cgfw_table_name(const struct ruleset *rs, int c, char *buf, size_t size)
{
	if (rs->n_cg == 1 || !c)
		snprintf(buf, size, "%s", bench_table);
	else
		snprintf(buf, size, "%s_%d", bench_table, c);
}

/* The cgroup family's text, as cgfw takes it. */
static void write_cgfw(FILE *f, const struct ruleset *rs, int extra)
{
	char name[64];
	int c;

	for (c = 0; c < rs->n_cg; c++) {
		cgfw_table_name(rs, c, name, sizeof(name));
		fprintf(f, "table cgroup %s {\n", name);
		if (rs->kind == K_HASH || rs->kind == K_INTERVAL)
			nft_set_decl(f, rs, extra);
		fprintf(f, "\tchain c%d {\n\t\ttype filter hook %s cgroup \"%s\" priority 0; policy accept;\n",
			c, rs->dir == EGRESS ? "egress" : "ingress",
			rs->cg[c].rel);
		nft_body(f, rs, "");
		fprintf(f, "\t}\n}\n");
	}
}

static void write_socket(FILE *f, const struct ruleset *rs, bool vmap,
			 int extra)
{
	const char *hook = rs->dir == EGRESS ? "output" : "input";
	int c, l;

	fprintf(f, "table inet %s {\n", user_table);
	if (rs->kind == K_HASH || rs->kind == K_INTERVAL)
		nft_set_decl(f, rs, extra);
	for (c = 0; vmap && c < rs->n_cg; c++) {
		fprintf(f, "\tchain c%d {\n", c);
		nft_body(f, rs, "");
		fprintf(f, "\t}\n");
	}
	fprintf(f, "\tchain filter {\n\t\ttype filter hook %s priority 0; policy accept;\n",
		hook);
	if (vmap && rs->kind != K_NONE) {
		/* one map per level the cgroups are at */
		for (l = 0; l < 64; l++) {
			bool first = true;

			for (c = 0; c < rs->n_cg; c++) {
				if (rs->cg[c].level != l)
					continue;
				if (first)
					fprintf(f, "\t\tsocket cgroupv2 level %d vmap { ", l);
				fprintf(f, "%s\"%s\" : jump c%d", first ? "" : ", ",
					rs->cg[c].rel, c);
				first = false;
			}
			if (!first)
				fprintf(f, " }\n");
		}
	}
	for (c = 0; !vmap && c < rs->n_cg; c++) {
		char prefix[320];

		snprintf(prefix, sizeof(prefix), "socket cgroupv2 level %d \"%s\" ",
			 rs->cg[c].level, rs->cg[c].rel);
		nft_body(f, rs, prefix);
	}
	fprintf(f, "\t}\n}\n");
}

/* iptables-restore input for one family (@v6) */
static void write_ipt(FILE *f, const struct ruleset *rs, int v6)
{
	const char *chain = rs->dir == EGRESS ? "OUTPUT" : "INPUT";
	int c, i;

	fprintf(f, "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n");
	for (c = 0; rs->kind == K_RULES && c < rs->n_cg; c++)
		for (i = 0; i < rs->n; i++) {
			const struct brule *r = &rs->rules[i];
			char a[80];

			if (r->v6 >= 0 && r->v6 != v6)
				continue;
			fprintf(f, "-A %s -m cgroup --path %s", chain,
				rs->cg[c].rel);
			if (r->slen) {
				addr_str(r->src, v6, r->slen, a, sizeof(a));
				fprintf(f, " -s %s", a);
			}
			if (r->dlen) {
				addr_str(r->dst, v6, r->dlen, a, sizeof(a));
				fprintf(f, " -d %s", a);
			}
			if (r->proto)
				fprintf(f, " -p %s", r->proto == 6 ? "tcp" : "udp");
			if (r->proto && !any_port(r->sport))
				fprintf(f, " --sport %d:%d", r->sport[0], r->sport[1]);
			if (r->proto && !any_port(r->dport))
				fprintf(f, " --dport %d:%d", r->dport[0], r->dport[1]);
			fprintf(f, " -j %s\n", r->drop ? "DROP" : "ACCEPT");
		}
	fprintf(f, "COMMIT\n");
}

static char *write_file(const char *tag,
			void (*fn)(FILE *, const struct ruleset *, int),
			const struct ruleset *rs, int arg)
{
	char *path = tmpfile_path(tag);
	FILE *f = fopen(path, "w");

	if (!f)
		return NULL;
	fn(f, rs, arg);
	fclose(f);
	return path;
}

static void w_cgfw(FILE *f, const struct ruleset *rs, int extra)
{
	write_cgfw(f, rs, extra);
}

static void w_socket(FILE *f, const struct ruleset *rs, int extra)
{
	write_socket(f, rs, false, extra);
}

static void w_vmap(FILE *f, const struct ruleset *rs, int extra)
{
	write_socket(f, rs, true, extra);
}

static void w_ipt(FILE *f, const struct ruleset *rs, int v6)
{
	write_ipt(f, rs, v6);
}

/* ---- none ---- */

static int none_apply(const struct ruleset *rs, char *err, size_t esz)
{
	(void)rs, (void)err, (void)esz;
	return 0;
}

static void none_clear(const struct ruleset *rs)
{
	(void)rs;
}

/* ---- cgfw ---- */

static int cgfw_apply_with(const char *bin, const struct ruleset *rs,
			   const char *backend, int extra, char *err,
			   size_t esz)
{
	char *file = write_file("cgfw", w_cgfw, rs, extra);
	int ret;

	if (!file) {
		snprintf(err, esz, "cannot write the rules");
		return -1;
	}
	ret = sh(err, esz, "%s apply -b %s %s", bin, backend, file);
	unlink(file);
	free(file);
	return ret;
}

#define CGFW_PATH(fn, backend)						\
static int fn(const struct ruleset *rs, char *err, size_t esz)		\
{									\
	return cgfw_apply_with(cgfw(), rs, backend, 0, err, esz);	\
}									\
static int fn##_re(const struct ruleset *rs, char *err, size_t esz)	\
{									\
	return cgfw_apply_with(cgfw(), rs, backend, 1, err, esz);	\
}

CGFW_PATH(bpf_apply, "bpf")
CGFW_PATH(native_apply, "nft-native")
CGFW_PATH(emulated_apply, "nft-emulated")
CGFW_PATH(both_apply, "both")

/*
 * Composition (docs/cgfw.8.rst): the ruleset with bpf, and beside it on
 * the same cgroups a table of ct rules kept in nf_tables, with the
 * nft backend that this kernel has, as a user would split a ruleset.
 */
static void w_audit(FILE *f, const struct ruleset *rs, int extra)
{
	int c;

	(void)extra;
	fprintf(f, "table cgroup %s_audit {\n", bench_table);
	for (c = 0; c < rs->n_cg; c++)
		fprintf(f, "\tchain a%d {\n\t\ttype filter hook %s cgroup \"%s\" priority 0; policy accept;\n\t\tct state invalid counter drop\n\t}\n",
			c, rs->dir == EGRESS ? "egress" : "ingress",
			rs->cg[c].rel);
	fprintf(f, "}\n");
}

static int composed_apply(const struct ruleset *rs, char *err, size_t esz)
{
	char *file;
	int ret;

	ret = cgfw_apply_with(cgfw(), rs, "bpf", 0, err, esz);
	if (ret)
		return ret;
	file = write_file("audit", w_audit, rs, 0);
	if (!file) {
		snprintf(err, esz, "cannot write the rules");
		return -1;
	}
	ret = sh(err, esz, "%s apply -b nft %s", cgfw(), file);
	unlink(file);
	free(file);
	return ret;
}

int bpf_apply_bin(const char *bin, const struct ruleset *rs, char *err,
		  size_t esz)
{
	return cgfw_apply_with(bin, rs, "bpf", 0, err, esz);
}

/* Everything cgfw installed: in this network namespace and on this bpf
 * file system, both the benchmark's own. */
static void cgfw_clear(const struct ruleset *rs)
{
	char err[256];

	(void)rs;
	if (sh(err, sizeof(err), "%s flush", cgfw()))
		fprintf(stderr, "bench: cgfw flush: %s\n", err);
}

static int cgroup_ino(const struct cgref *cg, unsigned long long *ino)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", cg_mount, cg->rel);
	if (stat(path, &st))
		return -1;
	*ino = st.st_ino;
	return 0;
}

/* The program cgfw attached for the sender's cgroup: through its link. */
int cgfw_prog_fd(const struct ruleset *rs)
{
	struct bpf_link_info info = { 0 };
	uint32_t len = sizeof(info);
	unsigned long long ino;
	char path[PATH_MAX], table[64];
	int link, fd;

	if (cgroup_ino(rs->sender, &ino))
		return -1;
	cgfw_table_name(rs, rs->n_cg - 1, table, sizeof(table));
	snprintf(path, sizeof(path), "/sys/fs/bpf/cgfw/%s/link-%s-%llu",
		 table, rs->dir == EGRESS ? "egress" : "ingress", ino);
	link = bpf_obj_get(path);
	if (link < 0)
		return -1;
	fd = bpf_obj_get_info_by_fd(link, &info, &len) ? -1 :
	     bpf_prog_get_fd_by_id(info.prog_id);
	close(link);
	return fd;
}

/* Programs (through links) and maps pinned for the table: memlock. */
static void cgfw_stat(const struct ruleset *rs, struct progstat *ps)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;
	int fd;

	memset(ps, 0, sizeof(*ps));
	fd = cgfw_prog_fd(rs);
	if (fd >= 0) {
		prog_stat_fd(fd, ps);
		close(fd);
	}
	ps->memlock = 0;
	for (int c = 0; c < rs->n_cg; c++) {
		char table[64];

		cgfw_table_name(rs, c, table, sizeof(table));
		snprintf(dir, sizeof(dir), "/sys/fs/bpf/cgfw/%s", table);
		d = opendir(dir);
		if (!d)
			continue;
		while ((de = readdir(d))) {
		long long id;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			fd = bpf_obj_get(path);
			if (fd < 0)
				continue;
			id = fdinfo_field(fd, "prog_id");
			if (id > 0 && fdinfo_field(fd, "link_type") >= 0) {
				int p = bpf_prog_get_fd_by_id(id);

				if (p >= 0) {
					ps->memlock += fdinfo_memlock(p);
					close(p);
				}
			} else {
				ps->memlock += fdinfo_memlock(fd);
			}
			close(fd);
		}
		closedir(d);
	}
}

static void new_element(const struct ruleset *rs, int k, char *buf,
			size_t size)
{
	/* beyond the applied ones: n + 1 + k, so each call adds one */
	set_element(rs->n + 1 + k, rs->kind == K_INTERVAL, buf, size);
}

static int cgfw_update(const struct ruleset *rs, int k, char *err,
		       size_t esz)
{
	char *file = tmpfile_path("update"), e[32];
	FILE *f = fopen(file, "w");
	int ret;

	new_element(rs, k, e, sizeof(e));
	fprintf(f, "add element cgroup %s s { %s }\n", bench_table, e);
	fclose(f);
	ret = sh(err, esz, "%s update %s", cgfw(), file);
	unlink(file);
	free(file);
	return ret;
}

/* nft add element on the emulated target's table, as nft users would */
static int emulated_update_raw(const struct ruleset *rs, int k, double *secs,
			       char *err, size_t esz)
{
	char e[32];
	double t0;
	int ret;

	new_element(rs, 100 + k, e, sizeof(e));
	t0 = now();
	ret = sh(err, esz, "nft add element inet cgfw_%s s '{ %s }'",
		 bench_table, e);
	*secs = now() - t0;
	return ret;
}

/* The map of set "s" among the maps of the program cgfw attached (the bpf
 * backend names it cgfw_<set>), or -1 */
static int set_map_fd(const struct ruleset *rs)
{
	struct bpf_prog_info pi = { 0 };
	struct bpf_map_info mi;
	uint32_t ids[64], len, i;
	int prog = cgfw_prog_fd(rs), fd = -1;

	if (prog < 0)
		return -1;
	pi.nr_map_ids = 64;
	pi.map_ids = (uintptr_t)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(prog, &pi, &len))
		pi.nr_map_ids = 0;
	close(prog);
	for (i = 0; i < pi.nr_map_ids && i < 64 && fd < 0; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (fd >= 0 && (bpf_obj_get_info_by_fd(fd, &mi, &len) ||
				strcmp(mi.name, "cgfw_s"))) {
			close(fd);
			fd = -1;
		}
	}
	return fd;
}

/* bpf_map_update_elem() on the set's map: the key of an existing element
 * with the address replaced, the same value */
static int bpf_update_raw(const struct ruleset *rs, int k, double *secs,
			  char *err, size_t esz)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	char path[PATH_MAX], e[32];
	uint8_t key[64], val[256];
	uint32_t a;
	double t0;
	int fd, ret;

	snprintf(path, sizeof(path), "of set s in table %s", bench_table);
	fd = set_map_fd(rs);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.key_size > sizeof(key) || info.value_size > sizeof(val) ||
	    info.key_size < 4 || bpf_map_get_next_key(fd, NULL, key) ||
	    bpf_map_lookup_elem(fd, key, val)) {
		snprintf(err, esz, "set map %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	new_element(rs, 200 + k, e, sizeof(e));
	inet_pton(AF_INET, strtok(e, "/"), &a);
	memcpy(key + info.key_size - 4, &a, 4);
	t0 = now();
	ret = bpf_map_update_elem(fd, key, val, BPF_ANY);
	*secs = now() - t0;
	if (ret)
		snprintf(err, esz, "map update: %s", strerror(errno));
	close(fd);
	return ret;
}

/* ---- nft socket cgroupv2, as users write it ---- */

static int socket_apply_file(const struct ruleset *rs, bool vmap, int extra,
			     char *err, size_t esz)
{
	char *file = write_file("nft", vmap ? w_vmap : w_socket, rs, extra);
	int ret;

	if (!file) {
		snprintf(err, esz, "cannot write the rules");
		return -1;
	}
	/* replace atomically, as nft -f of "flush table; table {...}" does */
	ret = sh(err, esz, "(echo 'table inet %s {}'; echo 'flush table inet %s'; "
		 "echo 'delete table inet %s'; cat %s) | nft -f -",
		 user_table, user_table, user_table, file);
	unlink(file);
	free(file);
	return ret;
}

static int socket_apply(const struct ruleset *rs, char *err, size_t esz)
{
	return socket_apply_file(rs, false, 0, err, esz);
}

static int socket_reapply(const struct ruleset *rs, char *err, size_t esz)
{
	return socket_apply_file(rs, false, 1, err, esz);
}

static int vmap_apply(const struct ruleset *rs, char *err, size_t esz)
{
	return socket_apply_file(rs, true, 0, err, esz);
}

static void socket_clear(const struct ruleset *rs)
{
	char err[256];

	(void)rs;
	sh(err, sizeof(err), "nft delete table inet %s", user_table);
}

static int socket_update_raw(const struct ruleset *rs, int k, double *secs,
			     char *err, size_t esz)
{
	char e[32];
	double t0;
	int ret;

	new_element(rs, 100 + k, e, sizeof(e));
	t0 = now();
	ret = sh(err, esz, "nft add element inet %s s '{ %s }'", user_table, e);
	*secs = now() - t0;
	return ret;
}

/* ---- iptables -m cgroup ---- */

static int ipt_apply_cmd(const struct ruleset *rs, const char *v4cmd,
			 const char *v6cmd, char *err, size_t esz)
{
	char *f4 = write_file("ipt4", w_ipt, rs, 0);
	char *f6 = write_file("ipt6", w_ipt, rs, 1);
	int ret = -1;

	if (f4 && f6)
		ret = sh(err, esz, "%s < %s && %s < %s", v4cmd, f4, v6cmd, f6);
	if (f4)
		unlink(f4);
	if (f6)
		unlink(f6);
	free(f4);
	free(f6);
	return ret;
}

static int iptnft_apply(const struct ruleset *rs, char *err, size_t esz)
{
	return ipt_apply_cmd(rs, "iptables-nft-restore", "ip6tables-nft-restore",
			     err, esz);
}

static void iptnft_clear(const struct ruleset *rs)
{
	char err[256];

	(void)rs;
	/* the tables go, and with them their hooks */
	sh(err, sizeof(err), "nft delete table ip filter; nft delete table ip6 filter");
}

static int iptlegacy_apply(const struct ruleset *rs, char *err, size_t esz)
{
	return ipt_apply_cmd(rs, "iptables-legacy-restore",
			     "ip6tables-legacy-restore", err, esz);
}

static void iptlegacy_clear(const struct ruleset *rs)
{
	char err[256];

	(void)rs;
	/* x_tables keep the table (and its hooks) in the namespace: that is
	 * why these rows run in a namespace of their own */
	sh(err, sizeof(err), "iptables-legacy -F; ip6tables-legacy -F");
}

/* ---- the table ---- */

static const struct path p_none = {
	.name = "none", .label = "nothing bound",
	.apply = none_apply, .clear = none_clear,
};

static const struct path p_empty = {
	.name = "prog-empty", .label = "CGROUP_SKB \"return 1\"",
	.flags = P_NO_RULES | P_NO_SETS,
	.apply = empty_apply, .clear = empty_clear,
	.prog_fd = empty_prog_fd, .stat = empty_stat,
};

static const struct path p_bpf = {
	.name = "bpf", .label = "cgfw bpf",
	.apply = bpf_apply, .clear = cgfw_clear,
	.prog_fd = cgfw_prog_fd, .stat = cgfw_stat,
	.update = cgfw_update, .update_raw = bpf_update_raw,
	.reapply = bpf_apply_re,
};

static const struct path p_native = {
	.name = "nft-native", .label = "cgfw nft native family",
	.flags = P_NATIVE,
	.apply = native_apply, .clear = cgfw_clear,
	.update = cgfw_update, .reapply = native_apply_re,
};

static const struct path p_emulated = {
	.name = "nft-emulated", .label = "cgfw nft emulated",
	.apply = emulated_apply, .clear = cgfw_clear,
	.update = cgfw_update, .update_raw = emulated_update_raw,
	.reapply = emulated_apply_re,
};

static const struct path p_both = {
	.name = "both", .label = "cgfw bpf + nft",
	.apply = both_apply, .clear = cgfw_clear,
	.prog_fd = cgfw_prog_fd, .stat = cgfw_stat,
	.update = cgfw_update, .reapply = both_apply_re,
};

static const struct path p_composed = {
	.name = "composed", .label = "cgfw bpf + a ct table (nft)",
	.apply = composed_apply, .clear = cgfw_clear,
	.prog_fd = cgfw_prog_fd, .stat = cgfw_stat,
};

static const struct path p_socket = {
	.name = "nft-socket", .label = "nft socket cgroupv2 per rule",
	.apply = socket_apply, .clear = socket_clear,
	.update_raw = socket_update_raw, .reapply = socket_reapply,
};

static const struct path p_vmap = {
	.name = "nft-socket-vmap", .label = "nft socket cgroupv2 vmap",
	.flags = P_NO_SETS,
	.apply = vmap_apply, .clear = socket_clear,
};

static const struct path p_iptnft = {
	.name = "ipt-nft", .label = "iptables -m cgroup (nft)",
	.flags = P_NO_SETS,
	.apply = iptnft_apply, .clear = iptnft_clear,
};

static const struct path p_iptlegacy = {
	.name = "ipt-legacy", .label = "iptables-legacy -m cgroup",
	.flags = P_NO_SETS | P_LEGACY_NS,
	.apply = iptlegacy_apply, .clear = iptlegacy_clear,
};

static const struct path p_systemd = {
	.name = "systemd", .label = "systemd IPAddressDeny= (re-created)",
	.flags = P_NO_RULES | P_NO_HASH | P_NO_EMPTY,
	.apply = sdfw_apply, .clear = sdfw_clear,
	.prog_fd = sdfw_prog_fd, .stat = sdfw_stat,
	.update_raw = sdfw_update_raw,
};

static const struct path p_sdunit = {
	.name = "systemd-unit", .label = "systemd 252 IPAddressDeny= (PID 1)",
	.flags = P_NO_RULES | P_NO_HASH | P_NO_EMPTY | P_SYSTEMD,
	.apply = sdunit_apply, .clear = sdunit_clear,
	.prog_fd = sdunit_prog_fd, .stat = sdunit_stat,
	.update = sdunit_update, .sender = sdunit_sender,
};

const struct path *const all_paths[] = {
	&p_none, &p_empty, &p_bpf, &p_native, &p_emulated, &p_both,
	&p_composed, &p_socket, &p_vmap, &p_iptnft, &p_iptlegacy, &p_systemd, &p_sdunit,
	NULL,
};

const struct path *path_by_name(const char *name)
{
	int i;

	for (i = 0; all_paths[i]; i++)
		if (!strcmp(all_paths[i]->name, name))
			return all_paths[i];
	return NULL;
}
