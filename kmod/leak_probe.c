// SPDX-License-Identifier: GPL-2.0
/*
 * The leak tracer's uprobe handlers: at an allocator's entry, what the call
 * asks for and the call stack; at its return, the block it handed out; at
 * a free's entry, the block it releases.  They record into the session's
 * tables (leak_table.c).
 *
 * Probes are shared with every process that maps the same library, so the
 * consumers' filter puts the breakpoint only into the target's mm, and the
 * handlers check the caller again.  Handlers run in the probed thread's
 * context; they take only the session's spinlock and allocate only with
 * GFP_NOWAIT, within the bounds in leak.h, so a traced process can never
 * make the module sleep on memory or grow it without limit.
 *
 * Apart from the sessions (leak_session.c) because these run in the traced
 * process, in no sleeping context, and the sessions only install them.
 */
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>
#include "leak.h"
#include "arch.h"

/* The session this probe hit belongs to, if current is traced by it. */
static struct mtr_leak_session *mtr_leak_current(struct uprobe_consumer *uc)
{
	struct mtr_leak_probe *p = container_of(uc, struct mtr_leak_probe, uc);
	struct mtr_leak_session *s = p->sess;
	bool ours;

	if (READ_ONCE(s->dead) || READ_ONCE(s->ended))
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
	unsigned long fault;
	u32 nr, hash;

	/* A page of CFI not there yet cuts this one: it is rare. */
	nr = mtr_leak_unwind_user(s, regs, 0, frames, &fault);
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

/*
 * A stack whose walk met a page of CFI the target never touched (its
 * .eh_frame is read in place, leak_ehframe.c) is completed before the
 * thread goes back to user space: by a task work, in the thread's own
 * context where faulting its own pages in is what the program would do
 * itself, not in the probe, which must not sleep.  The call has not started
 * then: its caller's frames are as the probe saw them.  Not its registers:
 * the probed instruction may have been emulated (a push moves sp), so the
 * walk starts from the probe's copy.
 */
struct mtr_leak_refill {
	struct callback_head cb;
	struct mtr_leak_session *s;
	struct pt_regs regs;		/* at the call's entry */
	/* Its return address: the uretprobe put its trampoline there since. */
	unsigned long ra;
	u32 api;
};

/* Pages faulted in for one stack at most: a frame may need 3 or 4. */
#define MTR_LEAK_REFILL_FAULTS	64

static void mtr_leak_refill_fn(struct callback_head *cb)
{
	struct mtr_leak_refill *r = container_of(cb, struct mtr_leak_refill, cb);
	struct mtr_leak_session *s = r->s;
	unsigned long sp = mtr_sp(&r->regs);
	struct mtr_leak_stack *fresh;
	struct mtr_leak_thread *t;
	struct mtr_leak_call *c;
	u64 frames[MEMTRACK_LEAK_MAX_FRAMES];
	unsigned long fault;
	u32 nr, hash, faults = 0;
	u8 byte;

	/* Run at exit instead (a fatal signal came first): nothing to do. */
	if (current->flags & PF_EXITING)
		goto out;
	for (;;) {
		nr = mtr_leak_unwind_user(s, &r->regs, r->ra, frames, &fault);
		if (!fault || faults == MTR_LEAK_REFILL_FAULTS ||
		    copy_from_user(&byte, (const void __user *)fault, 1))
			break;
		faults++;
	}
	hash = mtr_leak_stack_hash(current->tgid, r->api, frames, nr);
	fresh = kmalloc(struct_size(fresh, frames, nr), GFP_KERNEL);
	spin_lock(&s->lock);
	s->st.unwind_faults += faults;
	t = mtr_leak_thread_find(s, current->pid);
	if (t && t->depth && t->depth <= MTR_LEAK_MAX_DEPTH) {
		c = &t->calls[t->depth - 1];
		if (c->sp == sp && !c->nested && !c->stack)
			c->stack = mtr_leak_stack_get(s, hash, current->tgid,
						      r->api, frames, nr,
						      &fresh);
	}
	spin_unlock(&s->lock);
	kfree(fresh);
out:
	kfree(r);
	/* Last: the session may be freed as soon as this reaches zero. */
	if (atomic_dec_and_test(&s->refills))
		wake_up_var(&s->refills);
}

/* Have the stack of this call taken again after faulting; false: cannot. */
static bool mtr_leak_refill(struct mtr_leak_session *s, u32 api,
			    struct pt_regs *regs, unsigned long ra)
{
	struct mtr_leak_refill *r;

	r = kmalloc(sizeof(*r), GFP_NOWAIT | __GFP_NOWARN);
	if (!r)
		return false;
	r->s = s;
	r->regs = *regs;
	r->ra = ra;
	r->api = api;
	init_task_work(&r->cb, mtr_leak_refill_fn);
	atomic_inc(&s->refills);
	if (task_work_add(current, &r->cb, TWA_RESUME)) {
		atomic_dec(&s->refills);	/* the session's probes are in */
		kfree(r);
		return false;
	}
	return true;
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
	unsigned long fault;
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
		nr = mtr_leak_unwind_user(s, regs, 0, frames, &fault);
		/* The refill sets c.stack before the call goes on. */
		if (fault && mtr_leak_refill(s, p->api, regs, frames[0])) {
			spin_lock(&s->lock);
			goto push;
		}
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
push:
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
	if (p->api == MEMTRACK_API_PIPE || p->api == MEMTRACK_API_SOCKETPAIR)
		b2 = mtr_leak_block_alloc();

	spin_lock(&s->lock);
	/* A block freed before, most often: the slab only when none is left. */
	b = mtr_leak_block_spare(s);
	if (!b) {
		spin_unlock(&s->lock);
		b = mtr_leak_block_alloc();
		spin_lock(&s->lock);
	}
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
	if (b)
		mtr_leak_block_recycle(s, b);
	spin_unlock(&s->lock);
	if (b2)
		mtr_leak_block_free(b2);
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

/* The handlers of probe @p, whose api is set. */
void mtr_leak_probe_handlers(struct mtr_leak_probe *p)
{
	p->uc.handler = mtr_leak_entry;
	p->uc.filter = mtr_leak_filter;
	/* Frees need no return probe: the argument says everything. */
	if (!mtr_leak_api_frees(p->api))
		p->uc.ret_handler = mtr_leak_return;
}
