// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload: what each thread keeps (struct pl_thread), apart
 * so that everything below the core can see whether its thread is busy,
 * and its caches (struct pl_cache): taken at a thread's first walk from
 * the process's free ones or mapped, given back at its end.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "state.h"

#define MAX_CACHES	4096	/* threads at once with caches of their own */

__thread struct pl_thread pl_self PL_TLS;

/* every cache this process mapped; published with release */
static struct pl_cache *caches[MAX_CACHES];
static uint32_t nr_caches;
static pthread_key_t cache_key;

/*
 * A thread's end (its key's destructor): the cache free for the next
 * thread.  A destructor allocating after this takes one again, and gives
 * it back in the next round of destructors.
 */
static void cache_release(void *arg)
{
	struct pl_cache *c = arg;

	if (pl_self.cache == c)
		pl_self.cache = NULL;
	__atomic_store_n(&c->owned, 0, __ATOMIC_RELEASE);
}

static void cache_take(struct pl_cache *c)
{
	unsigned int i;

	/* another thread's walks: its stacks are not this thread's */
	for (i = 0; i < 1 << PL_WALKS_BITS; i++)
		c->walks[i].id = 0;
	pl_self.cache = c;
	pthread_setspecific(cache_key, c);
}

struct pl_cache *pl_cache_get(void)
{
	uint32_t i, n, zero = 0;
	struct pl_cache *c;

	n = __atomic_load_n(&nr_caches, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < MAX_CACHES; i++) {
		c = __atomic_load_n(&caches[i], __ATOMIC_ACQUIRE);
		if (c && __atomic_compare_exchange_n(&c->owned, &zero, 1, false,
						     __ATOMIC_ACQUIRE,
						     __ATOMIC_RELAXED)) {
			cache_take(c);
			return c;
		}
		zero = 0;
	}
	i = __atomic_fetch_add(&nr_caches, 1, __ATOMIC_RELAXED);
	if (i >= MAX_CACHES)
		return NULL;
	/* zeroed: an empty memo of generation 0, no walk recorded */
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	c->owned = 1;
	__atomic_store_n(&caches[i], c, __ATOMIC_RELEASE);
	cache_take(c);
	return c;
}

void pl_cache_init(void)
{
	pthread_key_create(&cache_key, cache_release);
}

/* The child has one thread: the others' caches are free in it. */
void pl_cache_after_fork(void)
{
	uint32_t i, n = __atomic_load_n(&nr_caches, __ATOMIC_ACQUIRE);

	for (i = 0; i < n && i < MAX_CACHES; i++)
		if (caches[i] && caches[i] != pl_self.cache)
			caches[i]->owned = 0;
	if (pl_self.cache)
		cache_take(pl_self.cache);
}
