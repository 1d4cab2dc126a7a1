// SPDX-License-Identifier: GPL-2.0
/*
 * A daemon's messages (log.h): stderr with -f, else syslog once started;
 * named as the program named itself (mt_set_progname()), as every program's
 * messages are.
 */
#define _GNU_SOURCE
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

void mtn_log_init(bool to_stderr)
{
	log_stderr = to_stderr;
	if (!to_stderr)
		openlog(program_invocation_short_name, LOG_PID, LOG_DAEMON);
}

void mtn_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (log_stderr) {
		fprintf(stderr, "%s: ", program_invocation_short_name);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(prio, fmt, ap);
	}
	va_end(ap);
}

void mtn_log_started(bool foreground)
{
	if (!foreground)
		mtn_log_init(false);
}

bool mtn_exit_signalled(int sigfd)
{
	struct signalfd_siginfo si;

	if (read(sigfd, &si, sizeof(si)) != sizeof(si) || si.ssi_signo == SIGHUP)
		return false;
	mtn_log(LOG_INFO, "signal %u: exiting", si.ssi_signo);
	return true;
}
