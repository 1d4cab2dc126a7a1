// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak -p PID --engine uprobe: a report every interval until a
 * signal, -n reports or the end of the session; at the process's exit or
 * exec a last report from the tables the module kept; otherwise why the
 * session ended (an unload, a detach by another process).
 */
#include <err.h>
#include <errno.h>

#include "leak.h"
#include "report_wait.h"

/*
 * Why the session of process pid is gone, on stderr.  An exit or exec
 * ends it with a last report instead; this is an unload (whose sessions go
 * a moment before its netlink family does) or a detach by someone else.
 */
static void say_session_ended(long pid)
{
	if (module_going())
		warnx("process %ld: the session ended: memtrack.ko was unloaded",
		      pid);
	else if (mt_task_exited((pid_t)pid, (pid_t)pid))
		warnx("process %ld exited; its session ended with it", pid);
	else
		warnx("process %ld: the session ended (another process detached it)",
		      pid);
}

/*
 * -p PID: the process exited or exec'd; the module kept its tables as they
 * were then.  The last report, of what it held at that moment (the stack
 * report and --by-lib: a scan needs the memory, which went with it), and
 * the detach.  3: the session ended with its process.
 */
static int last_report(struct session *s, uint32_t why)
{
	const char *what = why == MEMTRACK_LEAK_ENDED_EXEC ? "exec" : "exit";
	long pid = s->opt->pid;
	int err;

	/* Its objects are gone, or another program's: no maps read again. */
	mt_sym_freeze(s->r.sym);
	if (s->opt->mode == MODE_SCAN) {
		warnx("process %ld %s: its memory went with it, so no scan at the end (a command run under memtrack-leak is scanned at its exit)",
		      pid, why == MEMTRACK_LEAK_ENDED_EXEC ?
		      "exec'd another program" : "exited");
	} else {
		warnx("process %ld %s; what it held at its %s:",
		      pid, why == MEMTRACK_LEAK_ENDED_EXEC ?
		      "exec'd another program" : "exited", what);
		s->r.ended = what;
		if (take_report(s->h, &s->r) < 0)
			warnx("last report: %s", module_going() ?
			      "memtrack.ko was unloaded" : mt_errmsg());
	}
	err = mt_leak_detach(s->h, s->r.pid);
	if (err < 0 && !session_gone(err))
		warnx("detach: %s", mt_errmsg());
	s->attached = false;
	return 3;
}

/*
 * -p PID: a report every interval until a signal, -n reports, or the end
 * of the session (3, after a last report).
 */
int report_loop(struct session *s)
{
	const struct leak_opts *o = s->opt;
	struct memtrack_leak_stats st;
	int err;

	catch_stop(0);
	if (s->r.fmt == FMT_TEXT)
		warnx("tracing %ld: %zu probes; a report every %.1fs, Ctrl-C to stop",
		      o->pid, s->nprobes, o->interval_ms / 1000.0);

	while (!stop_asked && (!o->count || s->r.nr < o->count)) {
		err = wait_report(s->h, s->r.pid, o->interval_ms, &stop_asked,
				  &st);
		if (stop_asked)
			break;
		if (err == WAIT_ENDED)
			return last_report(s, st.ended);
		if (err < 0) {
			say_session_ended(o->pid);
			s->attached = false;
			return 3;
		}
		/*
		 * Objects mapped since (dlopen); their calls are unwound from
		 * now on.  A session gone (exit, exec, unload) is not a table's
		 * fault: the report below fails too and says why.
		 */
		err = s->unw ? mt_unwinder_sync(s->unw, s->h) : 0;
		if (err < 0 && !session_gone(err) && !module_gone())
			warnx("warning: unwind tables: %s", mt_errmsg());
		err = take_report(s->h, &s->r);
		if (err < 0 && (session_gone(err) || module_going())) {
			say_session_ended(o->pid);
			s->attached = false;
			return 3;
		}
		if (err < 0) {
			warnx("%s", mt_errmsg());
			return 1;
		}
	}
	return 0;
}
