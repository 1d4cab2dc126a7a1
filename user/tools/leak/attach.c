// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak --engine uprobe: what to probe in the process (the
 * allocators, or with --fds the descriptor calls), and the module's
 * session on it: the probes attached, the unwind tables sent, then armed.
 */
#include <err.h>
#include <errno.h>

#include "leak.h"

/* What to probe: the allocators, or with --fds the descriptor calls. */
int find_probes(struct session *s)
{
	bool fds = s->opt->fds;
	pid_t pid = s->r.pid;
	int err;

	if (s->opt->cmd)
		err = mt_run_find_probes(pid, &s->probes, &s->nprobes);
	else if (fds)
		err = mt_leak_find_fd_probes(pid, &s->probes, &s->nprobes);
	else
		err = mt_leak_find_probes(pid, &s->probes, &s->nprobes);
	if (err < 0) {
		warnx("%s", err == -EACCES || err == -EPERM ?
		      "permission denied: tracing the process needs the rights of ptrace" :
		      mt_errmsg());
		return -1;
	}
	if (!s->nprobes) {
		warnx("%d maps no %s this tool knows (libc%s)", (int)pid,
		      fds ? "descriptor call" : "allocator",
		      fds ? "" : ", libstdc++");
		return -1;
	}
	return 0;
}

/* Open the module, have it probe the process, send the unwind tables. */
int attach(struct session *s)
{
	s->h = mt_open(0);
	if (!s->h) {
		warnx("%s", mt_errmsg());
		return -1;
	}
	/* A command's libraries are mapped only at its exit report. */
	if (!s->opt->cmd) {
		s->r.sym = mt_sym_open(s->r.pid);
		if (!s->r.sym) {
			warnx("%s", mt_errmsg());
			return -1;
		}
	}

	/*
	 * -p: from the attach on, a stop signal ends the session with a detach
	 * (report_loop() sees stop_asked first thing).  Until report_loop() caught
	 * them, one sent while the tables went in was lost where it was
	 * ignored (a job started with & by a script: SIGINT and SIGQUIT
	 * ignored) or killed the tool.  SA_RESTART: the requests below go on.
	 */
	if (!s->opt->cmd)
		catch_stop(SA_RESTART);
	/* Built before the attach: the session waits for them unarmed. */
	s->unw = mt_unwinder_new(s->r.pid);
	if (!s->unw || mt_unwinder_sync(s->unw, NULL) < 0)
		warnx("warning: unwind tables: %s", mt_errmsg());
	if (mt_leak_attach(s->h, s->r.pid, s->probes, s->nprobes,
			   MEMTRACK_LEAK_F_ARM_LATER |
			   (s->opt->follow ? MEMTRACK_LEAK_F_CHILDREN : 0)) < 0) {
		warnx("%s", mt_errmsg());
		return -1;
	}
	s->attached = true;
	/* The tables go in before the probes: no stack is taken without. */
	if (s->unw && mt_unwinder_sync(s->unw, s->h) < 0)
		warnx("warning: unwind tables: %s", mt_errmsg());
	if (mt_leak_arm(s->h, s->r.pid) < 0) {
		warnx("%s", mt_errmsg());
		return -1;
	}
	return 0;
}
