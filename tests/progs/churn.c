// SPDX-License-Identifier: GPL-2.0
/*
 * churn THREADS BLOCKS: each thread keeps exactly BLOCKS blocks live, first
 * in first out: it allocates one, then frees its oldest, so that between
 * two of its calls it holds BLOCKS or BLOCKS + 1.  Every block outlives
 * BLOCKS allocations of its thread, so a tracer's table sees it inserted
 * and removed far from where it was young, and the removals leave the
 * tombstones that make its shards rehash, again and again, at a known
 * number of live blocks.
 *
 * Prints "ready" once every thread holds its BLOCKS; runs until stdin
 * closes.  A tracer attached after "ready" does not know the blocks made
 * before it, so the known blocks to count are made on request:
 *   hold N  the main thread allocates N blocks of HELD_SIZE (48) bytes
 *           in hold(), its only allocations, and keeps them: "held"
 * (stdin is unbuffered: the main thread allocates nothing else.)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAXT	64

static long blocks;
static volatile int stop;
static pthread_barrier_t filled;

static void *churn(void *arg)
{
	void **ring = calloc((size_t)blocks, sizeof(*ring));
	uint64_t seq = (uintptr_t)arg * 7919;
	long i = 0;

	if (!ring) {
		perror("calloc");
		exit(2);
	}
	for (i = 0; i < blocks; i++)
		ring[i] = malloc(16 + (size_t)(seq++ % 256));
	pthread_barrier_wait(&filled);
	for (i = 0; !stop; i = (i + 1) % blocks) {
		void *p = malloc(16 + (size_t)(seq++ % 256));

		if (!p) {
			perror("malloc");
			exit(2);
		}
		free(ring[i]);
		ring[i] = p;
	}
	return ring;
}

#define HELD_SIZE	48

static __attribute__((noinline)) void hold(long n)
{
	/* mapped, not allocated: hold()'s only allocations are the blocks */
	void **v = mmap(NULL, (size_t)n * sizeof(*v) + 1, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long i;

	for (i = 0; v != MAP_FAILED && i < n; i++)
		v[i] = malloc(HELD_SIZE);
	if (v == MAP_FAILED || (n && !v[n - 1])) {
		perror("hold");
		exit(2);
	}
	printf("held\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0, i;
	pthread_t th[MAXT];
	char line[64];

	setvbuf(stdin, NULL, _IONBF, 0);
	blocks = argc > 2 ? atol(argv[2]) : 0;
	if (n < 1 || n > MAXT || blocks < 1) {
		fprintf(stderr, "usage: churn THREADS (1..%d) BLOCKS\n", MAXT);
		return 2;
	}
	pthread_barrier_init(&filled, NULL, (unsigned int)n + 1);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, churn, (void *)(uintptr_t)i)) {
			perror("pthread_create");
			return 2;
		}
	pthread_barrier_wait(&filled);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		if (!strncmp(line, "hold ", 5))
			hold(atol(line + 5));
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
