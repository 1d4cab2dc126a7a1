// SPDX-License-Identifier: GPL-2.0
/* memtrackd's messages (log.h): stderr with -f, else syslog once started. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "log.h"

static bool log_stderr = true;

void mtd_log_init(bool to_stderr)
{
	log_stderr = to_stderr;
	if (!to_stderr)
		openlog("memtrackd", LOG_PID, LOG_DAEMON);
}

void mtd_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (log_stderr) {
		fputs("memtrackd: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(prio, fmt, ap);
	}
	va_end(ap);
}

void mtd_log_started(bool foreground)
{
	if (!foreground)
		mtd_log_init(false);
}

bool mtd_exit_signalled(int sigfd)
{
	struct signalfd_siginfo si;

	if (read(sigfd, &si, sizeof(si)) != sizeof(si) || si.ssi_signo == SIGHUP)
		return false;
	mtd_log(LOG_INFO, "signal %u: exiting", si.ssi_signo);
	return true;
}
