/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Plain TCP sockets (tcp.c) under the relay's connections (conn.h) and the
 * HTTP endpoint: dial a peer, listen for peers, by address or host name.
 */
#ifndef MEMTRACK_NET_TCP_H
#define MEMTRACK_NET_TCP_H

#include <stddef.h>

/*
 * A TCP connection to host (a numeric IPv4 or IPv6 address, or a name: its
 * addresses tried in turn) port, made within connect_ms, then blocking,
 * with TCP_NODELAY: the socket for mtd_conn_open(), or -errno (-ENXIO: no
 * such host, -ENODATA: the resolver failed for now).
 */
int mtd_dial(const char *host, unsigned int port, int connect_ms);
/* What a -errno of mtd_dial() means, for a log line. */
const char *mtd_net_strerror(int err);
/* Send and receive timeouts of ms (at least 1 ms): 0 or -errno. */
int mtd_set_timeouts(int fd, int ms);
/*
 * socket + bind + listen on each address of host (numeric or a name) and
 * port, at most max, into fds: how many, or -errno with err set (for a name
 * that does not resolve -ENXIO).  An address the machine does not have (::1
 * without IPv6) is skipped if another one binds; any other failure undoes
 * them all.
 */
int mtd_listen_all(const char *host, unsigned int port, int *fds, int max,
		   char *err, size_t errlen);
/* The same for the first address that binds: fd or -errno with err set. */
int mtd_listen(const char *host, unsigned int port, char *err, size_t errlen);

#endif /* MEMTRACK_NET_TCP_H */
