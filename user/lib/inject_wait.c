// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: the tool's side of an injected session between two reports
 * (memtrack-leak -p, inject.c made the session).  There is no module to
 * ask what became of the process: its end is seen through a pidfd (the
 * state outlives it, the tool holds it), an exec by the library no longer
 * being in its maps (through a hook of exec or not), and a session the
 * target ended by itself (the program closed the watchdog's pipe) by the
 * library's word in the state.  Meanwhile the blocks' clock in the state
 * is kept, every MTP_CLOCK_MS.  Apart from the attach and detach, which
 * stop the target; this only watches it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libmemtrack.h"
#include "internal.h"
#include "memtrack_preload.h"

#define SLICE_MS	250		/* how often the maps are read */

/*
 * The injected library still mapped in pid (1); not so after an exec (0);
 * nothing mapped, the process exiting (-1).
 */
static int library_mapped(pid_t pid)
{
	char path[64], line[512];
	bool found = false, any = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		any = true;
		found = strstr(line, "/memfd:" MTP_LIB_MEMFD_NAME) != NULL;
	}
	fclose(f);
	return found ? 1 : any ? 0 : -1;
}

/*
 * Whether the library's watchdog thread still runs: an exec ends every
 * thread but one, so while it does the program has not exec'd, and the
 * maps need no reading.  (Reading /proc/PID/maps takes the target's
 * mmap lock and walks its every mapping: every 250 ms that cost perl's
 * phases 1.5x native against 1.2x preloaded, under emulation.)
 */
static bool watchdog_runs(pid_t pid, pid_t watch)
{
	return watch > 0 && !mt_task_exited(pid, watch);
}

/* Has the process ended?  Its pidfd, or without one a signal 0. */
static bool ended(int pidfd, pid_t pid, int ms)
{
	struct pollfd pf = { .fd = pidfd, .events = POLLIN };
	struct timespec ts = { 0, ms * 1000000L };

	if (pidfd >= 0)
		return poll(&pf, 1, ms) > 0;
	if (ms)
		nanosleep(&ts, NULL);
	return kill(pid, 0) && errno == ESRCH;
}

int mt_inject_wait(struct mt_inject *in, long long ms,
		   volatile sig_atomic_t *stop)
{
	struct mt_preload *p = mt_inject_state(in);
	struct mtp_header *h = mt_preload_header(p);
	long long end = mt_mono_ms() + ms, slice = 0;
	pid_t pid = mt_inject_pid(in);
	int *pidfd = mt_inject_pidfd(in);
	uint32_t st;

	if (*pidfd == -2)
		*pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while (!*stop && mt_mono_ms() < end) {
		mt_preload_tick(p);
		if (ended(*pidfd, pid, MTP_CLOCK_MS))
			return MT_INJECT_EXITED;
		if ((slice += MTP_CLOCK_MS) < SLICE_MS)
			continue;
		slice = 0;
		st = __atomic_load_n(&h->inject, __ATOMIC_ACQUIRE);
		if (st != MTP_INJECT_DETACHED && st != MTP_INJECT_RELEASED &&
		    watchdog_runs(pid, __atomic_load_n(&h->watch_tid,
						       __ATOMIC_ACQUIRE)))
			continue;
		switch (library_mapped(pid)) {
		case -1:
			return MT_INJECT_EXITED;
		case 0:
			return ended(*pidfd, pid, 0) ? MT_INJECT_EXITED :
						       MT_INJECT_EXECED;
		}
		st = __atomic_load_n(&h->inject, __ATOMIC_ACQUIRE);
		if (st == MTP_INJECT_DETACHED || st == MTP_INJECT_RELEASED)
			return MT_INJECT_GONE;
	}
	return MT_INJECT_ON;
}
