// SPDX-License-Identifier: GPL-2.0
/*
 * systemd's own firewall, where systemd is PID 1 (the guest booted with
 * tools/vm/run.sh -s): real units with IPAddressDeny=, written as unit
 * files into /run/systemd/system, started with systemctl; the measured
 * processes join the unit's cgroup. systemd compiles and attaches the
 * program itself.
 *
 *   one level    N services cgfwbuK.service (sleep infinity), each with
 *                the list
 *   hierarchy    slices cgfwb.slice, cgfwb-l2.slice, ... 9 deep, and a
 *                service in the deepest: the list on the top slice only
 *                (hier-top) or on every slice and the service (hier-all);
 *                systemd folds the ancestors' lists into the leaf's
 *                program
 *   update       systemctl set-property --runtime UNIT IPAddressDeny=ADDR
 *                (systemd builds new tries and a new program)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bench.h"

#define UNIT_DIR "/run/systemd/system"

static int n_units, n_slices;
static struct cgref leaf;

bool systemd_pid1(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/1/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	return strstr(exe, "systemd") && !access(UNIT_DIR, W_OK);
}

/* Level @lvl's list, "IPAddressDeny=" lines of at most 64 entries each
 * (the addresses of sdfw.c's re-creation). */
static void deny_list(FILE *f, const struct ruleset *rs, int lvl)
{
	char a[64], b[64];
	int i;

	for (i = 0; i < rs->n; i++) {
		if (i % 64 == 0)
			fprintf(f, "%sIPAddressDeny=", i ? "\n" : "");
		if (rs->kind == K_INTERVAL) {
			set_element(i, true, a, sizeof(a));
			fprintf(f, "%s ", a);
			continue;
		}
		sd_rule_addr(i, lvl, false, a, sizeof(a));
		sd_rule_addr(i, lvl, true, b, sizeof(b));
		fprintf(f, "%s %s ", a, b);
	}
	fprintf(f, "\n");
}

static void slice_name(int level, char *buf, size_t size)
{
	int i, n = snprintf(buf, size, "cgfwb");

	for (i = 2; i <= level; i++)
		n += snprintf(buf + n, size - n, "-l%d", i);
	snprintf(buf + n, size - n, ".slice");
}

static int write_unit(const char *name, const char *slice,
		      const struct ruleset *rs, bool list, int lvl)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), UNIT_DIR "/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	if (strstr(name, ".slice")) {
		fprintf(f, "[Slice]\n");
	} else {
		fprintf(f, "[Unit]\nDefaultDependencies=no\n\n[Service]\nExecStart=/bin/sleep infinity\nStandardOutput=null\nStandardError=null\n");
		if (slice)
			fprintf(f, "Slice=%s\n", slice);
	}
	if (list)
		deny_list(f, rs, lvl);
	return fclose(f);
}

int sdunit_apply(const struct ruleset *rs, char *err, size_t esz)
{
	bool hier = rs->sender->level > 2;
	char units[8192] = "", name[128], slice[256] = "";
	size_t len = 0;
	int i;

	if (rs->kind != K_INTERVAL && rs->kind != K_RULES) {
		snprintf(err, esz, "systemd has address lists only");
		return -1;
	}
	if (hier) {
		/* slices for the levels above the leaf, the service below */
		int depth = rs->sender->level - 1;

		for (i = 1; i < depth; i++) {
			slice_name(i, slice, sizeof(slice));
			if (write_unit(slice, NULL, rs, i <= rs->n_cg, i - 1))
				goto fail;
		}
		n_slices = depth - 1;
		if (write_unit("cgfwbu0.service", slice, rs, rs->n_cg == depth,
			       depth - 1))
			goto fail;
		n_units = 1;
	} else {
		for (i = 0; i < rs->n_cg; i++) {
			snprintf(name, sizeof(name), "cgfwbu%d.service", i);
			if (write_unit(name, NULL, rs, true, 0))
				goto fail;
		}
		n_units = rs->n_cg;
	}
	for (i = 0; i < n_units && len < sizeof(units) - 64; i++)
		len += snprintf(units + len, sizeof(units) - len,
				"cgfwbu%d.service ", i);
	if (sh(err, esz, "systemctl daemon-reload && systemctl start %s", units))
		return -1;
	/* where the leaf service's processes are */
	snprintf(leaf.rel, sizeof(leaf.rel), "system.slice/cgfwbu%d.service",
		 n_units - 1);
	if (hier) {
		char rel[256] = "";

		for (i = 1; i <= n_slices; i++) {
			slice_name(i, slice, sizeof(slice));
			snprintf(rel + strlen(rel), sizeof(rel) - strlen(rel),
				 "%s/", slice);
		}
		snprintf(leaf.rel, sizeof(leaf.rel), "%scgfwbu0.service", rel);
	}
	leaf.level = hier ? n_slices + 1 : 2;
	return 0;
fail:
	snprintf(err, esz, "%s: %s", UNIT_DIR, strerror(errno));
	return -1;
}

void sdunit_clear(const struct ruleset *rs)
{
	char err[256], path[PATH_MAX], name[128];
	int i;

	(void)rs;
	sh(err, sizeof(err), "systemctl stop 'cgfwbu*.service' 'cgfwb*.slice'");
	for (i = 0; i < n_units; i++) {
		snprintf(path, sizeof(path), UNIT_DIR "/cgfwbu%d.service", i);
		unlink(path);
	}
	for (i = 1; i <= n_slices; i++) {
		slice_name(i, name, sizeof(name));
		snprintf(path, sizeof(path), UNIT_DIR "/%s", name);
		unlink(path);
	}
	n_units = n_slices = 0;
	sh(err, sizeof(err), "systemctl daemon-reload");
}

const struct cgref *sdunit_sender(const struct ruleset *rs)
{
	(void)rs;
	return &leaf;
}

/* The program systemd attached to the leaf's cgroup. */
int sdunit_prog_fd(const struct ruleset *rs)
{
	char path[PATH_MAX];
	uint32_t ids[8], n = 8;
	int cg, fd = -1;

	snprintf(path, sizeof(path), "%s/%s", cg_mount, leaf.rel);
	cg = open(path, O_RDONLY | O_DIRECTORY);
	if (cg < 0)
		return -1;
	if (!bpf_prog_query(cg, rs->dir == EGRESS ? BPF_CGROUP_INET_EGRESS :
				BPF_CGROUP_INET_INGRESS, 0, NULL, ids, &n) && n)
		fd = bpf_prog_get_fd_by_id(ids[n - 1]);
	close(cg);
	return fd;
}

void sdunit_stat(const struct ruleset *rs, struct progstat *ps)
{
	int fd = sdunit_prog_fd(rs);

	memset(ps, 0, sizeof(*ps));
	if (fd >= 0) {
		prog_stat_fd(fd, ps);
		close(fd);
	}
}

int sdunit_update(const struct ruleset *rs, int k, char *err, size_t esz)
{
	char a[64];

	set_element(rs->n + 400 + k, true, a, sizeof(a));
	return sh(err, esz,
		  "systemctl set-property --runtime cgfwbu0.service IPAddressDeny=%s",
		  a);
}
