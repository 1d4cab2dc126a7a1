/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whole relay frames over a conn.h connection, with deadlines: the
 * aggregator and memtrack-query never wait on a peer longer than they
 * decided to, however slowly it drips bytes.  Errors: net's one
 * convention (tcp.h's top comment).
 */
#ifndef MEMTRACK_NET_FRAME_IO_H
#define MEMTRACK_NET_FRAME_IO_H

#include <stddef.h>
#include <stdint.h>

struct mtn_conn;

/* Exactly len bytes by deadline: 0, -ETIMEDOUT, -ECONNRESET or -errno. */
int mtn_conn_read_by(struct mtn_conn *c, void *buf, size_t len,
		     int64_t deadline);

/*
 * One frame: its header by head_deadline, its body by body_deadline (or
 * body_ms after the header, if body_deadline is 0), header checked
 * (relay_proto.h).  *body is malloc'd (NULL for an empty one), the
 * caller frees it.  0, -EBADMSG (bad header), or what the reads returned.
 */
int mtn_frame_read(struct mtn_conn *c, uint8_t *type, uint8_t **body,
		   uint32_t *len, int64_t head_deadline, int64_t body_deadline,
		   int body_ms);

/* Header and body as one write: 0 or -errno. */
int mtn_frame_write(struct mtn_conn *c, uint8_t type, const void *body,
		    size_t len);

#endif /* MEMTRACK_NET_FRAME_IO_H */
