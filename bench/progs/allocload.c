// SPDX-License-Identifier: GPL-2.0
/*
 * allocload THREADS OPS LEAKS: the leak benchmark's allocation-heavy
 * workload.  Prints "ready", then runs one timed phase per line read on
 * stdin (so a tracer can attach with -p first) and exits at end of input.
 * In a phase THREADS threads each make OPS malloc/free pairs of 16..1039
 * bytes, keeping up to SLOTS blocks live so frees do not simply return the
 * block just allocated, and each leaks LEAKS blocks of LEAK_SIZE bytes
 * through leak_node() <- build_leak() <- worker().  After each phase it
 * prints "cpu N", the process's CPU time in the phase in ns (every thread,
 * CLOCK_PROCESS_CPUTIME_ID), then the phase's elapsed time in ns.
 *
 * The lines marked FRAME(function) are the known leak's stack, innermost
 * first: bench/leak-guest reads them to check the stacks each tool reports.
 * Built like Debian builds packages: -O2 -g, no frame pointers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 32
#define LEAK_SIZE 48

static long ops, leaks;

/* The leaked blocks are dropped, not kept: "definitely lost". */
static __attribute__((noinline)) void *leak_node(unsigned int seq)
{
	unsigned int *p = malloc(LEAK_SIZE);	/* FRAME(leak_node) */

	if (p)
		memset(p, (int)seq, LEAK_SIZE);
	return p;
}

static __attribute__((noinline)) unsigned long build_leak(unsigned int seed)
{
	unsigned long sum = 0;
	long i;

	for (i = 0; i < leaks; i++) {
		unsigned int *p = leak_node(seed + (unsigned int)i); /* FRAME(build_leak) */

		if (p)
			sum += p[1];
	}
	return sum;
}

static void *worker(void *arg)
{
	unsigned int x = (unsigned int)(unsigned long)arg * 2654435761u + 1;
	unsigned char *live[SLOTS] = { 0 };
	unsigned long sum;
	long i;

	for (i = 0; i < ops; i++) {
		unsigned int slot, size;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		slot = x % SLOTS;
		size = 16 + (x >> 8) % 1024;
		free(live[slot]);
		live[slot] = malloc(size);
		if (live[slot])
			live[slot][size - 1] = (unsigned char)i;
	}
	for (i = 0; i < SLOTS; i++)
		free(live[i]);
	sum = build_leak(x);		/* FRAME(worker) */
	return (void *)(sum ^ x);	/* a call, not a tail jump */
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 4;
	char line[64];
	pthread_t *t;

	ops = argc > 2 ? atol(argv[2]) : 25000;
	leaks = argc > 3 ? atol(argv[3]) : 4;
	t = calloc((size_t)threads, sizeof(*t));
	if (threads < 1 || ops < 0 || leaks < 0 || !t) {
		fprintf(stderr, "usage: allocload THREADS OPS LEAKS\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		struct timespec a, b, ca, cb;
		long i;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (i = 0; i < threads; i++)
			if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)))
				return 1;
		for (i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
		clock_gettime(CLOCK_MONOTONIC, &b);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
		printf("cpu %lld\n", (cb.tv_sec - ca.tv_sec) * 1000000000LL +
		       cb.tv_nsec - ca.tv_nsec);
		printf("%lld\n", (b.tv_sec - a.tv_sec) * 1000000000LL +
		       b.tv_nsec - a.tv_nsec);
	}
	free(t);
	return 0;
}
