/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd's relay protocol (node -> aggregator over TCP), version 1.
 * Every frame: a 12-byte header (magic "MTR1", type, 3 zero bytes, body
 * length), then the body; integers big-endian.
 *
 *   HELLO     node -> agg: u64 session, u64 oldest seq buffered,
 *                          u16 node length, node name
 *   WELCOME   agg -> node: u64 the next seq it wants of this session
 *                          (0: none of it yet: send all that is buffered)
 *   DATA      node -> agg: u64 seq, u8 kind, payload
 *   ACK       agg -> node: u64 seq: every seq up to it is stored
 *   HEARTBEAT node -> agg: empty, after a second without DATA
 *
 * Sequence numbers start at 1 per session (one per daemon start) and have
 * no holes on the node's side; a gap an aggregator sees is what the node's
 * bounded buffer dropped, and the node counts it.
 */
#ifndef MEMTRACKD_RELAY_PROTO_H
#define MEMTRACKD_RELAY_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define MTD_RELAY_MAGIC		0x4d545231u	/* "MTR1" */
#define MTD_RELAY_HDR_LEN	12
#define MTD_RELAY_MAX_BODY	(1U << 20)
#define MTD_RELAY_MAX_NODE	255

enum mtd_relay_type {
	MTD_RELAY_HELLO = 1,
	MTD_RELAY_WELCOME,
	MTD_RELAY_DATA,
	MTD_RELAY_ACK,
	MTD_RELAY_HEARTBEAT,
};

enum mtd_relay_kind {
	MTD_RELAY_SNAPSHOT = 1,		/* per-program text lines (snapshot.c) */
	MTD_RELAY_RECORDS,		/* module records, whole, as read */
};

/* Header into out[MTD_RELAY_HDR_LEN]. */
void mtd_relay_hdr(uint8_t *out, uint8_t type, uint32_t len);
/*
 * Check a received header: 0 and *type, *len, or -EBADMSG (bad magic,
 * reserved bytes, unknown type, length out of range for the type).
 */
int mtd_relay_parse_hdr(const uint8_t *in, uint8_t *type, uint32_t *len);

void mtd_put_be64(uint8_t *p, uint64_t v);
uint64_t mtd_get_be64(const uint8_t *p);

#endif /* MEMTRACKD_RELAY_PROTO_H */
