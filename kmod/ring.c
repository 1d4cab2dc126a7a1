// SPDX-License-Identifier: GPL-2.0
/*
 * Records for readers.  Each reader (an opener of /dev/memtrack, or the
 * netlink relay) has a ring per CPU and its own filter.  A probe writes into
 * the rings of its own CPU with interrupts off, so a ring has one producer at
 * a time; the reader, under r->lock, is its one consumer.  head and tail are
 * published with release/acquire as in perf's ring buffer.
 *
 * A record that does not fit is dropped and counted; the count reaches the
 * reader as a LOST record, written ahead of the next record that fits or
 * made up by the reader once the ring is empty.  So for every reader
 * generated = delivered + lost + pending, exactly.
 *
 * Reads merge the CPUs' rings by timestamp: a task's records come out in the
 * order it made them even when it moved between CPUs.
 *
 * Probes never wake a reader: they queue an irq_work, at most one per time
 * the reader went to sleep.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/irq_work.h>
#include <linux/wait.h>
#include <linux/uaccess.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/log2.h>
#include <linux/timekeeping.h>
#include "mtr.h"

struct mtr_ring {
	char *data;
	u32 size;			/* a power of two */
	u64 head;			/* producer */
	u64 tail;			/* consumer */
	u64 generated;			/* producer */
	u64 lost_total;			/* producer */
	atomic64_t lost;		/* dropped, not yet reported */
};

struct mtr_filter {
	struct memtrack_filter f;
	struct rcu_head rcu;
};

struct mtr_reader {
	struct list_head node;		/* mtr_readers, RCU */
	struct mtr_filter __rcu *filter;
	struct mtr_ring *rings;		/* nr_cpu_ids */
	u32 ring_bytes;
	bool all_tasks;			/* may see every task's records */
	kuid_t uid;			/* else only this user's */
	bool sleeping;			/* wants a wakeup */
	wait_queue_head_t wait;
	struct irq_work wake;
	struct mutex lock;		/* the one consumer */
	u64 delivered;
};

unsigned int mtr_ring_kb = MEMTRACK_RING_KB_DEFAULT;

bool mtr_ring_kb_valid(unsigned int kb)
{
	return kb >= MEMTRACK_RING_KB_MIN && kb <= MEMTRACK_RING_KB_MAX &&
	       is_power_of_2(kb);
}
LIST_HEAD(mtr_readers);
DEFINE_STATIC_KEY_FALSE(mtr_readers_on);
static DEFINE_MUTEX(mtr_readers_lock);

static void mtr_ring_copy_in(struct mtr_ring *ring, u64 pos, const void *src,
			     u32 len)
{
	u32 off = pos & (ring->size - 1), first = min(len, ring->size - off);

	memcpy(ring->data + off, src, first);
	memcpy(ring->data, src + first, len - first);
}

static void mtr_ring_write(struct mtr_reader *r, struct memtrack_rec_hdr *h)
{
	struct memtrack_rec_lost lr;
	struct mtr_ring *ring;
	unsigned long flags;
	u64 head, tail, lost;
	u32 need = h->size;

	local_irq_save(flags);
	ring = &r->rings[smp_processor_id()];
	WRITE_ONCE(ring->generated, ring->generated + 1);
	mtr_total_add(records_generated, 1);
	head = ring->head;
	/* Pairs with the reader's release: the space it freed is free. */
	tail = smp_load_acquire(&ring->tail);
	if (atomic64_read(&ring->lost))
		need += sizeof(lr);
	if (head - tail + need > ring->size) {
		atomic64_inc(&ring->lost);
		WRITE_ONCE(ring->lost_total, ring->lost_total + 1);
		mtr_total_add(records_lost, 1);
		local_irq_restore(flags);
		return;
	}
	lost = atomic64_xchg(&ring->lost, 0);
	if (lost) {
		memset(&lr, 0, sizeof(lr));
		lr.h.type = MEMTRACK_REC_LOST;
		lr.h.size = sizeof(lr);
		lr.h.cpu = h->cpu;
		lr.h.time_ns = h->time_ns;
		lr.lost = lost;
		mtr_ring_copy_in(ring, head, &lr, sizeof(lr));
		head += sizeof(lr);
	}
	mtr_ring_copy_in(ring, head, h, h->size);
	/* Pairs with the reader's acquire: it sees the record whole. */
	smp_store_release(&ring->head, head + h->size);
	local_irq_restore(flags);

	/* Orders head before ->sleeping; pairs with mtr_reader_want_wakeup(). */
	smp_mb();
	if (READ_ONCE(r->sleeping))
		irq_work_queue(&r->wake);
}

static const struct memtrack_filter *mtr_filter_of(struct mtr_reader *r)
{
	return &rcu_dereference(r->filter)->f;
}

/* Kernel addresses and physical frames are not for unprivileged readers. */
static void mtr_emit_one(struct mtr_reader *r, struct memtrack_rec_hdr *h)
{
	struct memtrack_rec_kmalloc k;
	struct memtrack_rec_page pg;

	if (r->all_tasks) {
		mtr_ring_write(r, h);
		return;
	}
	switch (h->type) {
	case MEMTRACK_REC_KMALLOC:
	case MEMTRACK_REC_KFREE:
		k = *container_of(h, struct memtrack_rec_kmalloc, h);
		k.call_site = 0;
		k.ptr = 0;
		mtr_ring_write(r, &k.h);
		return;
	case MEMTRACK_REC_PAGE_ALLOC:
	case MEMTRACK_REC_PAGE_FREE:
	case MEMTRACK_REC_PAGE_ALLOC_FAIL:
		pg = *container_of(h, struct memtrack_rec_page, h);
		pg.pfn = 0;
		mtr_ring_write(r, &pg.h);
		return;
	}
	mtr_ring_write(r, h);
}

/* Records about a task of @uid: who may read them follows that uid. */
void mtr_emit_as(struct memtrack_rec_hdr *h, u32 class, kuid_t uid)
{
	const struct memtrack_filter *f;
	struct mtr_reader *r;

	rcu_read_lock();
	list_for_each_entry_rcu(r, &mtr_readers, node) {
		f = mtr_filter_of(r);
		if (!(f->classes & class) ||
		    (f->pid && f->pid != h->pid) ||
		    (f->tgid && f->tgid != h->tgid) ||
		    (!r->all_tasks && !uid_eq(uid, r->uid)))
			continue;
		mtr_emit_one(r, h);
	}
	rcu_read_unlock();
}

/* Called by the event builders (events.c) in task context. */
void mtr_emit(struct memtrack_rec_hdr *h, u32 class)
{
	mtr_emit_as(h, class, current_uid());
}

static void mtr_reader_wake(struct irq_work *work)
{
	struct mtr_reader *r = container_of(work, struct mtr_reader, wake);

	WRITE_ONCE(r->sleeping, false);
	wake_up_interruptible(&r->wait);
}

/* Ask for a wakeup, then look: a record written meanwhile is seen either way. */
void mtr_reader_want_wakeup(struct mtr_reader *r)
{
	WRITE_ONCE(r->sleeping, true);
	/* Orders ->sleeping before reading heads; pairs with mtr_ring_write(). */
	smp_mb();
}

wait_queue_head_t *mtr_reader_waitq(struct mtr_reader *r)
{
	return &r->wait;
}

bool mtr_reader_empty(struct mtr_reader *r)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct mtr_ring *ring = &r->rings[cpu];

		/* Pairs with the producer's release of head. */
		if (smp_load_acquire(&ring->head) != READ_ONCE(ring->tail) ||
		    atomic64_read(&ring->lost))
			return false;
	}
	return true;
}

static void mtr_ring_peek(struct mtr_ring *ring, u64 pos, void *dst, u32 len)
{
	u32 off = pos & (ring->size - 1), first = min(len, ring->size - off);

	memcpy(dst, ring->data + off, first);
	memcpy(dst + first, ring->data, len - first);
}

static int mtr_copy_out(void *kbuf, char __user *ubuf, size_t at,
			const void *src, size_t len)
{
	if (kbuf) {
		memcpy(kbuf + at, src, len);
		return 0;
	}
	return copy_to_user(ubuf + at, src, len) ? -EFAULT : 0;
}

/* Copy one record out of @ring at its tail, the ring's two parts in turn. */
static int mtr_ring_copy_out(struct mtr_ring *ring, u32 len, void *kbuf,
			     char __user *ubuf, size_t at)
{
	u32 off = ring->tail & (ring->size - 1), first = min(len, ring->size - off);
	int err;

	err = mtr_copy_out(kbuf, ubuf, at, ring->data + off, first);
	if (!err)
		err = mtr_copy_out(kbuf, ubuf, at + first, ring->data, len - first);
	return err;
}

/* Drops since the last record, reported once a ring has nothing else. */
static int mtr_report_lost(struct mtr_reader *r, unsigned int cpu, void *kbuf,
			   char __user *ubuf, size_t at)
{
	struct memtrack_rec_lost lr;

	memset(&lr, 0, sizeof(lr));
	lr.lost = atomic64_xchg(&r->rings[cpu].lost, 0);
	if (!lr.lost)
		return 0;
	lr.h.type = MEMTRACK_REC_LOST;
	lr.h.size = sizeof(lr);
	lr.h.cpu = cpu;
	lr.h.time_ns = ktime_get_ns();
	if (mtr_copy_out(kbuf, ubuf, at, &lr, sizeof(lr))) {
		atomic64_add(lr.lost, &r->rings[cpu].lost);
		return -EFAULT;
	}
	return sizeof(lr);
}

/*
 * Copy whole records into kbuf or ubuf, oldest first across CPUs, then the
 * drops not yet reported.  Returns bytes copied; 0 only if the reader has
 * nothing (mtr_reader_empty()); -EINVAL if the next record, or the LOST
 * record, does not fit in an empty buffer.
 */
static ssize_t mtr_reader_copy(struct mtr_reader *r, void *kbuf,
			       char __user *ubuf, size_t len)
{
	struct memtrack_rec_hdr h, best_h;
	struct mtr_ring *ring, *best;
	unsigned int cpu;
	size_t done = 0;
	int n;

	lockdep_assert_held(&r->lock);
	for (;;) {
		best = NULL;
		for_each_possible_cpu(cpu) {
			ring = &r->rings[cpu];
			/* Pairs with the producer's release of head. */
			if (smp_load_acquire(&ring->head) == ring->tail)
				continue;
			mtr_ring_peek(ring, ring->tail, &h, sizeof(h));
			if (!best || h.time_ns < best_h.time_ns) {
				best = ring;
				best_h = h;
			}
		}
		if (!best)
			break;
		if (done + best_h.size > len)
			return done ? done : -EINVAL;
		if (mtr_ring_copy_out(best, best_h.size, kbuf, ubuf, done))
			return done ? done : -EFAULT;
		/* Pairs with the producer's acquire: copied out, reusable. */
		smp_store_release(&best->tail, best->tail + best_h.size);
		done += best_h.size;
		if (best_h.type != MEMTRACK_REC_LOST)
			r->delivered++;
	}
	for_each_possible_cpu(cpu) {
		if (!atomic64_read(&r->rings[cpu].lost))
			continue;
		/* As for a record: a read too short for it is told so. */
		if (done + sizeof(struct memtrack_rec_lost) > len)
			return done ? done : -EINVAL;
		n = mtr_report_lost(r, cpu, kbuf, ubuf, done);
		if (n < 0)
			return done ? done : n;
		done += n;
	}
	return done;
}

size_t mtr_reader_drain(struct mtr_reader *r, void *buf, size_t len)
{
	ssize_t n;

	mutex_lock(&r->lock);
	n = mtr_reader_copy(r, buf, NULL, len);
	mutex_unlock(&r->lock);
	return n > 0 ? n : 0;
}

ssize_t mtr_reader_read_user(struct mtr_reader *r, char __user *buf, size_t len)
{
	ssize_t n;

	if (mutex_lock_interruptible(&r->lock))
		return -ERESTARTSYS;
	n = mtr_reader_copy(r, NULL, buf, len);
	mutex_unlock(&r->lock);
	return n;
}

static bool mtr_filter_valid(const struct memtrack_filter *f)
{
	const u32 high_volume = MEMTRACK_CLASS_PAGE | MEMTRACK_CLASS_KMALLOC;

	if (f->flags || (f->classes & ~MEMTRACK_CLASS_ALL) || f->pid < 0 ||
	    f->tgid < 0)
		return false;
	/* Every page or kmalloc of the machine would drown any reader. */
	return !(f->classes & high_volume) || f->pid || f->tgid;
}

int mtr_reader_set_filter(struct mtr_reader *r, const struct memtrack_filter *f)
{
	struct mtr_filter *nf, *old;

	if (!mtr_filter_valid(f))
		return -EINVAL;
	nf = kzalloc(sizeof(*nf), GFP_KERNEL);
	if (!nf)
		return -ENOMEM;
	nf->f = *f;
	mutex_lock(&r->lock);
	old = rcu_replace_pointer(r->filter, nf, lockdep_is_held(&r->lock));
	mutex_unlock(&r->lock);
	kfree_rcu(old, rcu);
	return 0;
}

void mtr_reader_get_filter(struct mtr_reader *r, struct memtrack_filter *f)
{
	rcu_read_lock();
	*f = *mtr_filter_of(r);
	rcu_read_unlock();
}

void mtr_reader_stats(struct mtr_reader *r, struct memtrack_ring_stats *st)
{
	struct mtr_ring *ring;
	unsigned int cpu;

	memset(st, 0, sizeof(*st));
	mutex_lock(&r->lock);
	st->delivered = r->delivered;
	for_each_possible_cpu(cpu) {
		ring = &r->rings[cpu];
		st->lost += READ_ONCE(ring->lost_total);
		/* Pairs with the producer's release of head. */
		st->pending += smp_load_acquire(&ring->head) - ring->tail;
		st->generated += READ_ONCE(ring->generated);
	}
	mutex_unlock(&r->lock);
	st->ring_bytes = r->ring_bytes;
	st->nr_cpus = num_possible_cpus();
}

static void mtr_reader_free(struct mtr_reader *r)
{
	unsigned int cpu;

	if (r->rings)
		for_each_possible_cpu(cpu)
			vfree(r->rings[cpu].data);
	kfree(r->rings);
	kfree(rcu_dereference_protected(r->filter, 1));
	kfree(r);
}

/* A reader with the default filter, seeing what its creator may see. */
struct mtr_reader *mtr_reader_create(size_t ring_bytes)
{
	struct mtr_filter *f;
	struct mtr_reader *r;
	unsigned int cpu;

	ring_bytes = roundup_pow_of_two(ring_bytes);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!r || !f) {
		kfree(r);
		kfree(f);
		return NULL;
	}
	f->f.classes = MEMTRACK_CLASS_DEFAULT;
	RCU_INIT_POINTER(r->filter, f);
	r->ring_bytes = ring_bytes;
	r->all_tasks = capable(CAP_SYS_ADMIN) || capable(CAP_SYS_PTRACE);
	r->uid = current_uid();
	init_waitqueue_head(&r->wait);
	init_irq_work(&r->wake, mtr_reader_wake);
	mutex_init(&r->lock);
	r->rings = kcalloc(nr_cpu_ids, sizeof(*r->rings), GFP_KERNEL);
	if (!r->rings)
		goto fail;
	for_each_possible_cpu(cpu) {
		r->rings[cpu].size = ring_bytes;
		r->rings[cpu].data = vmalloc_node(ring_bytes, cpu_to_node(cpu));
		if (!r->rings[cpu].data)
			goto fail;
	}
	mutex_lock(&mtr_readers_lock);
	list_add_tail_rcu(&r->node, &mtr_readers);
	static_branch_inc(&mtr_readers_on);
	mutex_unlock(&mtr_readers_lock);
	return r;
fail:
	mtr_reader_free(r);
	return NULL;
}

/* After the grace period no probe writes to it; then no wakeup is pending. */
void mtr_reader_destroy(struct mtr_reader *r)
{
	mutex_lock(&mtr_readers_lock);
	static_branch_dec(&mtr_readers_on);
	list_del_rcu(&r->node);
	mutex_unlock(&mtr_readers_lock);
	synchronize_rcu();
	irq_work_sync(&r->wake);
	mtr_reader_free(r);
}
