// SPDX-License-Identifier: GPL-2.0
/*
 * mmaploop N: N pairs of one-page mmap + munmap as fast as possible (2N
 * address-space records); prints the elapsed time in ns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct timespec a, b;
	void *p;

	clock_gettime(CLOCK_MONOTONIC, &a);
	while (n-- > 0) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || munmap(p, 4096))
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld\n", (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec);
	return 0;
}
