// SPDX-License-Identifier: GPL-2.0
/*
 * grower KIB MS: a steadily growing process (a leak, as a top sees it):
 * maps and touches KIB KiB of anonymous memory every MS milliseconds,
 * forever.  Prints "ready" after the first step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv)
{
	long kib, ms, off, steps = 0;
	struct timespec ts;
	char *p;

	if (argc != 3 || (kib = atol(argv[1])) <= 0 || (ms = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: grower KIB MS\n");
		return 2;
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	for (;;) {
		p = mmap(NULL, kib << 10, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (off = 0; off < kib << 10; off += 4096)
			p[off] = 1;
		if (!steps++) {
			printf("ready\n");
			fflush(stdout);
		}
		nanosleep(&ts, NULL);
	}
}
