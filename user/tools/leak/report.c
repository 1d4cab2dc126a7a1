// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak: one report, from the dump of the session's stacks (the
 * module's, or the in-process engine's state) to its output: the stack
 * report (render.c) or a mode's own (--scan, --by-lib); and, when a
 * request failed, whether the session or the module went.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "leak.h"
#include "modes.h"

/* --scan, --by-lib: reports of their own (scan.c, bylib.c). */
static int mode_report(struct mt_handle *h, struct report *r,
		       const struct mt_leak_stack *v, size_t n, size_t nother)
{
	struct mode_out mo = { .o = r->o, .json = r->fmt == FMT_JSON,
			       .pid = r->pid, .nr = r->nr, .sym = r->sym,
			       .from = r->from.tid ? &r->from : NULL,
			       .pre = r->pre, .ended = r->ended };
	struct memtrack_leak_block *kb;
	size_t nb;
	int err;

	if (r->mode == MODE_SCAN) {
		err = r->pre ? mt_preload_blocks(r->pre, r->pid, &kb, &nb) :
			       mt_leak_blocks(h, r->pid, &kb, &nb);
		if (!err) {
			err = scan_report(&mo, kb, nb, v, n + nother);
			free(kb);
		}
	} else {
		/* --by-lib: also the stacks with no block left (their calls). */
		err = bylib_report(&mo, v, n + nother);
	}
	r->nr = mo.nr;
	return err < 0 ? err : 0;
}

/*
 * One report: dump, split off the mismatch-only stacks, print, keep the
 * bytes per stack for the next report's growth.
 */
int take_report(struct mt_handle *h, struct report *r)
{
	struct mt_leak_stack *v;
	size_t n, nother;
	int err;

	/* --by-lib counts the calls of stacks whose blocks are all freed too. */
	err = r->pre ? mt_preload_stacks(r->pre, r->min_age_ms,
					 r->mode == MODE_BYLIB, &v, &n) :
		       mt_leak_stacks(h, r->pid, r->min_age_ms,
				      r->mode == MODE_BYLIB, &v, &n);
	if (err < 0)
		return err;
	n = keep_kind(r, v, n);
	nother = n - split_leaks(v, n);
	n -= nother;
	rank_stacks(r, v, n);
	if (r->mode != MODE_STACKS)
		err = mode_report(h, r, v, n, nother);
	else
		print_report(r, v, n, nother);
	if (!err)
		keep_growth(r, v, n);
	free(v);
	return err;
}

/* The session is gone with its process (exit, exec) or with the module. */
bool session_gone(int err)
{
	return err == -ESRCH || err == -ENOENT;
}

/*
 * What an unloaded module's requests fail with varies (the family id is
 * unknown, or the request raced the unload): ask for the family anew.
 */
bool module_gone(void)
{
	struct mt_handle *t = mt_open(0);

	if (!t)
		return true;
	mt_close(t);
	return false;
}

/*
 * A request that failed while rmmod runs: the module's sessions end before
 * its family goes, and what the request fails with meanwhile varies (seen on
 * 5.10: EPROTONOSUPPORT with the family still there).  Wait up to a second
 * for the family to go before calling the error the tool's own.
 */
bool module_going(void)
{
	struct timespec ms100 = { 0, 100000000 };
	int i;

	for (i = 0; i < 10; i++) {
		if (module_gone())
			return true;
		nanosleep(&ms100, NULL);
	}
	return module_gone();
}
