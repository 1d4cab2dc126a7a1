/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The aggregator (user/aggregator, linked into memtrackd): its one entry
 * point, for memtrackd --aggregate.
 */
#ifndef MEMTRACK_AGGREGATOR_AGGREGATE_H
#define MEMTRACK_AGGREGATOR_AGGREGATE_H

#include <stdbool.h>

#include "config.h"

/* Until SIGTERM/SIGINT: the exit status. */
int mtd_aggregate_main(const struct mtn_config *c, bool foreground);

#endif /* MEMTRACK_AGGREGATOR_AGGREGATE_H */
