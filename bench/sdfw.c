// SPDX-License-Identifier: GPL-2.0
/*
 * systemd's IP firewall, re-created (labelled so, not systemd itself):
 * the program systemd 252's src/core/bpf-firewall.c compiles for a unit
 * with IPAddressDeny= and no IPAccounting=, built here instruction for
 * instruction in the same order, with its maps made the same way
 * (BPF_MAP_TYPE_LPM_TRIE, 8-byte values, BPF_F_NO_PREALLOC, one entry
 * per address), loaded here, pinned, and attached with
 *   bpftool cgroup attach CGROUP egress|ingress pinned PIN multi
 * One program per cgroup and direction, as systemd has one per unit.
 *
 * What the program does per packet: skb->protocol once; for each list
 * (deny IPv4, deny IPv6), if the protocol is the list's,
 * bpf_skb_load_bytes() of the address and bpf_map_lookup_elem() in the
 * trie with a full-length key; then pass unless only "deny" matched.
 *
 * Also here: the empty CGROUP_SKB program ("return 1"), attached with
 * BPF_F_ALLOW_MULTI, the floor of any BPF path.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>

#include "bench.h"

#define PIN_DIR "/sys/fs/bpf/cgfw-bench-sd"

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), \
		.src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_REG(d, s)	INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV32_IMM(d, i)	INSN(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_IMM(d, i)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i)	INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define OR32_IMM(d, i)	INSN(BPF_ALU | BPF_OR | BPF_K, d, 0, 0, i)
#define LDX_W(d, s, o)	INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define ST_W(d, o, i)	INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define JNE_IMM(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(f)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT()		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP_FD(d, fd) \
	INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd)

enum { ACCESS_ALLOWED = 1, ACCESS_DENIED = 2 };

struct unit {
	int map4, map6, prog;
	char pin[PATH_MAX], cg[PATH_MAX];
	enum dir dir;
};

static struct unit *units;
static int n_units;

/* One list's lookup, as add_lookup_instructions() emits it. */
static int lookup_insns(struct bpf_insn *p, int map_fd, int proto,
			bool ingress, int verdict)
{
	int size = proto == ETH_P_IP ? 4 : 16, n = 0, off;

	if (proto == ETH_P_IP)
		off = ingress ? offsetof(struct iphdr, saddr) :
				offsetof(struct iphdr, daddr);
	else
		off = ingress ? offsetof(struct ip6_hdr, ip6_src) :
				offsetof(struct ip6_hdr, ip6_dst);
	p[n++] = JNE_IMM(BPF_REG_7, htons(proto), 0);	/* fixed below */
	p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_6);
	p[n++] = MOV32_IMM(BPF_REG_2, off);
	p[n++] = MOV64_REG(BPF_REG_3, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_3, -size);
	p[n++] = MOV32_IMM(BPF_REG_4, size);
	p[n++] = CALL(BPF_FUNC_skb_load_bytes);
	p[n++] = LD_MAP_FD(BPF_REG_1, map_fd);
	p[n++] = INSN(0, 0, 0, 0, 0);	/* the second half of ld_imm64 */
	p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
	p[n++] = ADD64_IMM(BPF_REG_2, -size - 4);
	p[n++] = ST_W(BPF_REG_2, 0, size * 8);
	p[n++] = CALL(BPF_FUNC_map_lookup_elem);
	p[n++] = JEQ_IMM(BPF_REG_0, 0, 1);
	p[n++] = OR32_IMM(BPF_REG_8, verdict);
	p[0].off = n - 1;
	return n;
}

static int load_unit_prog(struct unit *u, char *err, size_t esz)
{
	struct bpf_insn p[64];
	int n = 0, fd;
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = u->dir == EGRESS ?
			BPF_CGROUP_INET_EGRESS : BPF_CGROUP_INET_INGRESS);

	p[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[n++] = LDX_W(BPF_REG_7, BPF_REG_6, offsetof(struct __sk_buff, protocol));
	p[n++] = MOV32_IMM(BPF_REG_8, 0);
	if (u->map4 >= 0)
		n += lookup_insns(p + n, u->map4, ETH_P_IP, u->dir == INGRESS,
				  ACCESS_DENIED);
	if (u->map6 >= 0)
		n += lookup_insns(p + n, u->map6, ETH_P_IPV6, u->dir == INGRESS,
				  ACCESS_DENIED);
	p[n++] = MOV64_IMM(BPF_REG_0, 1);
	p[n++] = JNE_IMM(BPF_REG_8, ACCESS_DENIED, 1);
	p[n++] = MOV64_IMM(BPF_REG_0, 0);
	p[n++] = EXIT();
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "sd_fw_egress", "GPL", p,
			   n, &o);
	if (fd < 0)
		snprintf(err, esz, "loading the program: %s", strerror(errno));
	return fd;
}

/* systemd sizes a trie to its list exactly (a change builds new ones);
 * 64 entries more here, for the update rows */
static int lpm_map(int n, bool v6)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);

	return bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, NULL, 4 + (v6 ? 16 : 4),
			      sizeof(uint64_t), n + 64, &o);
}

static int lpm_add(int fd, const char *addr, int len, bool v6)
{
	struct {
		uint32_t prefixlen;
		uint8_t data[16];
	} key = { .prefixlen = len };
	uint64_t value = ACCESS_DENIED;

	inet_pton(v6 ? AF_INET6 : AF_INET, addr, key.data);
	return bpf_map_update_elem(fd, &key, &value, BPF_ANY);
}

/* The n-th address of level @lvl's list (the hook and cgroup rows). */
void sd_rule_addr(int i, int lvl, bool v6, char *buf, size_t size)
{
	if (v6)
		snprintf(buf, size, "2001:db8:%x::%x", lvl, 1 + i);
	else
		snprintf(buf, size, "192.%d.%d.%d", lvl, i / 250, 1 + i % 250);
}

/* One unit's lists into its tries: level @lvl's K_RULES addresses or
 * the set's prefixes. */
static int fill(struct unit *u, const struct ruleset *rs, int lvl)
{
	char a[64];
	int i, ret = 0;

	for (i = 0; i < rs->n && !ret; i++) {
		if (rs->kind == K_INTERVAL) {
			set_element(i, true, a, sizeof(a));
			ret = lpm_add(u->map4, strtok(a, "/"), 30, false);
			continue;
		}
		sd_rule_addr(i, lvl, false, a, sizeof(a));
		ret = lpm_add(u->map4, a, 32, false);
		sd_rule_addr(i, lvl, true, a, sizeof(a));
		ret = ret ? : lpm_add(u->map6, a, 128, true);
	}
	return ret;
}

/*
 * K_INTERVAL: IPAddressDeny= with the set's prefixes. K_RULES: n IPv4 and
 * n IPv6 addresses of the documentation ranges (the hook rows' "one
 * rule": IPAddressDeny=192.0.2.1 2001:db8::1).
 *
 * One level of cgroups: a program on each, as systemd has one per unit.
 * A hierarchy (the sender deeper than the cgroups the rows bind): systemd
 * compiles no access program for slices; the leaf unit's program holds
 * its own list and every ancestor's, so one program on the sender's
 * cgroup with the lists of all bound levels.
 */
int sdfw_apply(const struct ruleset *rs, char *err, size_t esz)
{
	bool hier = rs->sender->level > 2;
	int c, n_progs = hier ? 1 : rs->n_cg, entries;

	if (rs->kind != K_INTERVAL && rs->kind != K_RULES) {
		snprintf(err, esz, "systemd has address lists only");
		return -1;
	}
	mkdir(PIN_DIR, 0700);
	units = calloc(n_progs, sizeof(*units));
	entries = hier ? rs->n * rs->n_cg : rs->n;
	for (c = 0; c < n_progs; c++) {
		struct unit *u = &units[c];
		const struct cgref *cg = hier ? rs->sender : &rs->cg[c];
		int ret = 0, l;

		u->dir = rs->dir;
		u->map4 = lpm_map(entries, false);
		u->map6 = rs->kind == K_RULES ? lpm_map(entries, true) : -1;
		u->prog = -1;
		n_units = c + 1;
		if (u->map4 < 0 || (rs->kind == K_RULES && u->map6 < 0)) {
			snprintf(err, esz, "LPM trie: %s", strerror(errno));
			return -1;
		}
		for (l = 0; l < (hier ? rs->n_cg : 1) && !ret; l++)
			ret = fill(u, rs, l);
		if (ret) {
			snprintf(err, esz, "LPM trie update: %s", strerror(errno));
			return -1;
		}
		u->prog = load_unit_prog(u, err, esz);
		if (u->prog < 0)
			return -1;
		snprintf(u->pin, sizeof(u->pin), PIN_DIR "/u%d-%s", c,
			 rs->dir == EGRESS ? "egress" : "ingress");
		snprintf(u->cg, sizeof(u->cg), "%s/%s", cg_mount, cg->rel);
		unlink(u->pin);
		if (bpf_obj_pin(u->prog, u->pin)) {
			snprintf(err, esz, "pin: %s", strerror(errno));
			return -1;
		}
		if (sh(err, esz, "bpftool cgroup attach %s %s pinned %s multi",
		       u->cg, rs->dir == EGRESS ? "egress" : "ingress", u->pin))
			return -1;
	}
	return 0;
}

void sdfw_clear(const struct ruleset *rs)
{
	char err[256];
	int c;

	(void)rs;
	for (c = 0; c < n_units; c++) {
		struct unit *u = &units[c];

		if (u->prog >= 0 && *u->pin) {
			sh(err, sizeof(err), "bpftool cgroup detach %s %s pinned %s",
			   u->cg, u->dir == EGRESS ? "egress" : "ingress", u->pin);
			unlink(u->pin);
		}
		if (u->prog >= 0)
			close(u->prog);
		if (u->map4 >= 0)
			close(u->map4);
		if (u->map6 >= 0)
			close(u->map6);
	}
	free(units);
	units = NULL;
	n_units = 0;
}

/* The sender's unit is the last one (the cgroup rows send from there). */
int sdfw_prog_fd(const struct ruleset *rs)
{
	(void)rs;
	return n_units ? dup(units[n_units - 1].prog) : -1;
}

int prog_stat_fd(int fd, struct progstat *ps)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	ps->xlated = info.xlated_prog_len / 8;
	ps->jited = info.jited_prog_len;
	ps->verified = info.verified_insns;
	ps->memlock = fdinfo_memlock(fd);
	return 0;
}

void sdfw_stat(const struct ruleset *rs, struct progstat *ps)
{
	unsigned long long m = 0;
	int c;

	(void)rs;
	memset(ps, 0, sizeof(*ps));
	if (!n_units)
		return;
	prog_stat_fd(units[n_units - 1].prog, ps);
	for (c = 0; c < n_units; c++)
		m += fdinfo_memlock(units[c].prog) +
		     (units[c].map4 >= 0 ? fdinfo_memlock(units[c].map4) : 0) +
		     (units[c].map6 >= 0 ? fdinfo_memlock(units[c].map6) : 0);
	ps->memlock = m;
}

/* What systemd does not do (it rebuilds the maps on a change): one
 * element into the trie in place, the floor of any update. */
int sdfw_update_raw(const struct ruleset *rs, int k, double *secs, char *err,
		    size_t esz)
{
	char a[64];
	double t0;
	int ret;

	if (!n_units || units[0].map4 < 0) {
		snprintf(err, esz, "no trie");
		return -1;
	}
	set_element(rs->n + 300 + k, true, a, sizeof(a));
	t0 = now();
	ret = lpm_add(units[0].map4, strtok(a, "/"), 30, false);
	*secs = now() - t0;
	if (ret)
		snprintf(err, esz, "trie update: %s", strerror(errno));
	return ret;
}

/* ---- the empty program ---- */

static int empty_fd = -1, empty_cg = -1;
static enum dir empty_dir;

int empty_apply(const struct ruleset *rs, char *err, size_t esz)
{
	struct bpf_insn p[] = { MOV64_IMM(BPF_REG_0, 1), EXIT() };
	enum bpf_attach_type t = rs->dir == EGRESS ? BPF_CGROUP_INET_EGRESS :
						     BPF_CGROUP_INET_INGRESS;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = t);
	char path[PATH_MAX];

	if (rs->kind != K_EMPTY) {
		snprintf(err, esz, "an empty program only");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", cg_mount, rs->cg[0].rel);
	empty_fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "empty", "GPL", p, 2,
				 &o);
	empty_cg = open(path, O_RDONLY | O_DIRECTORY);
	empty_dir = rs->dir;
	if (empty_fd < 0 || empty_cg < 0 ||
	    bpf_prog_attach(empty_fd, empty_cg, t, BPF_F_ALLOW_MULTI)) {
		snprintf(err, esz, "empty program: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void empty_clear(const struct ruleset *rs)
{
	(void)rs;
	if (empty_fd >= 0 && empty_cg >= 0)
		bpf_prog_detach2(empty_fd, empty_cg,
				 empty_dir == EGRESS ? BPF_CGROUP_INET_EGRESS :
						       BPF_CGROUP_INET_INGRESS);
	if (empty_fd >= 0)
		close(empty_fd);
	if (empty_cg >= 0)
		close(empty_cg);
	empty_fd = empty_cg = -1;
}

int empty_prog_fd(const struct ruleset *rs)
{
	(void)rs;
	return empty_fd >= 0 ? dup(empty_fd) : -1;
}

void empty_stat(const struct ruleset *rs, struct progstat *ps)
{
	(void)rs;
	memset(ps, 0, sizeof(*ps));
	if (empty_fd >= 0)
		prog_stat_fd(empty_fd, ps);
}
