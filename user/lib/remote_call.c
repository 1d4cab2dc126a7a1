// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack: a function called in a thread of a ptraced process, for
 * the injector (inject.c): its own code, with its own stack, never leaving
 * the thread in a state it could not leave by itself.
 *
 * Below the thread's stack pointer (past the red zone) goes a signal
 * frame holding the thread's state as it was stopped (all its registers,
 * its FP and vector state, its signal mask: arch.h's mt_callframe_make()),
 * and the function's return goes to the signal trampoline (rt_sigreturn:
 * libc's __restore_rt on x86-64, through the frame's return address; the
 * vDSO's on arm64, through x30).  The thread is then set to enter the
 * function with that stack: when the function returns, rt_sigreturn puts
 * the thread back as it was.  The tracer only
 * watches (PTRACE_SYSCALL stops, read with PTRACE_GET_SYSCALL_INFO) until
 * that rt_sigreturn has run, and never has to restore anything itself: if
 * it dies at any moment, the thread finishes the call and goes back to
 * its own code.  A thread stopped inside an interrupted system call is
 * put back as the kernel would restart it (rax = the call, pc on the
 * syscall instruction), since rt_sigreturn turns restarting off; one that
 * only restart_syscall could restart (a sleep, a wait with a timeout)
 * returns EINTR, as it does when a signal handler runs (arm64: the kernel
 * shows it restarted already, arch.h).
 *
 * The results: a system call's (the first of the number asked for, as it
 * returns: libc's wrappers make one), or what the function leaves in the
 * process's memory.  A signal for the thread meanwhile is held back and
 * handed over when it is released; a thread about to wait on a futex (a
 * lock another, stopped, thread holds) or yielding has the other threads
 * let go (on_block) until the call is done.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "libmemtrack.h"
#include "internal.h"

int mt_remote_peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)addr, len };

	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)len)
		return mt_seterr(-errno ? -errno : -EIO, "reading %d's memory: %s",
				 (int)pid, strerror(errno ? errno : EIO));
	return 0;
}

#ifdef MT_ARCH_REMOTE_CALL

static uint64_t down(uint64_t v, uint64_t align)
{
	return v & ~(align - 1);
}

/* The state to go back to: a system call interrupted is restarted. */
static void restartable(mt_regs_t *r)
{
	long nr = (long)MT_REG_SYSCALL(r);

	if (nr < 0)
		return;
	switch (-(long)MT_REG_RET(r)) {
	case MT_ERESTARTSYS:
	case MT_ERESTARTNOINTR:
	case MT_ERESTARTNOHAND:
		MT_REG_RET(r) = (uint64_t)nr;
		MT_REG_PC(r) -= MT_SYSCALL_INSN_LEN;
		break;
	case MT_ERESTART_RESTARTBLOCK:
		/*
		 * Restarted by restart_syscall, with a state rt_sigreturn
		 * throws away: it returns EINTR, as when a signal is handled
		 * (a sleep's remaining time already written back).
		 */
		MT_REG_RET(r) = (uint64_t)-EINTR;
		break;
	}
	MT_REG_SYSCALL(r) = MT_NO_SYSCALL;
}

static int poke(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = { (void *)buf, len }, r = { (void *)addr, len };

	if (process_vm_writev(pid, &l, 1, &r, 1, 0) != (ssize_t)len)
		return mt_seterr(-errno ? -errno : -EIO,
				 "writing the stack of %d: %s", (int)pid,
				 strerror(errno ? errno : EIO));
	return 0;
}

/*
 * The frame and the data below sp, written; *call the stack pointer to
 * enter the function with, *data where the data went.  The frame goes
 * first: the thread is not touched yet.
 */
static int build(struct mt_remote *rc, const struct mt_remote_args *a,
		 uint64_t *call, uint64_t *data)
{
	struct mt_thread *t = rc->t;
	uint64_t sigmask = 0;
	mt_regs_t back = t->regs;
	struct mt_callframe cf = { 0 };
	int err;

	if (ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(sigmask),
		   &sigmask) < 0)
		return mt_seterr(-errno, "ptrace(%d): %s", (int)t->tid,
				 strerror(errno));
	*data = down(MT_REG_SP(&back) - MT_RED_ZONE - a->len, MT_STACK_ALIGN);
	restartable(&back);
	err = mt_callframe_make(t->tid, &back, sigmask, rc->restore_rt, *data,
				&cf);
	if (err == -EOPNOTSUPP)
		return mt_seterr(err, "thread %d holds registers a signal frame here cannot restore (SME, or SVE vectors too long)",
				 (int)t->tid);
	if (err)
		return mt_seterr(err, "ptrace(%d): %s", (int)t->tid,
				 strerror(-err));
	if (a->len)
		err = poke(rc->pid, *data, a->data, a->len);
	if (!err)
		err = poke(rc->pid, cf.at, cf.buf, cf.len);
	free(cf.buf);
	*call = cf.sp;
	return err;
}

/* Let the other threads run (a lock they hold), once. */
static void let_go(struct mt_remote *rc)
{
	if (rc->let_go || !rc->on_block)
		return;
	rc->let_go = true;
	rc->on_block(rc->arg);
}

/* Is the system call at this entry a wait for another thread? */
static bool blocking(const struct __ptrace_syscall_info *si)
{
	int op = (int)(si->entry.args[1] & FUTEX_CMD_MASK);

	if (si->entry.nr == SYS_sched_yield)
		return true;
	return si->entry.nr == SYS_futex &&
	       (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET ||
		op == FUTEX_LOCK_PI || op == FUTEX_LOCK_PI2 ||
		op == FUTEX_WAIT_REQUEUE_PI);
}

/* Wait for the thread's next stop, until deadline (CLOCK_MONOTONIC ns). */
static int wait_stop(struct mt_remote *rc, int *status, uint64_t deadline)
{
	struct timespec ts;
	sigset_t chld;
	pid_t r;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		r = waitpid(rc->t->tid, status, __WALL | WNOHANG);
		if (r == rc->t->tid)
			return 0;
		if (r < 0 && errno != EINTR)
			return mt_seterr(-ESRCH, "thread %d is gone",
					 (int)rc->t->tid);
		if (!r && mt_task_exited(rc->pid, rc->t->tid))
			return mt_seterr(-ESRCH, "thread %d is gone",
					 (int)rc->t->tid);
		if (mt_mono_ns() >= deadline)
			return mt_seterr(-ETIMEDOUT,
					 "thread %d did not finish the call",
					 (int)rc->t->tid);
		ts.tv_sec = 0;
		ts.tv_nsec = 2000000;
		sigtimedwait(&chld, NULL, &ts);
	}
}

int mt_remote_call(struct mt_remote *rc, const struct mt_remote_args *a,
		   int64_t *sysret)
{
	struct mt_thread *t = rc->t;
	struct __ptrace_syscall_info si;
	uint64_t deadline = mt_mono_ns() + rc->timeout_ns, call = 0, data = 0;
	uint64_t gadget = rc->restore_rt + MT_RESTORE_RT_LEN;
	bool returning = false, got = false;
	mt_regs_t r;
	int err, status, i;

	err = build(rc, a, &call, &data);
	if (err)
		return err;
	r = t->regs;
	mt_regs_call(&r, a->fn, call, rc->restore_rt);
	MT_REG_SYSCALL(&r) = MT_NO_SYSCALL;
	for (i = 0; i < a->nargs; i++) {
		uint64_t v = i == a->data_arg ? data : a->args[i];

		switch (i) {
		case 0: MT_REG_ARG0(&r) = v; break;
		case 1: MT_REG_ARG1(&r) = v; break;
		case 2: MT_REG_ARG2(&r) = v; break;
		case 3: MT_REG_ARG3(&r) = v; break;
		}
	}
	if (mt_regs_set(t->tid, &r) < 0)
		return mt_seterr(-errno, "ptrace(SETREGS, %d): %s", (int)t->tid,
				 strerror(errno));
	rc->data = data;
	t->called = true;
	for (;;) {
		int sig = 0;

		if (ptrace(PTRACE_SYSCALL, t->tid, 0, 0) < 0)
			return mt_seterr(-errno, "ptrace(SYSCALL, %d): %s",
					 (int)t->tid, strerror(errno));
		err = wait_stop(rc, &status, deadline);
		if (err)
			return err;
		if (!WIFSTOPPED(status)) {
			t->gone = true;
			return mt_seterr(-ESRCH, "process %d ended during a call",
					 (int)rc->pid);
		}
		if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid,
				   (void *)sizeof(si), &si) <= 0)
				return mt_seterr(-errno, "PTRACE_GET_SYSCALL_INFO: %s",
						 strerror(errno));
			if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
				if (si.entry.nr == SYS_rt_sigreturn &&
				    si.instruction_pointer == gadget)
					returning = true;
				else if (blocking(&si))
					let_go(rc);
			} else if (si.op == PTRACE_SYSCALL_INFO_EXIT) {
				if (returning)
					break;
				if (!got && a->sys >= 0 && sysret &&
				    rc->last_entry == a->sys) {
					*sysret = si.exit.rval;
					got = true;
				}
			}
			if (si.op == PTRACE_SYSCALL_INFO_ENTRY)
				rc->last_entry = (long)si.entry.nr;
			continue;
		}
		if (status >> 16)
			continue;		/* PTRACE_EVENT_STOP: go on */
		sig = WSTOPSIG(status);
		/* a signal for the thread: held back for its release */
		if (!t->sig)
			t->sig = sig;
	}
	/* back at the state it was stopped in (restart made explicit) */
	if (mt_regs_get(t->tid, &t->regs) < 0)
		return mt_seterr(-errno, "ptrace(GETREGS, %d): %s", (int)t->tid,
				 strerror(errno));
	if (a->sys >= 0 && sysret && !got)
		return mt_seterr(-ENOSYS, "the call made no system call %ld",
				 a->sys);
	return 0;
}

#else

/* arch.h builds no signal frame for this architecture yet. */
int mt_remote_call(struct mt_remote *rc, const struct mt_remote_args *a,
		   int64_t *sysret)
{
	(void)a;
	(void)sysret;
	return mt_seterr(-EOPNOTSUPP,
			 "calling a function in process %d is not built for this architecture",
			 (int)rc->pid);
}

#endif
