/*
 * manyprocs N: fork N children that each sleep in pause(), print "ready",
 * then wait for end of stdin (or "exit") and kill them all.  Children die
 * with the parent (PR_SET_PDEATHSIG), so a killed test leaves nothing.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i;
	pid_t *kids = calloc(n, sizeof(*kids));
	char line[64];

	if (!kids)
		return 1;
	for (i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			printf("error fork %ld\n", i);
			fflush(stdout);
			n = i;
			break;
		}
		if (!kids[i]) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				pause();
		}
	}
	printf("ready %ld\n", n);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) && strncmp(line, "exit", 4))
		;
	for (i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	return 0;
}
