// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload: what each thread keeps (struct pl_thread), apart
 * so that everything below the core can see whether its thread is busy,
 * and its caches (struct pl_cache): taken at a thread's first walk from
 * the process's free ones or mapped, given back at its end.  Also the
 * sessions an injected library goes through (pl_gen) and the threads of
 * the current one, whose busy flags a detach waits on before it unmaps
 * what they use.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "state.h"

#define MAX_CACHES	4096	/* threads at once with caches of their own */

__thread struct pl_thread pl_self PL_TLS;
uint32_t pl_gen;

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

	/* a cache of a session since ended may be unmapped: left alone */
	if (pl_self.busy)
		return;
	pl_self.busy = 1;
	if (pl_self.gen == __atomic_load_n(&pl_gen, __ATOMIC_RELAXED) &&
	    pl_self.cache == c) {
		pl_self.cache = NULL;
		__atomic_store_n(&c->owned, 0, __ATOMIC_RELEASE);
	}
	pl_self.busy = 0;
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
	static int made;

	if (!made)
		pthread_key_create(&cache_key, cache_release);
	made = 1;
}

void pl_caches_release(void)
{
	uint32_t i, n = __atomic_load_n(&nr_caches, __ATOMIC_ACQUIRE);

	for (i = 0; i < n && i < MAX_CACHES; i++)
		if (caches[i])
			munmap(caches[i], sizeof(*caches[i]));
	memset(caches, 0, sizeof(caches));
	__atomic_store_n(&nr_caches, 0, __ATOMIC_RELEASE);
}

/* ---- sessions ------------------------------------------------------------ */

static struct pl_thread *reg[MAX_CACHES];
static uint32_t nr_reg;
static pthread_key_t reg_key;
static int reg_key_made;

/*
 * A thread's end: out of the registry, if its entry is still its own (a
 * new session may have given the slot to another thread).  A destructor
 * entering a hook after this joins again.
 */
static void reg_release(void *arg)
{
	struct pl_thread *self = &pl_self;

	__atomic_compare_exchange_n((struct pl_thread **)arg, &self, NULL,
				    false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	pl_self.gen = 0;
}

bool pl_thread_join(void)
{
	struct pl_thread *none = NULL;
	uint32_t i, n;

	if (!__atomic_load_n(&reg_key_made, __ATOMIC_ACQUIRE))
		return false;
	pl_self.young = NULL;		/* in a state since unmapped */
	pl_self.cache = NULL;		/* likewise */
	pl_self.last_id = 0;
	n = __atomic_load_n(&nr_reg, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < MAX_CACHES; i++) {
		if (__atomic_compare_exchange_n(&reg[i], &none, &pl_self, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			goto got;
		none = NULL;
	}
	i = __atomic_fetch_add(&nr_reg, 1, __ATOMIC_ACQ_REL);
	if (i >= MAX_CACHES)
		return false;
	__atomic_store_n(&reg[i], &pl_self, __ATOMIC_RELEASE);
got:
	pthread_setspecific(reg_key, &reg[i]);
	pl_self.gen = __atomic_load_n(&pl_gen, __ATOMIC_RELAXED);
	return true;
}

bool pl_threads_idle(void)
{
	uint32_t i, n = __atomic_load_n(&nr_reg, __ATOMIC_ACQUIRE);
	struct pl_thread *t;

	for (i = 0; i < n && i < MAX_CACHES; i++) {
		t = __atomic_load_n(&reg[i], __ATOMIC_ACQUIRE);
		if (t && __atomic_load_n(&t->busy, __ATOMIC_ACQUIRE))
			return false;
	}
	return true;
}

void pl_threads_reset(void)
{
	if (!reg_key_made) {
		pthread_key_create(&reg_key, reg_release);
		__atomic_store_n(&reg_key_made, 1, __ATOMIC_RELEASE);
	}
	memset(reg, 0, sizeof(reg));
	__atomic_store_n(&nr_reg, 0, __ATOMIC_RELEASE);
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
