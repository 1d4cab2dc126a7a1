/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-program snapshot a node relays (snapshot.c): text, its format in
 * relay_proto.h.
 */
#ifndef MEMTRACKD_SNAPSHOT_H
#define MEMTRACKD_SNAPSHOT_H

#include "buf.h"

struct mtd_state;

/* The snapshot sent as MTN_RELAY_SNAPSHOT, of source ("module", "proc"). */
int mtd_snapshot_format(const struct mtd_state *st, const char *source,
			struct mtn_buf *b);

#endif /* MEMTRACKD_SNAPSHOT_H */
