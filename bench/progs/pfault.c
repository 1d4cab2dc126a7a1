// SPDX-License-Identifier: GPL-2.0
/*
 * pfault ROUNDS MIB: map MIB of anonymous memory, touch every 4 KiB page,
 * unmap; ROUNDS times.  Prints the elapsed time in ns: a page-fault-heavy
 * workload (each fault allocates a page, each unmap frees it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 10;
	size_t len = (argc > 2 ? atol(argv[2]) : 32) << 20;
	struct timespec a, b;
	size_t off;
	char *p;

	clock_gettime(CLOCK_MONOTONIC, &a);
	while (rounds-- > 0) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		madvise(p, len, MADV_NOHUGEPAGE);
		for (off = 0; off < len; off += 4096)
			p[off] = 1;
		munmap(p, len);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld\n", (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec);
	return 0;
}
