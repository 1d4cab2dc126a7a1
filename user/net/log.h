/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memtrackd's messages (log.c), of the node daemon and the aggregator
 * alike: stderr with -f, else syslog once set up; the exit signal, which
 * logs.
 */
#ifndef MEMTRACK_NET_LOG_H
#define MEMTRACK_NET_LOG_H

#include <stdbool.h>

void mtn_log_init(bool to_stderr);
/*
 * Set up: unless foreground (-f), log to syslog from now on.  The daemon
 * never forks itself: systemd runs it (Type=notify, service.h), or
 * start-stop-daemon --background; errors before this went to stderr.
 */
void mtn_log_started(bool foreground);
/*
 * Read one signal from a signalfd that is readable: true (logged) if it
 * asks the daemon to exit, anything but SIGHUP.
 */
bool mtn_exit_signalled(int sigfd);
/* prio: a syslog LOG_* level. */
void mtn_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* MEMTRACK_NET_LOG_H */
