// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack-leak's signals: with -p a stop signal ends the session (with a
 * detach, the target left as it was); with a command it goes on to the
 * program, which ends (and is reported on) as it would have without the
 * tool.
 */
#include <signal.h>
#include <stddef.h>

#include "leak.h"

volatile sig_atomic_t stop_asked;
volatile sig_atomic_t sig_to_forward;

static void on_signal(int sig)
{
	(void)sig;
	stop_asked = 1;
}

/* SIGINT, SIGTERM and SIGHUP set stop_asked (flags: sigaction's sa_flags). */
void catch_stop(int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/*
 * With a command: signals sent to memtrack-leak go to the program, which
 * then exits (and is reported on) as it would have.  Signals from the
 * terminal (SI_KERNEL) already reached it: it is in the same process group.
 */
static void on_signal_fwd(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code != SI_KERNEL)
		sig_to_forward = sig;
}

/*
 * From before the fork: a signal while the tracer sets up is forwarded
 * once the program runs, instead of killing the tracer and leaving the
 * program to run on untraced.
 */
void forward_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_sigaction = on_signal_fwd;
	sa.sa_flags = SA_SIGINFO;	/* no SA_RESTART: wake waitpid */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
}
