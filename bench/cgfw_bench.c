// SPDX-License-Identifier: GPL-2.0
/*
 * cgfw benchmarks (docs/benchmarks.rst has the method and the results).
 *
 *   cgfw_bench rules [N...]   for each N, N non-matching "tcp dport P
 *                             accept" rules applied with -b bpf: apply wall
 *                             time, the verifier's processed instructions,
 *                             program size, and BPF_PROG_TEST_RUN ns/packet
 *                             on an 80-byte IPv6/TCP packet
 *   cgfw_bench pps [ROUNDS]   live egress UDP packets per second from a
 *                             process in the cgroup: no rules, and 1, 100,
 *                             1000 non-matching rules (and one set of 1000
 *                             ports) with -b bpf, -b nft-emulated and,
 *                             where the kernel has the cgroup family,
 *                             -b nft-native, interleaved in rotating order
 *
 * Runs as root in its own network and mount namespace, with cgroup2 on
 * /sys/fs/cgroup. Prints CSV lines (and # comments). Timings are for
 * comparing within one run only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <netinet/in.h>

#include "cgfwcmd.h"
#include "bpfprog.h"
#include "netprobe.h"

static char cg_name[64], cg_path[PATH_MAX];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * N rules "tcp|udp dport P accept" (P = 10000 + i), none matching port
 * 9999 or 443; with @set, one rule "udp dport { P... } accept" instead.
 */
static int apply(const char *backend, int n, const char *proto, bool set)
{
	char path[] = "/tmp/cgfw-bench-XXXXXX", cmd[512];
	FILE *f = fdopen(mkstemp(path), "w");
	int i, st;

	fprintf(f, "table cgroup bench {\n\tchain out {\n"
		   "\t\ttype filter hook egress cgroup \"%s\" priority 0; policy accept;\n",
		cg_name);
	if (set) {
		fprintf(f, "\t\t%s dport { ", proto);
		for (i = 0; i < n; i++)
			fprintf(f, "%s%d", i ? ", " : "", 10000 + i);
		fprintf(f, " } accept\n");
	}
	for (i = 0; !set && i < n; i++)
		fprintf(f, "\t\t%s dport %d accept\n", proto, 10000 + i);
	fprintf(f, "\t}\n}\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s apply -b %s %s", cgfw_bin(), backend,
		 path);
	st = system(cmd);
	unlink(path);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static void flush(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "%s flush", cgfw_bin());
	if (system(cmd))
		fprintf(stderr, "cgfw flush failed\n");
}

/* The program the bpf backend attached for our cgroup's egress. */
static int bench_prog_fd(void)
{
	return attached_prog("bench", "egress", cg_path);
}

/* Ethernet + IPv6 + TCP to port 443: 80 bytes, as bpfilter measures. */
static void ipv6_tcp_packet(uint8_t *pkt, size_t size)
{
	struct ethhdr *eth = (void *)pkt;
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	struct tcphdr *tcp = (void *)(ip6 + 1);

	memset(pkt, 0, size);
	eth->h_proto = htons(ETH_P_IPV6);
	ip6->version = 6;
	ip6->nexthdr = IPPROTO_TCP;
	ip6->hop_limit = 64;
	ip6->payload_len = htons(size - sizeof(*eth) - sizeof(*ip6));
	ip6->saddr.s6_addr[15] = 1;
	ip6->daddr.s6_addr[15] = 2;
	tcp->source = htons(40000);
	tcp->dest = htons(443);
	tcp->doff = 5;
	tcp->syn = 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int bench_rules(int argc, char **argv)
{
	static const int dflt[] = { 1, 8, 32, 128, 512, 2048, 10000 };
	int n_sizes = argc ? argc : (int)(sizeof(dflt) / sizeof(dflt[0]));
	uint8_t pkt[80];
	int i, t;

	ipv6_tcp_packet(pkt, sizeof(pkt));
	printf("rules,apply_ms,verified_insns,xlated_insns,jited_bytes,ns_per_pkt_median,ns_per_pkt_min,retval\n");
	for (i = 0; i < n_sizes; i++) {
		int n = argc ? atoi(argv[i]) : dflt[i], fd;
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info), ns[9];
		double t0 = now(), ms;

		if (apply("bpf", n, "tcp", false)) {
			printf("# %d rules: cgfw apply -b bpf failed\n", n);
			continue;
		}
		ms = (now() - t0) * 1e3;
		fd = bench_prog_fd();
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
			printf("# %d rules: no program found\n", n);
			continue;
		}
		for (t = 0; t < 9; t++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
				    .data_size_in = sizeof(pkt),
				    .repeat = n > 1000 ? 20000 : 200000);

			if (bpf_prog_test_run_opts(fd, &o)) {
				printf("# test run failed: %s\n",
				       strerror(errno));
				break;
			}
			ns[t] = o.duration;
			if (o.retval != 1)
				printf("# %d rules: verdict %u, expected 1 (pass)\n",
				       n, o.retval);
		}
		qsort(ns, 9, sizeof(ns[0]), cmp_u32);
		printf("%d,%.1f,%u,%u,%u,%u,%u,1\n", n, ms,
		       info.verified_insns, info.xlated_prog_len / 8,
		       info.jited_prog_len, ns[4], ns[0]);
		fflush(stdout);
		close(fd);
	}
	flush();
	return 0;
}

/* Packets a process in the cgroup sends to the sink in @secs seconds. */
static double measure_pps(double secs)
{
	int p[2];
	pid_t pid;
	double pps = 0;

	if (pipe(p))
		return 0;
	pid = fork();
	if (!pid) {
		char procs[PATH_MAX], buf[18] = { 0 };
		struct mmsghdr msgs[64];
		struct iovec iov = { buf, sizeof(buf) };
		struct probe_addr a;
		unsigned long long sent = 0;
		double t0, t;
		FILE *f;
		int fd, i, r;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg_path);
		f = fopen(procs, "w");
		fprintf(f, "0\n");
		fclose(f);
		probe_addr(&a, "127.0.0.1", 9999);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		connect(fd, (struct sockaddr *)&a.ss, a.len);
		memset(msgs, 0, sizeof(msgs));
		for (i = 0; i < 64; i++) {
			msgs[i].msg_hdr.msg_iov = &iov;
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		t0 = now();
		while (now() - t0 < 0.1)	/* warm up */
			sendmmsg(fd, msgs, 64, 0);
		t0 = now();
		do {
			r = sendmmsg(fd, msgs, 64, 0);
			if (r > 0)
				sent += r;
			t = now() - t0;
		} while (t < secs);
		pps = sent / t;
		if (write(p[1], &pps, sizeof(pps)) != sizeof(pps))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &pps, sizeof(pps)) != sizeof(pps))
		pps = 0;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return pps;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct pps_config {
	const char *backend;	/* "none": no rules */
	int n;
	bool set;		/* the n ports in one set */
	double pps[64];		/* one a round */
};

/* Every configuration, the native family's where the kernel has it. */
static int pps_configs(struct pps_config *cfg, int max)
{
	static const char *const rules_backends[] = {
		"bpf", "nft-emulated", "nft-native",
	};
	static const int sizes[] = { 1, 100, 1000 };
	int n_backends = native_family() ? 3 : 2, n = 0, i, b;

	cfg[n++] = (struct pps_config){ .backend = "none" };
	for (i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++)
		for (b = 0; b < n_backends && n < max; b++)
			cfg[n++] = (struct pps_config){
				.backend = rules_backends[b], .n = sizes[i],
			};
	for (b = 0; b < n_backends && n < max; b++)
		cfg[n++] = (struct pps_config){
			.backend = rules_backends[b], .n = 1000, .set = true,
		};
	return n;
}

static int bench_pps(int rounds)
{
	static struct pps_config cfg[16];
	int sink = probe_server("127.0.0.1", 9999, SOCK_DGRAM), r, i, c;
	int n_cfg = pps_configs(cfg, 16), small = 4096;
	double none;

	/* a sink that is never read: the datagrams die cheaply at its queue */
	setsockopt(sink, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (rounds > 64)
		rounds = 64;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n_cfg; i++) {
			c = (i + r) % n_cfg;	/* rotate the order */
			if (!strcmp(cfg[c].backend, "none"))
				flush();
			else if (apply(cfg[c].backend, cfg[c].n, "udp",
				       cfg[c].set))
				return 1;
			cfg[c].pps[r] = measure_pps(0.5);
		}
	}
	flush();
	printf("config,rules,shape,rounds,pps_median,ns_per_pkt,delta_ns_vs_none\n");
	for (c = 0; c < n_cfg; c++)
		qsort(cfg[c].pps, rounds, sizeof(double), cmp_double);
	none = cfg[0].pps[rounds / 2];
	for (c = 0; c < n_cfg; c++) {
		double med = cfg[c].pps[rounds / 2];

		printf("%s,%d,%s,%d,%.0f,%.0f,%.0f\n", cfg[c].backend,
		       cfg[c].n, cfg[c].set ? "set" : "rules", rounds, med,
		       1e9 / med, 1e9 / med - 1e9 / none);
	}
	close(sink);
	return 0;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	pid_t pid;
	int st, ret;

	if (argc < 2 || (strcmp(argv[1], "rules") && strcmp(argv[1], "pps"))) {
		fprintf(stderr, "usage: cgfw_bench rules [N...] | pps [ROUNDS]\n");
		return 2;
	}
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    probe_private_bpffs() ||
	    probe_cgroup2_on_sys_fs_cgroup()) {
		perror("namespaces (run as root)");
		return 1;
	}
	probe_lo_up();
	snprintf(cg_name, sizeof(cg_name), "cgfw-bench-%d", getpid());
	snprintf(cg_path, sizeof(cg_path), "/sys/fs/cgroup/%s", cg_name);
	mkdir(cg_path, 0755);
	pid = fork();	/* the parent stays out of the cgroup to remove it */
	if (!pid) {
		if (!strcmp(argv[1], "rules"))
			ret = bench_rules(argc - 2, argv + 2);
		else
			ret = bench_pps(argc > 2 ? atoi(argv[2]) : 5);
		fflush(stdout);
		_exit(ret);
	}
	waitpid(pid, &st, 0);
	snprintf(path, sizeof(path), "%s", cg_path);
	rmdir(path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
