// SPDX-License-Identifier: GPL-2.0
/*
 * The leak tracer: uprobes and uretprobes on a process's allocator entry
 * points, and per traced process (a session) a table of the blocks it has
 * allocated and not freed, each with the call stack that allocated it.
 *
 * Probes are shared with every process that maps the same library, so the
 * consumers' filter puts the breakpoint only into the target's mm, and the
 * handlers check the caller again.  Handlers run in the probed thread's
 * context; they take only the session's spinlock and allocate only with
 * GFP_NOWAIT, within the bounds in leak.h, so a traced process can never
 * make the module sleep on memory or grow it without limit.
 *
 * Sessions end by LEAK_DETACH, when the target exits or execs, when the
 * socket that attached closes, and at unload.  Unregistering uprobes sleeps,
 * so the hooks that notice the first three only mark the session dead and
 * queue a work item; a session is freed only after its uprobes are gone and
 * no handler can run any more.
 */
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/ptrace.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/netlink.h>
#include "memtrack.h"
#include "leak.h"
#include "arch.h"

/* mtr_leak_sessions changes under both locks: readers need either. */
static DEFINE_MUTEX(mtr_leak_lock);		/* attach, detach, netlink */
static DEFINE_SPINLOCK(mtr_leak_list_lock);	/* hooks that cannot sleep */
static LIST_HEAD(mtr_leak_sessions);
static atomic_t mtr_leak_nr_sessions = ATOMIC_INIT(0);
static bool mtr_leak_closing;			/* unload: no new sessions */
static struct kmem_cache *mtr_leak_block_cache;

static void mtr_leak_reap_fn(struct work_struct *work);
static DECLARE_WORK(mtr_leak_reap_work, mtr_leak_reap_fn);

/* ---- tables (caller holds sess->lock) ------------------------------------- */

static struct hlist_head *mtr_leak_block_bucket(struct mtr_leak_session *s,
						unsigned long addr)
{
	return &s->blocks[hash_long(addr, MTR_LEAK_BLOCK_BITS)];
}

static struct mtr_leak_block *mtr_leak_block_find(struct mtr_leak_session *s,
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
void mtr_leak_block_drop(struct mtr_leak_session *s, struct mtr_leak_block *b)
{
	hlist_del(&b->hnode);
	if (mtr_leak_is_fd_key(b->addr)) {
		s->st.outstanding_fds--;
	} else {
		s->st.outstanding_bytes -= b->size;
		s->st.outstanding_blocks--;
	}
	kmem_cache_free(mtr_leak_block_cache, b);
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
static u32 mtr_leak_stack_hash(pid_t tgid, u32 api, const u64 *frames, u32 nr)
{
	u64 h = (u64)tgid << 32 | api;
	u32 i;

	for (i = 0; i < nr; i++)
		h = (h ^ frames[i]) * GOLDEN_RATIO_64;
	return h >> 32;
}

static struct mtr_leak_stack *mtr_leak_stack_find(struct mtr_leak_session *s,
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
static struct mtr_leak_stack *mtr_leak_stack_get(struct mtr_leak_session *s,
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

static struct mtr_leak_thread *mtr_leak_thread_find(struct mtr_leak_session *s,
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
static struct mtr_leak_thread *
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

static bool mtr_leak_api_frees(u32 api)
{
	return api == MEMTRACK_API_FREE || api == MEMTRACK_API_DELETE ||
	       api == MEMTRACK_API_DELETE_ARRAY || api == MEMTRACK_API_CLOSE;
}

/* Whether a block allocated by @alloc may be released by @release. */
static bool mtr_leak_api_matches(u32 alloc, u32 release)
{
	switch (alloc) {
	case MEMTRACK_API_NEW:
		return release == MEMTRACK_API_DELETE;
	case MEMTRACK_API_NEW_ARRAY:
		return release == MEMTRACK_API_DELETE_ARRAY;
	default:
		return release != MEMTRACK_API_DELETE &&
		       release != MEMTRACK_API_DELETE_ARRAY;
	}
}

/*
 * Returns the allocating stack of a block released by the wrong API, whose
 * free_api it sets; the caller may add the freeing stack.
 */
static struct mtr_leak_stack *mtr_leak_remove(struct mtr_leak_session *s,
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
	if (!mtr_leak_api_matches(b->api, api)) {
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
static void mtr_leak_insert(struct mtr_leak_session *s,
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
			kmem_cache_free(mtr_leak_block_cache, b);
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

/* ---- handlers ----------------------------------------------------------------- */

/* Caller holds s->lock: the followed child by tgid and/or mm (0: any). */
static struct mtr_leak_kid *mtr_leak_kid_find(struct mtr_leak_session *s,
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

/* Caller holds s->lock: is this process (or, mm NULL, tgid) traced by s? */
static bool mtr_leak_traces(struct mtr_leak_session *s, pid_t tgid,
			    struct mm_struct *mm)
{
	if (tgid == s->tgid && (!mm || mm == s->mm))
		return true;
	return s->flags & MEMTRACK_LEAK_F_CHILDREN &&
	       mtr_leak_kid_find(s, tgid, mm);
}

/* The session this probe hit belongs to, if current is traced by it. */
static struct mtr_leak_session *mtr_leak_current(struct uprobe_consumer *uc)
{
	struct mtr_leak_probe *p = container_of(uc, struct mtr_leak_probe, uc);
	struct mtr_leak_session *s = p->sess;
	bool ours;

	if (READ_ONCE(s->dead))
		return NULL;
	if (current->tgid == s->tgid && current->mm == s->mm)
		return s;
	if (!(s->flags & MEMTRACK_LEAK_F_CHILDREN))
		return NULL;
	spin_lock(&s->lock);
	ours = mtr_leak_kid_find(s, current->tgid, current->mm);
	spin_unlock(&s->lock);
	return ours ? s : NULL;
}

/*
 * Calls whose uretprobe never fired (longjmp out of an allocator, or the
 * kernel's uretprobe nesting limit) would stay on the thread's stack: drop
 * those whose frame is already popped, i.e. strictly below @sp.  A call at
 * the same sp is still live: glibc's allocators tail-call each other
 * (reallocarray -> realloc -> malloc), entering with the outer one's sp.
 */
static void mtr_leak_unwind(struct mtr_leak_thread *t, unsigned long sp)
{
	while (t->depth && t->depth <= MTR_LEAK_MAX_DEPTH &&
	       t->calls[t->depth - 1].sp < sp)
		t->depth--;
}

/*
 * A mismatched free is rare and a bug worth showing from both sides: only
 * then is the freeing call's stack taken, kept (api: the freeing API) and
 * named on the allocating stack.  Stacks live as long as the session, so
 * @alloc stays valid with the lock dropped.
 */
static void mtr_leak_note_mismatch(struct mtr_leak_session *s,
				   struct mtr_leak_stack *alloc, u32 api,
				   struct pt_regs *regs)
{
	struct mtr_leak_stack *st, *fresh = NULL;
	u64 frames[MEMTRACK_LEAK_MAX_FRAMES];
	u32 nr, hash;

	nr = mtr_leak_unwind_user(s, regs, true, frames);
	hash = mtr_leak_stack_hash(current->tgid, api, frames, nr);
	spin_lock(&s->lock);
	st = mtr_leak_stack_find(s, hash, current->tgid, api, frames, nr);
	if (!st) {
		spin_unlock(&s->lock);
		fresh = kmalloc(struct_size(fresh, frames, nr),
				GFP_NOWAIT | __GFP_NOWARN);
		spin_lock(&s->lock);
		st = mtr_leak_stack_get(s, hash, current->tgid, api, frames, nr,
					&fresh);
	}
	if (st && alloc->free_api == api)
		alloc->free_stack_id = st->id;
	spin_unlock(&s->lock);
	kfree(fresh);
}

static void mtr_leak_free_entry(struct mtr_leak_session *s, u32 api,
				struct pt_regs *regs)
{
	bool delete = api == MEMTRACK_API_DELETE ||
		      api == MEMTRACK_API_DELETE_ARRAY;
	struct mtr_leak_thread *t, *tfresh = NULL;
	struct mtr_leak_stack *bad = NULL;
	unsigned long ptr = mtr_arg(regs, 0);

	if (api == MEMTRACK_API_CLOSE) {
		if ((int)mtr_arg(regs, 0) < 0)
			return;
		ptr = MTR_LEAK_FD_KEY | (u32)mtr_arg(regs, 0);
	}
	if (!ptr)
		return;
	spin_lock(&s->lock);
	/* A delete needs somewhere to note what it released. */
	t = delete ? mtr_leak_thread_get(s, &tfresh) :
		     mtr_leak_thread_find(s, current->pid);
	if (t)
		mtr_leak_unwind(t, mtr_sp(regs));
	/* free() called by realloc(p, 0) etc.: the outer call accounts. */
	if (t && t->depth)
		goto out;
	/*
	 * The free() (or inner delete) a delete of @ptr ends in.  Unless the
	 * block came back from the allocator in between (another thread):
	 * then this is a release of its own.
	 */
	if (t && t->released == ptr &&
	    !mtr_leak_block_find(s, current->tgid, ptr))
		goto out;
	bad = mtr_leak_remove(s, current->tgid, ptr, api);
	if (t)
		t->released = delete ? ptr : 0;
out:
	spin_unlock(&s->lock);
	kfree(tfresh);
	if (bad)
		mtr_leak_note_mismatch(s, bad, api, regs);
}

/* What an allocator call asks for, from its arguments; false: overflow. */
static bool mtr_leak_request(u32 api, struct pt_regs *regs,
			     struct mtr_leak_call *c)
{
	if (mtr_leak_api_is_fd(api))
		return mtr_leak_fd_request(api, regs, c);
	c->arg = 0;
	switch (api) {
	case MEMTRACK_API_CALLOC:
		return !check_mul_overflow((u64)mtr_arg(regs, 0),
					   (u64)mtr_arg(regs, 1), &c->size);
	case MEMTRACK_API_REALLOC:
		c->arg = mtr_arg(regs, 0);
		c->size = mtr_arg(regs, 1);
		return true;
	case MEMTRACK_API_REALLOCARRAY:
		c->arg = mtr_arg(regs, 0);
		return !check_mul_overflow((u64)mtr_arg(regs, 1),
					   (u64)mtr_arg(regs, 2), &c->size);
	case MEMTRACK_API_POSIX_MEMALIGN:
		c->arg = mtr_arg(regs, 0);
		c->size = mtr_arg(regs, 2);
		return true;
	case MEMTRACK_API_ALIGNED_ALLOC:
	case MEMTRACK_API_MEMALIGN:
		c->size = mtr_arg(regs, 1);
		return true;
	case MEMTRACK_API_PVALLOC:
		/* pvalloc allocates whole pages: that is what the caller holds. */
		c->size = PAGE_ALIGN(mtr_arg(regs, 0));
		return true;
	default:	/* malloc, valloc, new, new[]: (size, ...) */
		c->size = mtr_arg(regs, 0);
		return true;
	}
}

static int mtr_leak_entry(MTR_UPROBE_HANDLER_PROTO)
{
	struct mtr_leak_probe *p = container_of(uc, struct mtr_leak_probe, uc);
	struct mtr_leak_session *s = mtr_leak_current(uc);
	struct mtr_leak_thread *t, *tfresh = NULL;
	struct mtr_leak_stack *fresh = NULL;
	struct mtr_leak_call c = { .sp = mtr_sp(regs), .api = p->api };
	u64 frames[MEMTRACK_LEAK_MAX_FRAMES];
	u32 nr, hash;

	if (!s)
		return 0;
	if (mtr_leak_api_frees(p->api)) {
		mtr_leak_free_entry(s, p->api, regs);
		return 0;
	}
	c.nested = !mtr_leak_request(p->api, regs, &c);

	/*
	 * A thread's first call and a new stack need memory: it is allocated
	 * with the lock dropped.  Only this thread changes its own call state,
	 * and entries stay until the thread or the session ends, so what was
	 * found before stays valid.
	 */
	spin_lock(&s->lock);
	t = mtr_leak_thread_get(s, &tfresh);
	if (!t) {
		/* Its return cannot be paired: the block is lost to us. */
		s->st.dropped_allocs++;
		goto out;
	}
	mtr_leak_unwind(t, mtr_sp(regs));
	/* Inside another allocator call (new -> malloc): no stack needed. */
	if (t->depth)
		c.nested = true;
	if (!c.nested) {
		spin_unlock(&s->lock);
		nr = mtr_leak_unwind_user(s, regs, true, frames);
		hash = mtr_leak_stack_hash(current->tgid, p->api, frames, nr);
		spin_lock(&s->lock);
		c.stack = mtr_leak_stack_find(s, hash, current->tgid, p->api,
					      frames, nr);
		if (!c.stack) {
			spin_unlock(&s->lock);
			fresh = kmalloc(struct_size(fresh, frames, nr),
					GFP_NOWAIT | __GFP_NOWARN);
			spin_lock(&s->lock);
			c.stack = mtr_leak_stack_get(s, hash, current->tgid,
						     p->api, frames, nr, &fresh);
		}
	}
	if (t->depth < MTR_LEAK_MAX_DEPTH)
		t->calls[t->depth] = c;
	t->depth++;
out:
	spin_unlock(&s->lock);
	kfree(fresh);
	kfree(tfresh);
	return 0;
}

static int mtr_leak_return(MTR_URETPROBE_HANDLER_PROTO)
{
	struct mtr_leak_probe *p = container_of(uc, struct mtr_leak_probe, uc);
	struct mtr_leak_session *s = mtr_leak_current(uc);
	unsigned long ret = regs_return_value(regs), addr = ret, out, keys[2];
	struct mtr_leak_block *b, *b2 = NULL;
	struct mtr_leak_thread *t;
	struct mtr_leak_call c;
	bool have = false;

	if (!s)
		return 0;
	b = kmem_cache_alloc(mtr_leak_block_cache, GFP_NOWAIT | __GFP_NOWARN);
	if (p->api == MEMTRACK_API_PIPE || p->api == MEMTRACK_API_SOCKETPAIR)
		b2 = kmem_cache_alloc(mtr_leak_block_cache,
				      GFP_NOWAIT | __GFP_NOWARN);

	spin_lock(&s->lock);
	t = mtr_leak_thread_find(s, current->pid);
	if (t) {
		/* The stack pointer the returning call had at its entry. */
		mtr_leak_unwind(t, mtr_sp_at_entry(regs));
		if (t->depth > MTR_LEAK_MAX_DEPTH) {
			t->depth--;
		} else if (t->depth &&
			   t->calls[t->depth - 1].sp == mtr_sp_at_entry(regs)) {
			c = t->calls[--t->depth];
			have = !c.nested;
		}
	}
	if (!have)
		goto out;

	if (mtr_leak_api_is_fd(c.api)) {
		switch (mtr_leak_fd_result(&c, ret, keys)) {
		case 2:
			mtr_leak_insert(s, b2, current->tgid, keys[1], &c);
			b2 = NULL;
			fallthrough;
		case 1:
			mtr_leak_insert(s, b, current->tgid, keys[0], &c);
			b = NULL;
		}
		goto out;
	}
	switch (c.api) {
	case MEMTRACK_API_REALLOC:
	case MEMTRACK_API_REALLOCARRAY:
		if (!ret) {
			/* realloc(p, 0) freed p; any other NULL kept it. */
			if (!c.size && c.arg)
				mtr_leak_remove(s, current->tgid, c.arg,
						c.api);
			goto out;
		}
		if (c.arg)
			mtr_leak_remove(s, current->tgid, c.arg, c.api);
		break;
	case MEMTRACK_API_POSIX_MEMALIGN:
		/* Returns 0 and stores the block through its first argument. */
		if (ret || copy_from_user_nofault(&out, (void __user *)c.arg,
						  sizeof(out)))
			goto out;
		addr = out;
		break;
	default:
		break;
	}
	if (addr) {
		mtr_leak_insert(s, b, current->tgid, addr, &c);
		b = NULL;
	}
out:
	spin_unlock(&s->lock);
	if (b)
		kmem_cache_free(mtr_leak_block_cache, b);
	if (b2)
		kmem_cache_free(mtr_leak_block_cache, b2);
	return 0;
}

static bool mtr_leak_filter(MTR_UPROBE_FILTER_PROTO)
{
	struct mtr_leak_probe *p = container_of(uc, struct mtr_leak_probe, uc);
	struct mtr_leak_session *s = p->sess;
	bool ours;

	if (mm == s->mm)
		return true;
	/* A child inherits the breakpoints; this is for what it maps later. */
	if (!(s->flags & MEMTRACK_LEAK_F_CHILDREN))
		return false;
	spin_lock(&s->lock);
	ours = mtr_leak_kid_find(s, 0, mm);
	spin_unlock(&s->lock);
	return ours;
}

/* ---- sessions ----------------------------------------------------------------- */

/* Caller holds mtr_leak_lock. */
static struct mtr_leak_session *mtr_leak_find(pid_t tgid)
{
	struct mtr_leak_session *s;

	list_for_each_entry(s, &mtr_leak_sessions, node)
		if (s->tgid == tgid && !READ_ONCE(s->dead))
			return s;
	return NULL;
}

/*
 * Caller holds mtr_leak_lock.  A session's stacks show where the target
 * allocates: only the user who attached (or a tracer with CAP_SYS_PTRACE)
 * may read or end it.
 */
static struct mtr_leak_session *mtr_leak_find_mine(pid_t tgid, int *err)
{
	struct mtr_leak_session *s = mtr_leak_find(tgid);

	*err = -ENOENT;
	if (!s)
		return NULL;
	if (!uid_eq(current_uid(), s->owner) && !capable(CAP_SYS_PTRACE)) {
		*err = -EPERM;
		return NULL;
	}
	*err = 0;
	return s;
}

/*
 * For readers outside this file (leak_blocks.c): the caller's session with
 * mtr_leak_lock held, so it cannot go away; NULL (lock not held) with *err.
 */
struct mtr_leak_session *mtr_leak_lock_mine(pid_t tgid, int *err)
{
	struct mtr_leak_session *s;

	mutex_lock(&mtr_leak_lock);
	s = mtr_leak_find_mine(tgid, err);
	if (!s)
		mutex_unlock(&mtr_leak_lock);
	return s;
}

void mtr_leak_unlock(void)
{
	mutex_unlock(&mtr_leak_lock);
}

static void mtr_leak_free_tables(struct mtr_leak_session *s)
{
	struct mtr_leak_block *b;
	struct mtr_leak_stack *st;
	struct mtr_leak_thread *t;
	struct hlist_node *tmp;
	unsigned int i;

	for (i = 0; s->blocks && i < (1U << MTR_LEAK_BLOCK_BITS); i++)
		hlist_for_each_entry_safe(b, tmp, &s->blocks[i], hnode)
			kmem_cache_free(mtr_leak_block_cache, b);
	for (i = 0; i < ARRAY_SIZE(s->stacks); i++)
		hlist_for_each_entry_safe(st, tmp, &s->stacks[i], hnode)
			kfree(st);
	for (i = 0; i < ARRAY_SIZE(s->threads); i++)
		hlist_for_each_entry_safe(t, tmp, &s->threads[i], hnode)
			kfree(t);
	kvfree(s->blocks);
}

/* Removes the probes, waits for running handlers, frees the session. */
static void mtr_leak_destroy(struct mtr_leak_session *s)
{
	struct mtr_leak_probe *p;
	unsigned int i;

	for (i = 0; i < s->nr_probes; i++) {
		p = &s->probes[i];
		if (p->registered)
			mtr_uprobe_unregister(&p->handle, p->inode, p->offset,
					      &p->uc);
	}
	mtr_uprobe_unregister_sync();
	for (i = 0; i < s->nr_probes; i++)
		path_put(&s->probes[i].path);
	mtr_leak_unwind_free(s);
	mtr_leak_free_tables(s);
	for (i = 0; i < MTR_LEAK_MAX_CHILDREN; i++)
		if (s->kids[i].mm)
			mmdrop(s->kids[i].mm);
	mmdrop(s->mm);
	kvfree(s);
}

/* Caller holds mtr_leak_lock. */
static void mtr_leak_unlink(struct mtr_leak_session *s)
{
	spin_lock(&mtr_leak_list_lock);
	list_del(&s->node);
	spin_unlock(&mtr_leak_list_lock);
	atomic_dec(&mtr_leak_nr_sessions);
}

/* Caller holds mtr_leak_lock: detach every session marked dead. */
static void mtr_leak_reap_dead(void)
{
	struct mtr_leak_session *s, *tmp;

	list_for_each_entry_safe(s, tmp, &mtr_leak_sessions, node) {
		if (!READ_ONCE(s->dead))
			continue;
		mtr_leak_unlink(s);
		mtr_leak_destroy(s);
	}
}

/* Frees the state of one child that exited or exec'd; false: none left. */
static bool mtr_leak_reap_kid(struct mtr_leak_session *s)
{
	struct mtr_leak_kid *k = NULL;
	struct mtr_leak_thread *t;
	struct mtr_leak_stack *st;
	struct mtr_leak_block *b;
	struct mm_struct *mm;
	struct hlist_node *tmp;
	unsigned int i;

	spin_lock(&s->lock);
	for (i = 0; i < MTR_LEAK_MAX_CHILDREN && !k; i++)
		if (s->kids[i].tgid && s->kids[i].gone)
			k = &s->kids[i];
	if (!k) {
		s->kids_gone = false;
		spin_unlock(&s->lock);
		return false;
	}
	for (i = 0; i < (1U << MTR_LEAK_BLOCK_BITS); i++)
		hlist_for_each_entry_safe(b, tmp, &s->blocks[i], hnode)
			if (b->tgid == k->tgid)
				mtr_leak_block_drop(s, b);
	/* Its blocks are gone, so nothing points to its stacks any more. */
	for (i = 0; i < ARRAY_SIZE(s->stacks); i++)
		hlist_for_each_entry_safe(st, tmp, &s->stacks[i], hnode)
			if (st->tgid == k->tgid) {
				hlist_del(&st->hnode);
				s->st.nr_stacks--;
				kfree(st);
			}
	/* Threads that exec'd are still alive: their calls pointed there. */
	for (i = 0; i < ARRAY_SIZE(s->threads); i++)
		hlist_for_each_entry_safe(t, tmp, &s->threads[i], hnode)
			if (t->tgid == k->tgid) {
				hlist_del(&t->hnode);
				s->nr_threads--;
				kfree(t);
			}
	mm = k->mm;
	k->mm = NULL;
	k->tgid = 0;
	k->gone = false;
	s->st.nr_children--;
	spin_unlock(&s->lock);
	mmdrop(mm);
	return true;
}

static void mtr_leak_reap_fn(struct work_struct *work)
{
	struct mtr_leak_session *s;

	mutex_lock(&mtr_leak_lock);
	mtr_leak_reap_dead();
	list_for_each_entry(s, &mtr_leak_sessions, node)
		while (READ_ONCE(s->kids_gone) && mtr_leak_reap_kid(s))
			;
	mutex_unlock(&mtr_leak_lock);
}

/* Caller holds s->lock: the child @tgid is no longer followed. */
static bool mtr_leak_kid_gone(struct mtr_leak_session *s, pid_t tgid)
{
	struct mtr_leak_kid *k = mtr_leak_kid_find(s, tgid, NULL);

	if (!k)
		return false;
	k->gone = true;
	WRITE_ONCE(s->kids_gone, true);
	return true;
}

/*
 * From hooks that cannot sleep: mark the matching sessions (or the child
 * process of one) to end, reap later.
 */
static void mtr_leak_kill(pid_t tgid, struct net *net, u32 portid)
{
	struct mtr_leak_session *s;
	bool any = false;

	spin_lock(&mtr_leak_list_lock);
	list_for_each_entry(s, &mtr_leak_sessions, node) {
		if (tgid && s->tgid != tgid &&
		    s->flags & MEMTRACK_LEAK_F_CHILDREN) {
			spin_lock(&s->lock);
			any |= mtr_leak_kid_gone(s, tgid);
			spin_unlock(&s->lock);
			continue;
		}
		if (tgid ? s->tgid != tgid :
		    (s->net != net || s->portid != portid))
			continue;
		WRITE_ONCE(s->dead, true);
		any = true;
	}
	spin_unlock(&mtr_leak_list_lock);
	if (any)
		schedule_work(&mtr_leak_reap_work);
}

/* A thread's call state goes with it, so the thread bound is of live ones. */
static void mtr_leak_thread_gone(struct task_struct *task)
{
	struct mtr_leak_thread *t = NULL;
	struct mtr_leak_session *s;

	spin_lock(&mtr_leak_list_lock);
	list_for_each_entry(s, &mtr_leak_sessions, node) {
		spin_lock(&s->lock);
		t = mtr_leak_thread_find(s, task->pid);
		if (t) {
			hlist_del(&t->hnode);
			s->nr_threads--;
		}
		spin_unlock(&s->lock);
		if (t)
			break;
	}
	spin_unlock(&mtr_leak_list_lock);
	kfree(t);
}

void mtr_leak_task_exit(struct task_struct *task)
{
	if (!atomic_read(&mtr_leak_nr_sessions))
		return;
	mtr_leak_thread_gone(task);
	/* Not the last thread yet: the process and its allocator live on. */
	if (!atomic_read(&task->signal->live))
		mtr_leak_kill(task->tgid, NULL, 0);
}

/* The new program has another allocator: the probes mean nothing now. */
void mtr_leak_task_exec(struct task_struct *task)
{
	if (atomic_read(&mtr_leak_nr_sessions))
		mtr_leak_kill(task->tgid, NULL, 0);
}

/*
 * A process forked by one traced with F_CHILDREN is traced too.  It has
 * the parent's breakpoints already (fork copies the patched text pages);
 * its slot is preallocated in the session, as nothing may sleep here.
 * CLONE_VM children (vfork) share the parent's heap and only exec or exit.
 */
void mtr_leak_task_fork(struct task_struct *task, unsigned long clone_flags)
{
	struct mtr_leak_session *s;
	unsigned int i;

	if (!atomic_read(&mtr_leak_nr_sessions) ||
	    clone_flags & (CLONE_THREAD | CLONE_VM) || !task->mm)
		return;
	spin_lock(&mtr_leak_list_lock);
	list_for_each_entry(s, &mtr_leak_sessions, node) {
		if (!(s->flags & MEMTRACK_LEAK_F_CHILDREN) || READ_ONCE(s->dead))
			continue;
		spin_lock(&s->lock);
		if (!mtr_leak_traces(s, current->tgid, current->mm)) {
			spin_unlock(&s->lock);
			continue;
		}
		/* A slot of an exited process with this pid is not reaped yet. */
		for (i = 0; i < MTR_LEAK_MAX_CHILDREN; i++)
			if (!s->kids[i].tgid || s->kids[i].tgid == task->tgid)
				break;
		if (i < MTR_LEAK_MAX_CHILDREN && !s->kids[i].tgid) {
			mmgrab(task->mm);
			s->kids[i].mm = task->mm;
			s->kids[i].tgid = task->tgid;
			s->kids[i].gone = false;
			s->st.nr_children++;
			s->st.children++;
		} else {
			s->st.dropped_children++;
		}
		spin_unlock(&s->lock);
		break;
	}
	spin_unlock(&mtr_leak_list_lock);
}

static int mtr_leak_netlink_event(struct notifier_block *nb,
				  unsigned long event, void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event == NETLINK_URELEASE && n->protocol == NETLINK_GENERIC &&
	    atomic_read(&mtr_leak_nr_sessions))
		mtr_leak_kill(0, n->net, n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block mtr_leak_netlink_nb = {
	.notifier_call = mtr_leak_netlink_event,
};

/*
 * Like ptrace's PTRACE_MODE_REALCREDS check, which modules cannot call:
 * CAP_SYS_PTRACE, or the same real/effective/saved uid and gid as the target
 * and a target that did not become undumpable (setuid, prctl).
 */
static bool mtr_leak_may_trace(struct task_struct *task, struct mm_struct *mm)
{
	const struct cred *cred = current_cred(), *tcred;
	bool ok;

	if (capable(CAP_SYS_PTRACE))
		return true;
	rcu_read_lock();
	tcred = __task_cred(task);
	ok = uid_eq(cred->uid, tcred->uid) && uid_eq(cred->uid, tcred->euid) &&
	     uid_eq(cred->uid, tcred->suid) && gid_eq(cred->gid, tcred->gid) &&
	     gid_eq(cred->gid, tcred->egid) && gid_eq(cred->gid, tcred->sgid);
	rcu_read_unlock();
	return ok && mtr_dumpable_by_owner(task, mm);
}

/* The target's mm, mmgrab()ed, after the permission check. */
static int mtr_leak_target_mm(pid_t tgid, struct mm_struct **out)
{
	struct task_struct *task;
	struct mm_struct *mm;
	int err = 0;

	rcu_read_lock();
	task = pid_task(find_vpid(tgid), PIDTYPE_TGID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task)
		return -ESRCH;
	mm = get_task_mm(task);		/* NULL for kernel threads, zombies */
	if (!mm) {
		err = -ESRCH;
	} else if (!mtr_leak_may_trace(task, mm)) {
		err = -EPERM;
	} else {
		mmgrab(mm);
		*out = mm;
	}
	if (mm)
		mmput(mm);
	put_task_struct(task);
	return err;
}

static int mtr_leak_probe_init(struct mtr_leak_probe *p,
			       const struct mtr_leak_probe_req *r,
			       struct netlink_ext_ack *extack)
{
	int err;

	err = kern_path(r->path, LOOKUP_FOLLOW, &p->path);
	if (err) {
		NL_SET_ERR_MSG(extack, "probe path not found");
		return err;
	}
	p->inode = d_real_inode(p->path.dentry);
	if (!S_ISREG(p->inode->i_mode)) {
		path_put(&p->path);
		NL_SET_ERR_MSG(extack, "probe path is not a regular file");
		return -EINVAL;
	}
	p->offset = r->offset;
	p->api = r->api;
	p->uc.handler = mtr_leak_entry;
	p->uc.filter = mtr_leak_filter;
	/* Frees need no return probe: the argument says everything. */
	if (!mtr_leak_api_frees(r->api))
		p->uc.ret_handler = mtr_leak_return;
	return 0;
}

int mtr_leak_attach(pid_t tgid, const struct mtr_leak_probe_req *req,
		    unsigned int nr, u32 flags, struct net *net, u32 portid,
		    struct netlink_ext_ack *extack)
{
	struct mtr_leak_session *s;
	struct mm_struct *mm;
	unsigned int i;
	int err;

	if (!nr || nr > MTR_LEAK_MAX_PROBES) {
		NL_SET_ERR_MSG(extack, "between 1 and 64 probes needed");
		return -EINVAL;
	}
	err = mtr_leak_target_mm(tgid, &mm);
	if (err) {
		if (err == -EPERM)
			NL_SET_ERR_MSG(extack, "not allowed to trace this process");
		else
			NL_SET_ERR_MSG(extack, "no such user process");
		return err;
	}
	s = kvzalloc(struct_size(s, probes, nr), GFP_KERNEL);
	if (!s) {
		mmdrop(mm);
		return -ENOMEM;
	}
	s->tgid = tgid;
	s->flags = flags;
	s->mm = mm;
	s->net = net;
	s->portid = portid;
	s->owner = current_uid();
	spin_lock_init(&s->lock);
	s->blocks = kvcalloc(1U << MTR_LEAK_BLOCK_BITS, sizeof(*s->blocks),
			     GFP_KERNEL);
	if (!s->blocks) {
		err = -ENOMEM;
		goto free;
	}
	for (i = 0; i < nr; i++) {
		s->probes[i].sess = s;
		err = mtr_leak_probe_init(&s->probes[i], &req[i], extack);
		if (err)
			goto free;
		s->nr_probes++;
	}
	s->st.nr_probes = nr;

	mutex_lock(&mtr_leak_lock);
	/* A session whose end is queued must not hold up its successor. */
	mtr_leak_reap_dead();
	if (mtr_leak_closing) {
		err = -ESHUTDOWN;
	} else if (mtr_leak_find(tgid)) {
		NL_SET_ERR_MSG(extack, "process already traced");
		err = -EBUSY;
	} else if (atomic_read(&mtr_leak_nr_sessions) >= MTR_LEAK_MAX_SESSIONS) {
		NL_SET_ERR_MSG(extack, "too many traced processes");
		err = -ENOSPC;
	}
	if (err) {
		mutex_unlock(&mtr_leak_lock);
		goto free;
	}
	/* Listed first so that an exit or exec during registration is seen. */
	spin_lock(&mtr_leak_list_lock);
	list_add(&s->node, &mtr_leak_sessions);
	spin_unlock(&mtr_leak_list_lock);
	atomic_inc(&mtr_leak_nr_sessions);
	for (i = 0; i < nr; i++) {
		struct mtr_leak_probe *p = &s->probes[i];

		err = mtr_uprobe_register(&p->handle, p->inode, p->offset,
					  &p->uc);
		if (err) {
			NL_SET_ERR_MSG(extack, "registering a uprobe failed");
			break;
		}
		p->registered = true;
	}
	if (err) {
		mtr_leak_unlink(s);
		mtr_leak_destroy(s);
	}
	mutex_unlock(&mtr_leak_lock);
	return err;

free:
	mtr_leak_free_tables(s);
	for (i = 0; i < s->nr_probes; i++)
		path_put(&s->probes[i].path);
	mmdrop(mm);
	kvfree(s);
	return err;
}

int mtr_leak_detach(pid_t tgid)
{
	struct mtr_leak_session *s;
	int err;

	mutex_lock(&mtr_leak_lock);
	s = mtr_leak_find_mine(tgid, &err);
	if (s) {
		mtr_leak_unlink(s);
		mtr_leak_destroy(s);
	}
	mutex_unlock(&mtr_leak_lock);
	return err;
}

int mtr_leak_set_unwind(pid_t tgid, const struct mtr_unwind_chunk *c,
			struct netlink_ext_ack *extack)
{
	struct mtr_leak_session *s;
	int err;

	mutex_lock(&mtr_leak_lock);
	s = mtr_leak_find_mine(tgid, &err);
	if (s)
		err = mtr_leak_unwind_add(s, c, extack);
	else
		NL_SET_ERR_MSG(extack, "process not traced by this user");
	mutex_unlock(&mtr_leak_lock);
	return err;
}

int mtr_leak_get_stats(pid_t tgid, struct memtrack_leak_stats *st)
{
	struct mtr_leak_session *s;
	int err;

	mutex_lock(&mtr_leak_lock);
	s = mtr_leak_find_mine(tgid, &err);
	if (s) {
		spin_lock(&s->lock);
		*st = s->st;
		spin_unlock(&s->lock);
	}
	mutex_unlock(&mtr_leak_lock);
	return err;
}

/*
 * Dumped: stacks holding blocks, and whatever a mismatched free involved
 * (the allocating stack even when its blocks are gone, and the freeing
 * stack, the only kind whose api is a freeing one); with @all, every
 * allocating stack, for the calls it made (total_allocs).
 */
static bool mtr_leak_dumped(const struct mtr_leak_stack *st, bool all)
{
	return st->snap_blocks || st->mismatched ||
	       mtr_leak_api_frees(st->api) || (all && st->total_allocs);
}

/* Caller holds s->lock: per stack, the blocks older than @min_age_ns. */
static size_t mtr_leak_aggregate(struct mtr_leak_session *s, u64 min_age_ns,
				 bool all)
{
	u64 now = ktime_get_ns();
	struct mtr_leak_block *b;
	struct mtr_leak_stack *st;
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(s->stacks); i++)
		hlist_for_each_entry(st, &s->stacks[i], hnode) {
			st->snap_bytes = 0;
			st->snap_blocks = 0;
			st->snap_oldest = U64_MAX;
		}
	for (i = 0; i < (1U << MTR_LEAK_BLOCK_BITS); i++)
		hlist_for_each_entry(b, &s->blocks[i], hnode) {
			st = b->stack;
			if (!st || now - b->time_ns < min_age_ns)
				continue;
			st->snap_bytes += b->size;
			st->snap_blocks++;
			st->snap_oldest = min(st->snap_oldest, b->time_ns);
		}
	for (i = 0; i < ARRAY_SIZE(s->stacks); i++)
		hlist_for_each_entry(st, &s->stacks[i], hnode)
			if (mtr_leak_dumped(st, all))
				len += sizeof(struct memtrack_leak_stack) +
				       st->nr_frames * sizeof(u64);
	return len;
}

int mtr_leak_snapshot(pid_t tgid, u64 min_age_ns, bool all,
		      struct mtr_leak_snap **out)
{
	struct memtrack_leak_stack *rec;
	struct mtr_leak_session *s;
	struct mtr_leak_snap *snap = NULL;
	struct mtr_leak_stack *st;
	size_t len, pos = 0;
	unsigned int i;
	int err = 0;

	mutex_lock(&mtr_leak_lock);
	s = mtr_leak_find_mine(tgid, &err);
	if (!s)
		goto out;
	mtr_leak_fd_validate(s);
	/* Size, allocate (may sleep), fill; retry if it grew in between. */
	for (;;) {
		spin_lock(&s->lock);
		len = mtr_leak_aggregate(s, min_age_ns, all);
		spin_unlock(&s->lock);
		snap = kvmalloc(struct_size(snap, data, len), GFP_KERNEL);
		if (!snap) {
			err = -ENOMEM;
			goto out;
		}
		spin_lock(&s->lock);
		if (mtr_leak_aggregate(s, min_age_ns, all) <= len)
			break;
		spin_unlock(&s->lock);
		kvfree(snap);
	}
	for (i = 0; i < ARRAY_SIZE(s->stacks); i++)
		hlist_for_each_entry(st, &s->stacks[i], hnode) {
			if (!mtr_leak_dumped(st, all))
				continue;
			rec = (void *)&snap->data[pos];
			rec->stack_id = st->id;
			rec->tgid = st->tgid;
			rec->reserved = 0;
			rec->nr_frames = st->nr_frames;
			rec->bytes = st->snap_bytes;
			rec->blocks = st->snap_blocks;
			rec->oldest_ns = st->snap_blocks ? st->snap_oldest : 0;
			rec->api = st->api;
			rec->mismatched = st->mismatched;
			rec->free_api = st->free_api;
			rec->free_stack_id = st->free_stack_id;
			rec->total_allocs = st->total_allocs;
			rec->total_bytes = st->total_bytes;
			memcpy(rec->frames, st->frames,
			       st->nr_frames * sizeof(u64));
			pos += struct_size(rec, frames, st->nr_frames);
		}
	spin_unlock(&s->lock);
	snap->len = pos;
	snap->pos = 0;
	*out = snap;
out:
	mutex_unlock(&mtr_leak_lock);
	return err;
}

int mtr_leak_init(void)
{
	int err;

	mtr_leak_block_cache = KMEM_CACHE(mtr_leak_block, 0);
	if (!mtr_leak_block_cache)
		return -ENOMEM;
	err = mtr_leak_unwind_init();
	if (err)
		goto err_cache;
	err = netlink_register_notifier(&mtr_leak_netlink_nb);
	if (err)
		goto err_unwind;
	return 0;
err_unwind:
	mtr_leak_unwind_exit();
err_cache:
	kmem_cache_destroy(mtr_leak_block_cache);
	return err;
}

/* Before the netlink family goes: no session outlives the module. */
void mtr_leak_exit(void)
{
	struct mtr_leak_session *s, *tmp;

	netlink_unregister_notifier(&mtr_leak_netlink_nb);
	mutex_lock(&mtr_leak_lock);
	mtr_leak_closing = true;
	list_for_each_entry_safe(s, tmp, &mtr_leak_sessions, node) {
		mtr_leak_unlink(s);
		mtr_leak_destroy(s);
	}
	mutex_unlock(&mtr_leak_lock);
	/* Nothing is listed, so the hooks cannot queue it again. */
	cancel_work_sync(&mtr_leak_reap_work);
	mtr_leak_unwind_exit();
	kmem_cache_destroy(mtr_leak_block_cache);
}
