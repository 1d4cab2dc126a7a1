// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak -p's injected engine: its ptrace work in a scheduling
 * group of its own when it may not raise its priority.
 *
 * While the target's threads are stopped, the tool raises its priority
 * where it may (CAP_SYS_NICE, libmemtrack's inject.c), because a busy
 * target's threads, once let go, take its CPU between two of its ptrace
 * calls while the others wait stopped.  Without that right, and in one
 * scheduling group with a target that keeps every CPU busy (a program
 * started from the same terminal: one autogroup), each of its ~130 ptrace
 * calls waits for a time slice among the target's threads: a 64-thread
 * malloc storm on 2 CPUs stayed stopped 44-76 ms (medians of six runs),
 * against 5-7 ms with the tool in a session of its own (bench/README.md).
 *
 * So the tool then runs as a child in a new session (setsid: a new
 * autogroup, which the kernel shares the CPUs with as with one task),
 * and the process the user started stays in the terminal's session and
 * job: it hands SIGINT, SIGTERM and SIGHUP on, stops and continues the
 * child with itself (Ctrl-Z, fg), and ends as the child ends, with its
 * exit status or signal.  The child dies with it (PR_SET_PDEATHSIG): a
 * tool killed is gone as a whole, and the target's watchdog sees its pipe
 * close as before.  Its output goes where the tool's went.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "memtrack.h"
#include "leak_group.h"

/* set before any handler that reads it is installed */
static pid_t child;

/* CAP_SYS_NICE in the effective set: inject.c raises the priority then. */
static bool may_raise_priority(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(CAP_SYS_NICE)].effective &
	       CAP_TO_MASK(CAP_SYS_NICE);
}

static void hand_on(int sig)
{
	int e = errno;

	if (sig == SIGTSTP) {
		/* Ctrl-Z: the child stops too, the parent as the shell expects */
		kill(child, SIGSTOP);
		raise(SIGSTOP);
		kill(child, SIGCONT);
	} else {
		kill(child, sig);
	}
	errno = e;
}

/*
 * The parent: signals handed on until the child ends; old is the mask
 * to go back to once the handlers are in (the caller blocked them all
 * across the fork).  Never returns.
 */
static void wait_child(const sigset_t *old)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGTSTP };
	struct sigaction sa = { .sa_handler = hand_on, .sa_flags = SA_RESTART };
	int status;
	size_t i;

	/*
	 * All of them, ignored or not, as the child's own catch_stop() does
	 * (a script stops a job it started with & with SIGINT, which the
	 * shell had it ignore).
	 */
	for (i = 0; i < MT_ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	sigprocmask(SIG_SETMASK, old, NULL);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			exit(1);
	if (WIFEXITED(status))
		exit(WEXITSTATUS(status));
	signal(WTERMSIG(status), SIG_DFL);
	raise(WTERMSIG(status));
	exit(128 + WTERMSIG(status));
}

void leak_own_group(void)
{
	pid_t parent = getpid();
	sigset_t all, old;

	if (may_raise_priority())
		return;
	fflush(NULL);
	/* none taken before the parent hands them on */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	child = fork();
	if (child < 0) {
		/* the tool still works, at the cost this file is about */
		sigprocmask(SIG_SETMASK, &old, NULL);
		return;
	}
	if (child > 0)
		wait_child(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	setsid();
}
