// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak -p PID with the injected engine (the default): the library
 * loaded into the running process and its calls redirected to it, a report
 * every interval from the state it fills, a last one if the process ends
 * meanwhile, and the detach that gives its calls back.
 */
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "leak.h"
#include "report_wait.h"

/* Whether pid is exiting: gone, or a zombie within a second. */
static bool exiting(pid_t pid)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (mt_task_exited(pid, pid))
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * The injected target exited or exec'd: the state is the tool's, as the
 * process left it.  A last report of what it held (not a scan: the memory
 * went with it), with the objects its library saw.  3.
 */
static int inject_ended(struct session *s, const char *what)
{
	long pid = s->opt->pid;
	bool exec = !strcmp(what, "exec");

	if (s->opt->mode == MODE_SCAN) {
		warnx("process %ld %s: its memory went with it, so no scan at the end (a command run under memtrack-leak is scanned at its exit)",
		      pid, exec ? "exec'd another program" : "exited");
		return 3;
	}
	warnx("process %ld %s; what it held at its %s:",
	      pid, exec ? "exec'd another program" : "exited", what);
	mt_sym_close(s->r.sym);
	s->r.sym = mt_preload_symbolizer(s->r.pre);
	s->r.ended = what;
	if (!s->r.sym || take_report(NULL, &s->r) < 0)
		warnx("last report: %s", mt_errmsg());
	return 3;
}

/*
 * -p with the injected engine: 0 attached; 1 to end with at once; 3 the
 * target exited meanwhile (its last report given); -1 to trace with
 * uprobes instead (a static program, seccomp refusing it).
 */
int inject(struct session *s)
{
	uint32_t flags = (s->opt->follow ? MT_PRELOAD_F_FOLLOW : 0) |
			 (s->opt->fds ? MT_PRELOAD_F_FDS : 0);
	struct mt_inject_stats st;
	char lib[PATH_MAX];
	int err;

	if (preload_lib(lib, sizeof(lib)) < 0)
		return 1;
	/*
	 * As attach() does: a stop signal from here on ends the session with
	 * a detach, once the attach is whole (inject_loop() sees stop_asked
	 * first thing).  Its waits are bounded polls that go on after a handler.
	 */
	catch_stop(SA_RESTART);
	err = mt_inject_attach(s->r.pid, lib, flags, &s->inj, &st);
	if (err == -ENOEXEC || err == -EACCES) {
		warnx("%s; tracing it with uprobes instead (--engine uprobe)",
		      mt_errmsg());
		return -1;
	}
	if (err) {
		warnx("%s", mt_errmsg());
		return 1;
	}
	s->r.pre = mt_inject_state(s->inj);
	mt_preload_live_fds(s->r.pre, s->opt->fds);
	s->r.sym = mt_sym_open(s->r.pid);
	if (!s->r.sym) {
		/* exiting since the attach (its maps going or gone): say so */
		if (exiting(s->r.pid))
			return inject_ended(s, "exit");
		warnx("%s", mt_errmsg());
		return 1;
	}
	warnx("tracing %d in-process: libmemtrack-preload.so %s, %u calls redirected to it (%u threads stopped %.1f ms); a report every %.1fs, Ctrl-C to stop",
	      (int)s->r.pid, st.loaded ? "injected" : "reused",
	      st.slots, st.threads, st.stop_ns / 1e6,
	      s->opt->interval_ms / 1000.0);
	return 0;
}

/* -p injected: a report every interval, as report_loop() does. */
int inject_loop(struct session *s)
{
	const struct leak_opts *o = s->opt;
	const char *why = NULL;
	int err;

	catch_stop(0);
	while (!stop_asked && (!o->count || s->r.nr < o->count)) {
		err = wait_inject(s->inj, s->r.pid, o->interval_ms, &stop_asked,
				  &why);
		if (stop_asked)
			break;
		if (err == WAIT_ENDED)
			return inject_ended(s, why);
		if (err == WAIT_GONE) {
			warnx("process %ld: the session ended in it (it closed memtrack's descriptors)",
			      o->pid);
			return 3;
		}
		if (err < 0 || take_report(NULL, &s->r) < 0) {
			warnx("%s", mt_errmsg());
			return 1;
		}
	}
	return 0;
}

/* The slots restored, the library inert; rc, or 1 if that failed. */
int inject_detach(struct session *s, int rc)
{
	struct mt_inject_stats st;

	if (rc != 3 && mt_inject_detach(s->inj, &st) < 0) {
		warnx("detach: %s", mt_errmsg());
		return rc ? rc : 1;
	}
	if (rc != 3 && s->r.fmt == FMT_TEXT)
		warnx("detached from %d: %u calls given back (%u threads stopped %.1f ms)",
		      (int)s->r.pid, st.slots, st.threads, st.stop_ns / 1e6);
	return rc;
}
