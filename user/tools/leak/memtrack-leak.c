// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak: find what a process allocates and does not free.
 *
 * Finds the allocator entry points of the target (libc, libstdc++), has
 * them traced for that process (in-process by libmemtrack-preload.so, or
 * by memtrack.ko's uprobes), and every interval dumps the call stacks
 * holding outstanding allocations: the top N by bytes, with their growth
 * since the previous report and the frames symbolized (function,
 * file:line, inlined frames).
 *
 * --fds does the same for file descriptors instead of memory: the calls
 * that open them and close() are traced, and a report lists the stacks
 * holding descriptors still open, by count.  -f follows forked children
 * (MEMTRACK_LEAK_F_CHILDREN): their stacks come in the same report, each
 * with its process id.
 *
 * This file is main: the engine chosen, the session set up in order by
 * the engine's file (preload.c, inject.c, launch.c and attach.c with
 * report_loop.c), and undone at the end.
 */
#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak.h"

/* -o FILE, or standard output.  0, or -1 with a message. */
static int open_output(struct session *s)
{
	const char *output = s->opt->output;

	if (!output) {
		s->r.o = stdout;
		return 0;
	}
	s->r.o = fopen(output, "we");
	if (!s->r.o) {
		warn("%s", output);
		return -1;
	}
	return 0;
}

/* -p PID: the process exists.  0, or 1 to end with at once. */
static int find_process(struct session *s)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/%ld", s->opt->pid);
	if (access(proc, F_OK)) {
		warnx("no such process: %ld", s->opt->pid);
		return 1;
	}
	s->r.pid = (pid_t)s->opt->pid;
	return 0;
}

/* Whether -- COMMAND runs in-process: the default, unless it is static. */
static bool use_preload(const struct leak_opts *o)
{
	if (!o->cmd || o->engine != ENGINE_PRELOAD)
		return false;
	if (mt_program_is_static(o->cmd[0]) == 1) {
		warnx("%s is statically linked: a preloaded library cannot reach it; tracing it with uprobes (--engine uprobe)",
		      o->cmd[0]);
		return false;
	}
	return true;
}

/* Where the process runs, when it is in a container or pod. */
static void say_container(long pid)
{
	struct mt_container c;
	char what[600];

	if (mt_container_of_pid(pid, NULL, &c) <= 0)
		return;
	mt_container_describe(&c, what, sizeof(what));
	warnx("%ld is in %s", pid, what);
}

/* Undo the session: rc, or 1 if the detach or closing -o FILE failed. */
static int finish(struct session *s, int rc)
{
	int err, st;

	err = s->attached ? mt_leak_detach(s->h, s->r.pid) : 0;
	if (err < 0 && !session_gone(err) && rc == 0) {
		warnx("detach: %s", mt_errmsg());
		rc = 1;
	}
	if (s->running) {
		/* Failed before it ran: it must not run untraced. */
		kill(s->r.pid, SIGKILL);
		waitpid(s->r.pid, &st, 0);
	}
	if (s->r.o && s->r.o != stdout && fclose(s->r.o)) {
		warn("%s", s->opt->output);
		rc = 1;
	}
	if (s->inj)
		rc = inject_detach(s, rc);
	mt_inject_free(s->inj);
	free(s->r.prev);
	mt_unwinder_free(s->unw);
	mt_sym_close(s->r.sym);
	mt_leak_probes_free(s->probes, s->nprobes);
	mt_preload_free(s->pre);
	mt_close(s->h);
	return rc;
}

int main(int argc, char **argv)
{
	struct leak_opts opt;
	struct session s = { .opt = &opt };
	int rc;

	mt_set_progname(argv, prog);
	parse_args(&opt, argc, argv);
	s.r = (struct report){ .fmt = opt.fmt, .mode = opt.mode,
			       .fds = opt.fds, .follow = opt.follow,
			       .min_age_ms = (uint32_t)opt.min_age_ms,
			       .top = (size_t)opt.top };
	if (open_output(&s) < 0)
		return 1;
	if (use_preload(&opt))
		return finish(&s, run_preload(&s));
	if (opt.cmd && opt.fds) {
		warnx("--fds with a command needs the preload engine");
		return 1;
	}
	/* Up to here nothing is to undo: errors end at once. */
	rc = opt.cmd ? launch(&s) : find_process(&s);
	if (rc)
		return rc;
	if (opt.pid)
		say_container(opt.pid);
	if (opt.pid && opt.engine == ENGINE_INJECT) {
		rc = inject(&s);
		if (rc >= 0)
			return finish(&s, rc ? rc : inject_loop(&s));
		mt_inject_free(s.inj);
		s.inj = NULL;
	}
	if (find_probes(&s) < 0 || attach(&s) < 0)
		rc = 1;
	else
		rc = opt.cmd ? run_command(&s) : report_loop(&s);
	return finish(&s, rc);
}
