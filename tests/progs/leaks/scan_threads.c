// SPDX-License-Identifier: GPL-2.0
/*
 * scan_threads: --scan where glibc's own memory holds pointers that are
 * no program's:
 *   - 4 threads run at once (each gets an arena of its own), are joined
 *     and leave their stacks in glibc's cache, with the struct pthread at
 *     the top of each still pointing into its DTV (allocated by
 *     pthread_create: possibly lost, as memcheck says);
 *   - each thread's last allocation (40 bytes: its chunk's last 8 bytes
 *     are the next chunk's prev_size) is followed by its arena's top
 *     chunk, which the arena points to: definitely lost all the same;
 *   - a block only a dead frame of an exited thread held;
 *   - main's last allocation (24 bytes) shares main_arena's top chunk, and
 *     a 40-byte block the chunk after which is free, in one of the
 *     arena's bins: both definitely lost;
 *   - a block a global points to in each thread and in main: reachable.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

#define NTHREADS 4

void *volatile fixture_sink;
static void *volatile kept[NTHREADS], *volatile main_kept;
static pthread_barrier_t all_in, all_done;

/* The only pointer to the block is a local of this frame, dead once it returns. */
NOINLINE static void bury(void)
{
	void *volatile slot = malloc(32);		/* LEAK(buried): 4 x 32 */

	(void)slot;
}

NOINLINE static void *worker(void *arg)
{
	long i = (long)arg;

	/* all alive before the first malloc: an arena each */
	pthread_barrier_wait(&all_in);
	kept[i] = malloc(48);				/* LEAK(thread_kept): 4 x 48 */
	bury();
	escape(malloc(40));				/* LEAK(thread_top): 4 x 40 */
	/* none exits (giving its arena to the next) before all allocated */
	pthread_barrier_wait(&all_done);
	return NULL;
}

NOINLINE static void run_threads(void)
{
	pthread_t t[NTHREADS];
	long i;

	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i); /* DTV(dtv): 4 */
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
}

NOINLINE static void main_top(void)
{
	void *big;

	escape(malloc(40));				/* LEAK(main_binned): 1 x 40 */
	big = malloc(2000);
	main_kept = malloc(40);				/* LEAK(main_kept): 1 x 40 */
	escape(malloc(24));				/* LEAK(main_top): 1 x 24 */
	free(big);					/* FREED */
}

/* As scan.c's: no pointer of the work's frames is left below main's. */
NOINLINE static void scrub_stack(void)
{
	volatile char scrub[4096];

	memset((char *)scrub, 0, sizeof(scrub));
	escape((void *)scrub);
}

int main(void)
{
	pthread_barrier_init(&all_in, NULL, NTHREADS);
	pthread_barrier_init(&all_done, NULL, NTHREADS);
	fixture_wait("ready");
	run_threads();
	main_top();
	scrub_stack();
	fixture_wait("done");
	return 0;
}
