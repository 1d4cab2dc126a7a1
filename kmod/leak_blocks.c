// SPDX-License-Identifier: GPL-2.0
/*
 * LEAK_BLOCKS: every outstanding block of a session, for memtrack-leak's
 * --scan, which needs the blocks themselves (not per-stack sums) to look
 * for pointers to them in the target's memory.
 */
#include <linux/slab.h>
#include <linux/overflow.h>
#include "mtr.h"
#include "leak.h"

/* Caller holds s->lock. */
static size_t mtr_leak_blocks_fill(struct mtr_leak_session *s,
				   struct mtr_leak_snap *snap, size_t max)
{
	struct memtrack_leak_block *rec = (void *)snap->data;
	struct mtr_leak_block *b;
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < (1U << MTR_LEAK_BLOCK_BITS); i++)
		hlist_for_each_entry(b, &s->blocks[i], hnode) {
			/* Memory of the target itself: what --scan reads. */
			if (mtr_leak_is_fd_key(b->addr) || b->tgid != s->tgid)
				continue;
			/* outstanding_blocks counts more: never true */
			if (n == max)
				return n;
			rec[n].addr = b->addr;
			rec[n].size = b->size;
			rec[n].time_ns = b->time_ns;
			rec[n].stack_id = b->stack ? b->stack->id : 0;
			rec[n].api = b->api;
			n++;
		}
	return n;
}

int mtr_leak_blocks_snapshot(pid_t tgid, struct mtr_leak_snap **out)
{
	struct mtr_leak_snap *snap;
	struct mtr_leak_session *s;
	size_t n;
	int err;

	s = mtr_leak_lock_mine(tgid, &err);
	if (!s)
		return err;
	/*
	 * Size, allocate outside the spinlock (may sleep), fill; retry if the
	 * table grew in between.  The table's bound bounds the allocation.
	 */
	for (;;) {
		spin_lock(&s->lock);
		n = s->st.outstanding_blocks;
		spin_unlock(&s->lock);
		snap = kvmalloc(struct_size(snap, data,
					    n * sizeof(struct memtrack_leak_block)),
				GFP_KERNEL);
		if (!snap) {
			err = -ENOMEM;
			goto out;
		}
		spin_lock(&s->lock);
		if (s->st.outstanding_blocks <= n)
			break;
		spin_unlock(&s->lock);
		kvfree(snap);
	}
	n = mtr_leak_blocks_fill(s, snap, n);
	spin_unlock(&s->lock);
	snap->len = n * sizeof(struct memtrack_leak_block);
	snap->pos = 0;
	*out = snap;
out:
	mtr_leak_unlock();
	return err;
}
