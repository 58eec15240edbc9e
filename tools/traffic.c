// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgfw-traffic: one real packet exchange, for the demo.
 *
 *   cgfw-traffic [-c CGROUP] udp ADDR PORT    send, wait for the echo
 *   cgfw-traffic [-c CGROUP] tcp ADDR PORT    connect
 *   cgfw-traffic [-c CGROUP] ping ADDR        ICMP echo
 *   cgfw-traffic [-c CGROUP] serve udp|tcp ADDR PORT
 *                                            echo datagrams / accept, forever
 *
 * -c joins the cgroup (a directory) before any socket is made. Prints the
 * verdict; exit status 0 passed, 1 EPERM, 2 no answer, 3 error.
 */
#include <stdlib.h>

#include "netprobe.h"

static int join(const char *cg)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	f = fopen(path, "w");
	if (!f || fprintf(f, "0\n") < 0 || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static int serve(const char *proto, const char *ip, int port)
{
	int udp = !strcmp(proto, "udp");
	int fd = probe_server(ip, port, udp ? SOCK_DGRAM : SOCK_STREAM), c;
	struct sockaddr_storage from;
	socklen_t len;
	char buf[512];
	ssize_t n;

	if (fd < 0) {
		perror("serve");
		return PROBE_ERROR;
	}
	for (;;) {
		len = sizeof(from);
		if (udp) {
			n = recvfrom(fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from, &len);
			if (n > 0)
				sendto(fd, buf, n, 0, (struct sockaddr *)&from,
				       len);
		} else {
			c = accept(fd, NULL, NULL);
			if (c >= 0)
				close(c);
		}
	}
}

/* UDP with an echo: "passed" means the answer came back. */
static int udp_echo(const char *ip, int port)
{
	struct probe_addr a;
	int fd, ret;

	if (probe_addr(&a, ip, port))
		return PROBE_ERROR;
	fd = socket(a.family, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a.ss, a.len))
		return PROBE_ERROR;
	if (send(fd, "cgfw", 4, 0) != 4)
		ret = errno == EPERM ? PROBE_EPERM : PROBE_ERROR;
	else
		ret = probe_udp_recv(fd, 500);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	int i = 1, ret;

	if (argc > 2 && !strcmp(argv[1], "-c")) {
		if (join(argv[2]))
			return PROBE_ERROR;
		i = 3;
	}
	if (argc - i == 4 && !strcmp(argv[i], "serve"))
		return serve(argv[i + 1], argv[i + 2], atoi(argv[i + 3]));
	if (argc - i == 3 && !strcmp(argv[i], "udp"))
		ret = udp_echo(argv[i + 1], atoi(argv[i + 2]));
	else if (argc - i == 3 && !strcmp(argv[i], "tcp"))
		ret = probe_tcp_connect(argv[i + 1], atoi(argv[i + 2]), 500);
	else if (argc - i == 2 && !strcmp(argv[i], "ping"))
		ret = probe_ping(argv[i + 1], 500);
	else {
		fprintf(stderr, "usage: cgfw-traffic [-c CGROUP] udp|tcp ADDR PORT | ping ADDR | serve udp|tcp ADDR PORT\n");
		return PROBE_ERROR;
	}
	printf("%s\n", probe_str(ret));
	return ret;
}
