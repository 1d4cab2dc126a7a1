// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak -p: between two reports, watch for the end of the traced
 * process.  When it exits or execs, the module ends the session but keeps
 * its tables as they were at that moment (MEMTRACK_LEAK_KEEP_MS at most),
 * so the tool asks for the session's state a few times a second and makes
 * its last report at once instead of at the end of a long interval.  The
 * injected engine's state outlives the process by itself (the tool holds
 * it): the tool only has to notice the end, and keep the state's clock.
 */
#include <errno.h>
#include <time.h>

#include "report_wait.h"

/* How often the session's state is asked for: a cheap request. */
#define SLICE_MS 250

int wait_report(struct mt_handle *h, pid_t pid, long long ms,
		volatile sig_atomic_t *stop, struct memtrack_leak_stats *st)
{
	int64_t end = mt_mono_ms() + ms, left;
	struct timespec ts;
	int err;

	while (!*stop && (left = end - mt_mono_ms()) > 0) {
		if (left > SLICE_MS)
			left = SLICE_MS;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = left % 1000 * 1000000;
		/* A signal ends the slice early: *stop says whether to go. */
		if (nanosleep(&ts, NULL) < 0 && errno != EINTR)
			return -errno;
		if (*stop)
			break;
		err = mt_leak_stats(h, pid, st);
		if (err < 0)
			return err;
		if (st->ended)
			return WAIT_ENDED;
	}
	return WAIT_INTERVAL;
}

int wait_inject(struct mt_inject *in, pid_t pid, long long ms,
		volatile sig_atomic_t *stop, const char **why)
{
	(void)pid;
	switch (mt_inject_wait(in, ms, stop)) {
	case MT_INJECT_EXITED:
		*why = "exit";
		return WAIT_ENDED;
	case MT_INJECT_EXECED:
		*why = "exec";
		return WAIT_ENDED;
	case MT_INJECT_GONE:
		return WAIT_GONE;
	default:
		return WAIT_INTERVAL;
	}
}
