// SPDX-License-Identifier: GPL-2.0
/*
 * leakdemo: a process that leaks from known call sites, for memtrack-leak
 * and its tests.  Built -O2 -g by tests/host/test_memtrack_leak.sh.
 *
 *   leakdemo [SECONDS]
 *
 * Prints "main 0x..." (the address of main, to work out the load bias) and
 * "ra NAME 0x..." for each known return address: "inl" returns into
 * leak_inlined(), an always-inline function inlined into leak_site(); "direct"
 * returns into leak_direct().  Then leaks 1000 + 4096 bytes every 100 ms
 * (and frees a third of the first) until SECONDS (default 30) have passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *ra_inl, *ra_direct;

/* Not inlined, so its return address lands in its callers. */
__attribute__((noinline)) static void *grab(size_t n, void **ra)
{
	void *p = malloc(n);

	*ra = __builtin_return_address(0);
	if (p)
		memset(p, 0x5a, n);
	return p;
}

static inline __attribute__((always_inline)) void *leak_inlined(size_t n)
{
	return grab(n, &ra_inl);
}

__attribute__((noinline)) void *leak_site(size_t n)
{
	void *p = leak_inlined(n);

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *leak_direct(size_t n)
{
	void *p = grab(n, &ra_direct);

	__asm__ volatile("" ::: "memory");
	return p;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 30;
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	int i;

	free(leak_site(1));
	free(leak_direct(1));
	printf("main %p\n", (void *)main);
	printf("ra inl %p\n", ra_inl);
	printf("ra direct %p\n", ra_direct);
	fflush(stdout);
	for (i = 0; i < seconds * 10; i++) {
		void *p = leak_site(1000);

		if (i % 3 == 0)
			free(p);
		leak_direct(4096);
		nanosleep(&ts, NULL);
	}
	return 0;
}
