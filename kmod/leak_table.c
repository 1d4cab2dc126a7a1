// SPDX-License-Identifier: GPL-2.0
/*
 * The leak tracer's tables, per session: the blocks (and descriptors) not
 * yet released, the distinct call stacks that allocated them, each thread's
 * allocator calls in flight, and the children followed with F_CHILDREN.
 * Unless said otherwise, the caller holds the session's spinlock; nothing
 * here sleeps.  New blocks and stacks are allocated by the caller and handed
 * in; a thread's call state is allocated here with GFP_NOWAIT, the lock
 * dropped meanwhile.
 *
 * Apart from the handlers (leak_probe.c) and the sessions (leak_session.c),
 * which both change the tables, so that the bookkeeping is in one place and
 * the two call down into it.
 */
#include <linux/hash.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include "leak.h"

static struct kmem_cache *mtr_leak_block_cache;

int mtr_leak_table_init(void)
{
	mtr_leak_block_cache = KMEM_CACHE(mtr_leak_block, 0);
	return mtr_leak_block_cache ? 0 : -ENOMEM;
}

void mtr_leak_table_exit(void)
{
	kmem_cache_destroy(mtr_leak_block_cache);
}

/* From a handler: may fail, never sleeps. */
struct mtr_leak_block *mtr_leak_block_alloc(void)
{
	return kmem_cache_alloc(mtr_leak_block_cache, GFP_NOWAIT | __GFP_NOWARN);
}

void mtr_leak_block_free(struct mtr_leak_block *b)
{
	kmem_cache_free(mtr_leak_block_cache, b);
}

static struct hlist_head *mtr_leak_block_bucket(struct mtr_leak_session *s,
						unsigned long addr)
{
	return &s->blocks[hash_long(addr, MTR_LEAK_BLOCK_BITS)];
}

struct mtr_leak_block *mtr_leak_block_find(struct mtr_leak_session *s,
					   pid_t tgid,
					   unsigned long addr)
{
	struct mtr_leak_block *b;

	hlist_for_each_entry(b, mtr_leak_block_bucket(s, addr), hnode)
		if (b->addr == addr && b->tgid == tgid)
			return b;
	return NULL;
}

/* Unlinks, uncounts and frees one block (caller holds s->lock). */
/* A block freed earlier, or NULL. */
struct mtr_leak_block *mtr_leak_block_spare(struct mtr_leak_session *s)
{
	struct mtr_leak_block *b;

	if (hlist_empty(&s->spare))
		return NULL;
	b = hlist_entry(s->spare.first, struct mtr_leak_block, hnode);
	hlist_del(&b->hnode);
	s->nr_spare--;
	return b;
}

/* Caller holds s->lock: @b, out of the table, kept for reuse or freed. */
void mtr_leak_block_recycle(struct mtr_leak_session *s,
			    struct mtr_leak_block *b)
{
	if (s->nr_spare < MTR_LEAK_MAX_SPARE) {
		hlist_add_head(&b->hnode, &s->spare);
		s->nr_spare++;
	} else {
		kmem_cache_free(mtr_leak_block_cache, b);
	}
}

void mtr_leak_block_drop(struct mtr_leak_session *s, struct mtr_leak_block *b)
{
	hlist_del(&b->hnode);
	if (mtr_leak_is_fd_key(b->addr)) {
		s->st.outstanding_fds--;
	} else {
		s->st.outstanding_bytes -= b->size;
		s->st.outstanding_blocks--;
	}
	mtr_leak_block_recycle(s, b);
}

/* Word by word: the generic memcmp() may go byte by byte. */
static bool mtr_leak_frames_eq(const struct mtr_leak_stack *st, pid_t tgid,
			       u32 api, const u64 *frames, u32 nr)
{
	u32 i;

	if (st->api != api || st->tgid != tgid || st->nr_frames != nr)
		return false;
	for (i = 0; i < nr; i++)
		if (st->frames[i] != frames[i])
			return false;
	return true;
}

/*
 * Runs on every allocation over up to 64 frames: one multiply per frame
 * (return addresses differ in their low bits, which the multiplications
 * carry up) rather than jhash2's rounds per two words.
 */
u32 mtr_leak_stack_hash(pid_t tgid, u32 api, const u64 *frames, u32 nr)
{
	u64 h = (u64)tgid << 32 | api;
	u32 i;

	for (i = 0; i < nr; i++)
		h = (h ^ frames[i]) * GOLDEN_RATIO_64;
	return h >> 32;
}

struct mtr_leak_stack *mtr_leak_stack_find(struct mtr_leak_session *s,
					   u32 hash, pid_t tgid, u32 api,
					   const u64 *frames, u32 nr)
{
	struct mtr_leak_stack *st;

	hlist_for_each_entry(st, &s->stacks[hash_32(hash, MTR_LEAK_STACK_BITS)],
			     hnode)
		if (st->hash == hash &&
		    mtr_leak_frames_eq(st, tgid, api, frames, nr))
			return st;
	return NULL;
}

/*
 * The stack of these frames, added if new; NULL when the table is full or
 * memory was short (counted).  @fresh is an entry the caller allocated and
 * frees if it was not used.
 */
struct mtr_leak_stack *mtr_leak_stack_get(struct mtr_leak_session *s,
					  u32 hash, pid_t tgid, u32 api,
					  const u64 *frames, u32 nr,
					  struct mtr_leak_stack **fresh)
{
	struct mtr_leak_stack *st = mtr_leak_stack_find(s, hash, tgid, api,
							frames, nr);

	if (st)
		return st;
	if (!*fresh || s->st.nr_stacks >= MTR_LEAK_MAX_STACKS) {
		s->st.dropped_stacks++;
		return NULL;
	}
	st = *fresh;
	*fresh = NULL;
	st->hash = hash;
	/* Not nr_stacks: a child's stacks go when it does, ids stay unique. */
	st->id = ++s->next_stack_id;
	s->st.nr_stacks++;
	st->tgid = tgid;
	st->api = api;
	st->nr_frames = nr;
	st->mismatched = 0;
	st->free_api = 0;
	st->free_stack_id = 0;
	st->total_allocs = 0;
	st->total_bytes = 0;
	memcpy(st->frames, frames, nr * sizeof(u64));
	hlist_add_head(&st->hnode, &s->stacks[hash_32(hash, MTR_LEAK_STACK_BITS)]);
	return st;
}

struct mtr_leak_thread *mtr_leak_thread_find(struct mtr_leak_session *s,
					     pid_t tid)
{
	struct mtr_leak_thread *t;

	hlist_for_each_entry(t, &s->threads[hash_32(tid, MTR_LEAK_THREAD_BITS)],
			     hnode)
		if (t->tid == tid)
			return t;
	return NULL;
}

/*
 * Current's state in @s, added if new; NULL when memory was short or the
 * session has too many threads.  Called and returns with s->lock held, but
 * drops it to allocate: @tfresh is the caller's to kfree() if unused.
 */
struct mtr_leak_thread *
mtr_leak_thread_get(struct mtr_leak_session *s, struct mtr_leak_thread **tfresh)
{
	struct mtr_leak_thread *t = mtr_leak_thread_find(s, current->pid);

	if (t)
		return t;
	spin_unlock(&s->lock);
	*tfresh = kmalloc(sizeof(**tfresh), GFP_NOWAIT | __GFP_NOWARN);
	spin_lock(&s->lock);
	/* Only current adds its own entry: it cannot have appeared since. */
	if (!*tfresh || s->nr_threads >= MTR_LEAK_MAX_THREADS)
		return NULL;
	t = *tfresh;
	*tfresh = NULL;
	t->tid = current->pid;
	t->tgid = current->tgid;
	t->depth = 0;
	t->released = 0;
	hlist_add_head(&t->hnode, &s->threads[hash_32(t->tid,
						      MTR_LEAK_THREAD_BITS)]);
	s->nr_threads++;
	return t;
}

/*
 * Returns the allocating stack of a block released by the wrong API, whose
 * free_api it sets; the caller may add the freeing stack.
 */
struct mtr_leak_stack *mtr_leak_remove(struct mtr_leak_session *s,
				       pid_t tgid, unsigned long addr,
				       u32 api)
{
	struct mtr_leak_block *b = mtr_leak_block_find(s, tgid, addr);
	bool fd = mtr_leak_is_fd_key(addr);
	struct mtr_leak_stack *bad = NULL;

	if (fd)
		s->st.fd_closes++;
	else
		s->st.frees++;
	if (!b) {
		if (fd)
			s->st.unknown_closes++;
		else
			s->st.unknown_frees++;
		return NULL;
	}
	if (!memtrack_leak_api_matches(b->api, api)) {
		s->st.mismatched_frees++;
		bad = b->stack;
		if (bad) {
			bad->mismatched++;
			bad->free_api = api;
			bad->free_stack_id = 0;
		}
	}
	mtr_leak_block_drop(s, b);
	return bad;
}

/* @b is preallocated by the caller (NULL: memory was short). */
void mtr_leak_insert(struct mtr_leak_session *s,
		     struct mtr_leak_block *b, pid_t tgid,
		     unsigned long addr, const struct mtr_leak_call *c)
{
	struct mtr_leak_block *old = mtr_leak_block_find(s, tgid, addr);
	bool fd = mtr_leak_is_fd_key(addr);

	if (fd)
		s->st.fd_opens++;
	else
		s->st.allocs++;
	/* A block we missed the free of (e.g. freed before attach, by an
	 * unprobed path): the allocator handed it out again, so it is free.
	 * For a descriptor also dup2() onto it, which closes it.
	 */
	if (old)
		mtr_leak_block_drop(s, old);
	if (!b || s->st.outstanding_blocks + s->st.outstanding_fds >=
		  MTR_LEAK_MAX_BLOCKS) {
		s->st.dropped_allocs++;
		if (b)
			mtr_leak_block_recycle(s, b);
		return;
	}
	b->addr = addr;
	b->tgid = tgid;
	b->size = c->size;
	/* Ages are shown in seconds: the last tick's time is enough. */
	b->time_ns = ktime_get_coarse_ns();
	b->stack = c->stack;
	b->api = c->api;
	if (b->stack) {
		b->stack->total_allocs++;
		b->stack->total_bytes += b->size;
	}
	hlist_add_head(&b->hnode, mtr_leak_block_bucket(s, addr));
	if (fd) {
		s->st.outstanding_fds++;
	} else {
		s->st.outstanding_bytes += b->size;
		s->st.outstanding_blocks++;
	}
}

/* Caller holds s->lock: the followed child by tgid and/or mm (0: any). */
struct mtr_leak_kid *mtr_leak_kid_find(struct mtr_leak_session *s,
				       pid_t tgid, struct mm_struct *mm)
{
	unsigned int i;

	for (i = 0; i < MTR_LEAK_MAX_CHILDREN; i++)
		if (s->kids[i].tgid && !s->kids[i].gone &&
		    (!tgid || s->kids[i].tgid == tgid) &&
		    (!mm || s->kids[i].mm == mm))
			return &s->kids[i];
	return NULL;
}

/* Takes @tid's call state out of the table, for the caller to kfree(). */
struct mtr_leak_thread *mtr_leak_thread_unlink(struct mtr_leak_session *s,
					       pid_t tid)
{
	struct mtr_leak_thread *t = mtr_leak_thread_find(s, tid);

	if (t) {
		hlist_del(&t->hnode);
		s->nr_threads--;
	}
	return t;
}

/* Everything of process @tgid: a followed child that exited or exec'd. */
void mtr_leak_tables_drop(struct mtr_leak_session *s, pid_t tgid)
{
	struct mtr_leak_thread *t;
	struct mtr_leak_stack *st;
	struct mtr_leak_block *b;
	struct hlist_node *tmp;
	unsigned int i;

	for (i = 0; i < (1U << MTR_LEAK_BLOCK_BITS); i++)
		hlist_for_each_entry_safe(b, tmp, &s->blocks[i], hnode)
			if (b->tgid == tgid)
				mtr_leak_block_drop(s, b);
	/* Its blocks are gone, so nothing points to its stacks any more. */
	for (i = 0; i < ARRAY_SIZE(s->stacks); i++)
		hlist_for_each_entry_safe(st, tmp, &s->stacks[i], hnode)
			if (st->tgid == tgid) {
				hlist_del(&st->hnode);
				s->st.nr_stacks--;
				kfree(st);
			}
	/* Threads that exec'd are still alive: their calls pointed there. */
	for (i = 0; i < ARRAY_SIZE(s->threads); i++)
		hlist_for_each_entry_safe(t, tmp, &s->threads[i], hnode)
			if (t->tgid == tgid) {
				hlist_del(&t->hnode);
				s->nr_threads--;
				kfree(t);
			}
}

/* In process context, before the session is listed. */
int mtr_leak_tables_alloc(struct mtr_leak_session *s)
{
	s->blocks = kvcalloc(1U << MTR_LEAK_BLOCK_BITS, sizeof(*s->blocks),
			     GFP_KERNEL);
	return s->blocks ? 0 : -ENOMEM;
}

/* When no handler can run any more: no lock needed. */
void mtr_leak_tables_free(struct mtr_leak_session *s)
{
	struct mtr_leak_block *b;
	struct mtr_leak_stack *st;
	struct mtr_leak_thread *t;
	struct hlist_node *tmp;
	unsigned int i;

	for (i = 0; s->blocks && i < (1U << MTR_LEAK_BLOCK_BITS); i++)
		hlist_for_each_entry_safe(b, tmp, &s->blocks[i], hnode)
			kmem_cache_free(mtr_leak_block_cache, b);
	hlist_for_each_entry_safe(b, tmp, &s->spare, hnode)
		kmem_cache_free(mtr_leak_block_cache, b);
	for (i = 0; i < ARRAY_SIZE(s->stacks); i++)
		hlist_for_each_entry_safe(st, tmp, &s->stacks[i], hnode)
			kfree(st);
	for (i = 0; i < ARRAY_SIZE(s->threads); i++)
		hlist_for_each_entry_safe(t, tmp, &s->threads[i], hnode)
			kfree(t);
	kvfree(s->blocks);
}
