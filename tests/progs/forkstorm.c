// SPDX-License-Identifier: GPL-2.0
/*
 * forkstorm N: fork N children one after another; each maps and touches
 * exactly 64 pages with one mmap, then _exit(0)s without unmapping.  Prints
 * each child's pid, one per line, then "done".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_PAGES 64

static void child(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, CHILD_PAGES * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (p == MAP_FAILED)
		_exit(1);
	for (i = 0; i < CHILD_PAGES; i++)
		p[i * page] = 1;
	_exit(0);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int status, failed = 0;
	pid_t pid;

	while (n-- > 0) {
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid)
			child();
		if (waitpid(pid, &status, 0) != pid || status)
			failed++;
		printf("%d\n", pid);
	}
	printf("done\n");
	return failed ? 1 : 0;
}
