// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: memtrack-leak -p's default engine, the in-process one
 * (libmemtrack-preload.so) loaded into a running process with ptrace
 * alone, and taken out again.
 *
 * Before anything is stopped, what the injection needs is found from the
 * outside (the survey, inject_survey.c): libc and the dynamic loader in the
 * target's maps (none: a static program), libc's dlopen
 * (__libc_dlopen_mode before glibc 2.34), memfd_create and signal
 * trampoline, the code ranges a thread must not be in; here the unwind
 * tables to walk the threads' stacks, and whether the target runs under
 * seccomp.  Then every thread is stopped (stop_world.c),
 * at a safe point or not at all: no thread in the dynamic loader (a
 * dlopen or a lazy binding under way), and one thread, the one the calls
 * run on, in none of libc's allocator, dl* and thread-creation functions
 * nor in a signal handler, with room on its stack; otherwise the threads
 * run a few milliseconds and it is tried again, a bounded number of
 * times.  The calls (remote_call.c, each of which puts the thread back by
 * itself when it returns) make a memfd in the target, which the tool
 * fills with the library through /proc/PID/fd (so a target in another
 * mount namespace loads it just the same), dlopen it from
 * /proc/self/fd/N, and call its memtrack_inject_attach(), which makes the
 * state and the watchdog's pipe and answers in its memtrack_inject_info.
 * The tool opens both through /proc/PID/fd, writes the byte the watchdog
 * waits for, and lets the threads go.  A library already in the target
 * (an earlier session's) is reused.  A lock another stopped thread holds
 * lets the threads run until the calls are done (remote_call.c).
 *
 * The detach stops the threads again, calls memtrack_inject_detach() on
 * one of them, lets them go, closes the tool's end of the pipe (the
 * watchdog ends) and waits for the state to be released.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libmemtrack.h"
#include "internal.h"
#include "memtrack_preload.h"
#include "grow.h"
#include "inject_int.h"

#ifndef MFD_EXEC
#define MFD_EXEC	0x10U		/* Linux 6.3: executable despite vm.memfd_noexec */
#endif

#define MAX_TRIES	50		/* stops until a safe point */
#define MAX_FRAMES	128
#define STACK_ROOM	(128 << 10)	/* a thread's stack the calls may use */
#define CALL_NS		(10ULL * 1000000000ULL)

static const char *const lib_syms[] = {
	MTP_INJECT_ATTACH, MTP_INJECT_DETACH, MTP_INJECT_INFO,
};

/* MEMTRACK_INJECT_DEBUG=1: when each step ended, on stderr. */
void mt_inject_dbg(const char *what)
{
	static uint64_t t0;
	uint64_t now = mt_mono_ns();

	if (!getenv("MEMTRACK_INJECT_DEBUG"))
		return;
	if (!t0)
		t0 = now;
	fprintf(stderr, "inject: %8.3f ms %s\n", (now - t0) / 1e6, what);
}

/* ---- a safe point ----------------------------------------------------------- */

struct pick {
	struct mt_thread *t;		/* the thread the calls run on */
	const char *why;		/* or why there is none */
};

/* Room below sp on its stack: the main thread's grows by itself. */
static bool room(pid_t pid, uint64_t sp)
{
	struct mt_procmap *maps;
	size_t n, i;
	bool ok = false;

	if (mt_procmaps_read(pid, &maps, &n))
		return false;
	for (i = 0; i < n; i++)
		if (maps[i].start <= sp && sp < maps[i].end)
			ok = !strcmp(maps[i].path, "[stack]") ||
			     sp - maps[i].start >= STACK_ROOM;
	mt_procmaps_free(maps, n);
	return ok;
}

static void pick(struct mt_inject *in, struct mt_world *w, struct pick *p)
{
	uint64_t pcs[MAX_FRAMES], sps[MAX_FRAMES];
	size_t i;
	int n, k;

	p->t = NULL;
	p->why = "every thread was in the allocator, the dynamic loader or a signal handler";
	for (i = 0; i < w->n; i++) {
		struct mt_thread *t = &w->v[i];
		bool ok = true;

		if (!t->stopped)
			continue;
		n = mt_walker_stack(in->walker, &t->regs, pcs, sps, MAX_FRAMES);
		for (k = 0; k < n; k++) {
			/* the loader at work: none may be stopped there */
			if (mt_inject_in_ranges(&in->loader, pcs[k])) {
				p->t = NULL;
				p->why = "a thread was in the dynamic loader";
				return;
			}
			if (mt_inject_in_ranges(&in->unsafe, pcs[k]) ||
			    (k && pcs[k] == in->restore_rt))
				ok = false;
		}
		if (ok && (!p->t || t->tid == w->pid) &&
		    room(w->pid, MT_REG_SP(&t->regs)))
			p->t = t;
	}
}

/* ---- the calls ------------------------------------------------------------- */

struct held {
	struct mt_world *w;
	pid_t tid;			/* the thread the calls run on */
};

static void let_go(void *arg)
{
	struct held *h = arg;

	mt_world_let_go(h->w, h->tid);
}

static int call(struct mt_remote *rc, uint64_t fn, const uint64_t *args,
		int nargs, const char *str, int str_arg, long sys,
		int64_t *ret)
{
	struct mt_remote_args a = { .fn = fn, .nargs = nargs,
				    .data_arg = str ? str_arg : -1,
				    .data = str, .len = str ? strlen(str) + 1 : 0,
				    .sys = sys };
	int err;

	memcpy(a.args, args, (size_t)nargs * sizeof(*args));
	err = mt_remote_call(rc, &a, ret);
	mt_inject_dbg(rc->let_go ? "called (threads let go)" : "called");
	return err;
}

/* The library written into a memfd of the target's: its fd there. */
static int lib_memfd(struct mt_inject *in, struct mt_remote *rc, int *fd)
{
	uint64_t args[2] = { 0, MFD_CLOEXEC | MFD_EXEC };
	char path[64], buf[1 << 16];
	int64_t r = -1;
	int src, dst, err;
	ssize_t n;

	err = call(rc, in->fn[U_MEMFD], args, 2, MTP_LIB_MEMFD_NAME, 0,
		   SYS_memfd_create, &r);
	if (!err && r == -EINVAL) {	/* before Linux 6.3: no MFD_EXEC */
		args[1] = MFD_CLOEXEC;
		err = call(rc, in->fn[U_MEMFD], args, 2, MTP_LIB_MEMFD_NAME, 0,
			   SYS_memfd_create, &r);
	}
	if (err)
		return err;
	if (r < 0)
		return mt_seterr((int)r, "memfd_create in %d: %s", (int)in->pid,
				 strerror((int)-r));
	*fd = (int)r;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)in->pid, *fd);
	dst = open(path, O_WRONLY | O_CLOEXEC);
	src = open(in->lib, O_RDONLY | O_CLOEXEC);
	err = dst < 0 || src < 0 ? mt_seterr(-errno, "%s: %s",
					     dst < 0 ? path : in->lib,
					     strerror(errno)) : 0;
	while (!err && (n = read(src, buf, sizeof(buf))) > 0)
		if (write(dst, buf, (size_t)n) != n)
			err = mt_seterr(-EIO, "writing the library into %d: %s",
					(int)in->pid, strerror(errno));
	if (dst >= 0)
		close(dst);
	if (src >= 0)
		close(src);
	return err;
}

/* The library's load bias in the target, if it is mapped: from its maps. */
static uint64_t lib_loaded(pid_t pid)
{
	struct mt_procmap *maps;
	uint64_t base = 0;
	size_t n, i;

	if (mt_procmaps_read(pid, &maps, &n))
		return 0;
	for (i = 0; i < n && !base; i++)
		if (!strcmp(maps[i].path, LIB_NAME) && !maps[i].offset)
			base = maps[i].start;
	mt_procmaps_free(maps, n);
	return base;
}

static int load_lib(struct mt_inject *in, struct mt_remote *rc, int *lib_fd)
{
	uint64_t args[2] = { 0, RTLD_NOW };
	char name[64];
	int err;

	err = lib_memfd(in, rc, lib_fd);
	if (err)
		return err;
	snprintf(name, sizeof(name), "/proc/self/fd/%d", *lib_fd);
	if (in->fn[U_DLOPEN]) {
		err = call(rc, in->fn[U_DLOPEN], args, 2, name, 0, -1, NULL);
	} else {
		args[1] = RTLD_NOW | 0x80000000U;	/* __RTLD_DLOPEN */
		err = call(rc, in->fn[U_LIBC_DLOPEN], args, 2, name, 0, -1,
			   NULL);
	}
	if (err)
		return err;
	in->lib_base = lib_loaded(in->pid);
	if (!in->lib_base)
		return mt_seterr(-ENOEXEC, "%d's dynamic loader refused libmemtrack-preload.so (built for glibc 2.34 or later; or its static TLS is used up)",
				 (int)in->pid);
	return 0;
}

/* Open the target's fd through /proc; -1 with mt_errmsg() set. */
static int open_theirs(pid_t pid, int fd, int flags)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	r = open(path, flags | O_CLOEXEC);
	if (r < 0)
		mt_seterr(-errno, "%s: %s", path, strerror(errno));
	return r;
}

/*
 * The watchdog's pipe, made in the target; the tool opens its write end
 * through /proc and closes the target's: from then on the tool's death
 * is the pipe's hangup.  *rd: the read end, in the target.
 */
static int watch_pipe(struct mt_inject *in, struct mt_remote *rc, int *rd)
{
	uint64_t args[2] = { 0, O_CLOEXEC }, wr;
	static const char two_ints[8];
	struct mt_remote_args a = { .fn = in->fn[U_PIPE2], .nargs = 2,
				    .data_arg = 0, .data = two_ints,
				    .len = sizeof(two_ints), .sys = SYS_pipe2 };
	int32_t fds[2];
	int64_t r = -1;
	int err;

	memcpy(a.args, args, sizeof(args));
	err = mt_remote_call(rc, &a, &r);
	mt_inject_dbg("called");
	/* the ints are still below the thread's stack pointer */
	if (!err && !r)
		err = mt_remote_peek(in->pid, rc->data, fds, sizeof(fds));
	if (err)
		return err;
	if (r < 0)
		return mt_seterr((int)r, "pipe2 in %d: %s", (int)in->pid,
				 strerror((int)-r));
	in->watch_fd = open_theirs(in->pid, fds[1], O_WRONLY);
	wr = (uint64_t)fds[1];
	err = call(rc, in->fn[U_CLOSE], &wr, 1, NULL, -1, -1, NULL);
	if (!err && in->watch_fd < 0)
		err = -EIO;
	*rd = fds[0];
	return err;
}

/* The attach call and its answer; then the state opened. */
static int attach_lib(struct mt_inject *in, struct mt_remote *rc, int lib_fd,
		      uint32_t flags, unsigned int *slots)
{
	uint64_t info = in->lib_base + in->lib_off[L_INFO], rd64;
	struct mtp_inject_info before, after;
	int err, state, rd = -1;

	err = watch_pipe(in, rc, &rd);
	rd64 = (uint64_t)(int64_t)rd;
	if (!err)
		err = mt_remote_peek(in->pid, info, &before, sizeof(before));
	if (!err)
		err = call(rc, in->lib_base + in->lib_off[L_ATTACH],
			   (uint64_t[]){ (uint64_t)(int64_t)lib_fd, flags, rd64 },
			   3, NULL, -1, -1, NULL);
	else if (rd >= 0)
		call(rc, in->fn[U_CLOSE], &rd64, 1, NULL, -1, -1, NULL);
	if (!err)
		err = mt_remote_peek(in->pid, info, &after, sizeof(after));
	if (err)
		return err;
	if (after.seq == before.seq)
		return mt_seterr(-EIO, "the library in %d did not answer", (int)in->pid);
	if (after.status != MTP_INJECT_ATTACHED)
		return mt_seterr(after.err == -EBUSY ? -EBUSY : -EIO,
				 after.err == -EBUSY ?
				 "%d is traced by another memtrack-leak already (or its last session is still ending)" :
				 "the library in %d refused the attach: %s",
				 (int)in->pid, strerror(-after.err));
	*slots = after.nr_slots;
	mt_inject_dbg("answered");
	state = open_theirs(in->pid, after.state_fd, O_RDWR);
	in->pre = state < 0 ? NULL : mt_preload_open_fd(state, in->pid, flags);
	if (!in->pre) {
		if (state >= 0)
			close(state);
		return -EIO;
	}
	return 0;
}

/* ---- the seccomp filters ------------------------------------------------------- */

/* The system calls an attach makes in the target (as they are made). */
static const struct mt_syscall_use uses[] = {
	{ SYS_memfd_create, { 0, MFD_CLOEXEC }, "memfd_create" },
	{ SYS_ftruncate, { 0 }, "ftruncate" },
	{ SYS_openat, { 0 }, "openat" },
	{ SYS_read, { 0 }, "read" },
	{ SYS_pread64, { 0 }, "pread64" },
	{ SYS_newfstatat, { 0 }, "newfstatat" },
	{ SYS_fstat, { 0 }, "fstat" },
	{ SYS_mmap, { 0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE }, "mmap" },
	{ SYS_mmap, { 0, 0, PROT_READ | PROT_WRITE, MAP_SHARED }, "mmap" },
	{ SYS_mprotect, { 0, 0, PROT_READ | PROT_WRITE }, "mprotect" },
	{ SYS_munmap, { 0 }, "munmap" },
	{ SYS_close, { 0 }, "close" },
	{ SYS_pipe2, { 0, O_CLOEXEC }, "pipe2" },
	{ SYS_membarrier, { 0 }, "membarrier" },
	{ SYS_clone3, { 0 }, "clone3" },
	{ SYS_rt_sigprocmask, { 0 }, "rt_sigprocmask" },
	{ MT_SYS_POLL, { 0 }, "poll" },
	{ SYS_futex, { 0 }, "futex" },
	{ SYS_process_vm_readv, { 0 }, "process_vm_readv" },
	{ SYS_getpid, { 0 }, "getpid" },
	{ SYS_gettid, { 0 }, "gettid" },
	{ SYS_rt_sigreturn, { 0 }, "rt_sigreturn" },
	{ SYS_exit, { 0 }, "exit" },
};

/* strict: refused; filter: run over uses[], refused if one is not let through. */
static int check_seccomp(struct mt_inject *in)
{
	const struct mt_syscall_use *no;
	int err;

	if (in->seccomp == 1)
		return mt_seterr(-EACCES, "%d runs in seccomp's strict mode: a library cannot be loaded into it",
				 (int)in->pid);
	if (in->seccomp != 2)
		return 0;
	err = mt_seccomp_check(in->pid, uses, MT_ARRAY_SIZE(uses), &no);
	if (err)
		return mt_seterr(-EACCES, "%d runs under a seccomp filter that memtrack-leak cannot read (%s: it needs CAP_SYS_ADMIN), so cannot tell whether loading the library is allowed",
				 (int)in->pid, strerror(-err));
	if (no)
		return mt_seterr(-EACCES, "%d's seccomp filter does not allow %s, which loading the library needs",
				 (int)in->pid, no->name);
	return 0;
}

/* ---- attach and detach ------------------------------------------------------ */

/* The process is exiting or gone (a thread vanished under the calls). */
static bool ended(pid_t pid)
{
	struct timespec ms = { 0, 10000000 };
	int i;

	for (i = 0; i < 20 && !mt_task_exited(pid, pid); i++)
		nanosleep(&ms, NULL);
	return mt_task_exited(pid, pid);
}

/*
 * While the target is stopped: SIGCHLD blocked (the tracer waits for the
 * thread's stops with sigtimedwait, remote_call.c), and the tracer's own
 * priority raised where it may (CAP_SYS_NICE: SCHED_FIFO, else nice -20):
 * a busy target's threads already let go would otherwise take its CPU
 * between two of its ptrace calls, and the others stay stopped meanwhile.
 * Undone by let_target().
 */
struct held_self {
	sigset_t mask;
	int nice, policy;
	struct sched_param sp;
};

static void hold_target(struct held_self *h)
{
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &h->mask);
	errno = 0;
	h->nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		h->nice = 0;
	h->policy = sched_getscheduler(0);
	sched_getparam(0, &h->sp);
	/* the tracer only waits in system calls: a real-time class is safe */
	if (sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){ 1 }))
		setpriority(PRIO_PROCESS, 0, -20);
}

static void let_target(const struct held_self *h)
{
	if (h->policy >= 0)
		sched_setscheduler(0, h->policy, &h->sp);
	setpriority(PRIO_PROCESS, 0, h->nice);
	pthread_sigmask(SIG_SETMASK, &h->mask, NULL);
}

static void inject_free(struct mt_inject *in)
{
	if (!in)
		return;
	if (in->watch_fd >= 0)
		close(in->watch_fd);
	if (in->pidfd >= 0)
		close(in->pidfd);
	mt_preload_free(in->pre);
	mt_walker_close(in->walker);
	mt_unwinder_free(in->unw);
	free(in->loader.v);
	free(in->unsafe.v);
	free(in);
}

/* Everything found before the target is stopped. */
static int prepare(pid_t pid, const char *lib, struct mt_inject **out)
{
	struct mt_elf_sym s[NR_LIB];
	struct mt_inject *in;
	uint64_t vaddr;
	int err, i;

	in = calloc(1, sizeof(*in));
	if (!in)
		return mt_seterr(-ENOMEM, "out of memory");
	in->pid = pid;
	in->pidfd = -2;
	in->watch_fd = -1;
	snprintf(in->lib, sizeof(in->lib), "%s", lib);
	err = mt_elf_syms(lib, lib_syms, NR_LIB, s, &vaddr);
	for (i = 0; !err && i < NR_LIB; i++) {
		if (!s[i].value)
			err = mt_seterr(-ENOEXEC, "%s has no %s", lib, lib_syms[i]);
		in->lib_off[i] = s[i].value;
	}
	mt_inject_dbg("preparing");
	if (!err)
		err = mt_inject_survey(in);
	mt_inject_dbg("surveyed");
	in->seccomp = mt_inject_seccomp_mode(pid);
	if (!err) {
		in->unw = mt_unwinder_new(pid);
		if (in->unw)
			mt_unwinder_eh_only(in->unw);
		err = in->unw ? mt_walker_open(in->unw, pid, &in->walker) :
				-ENOMEM;
	}
	mt_inject_dbg("walker ready");
	if (err) {
		inject_free(in);
		return err;
	}
	*out = in;
	return 0;
}

/* An attach, done on the world stopped (mt_world_run()). */
struct attach_run {
	struct mt_inject *in;
	uint32_t flags;
	struct mt_inject_stats *st;
	struct pick p;
	bool stopped;			/* the stop succeeded */
	uint64_t stop_ns;		/* first thread stopped to all let go */
};

/* At a safe point, or why not (-EAGAIN: try again; -ESTALE: survey). */
static int safe_point(struct mt_inject *in, struct mt_world *w, struct pick *p)
{
	/* an exec (or a dlopen) since the survey: the addresses are stale */
	if (mt_inject_image_changed(in)) {
		mt_inject_dbg("changed since the survey");
		return -ESTALE;
	}
	pick(in, w, p);
	mt_inject_dbg(p->t ? "picked" : p->why);
	return p->t ? 0 : -EAGAIN;
}

static int attach_stopped(struct mt_world *w, void *arg)
{
	struct attach_run *a = arg;
	struct mt_inject *in = a->in;
	struct mt_remote rc = { .pid = in->pid, .timeout_ns = CALL_NS };
	struct held h;
	int err, lib_fd = -1;

	mt_inject_dbg("stopped");
	a->stopped = true;
	a->st->threads = (unsigned int)w->n;
	err = safe_point(in, w, &a->p);
	if (!err)
		err = check_seccomp(in);
	if (!err) {
		h = (struct held){ w, a->p.t->tid };
		rc.t = a->p.t;
		rc.restore_rt = in->restore_rt;
		rc.on_block = let_go;
		rc.arg = &h;
		a->st->loaded = !in->lib_base;
		if (!in->lib_base)
			err = load_lib(in, &rc, &lib_fd);
		if (!err) {
			/* the attach closes the library's memfd */
			err = attach_lib(in, &rc, lib_fd, a->flags,
					 &a->st->slots);
		} else if (lib_fd >= 0) {
			uint64_t fd = (uint64_t)lib_fd;

			call(&rc, in->fn[U_CLOSE], &fd, 1, NULL, -1, -1, NULL);
		}
		a->st->let_go = rc.let_go;
	}
	a->stop_ns = mt_mono_ns() - w->since_ns;
	return err;
}

int mt_inject_attach(pid_t pid, const char *lib, uint32_t flags,
		     struct mt_inject **out, struct mt_inject_stats *st)
{
	struct timespec pause = { 0, 2000000 };
	struct attach_run a = { .flags = flags, .st = st };
	struct held_self self;
	int err, tries;

	memset(st, 0, sizeof(*st));
	err = prepare(pid, lib, &a.in);
	if (err)
		return err;
	hold_target(&self);
	for (tries = 1;; tries++) {
		a.stopped = false;
		mt_inject_dbg("stopping");
		err = mt_world_run(pid, PTRACE_O_TRACESYSGOOD, attach_stopped,
				   &a);
		if (err == -EPERM && !a.stopped)
			err = mt_seterr(err, "permission denied: tracing %d needs the rights of ptrace on it",
					(int)pid);
		if ((err != -EAGAIN && err != -ESTALE) || tries == MAX_TRIES)
			break;
		if (err == -ESTALE) {
			/* surveyed again, the target running meanwhile */
			let_target(&self);
			inject_free(a.in);
			a.in = NULL;
			err = prepare(pid, lib, &a.in);
			hold_target(&self);
			if (err)
				break;
		}
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 16000000)
			pause.tv_nsec *= 2;
	}
	if (err == -EAGAIN)
		err = mt_seterr(-EAGAIN, "no safe point in %d after %d tries: %s; left as it was",
				(int)pid, tries, a.p.why);
	if (err == -ESTALE)
		err = mt_seterr(-EAGAIN, "%d kept changing its code mappings (%d tries); left as it was",
				(int)pid, tries);
	st->tries = (unsigned int)tries;
	st->stop_ns = a.stopped ? a.stop_ns : 0;
	mt_inject_dbg("released");
	let_target(&self);
	if (err && ended(pid))
		err = mt_seterr(-ESRCH, "process %d exited during the attach; nothing to trace",
				(int)pid);
	if (err) {
		inject_free(a.in);
		return err;
	}
	*out = a.in;
	return 0;
}

struct mt_preload *mt_inject_state(struct mt_inject *in)
{
	return in->pre;
}

/* The threads but the watchdog: the detach runs on one of them. */
static struct mt_thread *detach_thread(struct mt_world *w, pid_t watch)
{
	struct mt_thread *t = NULL;
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->v[i].stopped && w->v[i].tid != watch &&
		    (!t || w->v[i].tid == w->pid))
			t = &w->v[i];
	return t;
}

/*
 * Until the state is released in the target (or it ends, a zombie
 * included), at most RELEASE_NS: the watchdog waits for the last thread
 * to leave its hook with a backoff of up to 128 ms, and on one emulated
 * vCPU shared with 16 allocating threads it may not run for a while (a
 * CI run's detach failed "not released yet" after the 2 s this was).
 */
#define RELEASE_NS	(10ULL * 1000000000ULL)
static bool wait_released(struct mt_inject *in, pid_t watch)
{
	struct mtp_header *h = mt_preload_header(in->pre);
	struct timespec ms = { 0, 1000000 };
	uint64_t end = mt_mono_ns() + RELEASE_NS;

	do {
		if (__atomic_load_n(&h->inject, __ATOMIC_ACQUIRE) ==
		    MTP_INJECT_RELEASED &&
		    (watch <= 0 || mt_task_exited(in->pid, watch)))
			return true;
		if (mt_task_exited(in->pid, in->pid))
			return true;
		nanosleep(&ms, NULL);
	} while (mt_mono_ns() < end);
	return false;
}

/* A detach, done on the world stopped (mt_world_run()). */
struct detach_run {
	struct mt_inject *in;
	pid_t watch;
	struct mt_inject_stats *st;
	uint64_t stop_ns;
};

static int detach_stopped(struct mt_world *w, void *arg)
{
	struct detach_run *d = arg;
	struct mt_inject *in = d->in;
	struct mt_remote rc = { .pid = in->pid, .timeout_ns = CALL_NS };
	struct held h;
	int err = 0;

	mt_inject_dbg("detach: stopped");
	d->st->threads = (unsigned int)w->n;
	/* an exec meanwhile: the library went with the old program */
	if (lib_loaded(in->pid) != in->lib_base)
		err = -ESRCH;
	if (!err) {
		rc.t = detach_thread(w, d->watch);
		rc.restore_rt = in->restore_rt;
		h = (struct held){ w, rc.t ? rc.t->tid : 0 };
		rc.on_block = let_go;
		rc.arg = &h;
		err = rc.t ? call(&rc, in->lib_base + in->lib_off[L_DETACH],
				  NULL, 0, NULL, -1, -1, NULL) :
			     mt_seterr(-ESRCH, "process %d has no thread left",
				       (int)in->pid);
		d->st->let_go = rc.let_go;
	}
	d->stop_ns = mt_mono_ns() - w->since_ns;
	return err;
}

int mt_inject_detach(struct mt_inject *in, struct mt_inject_stats *st)
{
	struct mtp_header *h = mt_preload_header(in->pre);
	pid_t watch = __atomic_load_n(&h->watch_tid, __ATOMIC_ACQUIRE);
	struct detach_run d = { .in = in, .watch = watch, .st = st };
	struct held_self self;
	uint32_t ended;
	int err;

	memset(st, 0, sizeof(*st));
	ended = __atomic_load_n(&h->inject, __ATOMIC_ACQUIRE);
	if (ended == MTP_INJECT_DETACHED || ended == MTP_INJECT_RELEASED)
		goto out;		/* the watchdog ended it already */
	hold_target(&self);
	mt_inject_dbg("detach: stopping");
	err = mt_world_run(in->pid, PTRACE_O_TRACESYSGOOD, detach_stopped, &d);
	st->stop_ns = d.stop_ns;
	mt_inject_dbg("detach: released");
	let_target(&self);
	if (err == -ESRCH)
		err = 0;		/* it ended: nothing is left to undo */
	if (err)
		return err;
	st->slots = h->nr_restored;
out:
	/* the watchdog's end: it releases the state if a thread held it */
	close(in->watch_fd);
	in->watch_fd = -1;
	mt_inject_dbg("detach: pipe closed");
	if (!wait_released(in, watch))
		return mt_seterr(-EBUSY, "%d: the library's state is not released yet (a thread is inside a hook)",
				 (int)in->pid);
	mt_inject_dbg("detach: released in the target");
	return 0;
}

pid_t mt_inject_pid(struct mt_inject *in)
{
	return in->pid;
}

int *mt_inject_pidfd(struct mt_inject *in)
{
	return &in->pidfd;
}

void mt_inject_free(struct mt_inject *in)
{
	inject_free(in);
}
