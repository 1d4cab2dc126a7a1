// SPDX-License-Identifier: GPL-2.0
/*
 * LEAK_STACKS: per allocating stack of a session, the blocks outstanding
 * (older than a minimum age), for memtrack-leak's report.  The whole answer
 * is taken in one pass under the session's lock.
 *
 * Apart from the sessions like LEAK_BLOCKS (leak_blocks.c): a reader of the
 * tables at report time, which first drops the descriptors the process
 * closed unseen (leak_fd.c).
 */
#include <linux/ktime.h>
#include <linux/kernel.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include "leak.h"

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

	s = mtr_leak_lock_mine(tgid, &err);
	if (!s)
		return err;
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
	mtr_leak_unlock();
	return err;
}
