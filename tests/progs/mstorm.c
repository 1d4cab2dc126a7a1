// SPDX-License-Identifier: GPL-2.0
/*
 * mstorm THREADS: a malloc/free storm that checks every byte it gets back.
 * Each thread keeps up to 64 blocks of 16..2063 bytes live, filled with a
 * pattern of its own (thread, sequence number, offset); before a block is
 * freed (or realloc'ed, or after calloc) its whole content is checked, and
 * a mismatch is counted.  So a tracer that corrupts the heap, returns a
 * block twice or loses a realloc's content shows as errors, not as luck.
 * Some blocks go through calloc, realloc and posix_memalign, and every
 * 1024th through aligned_alloc, so the hooks' other paths run too.
 *
 * Prints "ready" once the threads run; then per stdin line:
 *   stat   "ops N errors E" (N: blocks checked and freed so far)
 *   pause  every thread checks and frees its blocks and ends (its malloc
 *          cache goes with it), then malloc_trim(0) gives the free memory
 *          back: "paused" once the kernel has reaped the threads, an RSS
 *          that holds nothing of the storm's own, to compare one with
 *          another
 *   go     new threads storm again: "going"
 *   EOF    the threads stop; exit 0 if no error, else 1
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIVE	64
#define MAXT	1024

struct block {
	unsigned char *p;
	size_t n;
	uint64_t seq;
};

static volatile int stop;
static uint64_t ops[MAXT], errors[MAXT];

static unsigned char byte(unsigned int t, uint64_t seq, size_t i)
{
	return (unsigned char)(t * 131 + seq * 31 + i * 7 + (i >> 8));
}

static void fill(unsigned int t, struct block *b, size_t from)
{
	size_t i;

	for (i = from; i < b->n; i++)
		b->p[i] = byte(t, b->seq, i);
}

/* The block's bytes [0, n) as fill() left them; false if not. */
static bool intact(unsigned int t, const struct block *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b->p[i] != byte(t, b->seq, i))
			return false;
	return true;
}

/* Every block checked and freed. */
static void drop_all(unsigned int t, struct block *live)
{
	size_t i;

	for (i = 0; i < LIVE; i++) {
		if (live[i].p && !intact(t, &live[i], live[i].n))
			__atomic_fetch_add(&errors[t], 1, __ATOMIC_RELAXED);
		free(live[i].p);
		live[i].p = NULL;
	}
}

static void *storm(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg, rnd = t * 2654435761U + 1;
	struct block live[LIVE] = { { 0 } };
	uint64_t seq = 0;
	size_t i;

	while (!stop) {
		struct block *b;

		rnd = rnd * 1103515245U + 12345;
		b = &live[(rnd >> 8) % LIVE];
		if (b->p) {
			if (!intact(t, b, b->n))
				__atomic_fetch_add(&errors[t], 1, __ATOMIC_RELAXED);
			if (rnd & 0x10000) {
				/* realloc keeps the content up to the smaller size */
				size_t n = 16 + (rnd >> 20) % 2048;
				unsigned char *p = realloc(b->p, n);

				if (p) {
					size_t keep = n < b->n ? n : b->n;

					b->p = p;
					if (!intact(t, &(struct block){ p, keep, b->seq }, keep))
						__atomic_fetch_add(&errors[t], 1,
								   __ATOMIC_RELAXED);
					b->n = n;
					fill(t, b, keep);
					__atomic_fetch_add(&ops[t], 1, __ATOMIC_RELAXED);
					continue;
				}
			}
			free(b->p);
			b->p = NULL;
			__atomic_fetch_add(&ops[t], 1, __ATOMIC_RELAXED);
			continue;
		}
		b->n = 16 + (rnd >> 12) % 2048;
		b->seq = seq++;
		switch ((rnd >> 4) & 7) {
		case 0:
			b->p = calloc(1, b->n);
			for (i = 0; b->p && i < b->n; i++)
				if (b->p[i])
					__atomic_fetch_add(&errors[t], 1,
							   __ATOMIC_RELAXED);
			break;
		case 1:
			if (posix_memalign((void **)&b->p, 64, b->n))
				b->p = NULL;
			break;
		default:
			b->p = (seq & 1023) ? malloc(b->n) :
					      aligned_alloc(256, 256 * (1 + b->n / 256));
			break;
		}
		if (b->p)
			fill(t, b, 0);
	}
	drop_all(t, live);
	return NULL;
}

static void totals(uint64_t *o, uint64_t *e, unsigned int n)
{
	unsigned int i;

	*o = *e = 0;
	for (i = 0; i < n; i++) {
		*o += __atomic_load_n(&ops[i], __ATOMIC_RELAXED);
		*e += __atomic_load_n(&errors[i], __ATOMIC_RELAXED);
	}
}

/*
 * Every allocator call the threads make, once, so that the dynamic linker
 * has bound each of their PLT slots before "ready": a test comparing the
 * slots before and after a tracer then sees the tracer's writes only (the
 * first aligned_alloc comes 1,023 blocks into a thread, and its lazy
 * binding was once taken for a slot the tracer had not restored).
 */
static void *volatile bound;	/* so that no call is optimized away */

static void bind_slots(void)
{
	void *p = NULL;

	bound = calloc(1, 16);
	free(bound);
	if (!posix_memalign(&p, 64, 16))
		free(p);
	bound = malloc(16);
	bound = realloc(bound, 32);
	free(bound);
	bound = aligned_alloc(256, 256);
	free(bound);
}

static pthread_t th[MAXT];

/* The number of threads the kernel still counts in this process. */
static int threads(void)
{
	char line[128];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * Wait until the ended threads are reaped.  pthread_join() returns when a
 * thread's exit clears its TID, before the kernel folds the RSS it counted
 * per thread into the process's (sync_mm_rss(): kernels before 6.2 count
 * up to 64 page events a thread apart): a VmRSS read at once was off by
 * what the threads still held, more so on a loaded machine.
 */
static void reaped(void)
{
	const struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < 10000 && threads() > 1; i++)
		nanosleep(&ms, NULL);
}

static void start(unsigned int n)
{
	unsigned int i;

	stop = 0;
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, storm, (void *)(uintptr_t)i)) {
			perror("pthread_create");
			exit(2);
		}
}

static void end(unsigned int n)
{
	unsigned int i;

	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? (unsigned int)atoi(argv[1]) : 16;
	bool running = true;
	char line[64];
	uint64_t o, e;

	if (n < 1 || n > MAXT) {
		fprintf(stderr, "usage: mstorm THREADS (1..%d)\n", MAXT);
		return 2;
	}
	bind_slots();
	start(n);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "pause", 5)) {
			if (running)
				end(n);
			running = false;
			malloc_trim(0);
			reaped();
			printf("paused\n");
		} else if (!strncmp(line, "go", 2)) {
			if (!running)
				start(n);
			running = true;
			printf("going\n");
		} else {
			totals(&o, &e, n);
			printf("ops %llu errors %llu\n", (unsigned long long)o,
			       (unsigned long long)e);
		}
		fflush(stdout);
	}
	if (running)
		end(n);
	totals(&o, &e, n);
	printf("ops %llu errors %llu\n", (unsigned long long)o,
	       (unsigned long long)e);
	return e ? 1 : 0;
}
