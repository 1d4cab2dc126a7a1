/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the netlink test drivers (nlfuzz.c, nlsubset.c) share: their random
 * numbers (splitmix64: small, fast, the same sequence for the same seed)
 * and their socket.
 */
#ifndef NLFUZZ_NLTEST_H
#define NLFUZZ_NLTEST_H

#include <stdint.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>

static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * A bound generic netlink socket with a 4 MiB receive buffer (a dump's
 * answers pile up) and acks carrying the request's header only, with
 * their extended attributes; -1 if not.
 */
static inline int nltest_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1, rcvbuf = 4 << 20;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif
