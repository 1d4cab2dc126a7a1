// SPDX-License-Identifier: GPL-2.0
/*
 * grower KIB MS [CYCLE]: a steadily growing process (a leak, as a top sees
 * it): maps and touches KIB KiB of anonymous memory every MS milliseconds,
 * forever.  With CYCLE, a sawtooth instead: every CYCLE steps it unmaps
 * all it mapped, so its RSS rises and falls back, and does not grow.
 * Prints "ready" after the first step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv)
{
	long kib, ms, off, steps = 0, cycle = 0, i;
	struct timespec ts;
	char *p, **maps = NULL;

	if (argc < 3 || argc > 4 || (kib = atol(argv[1])) <= 0 ||
	    (ms = atol(argv[2])) <= 0 ||
	    (argc == 4 && (cycle = atol(argv[3])) <= 0)) {
		fprintf(stderr, "usage: grower KIB MS [CYCLE]\n");
		return 2;
	}
	if (cycle && !(maps = calloc(cycle, sizeof(*maps)))) {
		perror("calloc");
		return 1;
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
		if (cycle) {
			maps[steps % cycle] = p;
			if (steps % cycle == cycle - 1)
				for (i = 0; i < cycle; i++)
					munmap(maps[i], kib << 10);
		}
		if (!steps++) {
			printf("ready\n");
			fflush(stdout);
		}
		nanosleep(&ts, NULL);
	}
}
