// SPDX-License-Identifier: GPL-2.0
/*
 * hog [MiB]: allocate and touch memory 1 MiB at a time, forever or up to
 * MiB, then sleep.  Used to drive the machine into reclaim and OOM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long limit = argc > 1 ? atol(argv[1]) : 0, mib = 0, off;
	const size_t chunk = 1 << 20;
	char *p;

	while (!limit || mib < limit) {
		p = mmap(NULL, chunk, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (off = 0; off < (long)chunk; off += 4096)
			p[off] = 1;
		mib++;
	}
	printf("holding %ld MiB\n", mib);
	fflush(stdout);
	pause();
	return 0;
}
