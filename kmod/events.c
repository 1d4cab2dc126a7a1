// SPDX-License-Identifier: GPL-2.0
/*
 * Building records in the probes.  Each builder returns at once when nobody
 * reads, so the hooks cost nothing more than their counting then.  Records
 * are built on the stack and copied into each reader's ring by mtr_emit();
 * only task context has a task to attribute a record to.
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/cred.h>
#include <linux/timekeeping.h>
#include <linux/string.h>
#include "mtr.h"

static void mtr_rec_init(struct memtrack_rec_hdr *h, u16 type, u16 size)
{
	h->type = type;
	h->size = size;
	h->cpu = raw_smp_processor_id();
	h->time_ns = ktime_get_ns();
	h->pid = current->pid;
	h->tgid = current->tgid;
}

#define MTR_REC_INIT(rec, type) do {					\
	BUILD_BUG_ON(sizeof(rec) % 8);					\
	memset(&(rec), 0, sizeof(rec));					\
	mtr_rec_init(&(rec).h, (type), sizeof(rec));			\
} while (0)

void mtr_ev_task_new(struct task_struct *task, unsigned long clone_flags)
{
	struct memtrack_rec_task_new r;

	if (!mtr_ev_wanted())
		return;
	MTR_REC_INIT(r, MEMTRACK_REC_TASK_NEW);
	r.h.pid = task->pid;
	r.h.tgid = task->tgid;
	r.parent_pid = current->pid;
	r.uid = from_kuid_munged(&init_user_ns, task_uid(task));
	r.clone_flags = clone_flags;
	strscpy(r.comm, task->comm, sizeof(r.comm));
	mtr_emit(&r.h, MEMTRACK_CLASS_TASK);
}

/*
 * A thread's final counters; when it was the process's last thread, the
 * process's, which its threads folded into proc->dead.
 */
void mtr_ev_task_exit(struct mtr_thread *t, struct task_struct *task,
		      bool process_exit)
{
	struct memtrack_rec_task_exit r;
	struct mtr_proc *p = t->proc;

	BUILD_BUG_ON(ARRAY_SIZE(r.counters) != MTR_NR_COUNTERS);
	if (!mtr_ev_wanted())
		return;
	MTR_REC_INIT(r, MEMTRACK_REC_TASK_EXIT);
	r.uid = from_kuid_munged(&init_user_ns, task_uid(task));
	r.process_exit = process_exit;
	strscpy(r.comm, task->comm, sizeof(r.comm));
	spin_lock(&p->lock);
	mtr_mm_to_abi(&p->exit_mm, &r.mm);
	memcpy(r.counters, process_exit ? p->dead : t->c, sizeof(r.counters));
	spin_unlock(&p->lock);
	mtr_emit(&r.h, MEMTRACK_CLASS_TASK);
}

void mtr_ev_map(u16 type, unsigned long addr, unsigned long len,
		unsigned long prot, unsigned long flags)
{
	struct memtrack_rec_map r;

	if (!mtr_ev_wanted())
		return;
	MTR_REC_INIT(r, type);
	r.addr = addr;
	r.len = len;
	r.prot = prot;
	r.flags = flags;
	mtr_emit(&r.h, MEMTRACK_CLASS_MMAP);
}

void mtr_ev_mremap(unsigned long old_addr, unsigned long old_len,
		   unsigned long new_addr, unsigned long new_len)
{
	struct memtrack_rec_mremap r;

	if (!mtr_ev_wanted())
		return;
	MTR_REC_INIT(r, MEMTRACK_REC_MREMAP);
	r.old_addr = old_addr;
	r.old_len = old_len;
	r.new_addr = new_addr;
	r.new_len = new_len;
	mtr_emit(&r.h, MEMTRACK_CLASS_MMAP);
}

void mtr_ev_brk(unsigned long old_brk, unsigned long new_brk)
{
	struct memtrack_rec_brk r;

	if (!mtr_ev_wanted())
		return;
	MTR_REC_INIT(r, MEMTRACK_REC_BRK);
	r.old_brk = old_brk;
	r.new_brk = new_brk;
	mtr_emit(&r.h, MEMTRACK_CLASS_MMAP);
}

void mtr_ev_shm(u32 op, int shmid, unsigned long addr, unsigned long size)
{
	struct memtrack_rec_shm r;

	if (!mtr_ev_wanted())
		return;
	MTR_REC_INIT(r, MEMTRACK_REC_SHM);
	r.op = op;
	r.shmid = shmid;
	r.addr = addr;
	r.size = size;
	mtr_emit(&r.h, MEMTRACK_CLASS_SHM);
}

void mtr_ev_oom(struct task_struct *victim, unsigned long rss_pages)
{
	struct memtrack_rec_oom r;

	if (!mtr_ev_wanted())
		return;
	MTR_REC_INIT(r, MEMTRACK_REC_OOM_VICTIM);
	r.victim_pid = victim->pid;
	r.victim_tgid = victim->tgid;
	r.victim_uid = from_kuid_munged(&init_user_ns, task_uid(victim));
	r.victim_rss = (u64)rss_pages << PAGE_SHIFT;
	strscpy(r.victim_comm, victim->comm, sizeof(r.victim_comm));
	mtr_emit(&r.h, MEMTRACK_CLASS_OOM);
}

void mtr_ev_reclaim(u64 duration_ns, unsigned long nr_reclaimed)
{
	struct memtrack_rec_reclaim r;

	if (!mtr_ev_wanted())
		return;
	MTR_REC_INIT(r, MEMTRACK_REC_RECLAIM_STALL);
	r.duration_ns = duration_ns;
	r.nr_reclaimed = nr_reclaimed;
	mtr_emit(&r.h, MEMTRACK_CLASS_RECLAIM);
}

void mtr_ev_page(u16 type, struct page *page, unsigned int order, gfp_t gfp)
{
	struct memtrack_rec_page r;

	MTR_REC_INIT(r, type);
	r.pfn = page ? page_to_pfn(page) : ~0ULL;
	r.order = order;
	r.gfp = (__force u32)gfp;
	mtr_emit(&r.h, type == MEMTRACK_REC_PAGE_ALLOC_FAIL ?
		 MEMTRACK_CLASS_ALLOC_FAIL : MEMTRACK_CLASS_PAGE);
}

/* From the sampler's worker: the record is about @p, not current. */
void mtr_ev_rss(struct mtr_proc *p, unsigned long rss, unsigned long prev,
		u64 window_ns)
{
	struct memtrack_rec_rss r;

	MTR_REC_INIT(r, MEMTRACK_REC_RSS_GROWTH);
	r.h.pid = p->tgid;
	r.h.tgid = p->tgid;
	r.rss = (u64)rss << PAGE_SHIFT;
	r.prev_rss = (u64)prev << PAGE_SHIFT;
	r.window_ns = window_ns;
	mtr_emit_as(&r.h, MEMTRACK_CLASS_RSS, p->uid);
}

void mtr_ev_kmalloc(u16 type, unsigned long call_site, const void *ptr,
		    size_t bytes_req, size_t bytes_alloc, gfp_t gfp)
{
	struct memtrack_rec_kmalloc r;

	MTR_REC_INIT(r, type);
	r.call_site = call_site;
	r.ptr = (unsigned long)ptr;
	r.bytes_req = bytes_req;
	r.bytes_alloc = bytes_alloc;
	r.gfp = (__force u32)gfp;
	mtr_emit(&r.h, MEMTRACK_CLASS_KMALLOC);
}
