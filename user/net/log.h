/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd's messages (log.c), of the node daemon and the aggregator
 * alike: stderr in the foreground, syslog once detached.
 */
#ifndef MEMTRACK_NET_LOG_H
#define MEMTRACK_NET_LOG_H

#include <stdbool.h>

void mtd_log_init(bool to_stderr);
/* prio: a syslog LOG_* level. */
void mtd_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* MEMTRACK_NET_LOG_H */
