// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload injected into a running process (memtrack-leak -p,
 * user/lib/inject.c): a session's start and end, which the tool calls in
 * the target, and the watchdog thread that ends the session by itself
 * when the tool is gone.  Apart from the hooks and the state: the
 * preloaded library never runs this.
 *
 * The attach makes the state (a memfd the tool then opens through
 * /proc/PID/fd), looks up what the program's calls are bound to (the
 * hooks' real functions: the definitions in the global scope, the
 * program's own malloc if it has one), points the GOT slots at the hooks
 * (got.c) and starts the watchdog, a thread with every signal blocked,
 * and answers in memtrack_inject_info.  The watchdog polls the read end
 * of a pipe whose only write end the tool holds (the tool made the pipe in
 * the target and closed the target's write end before the attach): its
 * hangup is the tool's end closing, by a detach or by the tool's death,
 * at any moment from the attach on.  The end of a session (the tool's
 * detach, or the watchdog) restores the slots first and turns the hooks
 * into plain calls to the real functions; the state is unmapped once no
 * thread is inside a hook (the threads' busy flags, after a membarrier:
 * thread.c), by the watchdog if some still were.  The library stays
 * loaded, its hooks inert, for the next attach to reuse.  What the attach
 * makes (the state, the watchdog) is the target's own: the tool dying at
 * any moment after it leaves nothing it would have had to undo.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>

#include "got.h"
#include "hooks.h"
#include "real.h"
#include "state.h"

#define PL_EXPORT	__attribute__((visibility("default")))
#define WATCH_STACK	(64 << 10)

enum session { IDLE, ATTACHED, DETACHED };

static uint32_t session;		/* enum session, under lock */
static uint32_t sess_gen;		/* the session the watchdog watches */
static uint32_t lock;
static uint32_t kinds;			/* 1 << PL_HOOK_*: slots taken */
static bool release_pending;		/* detached, a thread was in a hook */
static bool barrier;			/* membarrier registered */

void memtrack_inject_attach(int lib_fd, uint32_t flags, int watch_fd) PL_EXPORT;
void memtrack_inject_detach(void) PL_EXPORT;
struct mtp_inject_info memtrack_inject_info PL_EXPORT;

static void take_lock(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void drop_lock(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* A forked child shares the state: only the target writes its status. */
static bool is_target(void)
{
	return pl_hdr && pl_hdr->target == getpid();
}

/* The session's status for the tool; a refusal stays what it says. */
static void say(enum mtp_inject st)
{
	if (is_target() && pl_hdr->inject != MTP_INJECT_FAILED)
		__atomic_store_n(&pl_hdr->inject, st, __ATOMIC_RELEASE);
}

/* The attach's answer, for the tool to read in this process's memory. */
static void answer(enum mtp_inject st, int err, int state_fd, uint32_t nr_slots)
{
	struct mtp_inject_info *i = &memtrack_inject_info;

	i->err = err;
	i->state_fd = state_fd;
	i->nr_slots = nr_slots;
	__atomic_store_n(&i->status, st, __ATOMIC_RELEASE);
}

/*
 * A fresh state for the tool: a sparse memfd with its header, as the tool
 * makes one for a command (user/lib/leak_preload.c).  Its fd, or -errno.
 */
static int make_state(uint32_t flags)
{
	struct mtp_header *h;
	struct timespec now;
	int fd, err;

	fd = (int)syscall(SYS_memfd_create, MTP_MEMFD_NAME, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)MTP_SIZE)) {
		err = -errno;
		syscall(SYS_close, fd);
		return err;
	}
	h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		err = -errno;
		syscall(SYS_close, fd);
		return err;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	h->magic = MTP_MAGIC;
	h->version = MTP_VERSION;
	h->size = MTP_SIZE;
	h->flags = flags;
	h->target = getpid();
	h->arena = sizeof(*h);
	h->now_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	munmap(h, sizeof(*h));
	return fd;
}

/* ---- what the program's calls are bound to ----------------------------- */

/*
 * Injected, this library is no interposer: RTLD_NEXT would look in its
 * own dependencies (libc) after it, not at what the program's slots are
 * bound to.  The definition in the global scope is that; one found only
 * in this library is none (no object outside it is bound to it).
 */
static void find_reals(uint32_t want)
{
	unsigned int i;

	for (i = 0; i < pl_nr_hooks; i++) {
		const struct pl_hook *h = &pl_hooks[i];
		void *f;

		if (!(want & (1U << h->kind)))
			continue;
		f = dlsym(RTLD_DEFAULT, h->name);
		if (f == h->hook)
			f = NULL;
		/* pl_real's defaults (libc's) stay where nothing is found */
		if (f || (char *)h->real < (char *)&pl_real ||
		    (char *)h->real >= (char *)(&pl_real + 1))
			__atomic_store_n(h->real, f, __ATOMIC_RELEASE);
	}
}

static void objects_changed(bool unloaded)
{
	take_lock();
	if (session == ATTACHED) {
		if (unloaded)
			pl_got_forget_gone();
		else
			pl_got_patch(kinds, (const void *)memtrack_inject_attach);
	}
	drop_lock();
}

/* ---- the end of a session ------------------------------------------------ */

/*
 * Every thread either saw the hooks off or is seen busy: the threads'
 * stores of their flags before their load of pl_on are made visible here.
 */
static void fence(void)
{
	struct timespec ms20 = { 0, 20000000 };

	if (!barrier || syscall(SYS_membarrier,
				MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		nanosleep(&ms20, NULL);
}

/* The state unmapped: no thread is in a hook. */
static void release(void)
{
	say(MTP_INJECT_RELEASED);
	pl_state_release();
	release_pending = false;
	session = IDLE;
}

/* End session gen (any, if 0): the slots back, the hooks off. */
static void end_session(uint32_t gen)
{
	unsigned int n;

	take_lock();
	if (session != ATTACHED || (gen && gen != sess_gen)) {
		drop_lock();
		return;
	}
	session = DETACHED;
	__atomic_store_n(&pl_on, -1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&pl_gen, 1, __ATOMIC_RELEASE);
	n = pl_got_restore();
	pl_objects_changed = NULL;
	if (is_target())
		pl_hdr->nr_restored = n;
	say(MTP_INJECT_DETACHED);
	fence();
	if (pl_threads_idle())
		release();
	else
		release_pending = true;
	drop_lock();
}

/* A detached session's state, once the last thread has left its hook. */
static void release_when_idle(void)
{
	struct timespec wait = { 0, 1000000 };

	for (;;) {
		take_lock();
		if (!release_pending) {
			drop_lock();
			return;
		}
		if (pl_threads_idle()) {
			release();
			drop_lock();
			return;
		}
		drop_lock();
		nanosleep(&wait, NULL);
		if (wait.tv_nsec < 100000000)
			wait.tv_nsec *= 2;
	}
}

/* ---- the watchdog --------------------------------------------------------- */

struct watch {
	int fd;				/* the pipe's read end */
	uint32_t gen;
};

static struct watch watched;

/*
 * Until the tool's end of the pipe closes (its detach, or its death), or
 * the program closes ours: then the session ends if it is still on.
 */
static void *watch(void *arg)
{
	struct watch w = *(struct watch *)arg;
	struct pollfd p = { .fd = w.fd, .events = POLLIN };
	char c;

	/* (not pthread_setname_np: its sprintf would bring printf's pages in) */
	prctl(PR_SET_NAME, "memtrack-watch");
	if (pl_hdr && is_target())
		__atomic_store_n(&pl_hdr->watch_tid, (int32_t)syscall(SYS_gettid),
				 __ATOMIC_RELEASE);
	/* a byte is no hangup: read, and wait on */
	while ((poll(&p, 1, -1) < 0 && errno == EINTR) ||
	       ((p.revents & (POLLIN | POLLHUP)) == POLLIN &&
		syscall(SYS_read, w.fd, &c, 1) == 1))
		;
	end_session(w.gen);
	release_when_idle();
	syscall(SYS_close, w.fd);
	return NULL;
}

/* A detached thread with every signal blocked: none is the program's. */
static int start_watch(int fd, uint32_t gen)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t t;
	int err;

	watched = (struct watch){ fd, gen };
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, WATCH_STACK);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &a, watch, &watched);
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

/*
 * A forked child: not followed, it drops the state (it has one thread,
 * which is not in a hook); followed, it records on and watches the pipe
 * it inherited, to end its own session when the tool's end closes.
 */
static void forked(void)
{
	if (session != ATTACHED)
		return;
	if (pl_hdr->flags & MTP_F_FOLLOW) {
		if (start_watch(watched.fd, sess_gen))
			end_session(0);
		return;
	}
	session = DETACHED;
	__atomic_store_n(&pl_on, -1, __ATOMIC_RELEASE);
	pl_objects_changed = NULL;
	syscall(SYS_close, watched.fd);
	release();
}

/* ---- the tool's calls ------------------------------------------------------ */

void memtrack_inject_attach(int lib_fd, uint32_t flags, int watch_fd)
{
	static bool once;
	int on, n, err, fd;
	uint32_t want;

	memtrack_inject_info.seq++;
	if (lib_fd >= 0)
		syscall(SYS_close, lib_fd);	/* the library is mapped */
	take_lock();
	if (session != IDLE) {
		drop_lock();
		syscall(SYS_close, watch_fd);
		answer(MTP_INJECT_FAILED, -EBUSY, -1, 0);
		return;
	}
	fd = make_state(flags);
	err = fd < 0 ? fd : pl_state_map(fd);
	if (err) {
		if (fd >= 0)
			syscall(SYS_close, fd);
		syscall(SYS_close, watch_fd);
		drop_lock();
		answer(MTP_INJECT_FAILED, err, -1, 0);
		return;
	}
	on = pl_state_start();
	if (!once)
		pthread_atfork(NULL, NULL, forked);
	once = true;
	barrier = !syscall(SYS_membarrier,
			   MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
	want = (1U << PL_HOOK_PROC) | (1U << PL_HOOK_DL) |
	       (on & PL_FD ? (1U << PL_HOOK_FD_CLOSE) | (1U << PL_HOOK_FD) :
			     (1U << PL_HOOK_RELEASE) | (1U << PL_HOOK_ALLOC));
	find_reals(want);
	kinds = want;
	sess_gen = __atomic_load_n(&pl_gen, __ATOMIC_ACQUIRE);
	session = ATTACHED;
	__atomic_store_n(&pl_on, on, __ATOMIC_RELEASE);
	pl_objects_changed = objects_changed;
	n = pl_got_patch(kinds, (const void *)memtrack_inject_attach);
	err = n < 0 ? n : start_watch(watch_fd, sess_gen);
	if (err) {
		pl_hdr->inject_err = err;
		say(MTP_INJECT_FAILED);
		drop_lock();
		syscall(SYS_close, watch_fd);
		end_session(0);
		answer(MTP_INJECT_FAILED, err, -1, 0);
		return;
	}
	pl_hdr->nr_slots = (uint32_t)n;
	say(MTP_INJECT_ATTACHED);
	drop_lock();
	answer(MTP_INJECT_ATTACHED, 0, fd, (uint32_t)n);
}

void memtrack_inject_detach(void)
{
	end_session(0);
}
