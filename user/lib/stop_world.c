// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: every thread of a process stopped under ptrace and let go
 * again, for --scan's snapshot (scan_proc.c) and the injector (inject.c).
 * Each thread is seized and interrupted (PTRACE_SEIZE + PTRACE_INTERRUPT:
 * no signal it could see, and a blocking system call restarts by itself
 * afterwards); the task list is read again until a pass, made once every
 * thread seen is stopped, finds none new (a thread created meanwhile by
 * one not stopped yet).  A thread that exits meanwhile is dropped, a
 * zombie main thread (one that called pthread_exit) is passed over, and a
 * signal that arrived before the stop is handed back at the release.
 *
 * mt_world_run() stops the world on a thread made for it and lets it go
 * by that thread's exit: the kernel then detaches every tracee in one
 * pass (exit_ptrace(), under tasklist_lock with interrupts off), where a
 * PTRACE_DETACH per thread let the first ones released take the tracer's
 * CPU before it reached the last (a tracer without CAP_SYS_NICE among a
 * 64-thread storm: 15 to 40 ms, the last threads stopped all along).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "libmemtrack.h"
#include "internal.h"
#include "grow.h"

static struct mt_thread *thread_of(struct mt_world *w, pid_t tid)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->v[i].tid == tid)
			return &w->v[i];
	return NULL;
}

static struct mt_thread *add(struct mt_world *w, pid_t tid)
{
	if (mt_grow((void **)&w->v, &w->cap, w->n + 1, sizeof(*w->v), 16))
		return NULL;
	memset(&w->v[w->n], 0, sizeof(w->v[w->n]));
	w->v[w->n].tid = tid;
	return &w->v[w->n++];
}

bool mt_task_exited(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *s;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return true;
	buf[len] = '\0';
	s = strrchr(buf, ')');
	return !s || s[1] != ' ' || s[2] == 'Z' || s[2] == 'X';
}

/* Seize and interrupt the threads not seen yet; *more: some were. */
static int seize_new(struct mt_world *w, pid_t traced, unsigned long opts,
		     bool *more)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	*more = false;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)w->pid);
	d = opendir(path);
	if (!d && errno == ENOENT)
		return mt_seterr(-ESRCH, "process %d exited", (int)w->pid);
	if (!d)
		return mt_seterr(-errno, "%s: %s", path, strerror(errno));
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		struct mt_thread *t;

		if (tid <= 0 || thread_of(w, tid))
			continue;
		t = add(w, tid);
		if (!t) {
			closedir(d);
			return mt_seterr(-ENOMEM, "out of memory");
		}
		*more = true;
		if (tid == traced) {
			t->ours = true;
			continue;
		}
		if (ptrace(PTRACE_SEIZE, tid, 0, (void *)opts) < 0) {
			int e = errno;

			t->gone = true;
			if (e == ESRCH || (e == EPERM && mt_task_exited(w->pid, tid)))
				continue;	/* exited meanwhile */
			closedir(d);
			return mt_seterr(-e, "ptrace(SEIZE, %d): %s", (int)tid,
					 strerror(e));
		}
		t->seized = true;
		if (!w->since_ns)
			w->since_ns = mt_mono_ns();
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
	}
	closedir(d);
	return 0;
}

/*
 * Wait for a seized thread's stop: false if it exited instead.  Not a
 * blocking wait: the exit of a main thread is reported only once every
 * other thread is reaped, so an exited thread is told by /proc.
 */
static bool wait_stop(pid_t pid, struct mt_thread *t)
{
	struct timespec ms = { 0, 1000000 };
	sigset_t chld;
	int status;
	pid_t r;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		r = waitpid(t->tid, &status, __WALL | WNOHANG);
		if (r == t->tid)
			break;
		if (r < 0 && errno != EINTR)
			return false;	/* gone */
		if (!r && mt_task_exited(pid, t->tid))
			return false;
		if (sigtimedwait(&chld, NULL, &ms) < 0 && errno == EAGAIN)
			continue;
	}
	if (!WIFSTOPPED(status))
		return false;		/* exited */
	/* a signal arrived first: it is delivered at the release */
	if (status >> 16 == 0 && WSTOPSIG(status) != SIGTRAP)
		t->sig = WSTOPSIG(status);
	return true;
}

int mt_world_stop(pid_t pid, pid_t traced, unsigned long opts,
		  struct mt_world *w)
{
	bool more = true;
	size_t i;
	int err;

	memset(w, 0, sizeof(*w));
	w->pid = pid;
	while (more) {
		err = seize_new(w, traced, opts, &more);
		if (err)
			return err;
		for (i = 0; i < w->n; i++) {
			struct mt_thread *t = &w->v[i];

			if (t->stopped || t->gone)
				continue;
			if (!t->ours && !wait_stop(w->pid, t)) {
				t->gone = true;
				continue;
			}
			t->stopped = true;
			if (mt_regs_get(t->tid, &t->regs) < 0) {
				if (errno == ESRCH) {	/* killed meanwhile */
					t->stopped = false;
					t->gone = true;
					continue;
				}
				return mt_seterr(-errno, "ptrace(GETREGS, %d): %s",
						 (int)t->tid, strerror(errno));
			}
		}
	}
	for (i = 0; i < w->n && !w->v[i].stopped; i++)
		;
	if (i == w->n)
		return mt_seterr(-ESRCH, "process %d exited", (int)pid);
	return 0;
}

void mt_world_let_go(struct mt_world *w, pid_t except)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct mt_thread *t = &w->v[i];

		if (t->seized && t->stopped && !t->gone && !t->running &&
		    t->tid != except &&
		    !ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)t->sig)) {
			t->sig = 0;
			t->running = true;
		}
	}
}

void mt_world_release(struct mt_world *w)
{
	size_t i;

	/*
	 * The threads let go are stopped again (a detach needs a stop), all
	 * interrupted before any is waited for: one at a time, the others ran
	 * on meanwhile, and a tracer without CAP_SYS_NICE waited for a time
	 * slice among them at each (3.6 s for a 64-thread storm).
	 */
	for (i = 0; i < w->n; i++) {
		struct mt_thread *t = &w->v[i];

		if (t->seized && t->running &&
		    ptrace(PTRACE_INTERRUPT, t->tid, 0, 0))
			t->gone = true;
	}
	for (i = 0; i < w->n; i++) {
		struct mt_thread *t = &w->v[i];

		if (!t->seized)
			continue;
		if (t->running && !t->gone && !wait_stop(w->pid, t))
			t->gone = true;
		if (!t->gone &&
		    !ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->sig))
			continue;
		/* it exited meanwhile: reaped, so that its parent sees the end */
		waitpid(t->tid, NULL, __WALL | WNOHANG);
	}
	free(w->v);
	memset(w, 0, sizeof(*w));
}

/* ---- a world stopped on a thread of its own ---------------------------------- */

struct world_run {
	pid_t pid;
	unsigned long opts;
	mt_world_fn *fn;
	void *arg;
	pid_t tid;			/* the tracer thread */
	int err;
	char msg[256];			/* its mt_errmsg(): a thread's own */
};

static void *world_thread(void *p)
{
	struct world_run *r = p;
	struct mt_world w;
	size_t i;

	r->tid = (pid_t)syscall(SYS_gettid);
	r->err = mt_world_stop(r->pid, 0, r->opts, &w);
	if (!r->err)
		r->err = r->fn(&w, r->arg);
	if (r->err)
		snprintf(r->msg, sizeof(r->msg), "%s", mt_errmsg());
	/*
	 * A thread a call ran on stopped last at a system call's exit
	 * (remote_call.c): the exit lets it go on as a detach would (the stop
	 * reported SIGTRAP | 0x80 with PTRACE_O_TRACESYSGOOD, no signal
	 * number, so none is sent), but a signal held back for it meanwhile
	 * is handed over only by a detach.  Every other one is at the stop it
	 * was interrupted in, or running: the exit releases them, handing back
	 * the signal a thread stopped for.
	 */
	for (i = 0; i < w.n; i++) {
		struct mt_thread *t = &w.v[i];

		if (t->called && t->sig && t->stopped && !t->running &&
		    !t->gone)
			ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->sig);
	}
	free(w.v);
	return NULL;
}

/* Until the thread's exit is done, its tracees detached with it. */
static void wait_exited(pid_t tid)
{
	struct timespec us = { 0, 20000 };
	int i;

	/* pthread_join() returns at the exit's release of the memory */
	for (i = 0; i < 250000; i++) {
		if (syscall(SYS_tgkill, getpid(), tid, 0) < 0 && errno == ESRCH)
			return;
		nanosleep(&us, NULL);
	}
}

int mt_world_run(pid_t pid, unsigned long opts, mt_world_fn *fn, void *arg)
{
	struct world_run r = { .pid = pid, .opts = opts, .fn = fn,
			       .arg = arg };
	pthread_t th;
	int e;

	/* it inherits the caller's signal mask and scheduling class */
	e = pthread_create(&th, NULL, world_thread, &r);
	/* -ENOMEM, not EAGAIN: that is "no safe point, try again" */
	if (e)
		return mt_seterr(-ENOMEM, "a thread to stop %d on: %s",
				 (int)pid, strerror(e));
	pthread_join(th, NULL);
	wait_exited(r.tid);
	if (r.err)
		return mt_seterr(r.err, "%s", r.msg);
	return 0;
}
