/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The relay (relay.c): snapshots go into a bounded buffer with a sequence
 * number each; one thread per aggregator sends them over TCP, replays what
 * that aggregator has not acknowledged after every reconnect (exponential
 * backoff), and counts what was dropped from the buffer before it was
 * acknowledged.  Protocol: relay_proto.h.
 */
#ifndef MEMTRACKD_RELAY_H
#define MEMTRACKD_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "expo.h"

struct mtd_relay;
struct mtn_creds;

/* creds: client credentials (conn.h), kept by the caller until stopped. */
struct mtd_relay *mtd_relay_start(const struct mtn_config *c,
				  struct mtn_creds *creds);
void mtd_relay_stop(struct mtd_relay *r);
/* Queue one message (a DATA body after seq: kind, payload). */
int mtd_relay_push(struct mtd_relay *r, uint8_t kind, const void *data,
		   size_t len);
/* memtrack_relay_* families into b. */
void mtd_relay_metrics(struct mtd_relay *r, const struct mtd_expo_opts *o,
		       struct mtn_buf *b);

#endif /* MEMTRACKD_RELAY_H */
