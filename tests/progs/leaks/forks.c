// SPDX-License-Identifier: GPL-2.0
/*
 * forks: the parent leaks, then forks 3 children that each leak the same
 * known amount and wait, and a fourth that allocates and then execs
 * `sleep` (from then on it is another program, not to be traced).  It
 * prints the children's pids ("kids PID PID PID EXECPID"), then "done";
 * the next line makes the children exit (reaped), "exited", and the line
 * after that ends the parent.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

#define NR_KIDS 3

void *volatile fixture_sink;

NOINLINE static void leak_parent(void)
{
	for (int i = 0; i < 2; i++)
		escape(malloc(48));			/* LEAK(parent): 2 x 48 */
}

NOINLINE static void leak_child(void)
{
	for (int i = 0; i < 4; i++)
		escape(malloc(100));			/* LEAK(child): 4 x 100 */
}

NOINLINE static void before_exec(void)
{
	escape(malloc(1000));				/* EXEC: gone at exec */
}

int main(void)
{
	int ready[2], hold[2];
	pid_t kids[NR_KIDS + 1];
	char c;

	fixture_wait("ready");
	if (pipe(ready) || pipe(hold))
		return 1;
	leak_parent();
	for (int i = 0; i <= NR_KIDS; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			return 1;
		if (kids[i])
			continue;
		close(hold[1]);
		if (i == NR_KIDS) {
			before_exec();
			close(ready[0]);
			/* The pipe's write end closes at exec (O_CLOEXEC). */
			fcntl(ready[1], F_SETFD, FD_CLOEXEC);
			execlp("sleep", "sleep", "600", (char *)NULL);
			_exit(127);
		}
		leak_child();
		if (write(ready[1], "k", 1) != 1)
			_exit(1);
		close(ready[1]);
		/* Hold until the parent closes its end. */
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	/*
	 * A byte from each leaking child, then EOF: every write end is closed,
	 * the exec'd child's by the exec itself.
	 */
	for (int i = 0; i < NR_KIDS; i++)
		if (read(ready[0], &c, 1) != 1)
			return 1;
	while (read(ready[0], &c, 1) > 0)
		;
	printf("kids %d %d %d %d\n", kids[0], kids[1], kids[2], kids[3]);
	fixture_wait("done");
	close(hold[1]);
	kill(kids[NR_KIDS], SIGTERM);
	for (int i = 0; i <= NR_KIDS; i++)
		waitpid(kids[i], NULL, 0);
	fixture_wait("exited");
	return 0;
}
