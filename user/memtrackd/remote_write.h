/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus remote write from memtrackd (remote_write.c): every periodic
 * sample's series, the same as /metrics plus the node's label, queued per
 * endpoint and sent in batches by a thread of its own.
 */
#ifndef MEMTRACKD_REMOTE_WRITE_H
#define MEMTRACKD_REMOTE_WRITE_H

#include <stdint.h>

#include "config.h"
#include "expo.h"

struct mtd_rw;

/*
 * Read the credentials (as root: before the privileges go) and set up the
 * endpoints of c->rw; nothing sent yet.  NULL with err set on failure.
 */
struct mtd_rw *mtd_rw_new(const struct mtn_config *c, char *err,
			  size_t errlen);
/* Start the senders (after the privileges went): 0, or -errno. */
int mtd_rw_start(struct mtd_rw *rw);
/*
 * One sample: a sink for its series (expo.h), stamped ts_ms (wall
 * clock), then commit, which queues them on every endpoint, or drops them
 * (counted) where they do not fit.
 */
struct mtd_series_sink *mtd_rw_begin(struct mtd_rw *rw, int64_t ts_ms);
void mtd_rw_commit(struct mtd_rw *rw);
/* memtrack_remote_write_* families, per URL */
void mtd_rw_metrics(struct mtd_rw *rw, const struct mtd_expo_opts *o,
		    struct mtn_buf *b);
/* Send what is queued for up to one request timeout, stop, free. */
void mtd_rw_stop(struct mtd_rw *rw);

#endif /* MEMTRACKD_REMOTE_WRITE_H */
