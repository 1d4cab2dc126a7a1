// SPDX-License-Identifier: GPL-2.0
/*
 * forkload N: fork N children that exit at once, reaping each; prints the
 * elapsed time in ns: a fork-heavy workload (task creation and exit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	struct timespec a, b;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &a);
	while (n-- > 0) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid)
			_exit(0);
		waitpid(pid, NULL, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld\n", (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec);
	return 0;
}
