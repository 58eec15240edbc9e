/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Real traffic for the selftests and the demo: each probe sends or receives
 * one thing on a real socket and says what a user would see (an errno, a
 * datagram that arrived or not, a connection that completed or not).
 * Header-only so the selftest stays one self-contained file.
 */
#ifndef CGFW_NETPROBE_H
#define CGFW_NETPROBE_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

/* Verdicts as a user sees them. */
enum probe_result {
	PROBE_PASSED = 0,	/* sent and answered / delivered / connected */
	PROBE_EPERM = 1,	/* the sender got EPERM: dropped at egress */
	PROBE_TIMEOUT = 2,	/* nothing came back, nothing arrived */
	PROBE_ERROR = 3,	/* the probe itself failed */
};

static inline const char *probe_str(int r)
{
	switch (r) {
	case PROBE_PASSED:
		return "passed";
	case PROBE_EPERM:
		return "dropped (EPERM at the sender)";
	case PROBE_TIMEOUT:
		return "dropped (no answer)";
	default:
		return "probe error";
	}
}

struct probe_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	int family;
};

static inline int probe_addr(struct probe_addr *a, const char *ip, int port)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a->ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&a->ss;

	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		a->len = sizeof(*s4);
	} else if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		a->len = sizeof(*s6);
	} else {
		return -1;
	}
	a->family = a->ss.ss_family;
	return 0;
}

/* Bring up the loopback device of the current network namespace. */
static inline int probe_lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = -1;

	if (fd < 0)
		return -1;
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return ret;
}

static inline int probe_wait(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };

	return poll(&p, 1, ms) == 1 ? 0 : -1;
}

/* A bound socket of @type (SOCK_DGRAM, or SOCK_STREAM listening). */
static inline int probe_server(const char *ip, int port, int type)
{
	struct probe_addr a;
	int fd, one = 1;

	if (probe_addr(&a, ip, port))
		return -1;
	fd = socket(a.family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a.ss, a.len) ||
	    (type == SOCK_STREAM && listen(fd, 16))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Did a datagram arrive within @ms? Consumes it. */
static inline int probe_udp_recv(int fd, int ms)
{
	char buf[512];

	if (probe_wait(fd, POLLIN, ms))
		return PROBE_TIMEOUT;
	return recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0 ? PROBE_PASSED :
								PROBE_ERROR;
}

/* Send one datagram from @fd (or a new socket when fd < 0). */
static inline int probe_udp_send_fd(int fd, const char *ip, int port)
{
	struct probe_addr a;
	int own = fd < 0, ret;

	if (probe_addr(&a, ip, port))
		return PROBE_ERROR;
	if (own)
		fd = socket(a.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return PROBE_ERROR;
	ret = sendto(fd, "cgfw", 4, 0, (struct sockaddr *)&a.ss, a.len) == 4 ?
		      PROBE_PASSED :
	      errno == EPERM ? PROBE_EPERM : PROBE_ERROR;
	if (own)
		close(fd);
	return ret;
}

static inline int probe_udp_send(const char *ip, int port)
{
	return probe_udp_send_fd(-1, ip, port);
}

/* Does a TCP connection complete within @ms? */
static inline int probe_tcp_connect(const char *ip, int port, int ms)
{
	struct probe_addr a;
	socklen_t len = sizeof(int);
	int fd, err = 0, ret;

	if (probe_addr(&a, ip, port))
		return PROBE_ERROR;
	fd = socket(a.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return PROBE_ERROR;
	if (!connect(fd, (struct sockaddr *)&a.ss, a.len)) {
		ret = PROBE_PASSED;
	} else if (errno == EPERM) {
		ret = PROBE_EPERM;
	} else if (errno != EINPROGRESS) {
		ret = PROBE_ERROR;
	} else if (probe_wait(fd, POLLOUT, ms)) {
		ret = PROBE_TIMEOUT;
	} else {
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
		ret = !err ? PROBE_PASSED :
		      err == EPERM ? PROBE_EPERM : PROBE_ERROR;
	}
	close(fd);
	return ret;
}

/*
 * An ICMP echo over a ping socket (needs net.ipv4.ping_group_range to
 * include our group; probe_allow_ping() sets it in the current netns).
 */
static inline int probe_ping(const char *ip, int ms)
{
	struct icmphdr h4 = { .type = ICMP_ECHO };
	struct icmp6_hdr h6 = { .icmp6_type = ICMP6_ECHO_REQUEST };
	struct probe_addr a;
	char buf[256];
	int fd, ret;

	if (probe_addr(&a, ip, 0))
		return PROBE_ERROR;
	fd = socket(a.family, SOCK_DGRAM | SOCK_CLOEXEC,
		    a.family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
	if (fd < 0)
		return PROBE_ERROR;
	if (sendto(fd, a.family == AF_INET ? (void *)&h4 : (void *)&h6,
		   a.family == AF_INET ? sizeof(h4) : sizeof(h6), 0,
		   (struct sockaddr *)&a.ss, a.len) < 0)
		ret = errno == EPERM ? PROBE_EPERM : PROBE_ERROR;
	else if (probe_wait(fd, POLLIN, ms))
		ret = PROBE_TIMEOUT;
	else
		ret = recv(fd, buf, sizeof(buf), 0) > 0 ? PROBE_PASSED :
							  PROBE_ERROR;
	close(fd);
	return ret;
}

/*
 * cgroup2 on /sys/fs/cgroup in this (private) mount namespace: mounted if
 * something else is there (a hybrid layout's tmpfs), used as it is if it
 * is cgroup2 already (the kernel refuses the same superblock twice on one
 * mount point).
 */
static inline int probe_cgroup2_on_sys_fs_cgroup(void)
{
	struct statfs sfs;

	if (!statfs("/sys/fs/cgroup", &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	return mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL);
}

/*
 * A bpffs of this mount namespace's own on /sys/fs/bpf: what the bpf
 * backend pins is per bpffs, so tests that run at the same time (or a
 * test and an administrator) do not see each other's tables.
 */
static inline int probe_private_bpffs(void)
{
	return mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700");
}

static inline int probe_allow_ping(void)
{
	int fd = open("/proc/sys/net/ipv4/ping_group_range", O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, "0 2147483647", 12) == 12 ? 0 : -1;
	close(fd);
	return ret;
}

#endif /* CGFW_NETPROBE_H */
