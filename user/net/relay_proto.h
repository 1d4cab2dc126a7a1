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
 *
 * Queries (memtrack-query, query_client.h) use the same port and the same
 * authenticated connection: HELLO with session 0 (nodes never use it) and
 * the client's name, WELCOME 0, then any number of
 *
 *   QUERY     client -> agg: the query text (agg_query.c), 1..4096 bytes
 *   RESULT    agg -> client: u8 status (0 ok, 1 error), u8 kind, then
 *                            status 1: an error message
 *                            kind 0: a table, text: a header line of
 *                              NAME:TYPE columns (TYPE s string, n number)
 *                              then one line per row, tab-separated, with
 *                              backslash, tab, newline and bytes below 0x20
 *                              escaped as \ooo
 *                            kind 1: module records back to back (oldest
 *                              first), as the node relayed them
 *
 * A frame of the wrong type for the state of the connection (anything but
 * HELLO first, a QUERY on a node's connection, DATA on a client's) closes
 * the connection.
 *
 * The snapshot (kind MTN_RELAY_SNAPSHOT), text, version 3:
 *
 *   snapshot/3 SOURCE PROGRAMS PROCESSES
 *   p NPROC RSS_ANON RSS_FILE RSS_SHMEM SWAP NS POD CONTAINER COMM
 *                                                     PROGRAMS lines
 *   t PID RSS_ANON RSS_FILE RSS_SHMEM SWAP NS POD CONTAINER COMM
 *                                                     PROCESSES lines
 *
 * figures in bytes, every live process once; the namespace, pod and
 * container names of where it runs ("-" for none: the host's), and COMM
 * last, each with backslash, bytes below 0x21, 0x7f and up, and a name
 * that is "-" escaped as \ooo.  Version 2 (no NS POD CONTAINER) is still
 * read; version 1 (first line "snapshot SOURCE PROGRAMS", no t lines)
 * came before.
 */
#ifndef MEMTRACK_NET_RELAY_PROTO_H
#define MEMTRACK_NET_RELAY_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define MTN_RELAY_MAGIC		0x4d545231u	/* "MTR1" */
#define MTN_RELAY_HDR_LEN	12
#define MTN_RELAY_MAX_BODY	(1U << 20)
#define MTN_RELAY_MAX_NODE	255
#define MTN_RELAY_MAX_QUERY	4096
#define MTN_RELAY_MAX_RESULT	(16U << 20)
#define MTN_SNAPSHOT_VERSION	3

enum mtn_relay_type {
	MTN_RELAY_HELLO = 1,
	MTN_RELAY_WELCOME,
	MTN_RELAY_DATA,
	MTN_RELAY_ACK,
	MTN_RELAY_HEARTBEAT,
	MTN_RELAY_QUERY,
	MTN_RELAY_RESULT,
};

enum mtn_result_kind {
	MTN_RESULT_TABLE,
	MTN_RESULT_RECORDS,
};

enum mtn_relay_kind {
	MTN_RELAY_SNAPSHOT = 1,		/* text, version 3 (above, snapshot.c) */
	MTN_RELAY_RECORDS,		/* module records, whole, as read */
};

/* Header into out[MTN_RELAY_HDR_LEN]. */
void mtn_relay_hdr(uint8_t *out, uint8_t type, uint32_t len);
/*
 * Check a received header: 0 and *type, *len, or -EBADMSG (bad magic,
 * reserved bytes, unknown type, length out of range for the type).
 */
int mtn_relay_parse_hdr(const uint8_t *in, uint8_t *type, uint32_t *len);

struct mtn_buf;

/* A table RESULT's string field, escaped, then sep (tab or newline). */
void mtn_result_put_str(struct mtn_buf *b, const char *s, char sep);

void mtn_put_be64(uint8_t *p, uint64_t v);
uint64_t mtn_get_be64(const uint8_t *p);
void mtn_put_be32(uint8_t *p, uint32_t v);

#endif /* MEMTRACK_NET_RELAY_PROTO_H */
