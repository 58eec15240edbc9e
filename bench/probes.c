// SPDX-License-Identifier: GPL-2.0
/*
 * What is measured, one value per probe and setup and round:
 *
 *   PR_UDP egress   a process in the sender cgroup sends 18-byte datagrams
 *                   with sendmmsg() (64 a call) to a sink that is never
 *                   read (the datagrams die at its full queue): ns/packet
 *                   from packets sent in the probe's time, at the sender
 *   PR_UDP ingress  the same from a process outside the cgroup, to a sink
 *                   whose socket was made in the cgroup: the receive path,
 *                   with its ingress hook, runs in the sender's context
 *   PR_TCP          one byte each way, request and response, between a
 *                   client in the cgroup and a server in another network
 *                   namespace behind a veth pair: ns/transaction
 *   PR_TESTRUN      BPF_PROG_TEST_RUN of the program that sees the
 *                   sender's packets, on the probe's packet: ns/run
 *   PR_UPDATE...    wall time of one element added to the set, in µs:
 *                   cgfw update, the tool's own in-place update (nft add
 *                   element, or bpf_map_update_elem() alone), re-apply
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>

#include "bench.h"

static double secs = 0.5;
static int ns_main = -1, ns_srv = -1, ns_legacy = -1, in_legacy;
static pid_t server = -1;

/*
 * Every measuring process (senders, sinks, the client, the server) on one
 * CPU, the last: request and response hand over on that CPU without
 * waking another, and nothing migrates during a probe.
 */
static void pin_cpu(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

char *tmpfile_path(const char *tag)
{
	static int seq;
	char *p;

	if (asprintf(&p, "/tmp/cgfw-bench-%d-%s-%d", getpid(), tag, seq++) < 0)
		abort();
	return p;
}

/* Run a shell command; stdout is dropped (shown with -v), the first line
 * of stderr goes to @err. Returns the exit status (0: success). */
int sh(char *err, size_t esz, const char *fmt, ...)
{
	char cmd[8192], line[1024], full[8300];
	bool first = true;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "{ %s ; } 2>&1 %s", cmd,
		 verbose ? "" : ">/dev/null");
	if (verbose)
		fprintf(stderr, "+ %s\n", cmd);
	if (esz)
		*err = '\0';
	p = popen(full, "r");
	if (!p) {
		snprintf(err, esz, "popen: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), p)) {
		if (verbose)
			fputs(line, stderr);
		if (first && esz) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(err, esz, "%s", line);
			first = false;
		}
	}
	st = pclose(p);
	st = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (st && esz && !*err)
		snprintf(err, esz, "exit status %d: %.200s", st, cmd);
	return st;
}

void probes_set_secs(double s)
{
	secs = s;
}

/* ---- namespaces ---- */

static int new_netns(void)
{
	int fd;

	if (unshare(CLONE_NEWNET))
		return -1;
	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	sh(NULL, 0, "ip link set lo up");
	setns(ns_main, CLONE_NEWNET);
	return fd;
}

int netns_enter_legacy(void)
{
	if (setns(ns_legacy, CLONE_NEWNET))
		return -1;
	in_legacy = 1;
	return 0;
}

void netns_leave_legacy(void)
{
	setns(ns_main, CLONE_NEWNET);
	in_legacy = 0;
}

/* Addresses given to lo, per namespace: added once. */
static char (*addrs[2])[64];
static int n_addrs[2];

void lo_addr(const char *addr, bool v6)
{
	char err[256];
	int k = in_legacy, i;

	if (!strcmp(addr, "127.0.0.1") || !strcmp(addr, "::1"))
		return;
	for (i = 0; i < n_addrs[k]; i++)
		if (!strcmp(addrs[k][i], addr))
			return;
	addrs[k] = realloc(addrs[k], (n_addrs[k] + 1) * sizeof(*addrs[k]));
	snprintf(addrs[k][n_addrs[k]++], 64, "%s", addr);
	if (sh(err, sizeof(err), "ip %s addr add %s/%d dev lo %s",
	       v6 ? "-6" : "", addr, v6 ? 128 : 32, v6 ? "nodad" : ""))
		fprintf(stderr, "bench: %s on lo: %s\n", addr, err);
}

/* The request/response server: one byte back for each one received. */
static void serve(void)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(9999) };
	struct pollfd pf[64];
	int one = 1, zero = 0, n = 1, i;

	pf[0].fd = socket(AF_INET6, SOCK_STREAM, 0);
	setsockopt(pf[0].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(pf[0].fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(pf[0].fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(pf[0].fd, 64))
		_exit(1);
	pf[0].events = POLLIN;
	for (;;) {
		if (poll(pf, n, -1) < 0)
			continue;
		if (pf[0].revents & POLLIN) {
			int c = accept(pf[0].fd, NULL, NULL);

			if (c >= 0 && n < 64) {
				setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one,
					   sizeof(one));
				pf[n].fd = c;
				pf[n++].events = POLLIN;
			} else if (c >= 0) {
				close(c);
			}
		}
		for (i = 1; i < n; i++) {
			char b[64];
			ssize_t r;

			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(pf[i].fd, b, sizeof(b));
			if (r <= 0 || write(pf[i].fd, b, r) != r) {
				close(pf[i].fd);
				pf[i--] = pf[--n];
			}
		}
	}
}

/* A veth pair from the current namespace to the server's. */
static int veth(const char *name, int subnet, char *err, size_t esz)
{
	char nsfile[64];

	snprintf(nsfile, sizeof(nsfile), "/proc/%d/ns/net", server);
	return sh(err, esz,
		  "ip link add %sa type veth peer name %sb netns %s && "
		  "ip addr add 192.168.%d.1/24 dev %sa && "
		  "ip -6 addr add fdfe:%d::1/64 dev %sa nodad && "
		  "ip link set %sa up && "
		  "nsenter --net=%s sh -c 'ip addr add 192.168.%d.2/24 dev %sb && "
		  "ip -6 addr add fdfe:%d::2/64 dev %sb nodad && ip link set %sb up'",
		  name, name, nsfile, subnet, name, subnet, name, name, nsfile,
		  subnet, name, subnet, name, name);
}

int probes_init(void)
{
	char err[512];
	int p[2];

	ns_main = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ns_legacy = new_netns();
	ns_srv = new_netns();
	if (ns_main < 0 || ns_legacy < 0 || ns_srv < 0) {
		perror("bench: network namespaces");
		return -1;
	}
	if (pipe(p))
		return -1;
	server = fork();
	if (!server) {
		setns(ns_srv, CLONE_NEWNET);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pin_cpu();
		close(p[0]);
		if (write(p[1], "", 1) != 1)
			_exit(1);
		close(p[1]);
		serve();
	}
	close(p[1]);
	if (read(p[0], err, 1) != 1)
		return -1;
	close(p[0]);
	if (veth("cgbm", 254, err, sizeof(err))) {
		fprintf(stderr, "bench: veth: %s\n", err);
		return -1;
	}
	setns(ns_legacy, CLONE_NEWNET);
	if (veth("cgbl", 253, err, sizeof(err))) {
		fprintf(stderr, "bench: veth (legacy namespace): %s\n", err);
		return -1;
	}
	setns(ns_main, CLONE_NEWNET);
	return 0;
}

void probes_fini(void)
{
	if (server > 0) {
		kill(server, SIGKILL);
		waitpid(server, NULL, 0);
	}
}

/* ---- live traffic ---- */

static int join_cgroup(const struct cgref *cg)
{
	char path[PATH_MAX];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", cg_mount, cg->rel);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, "0\n", 2) == 2;
	close(fd);
	return ok ? 0 : -1;
}

static socklen_t sockaddr_of(const char *ip, int port, int v6,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &s->sin6_addr);
		return sizeof(*s);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		inet_pton(AF_INET, ip, &s->sin_addr);
		return sizeof(*s);
	}
}

static int udp_socket(const char *ip, int port, int v6)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(ip, port, v6, &ss);
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* In a child: send for @secs, write ns/packet (or -errno) to @out. */
static void udp_send(const struct pkt *k, const struct cgref *cg, int out)
{
	char buf[18] = { 0 };
	struct iovec iov = { buf, sizeof(buf) };
	struct mmsghdr m[64];
	struct sockaddr_storage ss;
	unsigned long long sent = 0;
	double t0, t, v = -EIO;
	socklen_t len;
	int fd, i, r, err = 0;

	pin_cpu();
	if (cg && join_cgroup(cg))
		goto out;
	fd = udp_socket(k->saddr, k->sport, k->v6);
	len = sockaddr_of(k->daddr, k->dport, k->v6, &ss);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len)) {
		v = -errno;
		goto out;
	}
	memset(m, 0, sizeof(m));
	for (i = 0; i < 64; i++) {
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = now();
	while (now() - t0 < (secs < 0.5 ? secs / 5 : 0.1))
		sendmmsg(fd, m, 64, 0);
	t0 = now();
	do {
		r = sendmmsg(fd, m, 64, 0);
		if (r > 0)
			sent += r;
		else
			err = errno;
		t = now() - t0;
	} while (t < secs);
	v = sent ? t * 1e9 / sent : -(err ? err : EIO);
out:
	if (write(out, &v, sizeof(v)) != sizeof(v))
		_exit(1);
	_exit(0);
}

static double udp_probe(const struct probe *pr, const struct ruleset *rs,
			char *err, size_t esz)
{
	const struct pkt *k = &pr->pkt;
	int p[2], s[2], sink = -1;
	pid_t pid, sinkpid = -1;
	double v = -1;
	char c;

	lo_addr(k->saddr, k->v6);
	lo_addr(k->daddr, k->v6);
	if (pipe(p) || pipe(s))
		return -1;
	if (pr->dir == EGRESS) {
		sink = udp_socket(k->daddr, k->dport, k->v6);
	} else {
		/* the sink's socket is made in the cgroup */
		sinkpid = fork();
		if (!sinkpid) {
			close(s[0]);
			if (join_cgroup(rs->sender))
				_exit(1);
			sink = udp_socket(k->daddr, k->dport, k->v6);
			if (sink >= 0) {
				int small = 4096;

				setsockopt(sink, SOL_SOCKET, SO_RCVBUF, &small,
					   sizeof(small));
			}
			if (sink < 0 || write(s[1], "", 1) != 1)
				_exit(1);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();	/* until killed */
			_exit(0);
		}
		close(s[1]);
		if (read(s[0], &c, 1) != 1) {
			snprintf(err, esz, "sink in the cgroup: failed");
			goto out;
		}
	}
	if (pr->dir == EGRESS) {
		int small = 4096;

		if (sink < 0) {
			snprintf(err, esz, "sink %s:%d: %s", k->daddr, k->dport,
				 strerror(errno));
			goto out;
		}
		setsockopt(sink, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	pid = fork();
	if (!pid) {
		close(p[0]);
		udp_send(k, pr->dir == EGRESS ? rs->sender : NULL, p[1]);
	}
	close(p[1]);
	p[1] = -1;
	if (read(p[0], &v, sizeof(v)) != sizeof(v))
		v = -EIO;
	waitpid(pid, NULL, 0);
	if (v < 0)
		snprintf(err, esz, "udp %s -> %s:%d: %s", k->saddr, k->daddr,
			 k->dport, strerror((int)-v));
out:
	if (sinkpid > 0) {
		kill(sinkpid, SIGKILL);
		waitpid(sinkpid, NULL, 0);
	}
	if (sink >= 0)
		close(sink);
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (pr->dir == EGRESS) {
		close(s[0]);
		close(s[1]);
	} else {
		close(s[0]);
	}
	return v;
}

static void tcp_client(const struct pkt *k, const struct cgref *cg, int out)
{
	struct sockaddr_storage ss;
	unsigned long long n = 0;
	double t0, t, v = -EIO;
	socklen_t len;
	char b = 'x';
	int fd, one = 1;

	pin_cpu();
	if (join_cgroup(cg))
		goto out;
	fd = socket(k->v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	len = sockaddr_of(k->daddr, k->dport, k->v6, &ss);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&ss, len)) {
		v = -errno;
		goto out;
	}
	t0 = now();
	while (now() - t0 < (secs < 0.5 ? secs / 5 : 0.1))
		if (write(fd, &b, 1) != 1 || read(fd, &b, 1) != 1)
			break;
	t0 = now();
	do {
		if (write(fd, &b, 1) != 1 || read(fd, &b, 1) != 1) {
			v = -errno;
			goto out;
		}
		n++;
		t = now() - t0;
	} while (t < secs);
	v = t * 1e9 / n;
out:
	if (write(out, &v, sizeof(v)) != sizeof(v))
		_exit(1);
	_exit(0);
}

static double tcp_probe(const struct probe *pr, const struct ruleset *rs,
			char *err, size_t esz)
{
	struct pkt k = pr->pkt;
	double v = -1;
	pid_t pid;
	int p[2];

	/* the server behind this namespace's veth */
	snprintf(k.daddr, sizeof(k.daddr), k.v6 ? "fdfe:%d::2" : "192.168.%d.2",
		 in_legacy ? 253 : 254);
	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		close(p[0]);
		tcp_client(&k, rs->sender, p[1]);
	}
	close(p[1]);
	if (read(p[0], &v, sizeof(v)) != sizeof(v))
		v = -EIO;
	close(p[0]);
	waitpid(pid, NULL, 0);
	if (v < 0)
		snprintf(err, esz, "tcp to %s: %s", k.daddr, strerror((int)-v));
	return v;
}

/* ---- what the kernel holds ---- */

/* fdinfo's "key:\tvalue" as a number, -1 if absent */
long long fdinfo_field(int fd, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	size_t kl = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtoll(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

unsigned long long fdinfo_memlock(int fd)
{
	long long v = fdinfo_field(fd, "memlock");

	return v > 0 ? v : 0;
}

/* ---- BPF_PROG_TEST_RUN ---- */

static size_t build_packet(const struct pkt *k, uint8_t *b, size_t size)
{
	struct ethhdr *eth = (void *)b;
	size_t l3 = k->v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	size_t l4 = k->proto == 6 ? sizeof(struct tcphdr) : sizeof(struct udphdr);
	size_t pay = k->proto == 6 ? 0 : 18, len = sizeof(*eth) + l3 + l4 + pay;
	uint8_t *t = b + sizeof(*eth) + l3;

	memset(b, 0, size);
	if (k->v6) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		eth->h_proto = htons(ETH_P_IPV6);
		ip6->version = 6;
		ip6->nexthdr = k->proto;
		ip6->hop_limit = 64;
		ip6->payload_len = htons(l4 + pay);
		inet_pton(AF_INET6, k->saddr, &ip6->saddr);
		inet_pton(AF_INET6, k->daddr, &ip6->daddr);
	} else {
		struct iphdr *ip = (void *)(eth + 1);

		eth->h_proto = htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = k->proto;
		ip->tot_len = htons(l3 + l4 + pay);
		inet_pton(AF_INET, k->saddr, &ip->saddr);
		inet_pton(AF_INET, k->daddr, &ip->daddr);
	}
	if (k->proto == 6) {
		struct tcphdr *tcp = (void *)t;

		tcp->source = htons(k->sport);
		tcp->dest = htons(k->dport);
		tcp->doff = 5;
		tcp->ack = 1;
	} else {
		struct udphdr *udp = (void *)t;

		udp->source = htons(k->sport);
		udp->dest = htons(k->dport);
		udp->len = htons(l4 + pay);
	}
	return len;
}

static int test_run(int fd, uint8_t *pkt, size_t len, int repeat,
		    uint32_t *ns, uint32_t *ret)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o))
		return -errno;
	*ns = o.duration;
	*ret = o.retval;
	return 0;
}

int testrun_pkt(int fd, const struct pkt *k, int repeat, uint32_t *ns,
		uint32_t *ret)
{
	uint8_t pkt[128];
	size_t len = build_packet(k, pkt, sizeof(pkt));

	return test_run(fd, pkt, len, repeat, ns, ret);
}

static double testrun_probe(const struct probe *pr, const struct path *p,
			    const struct ruleset *rs, char *err, size_t esz)
{
	uint8_t pkt[128];
	size_t len = build_packet(&pr->pkt, pkt, sizeof(pkt));
	uint32_t ns = 0, ret = 0, v[3], x;
	int fd = p->prog_fd ? p->prog_fd(rs) : -1, r, i, j, repeat;

	if (fd < 0) {
		snprintf(err, esz, "no program for the sender's cgroup");
		return -1;
	}
	/* as many runs as fill about a fifth of the probe's time */
	r = test_run(fd, pkt, len, 1000, &ns, &ret);
	repeat = r ? 0 : ns ? secs * 0.2e9 / ns : 1000000;
	repeat = repeat < 1000 ? 1000 : repeat > 2000000 ? 2000000 : repeat;
	for (i = 0; !r && i < 3; i++)
		r = test_run(fd, pkt, len, repeat, &v[i], &ret);
	close(fd);
	if (r) {
		snprintf(err, esz, "test run: %s", strerror(-r));
		return -1;
	}
	if (ret != (uint32_t)pr->expect) {
		snprintf(err, esz, "test run verdict %u, expected %d (%s)", ret,
			 pr->expect, pr->expect ? "pass" : "drop");
		return -1;
	}
	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			if (v[j] < v[i]) {
				x = v[i];
				v[i] = v[j];
				v[j] = x;
			}
	return v[1];
}

/* ---- updates ---- */

static int update_seq;

static double update_probe(const struct probe *pr, const struct path *p,
			   const struct ruleset *rs, char *err, size_t esz)
{
	double t0 = now(), t = 0;
	int r = -1;

	switch (pr->kind) {
	case PR_UPDATE:
		r = p->update ? p->update(rs, update_seq++, err, esz) : -2;
		t = now() - t0;
		break;
	case PR_UPDATE_RAW:
		r = p->update_raw ? p->update_raw(rs, update_seq++, &t, err, esz) :
				    -2;
		break;
	case PR_REAPPLY:
		r = p->reapply ? p->reapply(rs, err, esz) : -2;
		t = now() - t0;
		break;
	default:
		break;
	}
	if (r == -2)
		snprintf(err, esz, "not available for this path");
	return r ? -1 : t * 1e6;
}

double probe_run(const struct probe *pr, const struct path *p,
		 const struct ruleset *rs, char *err, size_t esz)
{
	struct ruleset moved;

	*err = '\0';
	if (p->sender) {	/* the path's own cgroup for the sender */
		moved = *rs;
		moved.sender = p->sender(rs);
		rs = &moved;
	}
	switch (pr->kind) {
	case PR_UDP:
		return udp_probe(pr, rs, err, esz);
	case PR_TCP:
		return tcp_probe(pr, rs, err, esz);
	case PR_TESTRUN:
		return testrun_probe(pr, p, rs, err, esz);
	default:
		return update_probe(pr, p, rs, err, esz);
	}
}
