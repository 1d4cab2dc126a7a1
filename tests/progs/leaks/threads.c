// SPDX-License-Identifier: GPL-2.0
/*
 * threads: 8 threads allocate concurrently; each leaks exactly 1000 blocks
 * of 64 bytes from leak_worker() and frees 1000 others.  Plus a ping-pong:
 * blocks malloc'ed by one thread and freed by another, none outstanding.
 * And 2 threads on the smallest stack glibc allows (PTHREAD_STACK_MIN),
 * which glibc refuses (EINVAL) when the static TLS of the libraries loaded
 * does not fit beside it: an in-process tracer's must stay small.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

#define NTHREADS 8
#define PER_THREAD 1000
#define NSMALL 2
#define PER_SMALL 100

void *volatile fixture_sink;
static void *handoff[PER_THREAD];

NOINLINE static void *leak_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < PER_THREAD; i++) {
		fixture_sink = malloc(64);		/* LEAK(worker): 8000 x 64 */
		free(malloc(32));			/* FREED */
	}
	return NULL;
}

NOINLINE static void *small_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < PER_SMALL; i++)
		fixture_sink = malloc(24);		/* LEAK(small_stack): 200 x 24 */
	return NULL;
}

NOINLINE static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < PER_THREAD; i++)
		handoff[i] = malloc(48);		/* FREED (by consumer) */
	return NULL;
}

NOINLINE static void *consumer(void *arg)
{
	(void)arg;
	for (int i = 0; i < PER_THREAD; i++)
		free(handoff[i]);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS], p, c;
	pthread_attr_t small;
	int err;

	fixture_wait("ready");
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, leak_worker, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, PTHREAD_STACK_MIN);
	for (int i = 0; i < NSMALL; i++) {
		err = pthread_create(&t[i], &small, small_worker, NULL);
		if (err) {
			fprintf(stderr, "threads: a thread on a %d-byte stack: %s\n",
				(int)PTHREAD_STACK_MIN, strerror(err));
			return 1;
		}
	}
	for (int i = 0; i < NSMALL; i++)
		pthread_join(t[i], NULL);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	pthread_join(c, NULL);
	fixture_wait("done");
	return 0;
}
