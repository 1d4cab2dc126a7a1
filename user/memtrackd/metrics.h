/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What memtrackd exports on /metrics (metrics.c): the state's families.
 * They are written with the exposition writer (expo.h, included here for
 * the files that include this one for it: relay.h, remote_write.h).
 */
#ifndef MEMTRACKD_METRICS_H
#define MEMTRACKD_METRICS_H

#include "expo.h"

struct mtd_state;

/* The whole /metrics text; 0 or -ENOMEM. */
int mtd_metrics_format(const struct mtd_state *st,
		       const struct mtd_expo_opts *o, struct mtn_buf *b);

#endif /* MEMTRACKD_METRICS_H */
