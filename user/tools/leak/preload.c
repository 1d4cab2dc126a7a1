// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak -- COMMAND with the in-process engine (the default): the
 * program started with libmemtrack-preload.so preloaded and the state it
 * fills shared, run to its end (--scan: to its exit, where it waits), and
 * reported on once from that state.
 */
#include <err.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak.h"

/*
 * The library beside the tool: ../lib/ in the build tree, ../lib/memtrack/
 * where make install puts it; MEMTRACK_PRELOAD_LIB names another.
 */
int preload_lib(char *buf, size_t len)
{
	static const char *const rel[] = {
		"/../lib/libmemtrack-preload.so",
		"/../lib/memtrack/libmemtrack-preload.so",
	};
	const char *env = getenv("MEMTRACK_PRELOAD_LIB");
	char exe[PATH_MAX], *slash;
	ssize_t n;
	size_t i;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	for (i = 0; i < MT_ARRAY_SIZE(rel); i++) {
		if (snprintf(buf, len, "%s%s", exe, rel[i]) >= (int)len)
			continue;
		if (!access(buf, R_OK))
			return 0;
	}
	warnx("libmemtrack-preload.so is not installed beside %s (set MEMTRACK_PRELOAD_LIB, or use --engine uprobe)",
	      exe);
	return -1;
}

/* --scan at the exit the library waits in: the stack it noted there. */
static void preload_exit_caller(struct report *r)
{
	uint64_t pcs[MEMTRACK_LEAK_MAX_FRAMES], sps[MEMTRACK_LEAK_MAX_FRAMES];
	pid_t tid = 0;
	int n;

	n = mt_preload_exit_stack(r->pre, &tid, pcs, sps,
				  MEMTRACK_LEAK_MAX_FRAMES);
	exit_caller(r, tid, pcs, sps, n);
}

/* The report at the program's end (--scan: its exit), from its state. */
static void preload_report(struct session *s)
{
	struct memtrack_leak_stats st;

	mt_sym_close(s->r.sym);
	s->r.sym = mt_preload_symbolizer(s->pre);
	if (s->r.sym && s->opt->mode == MODE_SCAN)
		preload_exit_caller(&s->r);
	if (!s->r.sym)
		warnx("%s", mt_errmsg());
	else if (take_report(NULL, &s->r) < 0)
		warnx("final report: %s", mt_errmsg());
	mt_preload_stats(s->pre, &st);
	if (st.dropped_allocs || st.dropped_stacks)
		warnx("warning: %llu allocations and %llu stacks not recorded: the state was full",
		      (unsigned long long)st.dropped_allocs,
		      (unsigned long long)st.dropped_stacks);
}

/* -- COMMAND, in-process: run it to its end, report once; its status. */
int run_preload(struct session *s)
{
	uint32_t flags = (s->opt->follow ? MT_PRELOAD_F_FOLLOW : 0) |
			 (s->opt->fds ? MT_PRELOAD_F_FDS : 0) |
			 (s->opt->mode == MODE_SCAN ? MT_PRELOAD_F_EXIT_WAIT : 0);
	bool scanned = false;
	char lib[PATH_MAX];
	int err, st;

	if (preload_lib(lib, sizeof(lib)) < 0)
		return 1;
	s->pre = mt_preload_new(flags);
	if (!s->pre) {
		warnx("%s", mt_errmsg());
		return 1;
	}
	forward_signals();
	if (mt_preload_start(s->pre, lib, s->opt->cmd, &s->r.pid, &st) < 0) {
		if (st)
			return wait_status_code(st);
		warnx("%s", mt_errmsg());
		return 1;
	}
	s->r.pre = s->pre;
	/* --scan: at its exit, after its handlers, the program waits for it */
	while ((err = mt_preload_wait(s->pre, s->r.pid, &sig_to_forward, &st)) ==
	       MT_PRELOAD_AT_EXIT) {
		preload_report(s);
		scanned = true;
		mt_preload_resume(s->pre);
	}
	if (err < 0) {
		warnx("%s", mt_errmsg());
		return 1;
	}
	if (mt_preload_execed(s->pre)) {
		warnx("%s exec'd another program: the session ended with it; no report",
		      s->opt->cmd[0]);
		return wait_status_code(st);
	}
	if (s->opt->mode == MODE_SCAN && !scanned)
		warnx("%s ended without reaching its exit (%s %d): no scan",
		      s->opt->cmd[0], WIFSIGNALED(st) ? "signal" : "status",
		      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	else if (!scanned)
		preload_report(s);
	return wait_status_code(st);
}
