// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak -- COMMAND --engine uprobe: the program started stopped
 * before its first allocation, run under the module's probes to its exit
 * stop, reported on there (--scan: from exit's caller), then let go to end
 * with its own status, which becomes the tool's.
 */
#include <err.h>
#include <errno.h>
#include <string.h>
#include <sys/wait.h>

#include "leak.h"

/* A child's wait status as a shell gives it: the code, or 128 + signal. */
int wait_status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* Let a launched program run on untraced and reap it: its exit status. */
static int run_finish(pid_t pid)
{
	int st;

	if (mt_run_finish(pid, &st) < 0) {
		warnx("%s", mt_errmsg());
		return 1;
	}
	return wait_status_code(st);
}

/* The program mapped objects (or may have): send their unwind tables. */
static int resync(void *arg)
{
	struct session *s = arg;
	int err = mt_unwinder_sync(s->unw, s->h);

	if (err < 0 && err != -ESRCH)
		warnx("warning: unwind tables: %s", mt_errmsg());
	return err;
}

/*
 * -- COMMAND: start it, stopped before its first allocation.  0, or the
 * exit status to end with at once (nothing to undo).
 */
int launch(struct session *s)
{
	int st;

	forward_signals();
	/* Before any socket is open: the program must not inherit one. */
	if (mt_run_start(s->opt->cmd, &s->r.pid, &st) < 0) {
		if (st)
			return wait_status_code(st);
		warnx("%s", mt_errmsg());
		return 1;
	}
	s->running = true;
	return 0;
}

/*
 * At the exit: the stack pointer of the frame that called exit() (glibc's
 * exit, or __run_exit_handlers it may jump to), from which the exiting
 * thread tid's stack holds the program's roots.  pcs, sps: its n frames,
 * innermost first (from the in-process engine's state, or a walk of the
 * thread stopped at its exit).
 */
void exit_caller(struct report *r, pid_t tid, const uint64_t *pcs,
		 const uint64_t *sps, int n)
{
	const struct mt_sym_frame *f;
	int i, k, nf;

	r->from.tid = tid;
	r->from.sp = 0;
	for (i = 0; i + 1 < n; i++) {
		nf = mt_sym_lookup(r->sym, pcs[i], true, &f);
		for (k = 0; k < nf; k++)
			if (f[k].function &&
			    (!strcmp(f[k].function, "exit") ||
			     !strcmp(f[k].function, "__GI_exit") ||
			     !strcmp(f[k].function, "__run_exit_handlers")))
				r->from.sp = sps[i + 1];
	}
	if (!r->from.sp)
		r->from.tid = 0;
}

/* --scan at the command's exit stop: its stack from exit's caller up. */
static void exit_stop_caller(struct session *s)
{
	uint64_t pcs[MEMTRACK_LEAK_MAX_FRAMES], sps[MEMTRACK_LEAK_MAX_FRAMES];
	int n = -1;

	if (s->unw)
		n = mt_unwinder_walk(s->unw, s->r.pid, pcs, sps,
				     MEMTRACK_LEAK_MAX_FRAMES);
	if (n < 0)
		warnx("warning: the exit's stack: %s",
		      s->unw ? mt_errmsg() : "no unwind tables");
	exit_caller(&s->r, s->r.pid, pcs, sps, n);
	/* the program is in its exit stop, ours: the scan leaves it there */
	s->r.from.traced = true;
	if (!s->r.from.tid)
		s->r.from = (struct mt_scan_stack){ s->r.pid, 0, true };
}

/* At the command's exit stop: its report, then the detach. */
static void final_report(struct session *s)
{
	int err;

	s->r.sym = mt_sym_open(s->r.pid);
	if (s->r.sym && s->opt->mode == MODE_SCAN)
		exit_stop_caller(s);
	if (!s->r.sym)
		warnx("%s", mt_errmsg());
	else if (take_report(s->h, &s->r) < 0)
		warnx("final report: %s", module_going() ?
		      "memtrack.ko was unloaded" : mt_errmsg());
	err = mt_leak_detach(s->h, s->r.pid);
	if (err < 0 && !session_gone(err))
		warnx("detach: %s", mt_errmsg());
	s->attached = false;
}

/* -- COMMAND: run it to its exit, report once; its exit status. */
int run_command(struct session *s)
{
	const char *name = s->opt->cmd[0];
	pid_t pid = s->r.pid;
	int err, st;

	err = mt_run_until_exit(pid, &sig_to_forward,
				s->unw ? &(struct mt_run_sync){ resync, s } : NULL,
				&st);
	s->running = err != 0;
	if (err < 0) {
		warnx("%s", mt_errmsg());
		return 1;
	}
	if (err == MT_RUN_EXECED) {
		warnx("%s exec'd another program: the session ended with it; no report",
		      name);
		s->attached = false;
		s->running = false;
		return run_finish(pid);
	}
	if (!err) {
		warnx("%s ended without stopping at its exit (%s %d): no report",
		      name, WIFSIGNALED(st) ? "signal" : "status",
		      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		s->attached = false;
		return wait_status_code(st);
	}
	final_report(s);
	/* Its exit status is ours, report or not: errors are on stderr. */
	s->running = false;
	return run_finish(pid);
}
