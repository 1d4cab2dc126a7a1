/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd's messages (log.c), of the node daemon and the aggregator
 * alike: stderr in the foreground, syslog once detached; going to the
 * background and the exit signal, which both log.
 */
#ifndef MEMTRACK_NET_LOG_H
#define MEMTRACK_NET_LOG_H

#include <stdbool.h>

void mtd_log_init(bool to_stderr);
/*
 * Unless foreground, go to the background (daemon(3)) and log to syslog
 * from then on: 0, or -1 (logged).
 */
int mtd_detach(bool foreground);
/*
 * Read one signal from a signalfd that is readable: true (logged) if it
 * asks the daemon to exit, anything but SIGHUP.
 */
bool mtd_exit_signalled(int sigfd);
/* prio: a syslog LOG_* level. */
void mtd_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* MEMTRACK_NET_LOG_H */
