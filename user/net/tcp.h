/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Plain TCP sockets (tcp.c) under the relay's connections (conn.h) and the
 * HTTP endpoint: dial a peer, listen for peers, by numeric address.
 */
#ifndef MEMTRACK_NET_TCP_H
#define MEMTRACK_NET_TCP_H

#include <stddef.h>

/*
 * A TCP connection to addr (numeric IPv4 or IPv6) port, made within
 * connect_ms, then blocking, with TCP_NODELAY: the socket for
 * mtd_conn_open(), or -errno (-EINVAL: not a numeric address).
 */
int mtd_dial(const char *addr, unsigned int port, int connect_ms);
/* Send and receive timeouts of ms (at least 1 ms): 0 or -errno. */
int mtd_set_timeouts(int fd, int ms);
/* socket + bind + listen on addr:port; fd or -errno with err set. */
int mtd_listen(const char *addr, unsigned int port, char *err, size_t errlen);

#endif /* MEMTRACK_NET_TCP_H */
