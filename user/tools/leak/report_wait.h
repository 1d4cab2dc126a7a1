/* SPDX-License-Identifier: GPL-2.0 */
/* memtrack-leak -p: the wait between two reports (report_wait.c). */
#ifndef MEMTRACK_LEAK_REPORT_WAIT_H
#define MEMTRACK_LEAK_REPORT_WAIT_H

#include <signal.h>
#include <sys/types.h>

#include "libmemtrack.h"

#define WAIT_INTERVAL	0	/* the interval passed, or *stop was set */
#define WAIT_ENDED	1	/* st->ended: the process exited or exec'd */

/*
 * Waits ms milliseconds for the next report of pid's session, less if the
 * process ends meanwhile.  WAIT_INTERVAL, WAIT_ENDED (st filled), or
 * -errno with mt_errmsg() (the session is gone: detached, or the module
 * unloaded).
 */
int wait_report(struct mt_handle *h, pid_t pid, long long ms,
		volatile sig_atomic_t *stop, struct memtrack_leak_stats *st);

/*
 * The same for the injected engine, which has no module to ask: the
 * state's clock kept (every MTP_CLOCK_MS), the process's end seen through
 * a pidfd, an exec through the state (or the library gone from its maps).
 * WAIT_INTERVAL, WAIT_ENDED (*why: "exit" or "exec"), WAIT_GONE (the
 * session ended in the target: the program closed its descriptors), or
 * -errno.
 */
#define WAIT_GONE	2
int wait_inject(struct mt_inject *in, pid_t pid, long long ms,
		volatile sig_atomic_t *stop, const char **why);

#endif
