// SPDX-License-Identifier: GPL-2.0
/*
 * The task table: an entry per thread and one per process.
 *
 * Threads are found by tid under RCU from the probes.  A thread's counters
 * have a single writer, the thread itself, so probes add without atomics.
 * When a thread exits its counters are folded into its process under
 * proc->lock, so a process row is always dead + live threads, never both.
 * Exited entries stay listed for the retention time, then the reaper frees
 * them after an RCU grace period.
 *
 * Lock order: mtr_table_lock, then proc->lock, then task_lock().  t->pid is
 * only dereferenced under proc->lock because exec may replace it.
 */
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include <linux/pid.h>
#include <linux/cred.h>
#include <linux/timekeeping.h>
#include <linux/string.h>
#include <linux/stringify.h>
#include "mtr.h"

DEFINE_HASHTABLE(mtr_thread_hash, MTR_HASH_BITS);
DEFINE_PER_CPU(struct mtr_thread *, mtr_thread_last);
static DEFINE_HASHTABLE(mtr_proc_hash, MTR_HASH_BITS);
LIST_HEAD(mtr_thread_list);
LIST_HEAD(mtr_proc_list);
static DEFINE_SPINLOCK(mtr_table_lock);
static struct kmem_cache *mtr_thread_cache, *mtr_proc_cache;

static atomic_t mtr_nr_threads, mtr_nr_threads_exited;
static atomic_t mtr_nr_procs, mtr_nr_procs_exited;
static atomic64_t mtr_untracked;

#define MEMTRACK_COUNTER(id, name, ...) __stringify(name),
const char *const mtr_counter_names[MTR_NR_COUNTERS] = {
#include <uapi/linux/memtrack_counters.h>
};
#undef MEMTRACK_COUNTER

static struct mtr_proc *mtr_proc_find(pid_t tgid)
{
	struct mtr_proc *p;

	hash_for_each_possible_rcu(mtr_proc_hash, p, hnode, tgid)
		if (p->tgid == tgid && !READ_ONCE(p->exit_ns))
			return p;
	return NULL;
}

/*
 * Whether @node is still the list node of the entry for @id, live or exited
 * but not reaped.  RCU.  A dump resumes after such a node without walking
 * the list from its head again.
 */
bool mtr_proc_listed(pid_t tgid, const struct list_head *node)
{
	struct mtr_proc *p;

	hash_for_each_possible_rcu(mtr_proc_hash, p, hnode, tgid)
		if (&p->node == node)
			return true;
	return false;
}

bool mtr_thread_listed(pid_t tid, const struct list_head *node)
{
	struct mtr_thread *t;

	hash_for_each_possible_rcu(mtr_thread_hash, t, hnode, tid)
		if (&t->node == node)
			return true;
	return false;
}

static struct mtr_proc *mtr_proc_alloc(struct task_struct *task, gfp_t gfp)
{
	struct mtr_proc *p = kmem_cache_zalloc(mtr_proc_cache, gfp);

	if (!p)
		return NULL;
	spin_lock_init(&p->lock);
	INIT_LIST_HEAD(&p->threads);
	p->tgid = task->tgid;
	rcu_read_lock();
	p->uid = task_uid(task);
	rcu_read_unlock();
	/* Faults of threads that died before we saw the process. */
	p->dead[MTR_C_MIN_FLT] = READ_ONCE(task->signal->min_flt);
	p->dead[MTR_C_MAJ_FLT] = READ_ONCE(task->signal->maj_flt);
	return p;
}

/*
 * Start tracking @task.  Called from the fork probe (GFP_NOWAIT) and from the
 * scan of tasks that existed at load.  A task already tracked is left alone.
 */
void mtr_track_task(struct task_struct *task, gfp_t gfp)
{
	bool leader = thread_group_leader(task);
	struct mtr_proc *p, *spare = NULL;
	struct mtr_thread *t;

	t = kmem_cache_zalloc(mtr_thread_cache, gfp);
	if (!t)
		goto untracked;
	rcu_read_lock();
	if (leader || !mtr_proc_find(task->tgid))
		spare = mtr_proc_alloc(task, gfp);
	rcu_read_unlock();

	spin_lock(&mtr_table_lock);
	if (mtr_thread_find(task->pid)) {
		spin_unlock(&mtr_table_lock);
		goto out_free;
	}
	p = leader ? NULL : mtr_proc_find(task->tgid);
	if (!p) {
		if (!spare) {
			spin_unlock(&mtr_table_lock);
			goto untracked_free;
		}
		p = spare;
		spare = NULL;
		hash_add_rcu(mtr_proc_hash, &p->hnode, p->tgid);
		list_add_tail_rcu(&p->node, &mtr_proc_list);
		atomic_inc(&mtr_nr_procs);
	}
	t->proc = p;
	t->tid = task->pid;
	t->pid = get_pid(task_pid(task));
	strscpy(t->comm, task->comm, sizeof(t->comm));
	spin_lock(&p->lock);
	list_add_tail(&t->sibling, &p->threads);
	p->nr_live++;
	spin_unlock(&p->lock);
	hash_add_rcu(mtr_thread_hash, &t->hnode, t->tid);
	list_add_tail_rcu(&t->node, &mtr_thread_list);
	atomic_inc(&mtr_nr_threads);
	spin_unlock(&mtr_table_lock);
	if (spare)
		kmem_cache_free(mtr_proc_cache, spare);
	return;

untracked_free:
	atomic64_inc(&mtr_untracked);
out_free:
	kmem_cache_free(mtr_thread_cache, t);
	if (spare)
		kmem_cache_free(mtr_proc_cache, spare);
	return;
untracked:
	atomic64_inc(&mtr_untracked);
}

/*
 * @t's thread has exited (@task is it, in its exit path) or vanished without
 * us seeing the exit (@task NULL: its last counters stand).  Idempotent.
 * True when it was the last thread of its process.
 */
bool mtr_thread_exit(struct mtr_thread *t, struct task_struct *task)
{
	bool last = false;
	struct mtr_proc *p = t->proc;
	u64 now = ktime_get_ns();
	int i;

	if (task) {
		WRITE_ONCE(t->c[MTR_C_MIN_FLT], task->min_flt);
		WRITE_ONCE(t->c[MTR_C_MAJ_FLT], task->maj_flt);
		strscpy(t->comm, task->comm, sizeof(t->comm));
	}
	spin_lock(&p->lock);
	if (t->exit_ns) {
		spin_unlock(&p->lock);
		return false;
	}
	for (i = 0; i < MTR_NR_COUNTERS; i++)
		p->dead[i] += READ_ONCE(t->c[i]);
	WRITE_ONCE(t->exit_ns, now);
	atomic_inc(&mtr_nr_threads_exited);
	if (--p->nr_live == 0) {
		memcpy(p->comm, t->comm, sizeof(p->comm));
		WRITE_ONCE(p->exit_ns, now);
		atomic_inc(&mtr_nr_procs_exited);
		last = true;
	}
	spin_unlock(&p->lock);
	return last;
}

/*
 * A non-leader thread that execs takes over the leader's tid (the leader has
 * already exited by then).  Move its entry to the new tid and struct pid.
 * Readers walking the old hash chain may miss an entry for this instant; they
 * cannot crash, since the node stays valid.
 */
void mtr_thread_exec(struct task_struct *task, pid_t old_tid)
{
	struct pid *old = NULL;
	struct mtr_thread *t;

	if (old_tid == task->pid)
		return;
	spin_lock(&mtr_table_lock);
	t = mtr_thread_find(old_tid);
	if (t) {
		hash_del_rcu(&t->hnode);
		WRITE_ONCE(t->tid, task->pid);	/* mtr_current_task() reads it */
		hash_add_rcu(mtr_thread_hash, &t->hnode, t->tid);
		spin_lock(&t->proc->lock);
		old = t->pid;
		t->pid = get_pid(task_pid(task));
		spin_unlock(&t->proc->lock);
	}
	spin_unlock(&mtr_table_lock);
	put_pid(old);
}

static void mtr_thread_free_rcu(struct rcu_head *rcu)
{
	struct mtr_thread *t = container_of(rcu, struct mtr_thread, rcu);

	put_pid(t->pid);
	kmem_cache_free(mtr_thread_cache, t);
}

static void mtr_proc_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(mtr_proc_cache, container_of(rcu, struct mtr_proc, rcu));
}

/*
 * Every exited thread out of every CPU's last-found slot, before a reaper
 * pass frees any: a thread the pass frees exited before the pass read its
 * clock (mtr_expired()), so before this sweep.  No probe puts an exited
 * thread back (it caches live ones only), and one that read it from a slot
 * is in an RCU read-side section, which the free waits for.  Once a pass,
 * not once a thread: a machine may have many possible CPUs.
 */
static void mtr_thread_last_sweep(void)
{
	struct mtr_thread *t, **slot;
	int cpu;

	for_each_possible_cpu(cpu) {
		slot = per_cpu_ptr(&mtr_thread_last, cpu);
		t = READ_ONCE(*slot);
		if (t && READ_ONCE(t->exit_ns))
			cmpxchg(slot, t, NULL);
	}
}

static bool mtr_thread_gone(struct mtr_thread *t)
{
	bool gone;

	spin_lock(&t->proc->lock);
	rcu_read_lock();
	gone = !pid_task(t->pid, PIDTYPE_PID);
	rcu_read_unlock();
	spin_unlock(&t->proc->lock);
	return gone;
}

/*
 * Tasks exit while a pass runs, after it read the clock: their exit_ns is
 * later than now, and an unsigned now - exit_ns would wrap and free them at
 * once.
 */
static bool mtr_expired(u64 exit_ns, u64 now, u64 retention)
{
	return (s64)(now - exit_ns) >= (s64)retention;
}

/*
 * Free entries whose retention has passed, and mark exited the live entries
 * whose task is gone without our exit probe seeing it (a task that exited
 * while the load-time scan was adding it).
 */
void mtr_table_reap(u64 now, u64 retention)
{
	struct mtr_thread *t, *tn;
	struct mtr_proc *p, *pn;
	u64 exit_ns;
	bool empty;

	spin_lock(&mtr_table_lock);
	mtr_thread_last_sweep();
	list_for_each_entry_safe(t, tn, &mtr_thread_list, node) {
		exit_ns = READ_ONCE(t->exit_ns);
		if (!exit_ns) {
			if (mtr_thread_gone(t))
				mtr_thread_exit(t, NULL);
			continue;
		}
		if (!mtr_expired(exit_ns, now, retention))
			continue;
		hash_del_rcu(&t->hnode);
		list_del_rcu(&t->node);
		spin_lock(&t->proc->lock);
		list_del(&t->sibling);
		spin_unlock(&t->proc->lock);
		atomic_dec(&mtr_nr_threads);
		atomic_dec(&mtr_nr_threads_exited);
		call_rcu(&t->rcu, mtr_thread_free_rcu);
	}
	list_for_each_entry_safe(p, pn, &mtr_proc_list, node) {
		exit_ns = READ_ONCE(p->exit_ns);
		if (!exit_ns || !mtr_expired(exit_ns, now, retention))
			continue;
		spin_lock(&p->lock);
		empty = list_empty(&p->threads);
		spin_unlock(&p->lock);
		if (!empty)
			continue;
		hash_del_rcu(&p->hnode);
		list_del_rcu(&p->node);
		atomic_dec(&mtr_nr_procs);
		atomic_dec(&mtr_nr_procs_exited);
		call_rcu(&p->rcu, mtr_proc_free_rcu);
	}
	spin_unlock(&mtr_table_lock);
}

/*
 * Add the tasks that existed before load.  The fork and exit probes are
 * already attached, so nothing born after this walk is missed, and a task
 * exiting during it is caught by the reaper's sweep.
 */
int mtr_table_scan_existing(void)
{
	struct task_struct *g, *task;

	rcu_read_lock();
	for_each_process_thread(g, task) {
		if ((task->flags & PF_EXITING) || task->exit_state)
			continue;
		mtr_track_task(task, GFP_ATOMIC | __GFP_NOWARN);
	}
	rcu_read_unlock();
	return 0;
}

void mtr_table_stats(struct mtr_table_stats *st)
{
	st->threads = atomic_read(&mtr_nr_threads);
	st->threads_exited = atomic_read(&mtr_nr_threads_exited);
	st->procs = atomic_read(&mtr_nr_procs);
	st->procs_exited = atomic_read(&mtr_nr_procs_exited);
	st->untracked = atomic64_read(&mtr_untracked);
	st->bytes = st->threads * kmem_cache_size(mtr_thread_cache) +
		    st->procs * kmem_cache_size(mtr_proc_cache) +
		    sizeof(mtr_thread_hash) + sizeof(mtr_proc_hash);
}

int mtr_table_init(void)
{
	mtr_thread_cache = KMEM_CACHE(mtr_thread, 0);
	mtr_proc_cache = KMEM_CACHE(mtr_proc, 0);
	if (!mtr_thread_cache || !mtr_proc_cache) {
		kmem_cache_destroy(mtr_thread_cache);
		kmem_cache_destroy(mtr_proc_cache);
		return -ENOMEM;
	}
	return 0;
}

/* Called once no probe, reader or reaper can reach the table. */
void mtr_table_exit(void)
{
	struct mtr_thread *t, *tn;
	struct mtr_proc *p, *pn;

	list_for_each_entry_safe(t, tn, &mtr_thread_list, node) {
		list_del(&t->node);
		put_pid(t->pid);
		kmem_cache_free(mtr_thread_cache, t);
	}
	list_for_each_entry_safe(p, pn, &mtr_proc_list, node) {
		list_del(&p->node);
		kmem_cache_free(mtr_proc_cache, p);
	}
	/* Wait for the reaper's call_rcu() callbacks before the caches go. */
	rcu_barrier();
	kmem_cache_destroy(mtr_thread_cache);
	kmem_cache_destroy(mtr_proc_cache);
}
