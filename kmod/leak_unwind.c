// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks of code built without frame pointers, from what LEAK_UNWIND
 * gave per executable mapping of the target: the address of its
 * .eh_frame_hdr, whose rules the module reads itself (leak_ehframe.c), or a
 * table of rows user space derived from its .debug_frame.
 *
 * A session holds, per executable mapping, a sorted array of compact rows
 * (struct memtrack_unwind_row) or an .eh_frame_hdr.  The probe handlers
 * look them up without any lock but RCU: the set of tables is replaced as
 * a whole and the old one is freed after a grace period.  They never touch
 * VMAs or mmap_lock and read the target's stack with page faults disabled,
 * so a bad table can give a wrong stack but never a fault or a loop (the
 * CFA must go up).
 * A pc that no table covers is unwound with frame pointers: the fast path
 * for code built with them, and the old behaviour when no table was sent.
 */
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/netlink.h>
#include "leak.h"
#include "arch.h"

/* Tables installed in a session, sorted by start, not overlapping. */
struct mtr_unwind_set {
	struct rcu_head rcu;
	u64 gen;			/* unique among all sets ever installed */
	unsigned int nr;
	struct mtr_unwind_map *maps[];
};

struct mtr_unwind_map {
	unsigned long start, end, bias;
	struct mtr_ehframe eh;		/* eh.hdr 0: the rows below */
	size_t bytes;			/* charged to the session */
	u32 nr_rows;
	struct memtrack_unwind_row rows[];
};

/* Per session; created by its first LEAK_UNWIND, under mtr_leak_lock. */
struct mtr_unwind {
	struct mtr_unwind_set __rcu *set;
	struct mtr_unwind_map *pending;	/* a table still arriving in chunks */
	u32 filled;			/* rows of pending received */
	size_t bytes;			/* installed + pending */
};

/*
 * A hot allocation site unwinds through the same few dozen pcs on every
 * call, and each lookup is a binary search over the maps, then over tens
 * of thousands of rows or the target's .eh_frame_hdr.  A per-CPU
 * direct-mapped memo of the rows found (by value, so nothing in it can
 * dangle) makes a repeated frame one compare.
 * Entries count only for the set they were found in: sets are never
 * reused, so a generation number from one global counter tells them apart
 * across sessions too.
 */
#define MTR_UNWIND_MEMO_BITS	12

struct mtr_unwind_memo_entry {
	u64 gen;
	unsigned long pc;
	struct memtrack_unwind_row row;	/* cfa NONE: no table covers pc */
};

/*
 * Each CPU's memo, 128 KiB: an interpreter's stacks (perl) pass through
 * thousands of return addresses, and a miss costs a search of the
 * target's .eh_frame_hdr and a run of a CFA program in its memory
 * (512 entries made perl's -p slowdown 3.9x; rows searched in kernel
 * memory, at the same miss rate, 3.1x).  Allocated per CPU with
 * kvzalloc(): the per-CPU allocator serves at most 32 KiB.
 */
static DEFINE_PER_CPU(struct mtr_unwind_memo_entry *, mtr_unwind_memo);
static atomic64_t mtr_unwind_gen = ATOMIC64_INIT(0);

static void mtr_unwind_memo_free(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		kvfree(per_cpu(mtr_unwind_memo, cpu));
		per_cpu(mtr_unwind_memo, cpu) = NULL;
	}
}

int mtr_leak_unwind_init(void)
{
	struct mtr_unwind_memo_entry *e;
	int cpu, err;

	for_each_possible_cpu(cpu) {
		e = kvzalloc_node(sizeof(*e) << MTR_UNWIND_MEMO_BITS,
				  GFP_KERNEL, cpu_to_node(cpu));
		if (!e) {
			mtr_unwind_memo_free();
			return -ENOMEM;
		}
		per_cpu(mtr_unwind_memo, cpu) = e;
	}
	err = mtr_leak_ehframe_init();
	if (err)
		mtr_unwind_memo_free();
	return err;
}

/* After every session is gone: no handler can use the memo any more. */
void mtr_leak_unwind_exit(void)
{
	mtr_leak_ehframe_exit();
	mtr_unwind_memo_free();
}

/* ---- the handler's side --------------------------------------------------- */

/* 1 and *row, 0: no rule for pc, -EFAULT: fault *fault in and try again. */
static int mtr_unwind_find(const struct mtr_unwind_set *set, unsigned long pc,
			   struct memtrack_unwind_row *row,
			   unsigned long *fault)
{
	struct mtr_unwind_map *m;
	unsigned int lo = 0, hi = set->nr, mid;
	unsigned long vaddr;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (set->maps[mid]->start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= set->maps[lo - 1]->end)
		return 0;
	m = set->maps[lo - 1];
	if (m->eh.hdr)
		return mtr_leak_ehframe_row(&m->eh, pc, row, fault);
	vaddr = pc - m->bias;
	lo = 0;
	hi = m->nr_rows;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->rows[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	*row = m->rows[lo - 1];
	return 1;
}

/*
 * The row for @pc, through this CPU's memo; NULL if none, or if a page of
 * CFI must be faulted in first (*fault).  Preemption off.
 */
static const struct memtrack_unwind_row *
mtr_unwind_lookup(const struct mtr_unwind_set *set, unsigned long pc,
		  unsigned long *fault)
{
	struct mtr_unwind_memo_entry *e;
	struct memtrack_unwind_row row;
	int found;

	e = &__this_cpu_read(mtr_unwind_memo)[hash_long(pc, MTR_UNWIND_MEMO_BITS)];
	if (e->gen != set->gen || e->pc != pc) {
		found = mtr_unwind_find(set, pc, &row, fault);
		if (found < 0)
			return NULL;	/* not memoized: there is a rule */
		e->gen = set->gen;
		e->pc = pc;
		if (found)
			e->row = row;
		else
			e->row.cfa = MEMTRACK_UNWIND_NONE;
	}
	return e->row.cfa == MEMTRACK_UNWIND_NONE ? NULL : &e->row;
}

/*
 * A word of the target's stack.  The caller disabled page faults for the
 * whole walk, so this is one guarded load: a user access per word costs
 * less than copy_from_user_nofault()'s checks and string copy each time.
 */
static bool mtr_unwind_read(unsigned long addr, unsigned long *val)
{
	const unsigned long __user *p = (const unsigned long __user *)addr;

	if (!user_access_begin(p, sizeof(*p)))
		return false;
	unsafe_get_user(*val, p, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/*
 * One step of the frame-pointer chain: [bp] is the caller's bp, the return
 * address is in the frame record above it and the caller's sp is past it
 * (MEMTRACK_UNWIND_FRAME_*).
 */
static bool mtr_unwind_fp(unsigned long *sp, unsigned long *bp,
			  unsigned long *cfa, unsigned long *ra)
{
	unsigned long frame[2];

	if (!*bp || *bp & (sizeof(long) - 1) || *bp < *sp)
		return false;
	if (!mtr_unwind_read(*bp, &frame[0]) ||
	    !mtr_unwind_read(*bp + MEMTRACK_UNWIND_FRAME_RA, &frame[1]))
		return false;
	*cfa = *bp + MEMTRACK_UNWIND_FRAME_CFA;
	*ra = frame[1];
	*bp = frame[0];
	return true;
}

/*
 * The user call stack of current into @frames (MEMTRACK_LEAK_MAX_FRAMES),
 * innermost first; returns how many.  @regs are at a function's first
 * instruction, so frames[0] is its return address and the walk goes on
 * from its caller: @ra if known (a uretprobe may have put its trampoline
 * there since), else 0: read at sp.
 * Stops at the outermost frame, a rule it cannot follow, unreadable memory,
 * a CFA that does not move up, or a zero return address; and where a frame's
 * CFI is on a page the target has not touched yet: *@fault is then that
 * page's address (else 0), for the caller to fault in and walk again.
 */
u32 mtr_leak_unwind_user(struct mtr_leak_session *s, struct pt_regs *regs,
			 unsigned long ra, u64 *frames, unsigned long *fault)
{
	/* Pairs with the release in mtr_leak_unwind_add(): initialized. */
	struct mtr_unwind *uw = smp_load_acquire(&s->unwind);
	const struct memtrack_unwind_row *row;
	const struct mtr_unwind_set *set = NULL;
	unsigned long sp, bp = mtr_fp(regs), pc = ra, cfa, at;
	u32 n = 0;

	*fault = 0;
	/* The memo is per CPU; a read that would fault fails instead. */
	preempt_disable();
	pagefault_disable();
	rcu_read_lock();
	if (uw)
		set = rcu_dereference(uw->set);
	if (!pc && !mtr_entry_ra(regs, &pc, &at) && !mtr_unwind_read(at, &pc))
		goto out;
	sp = mtr_entry_caller_sp(regs);
	frames[n++] = pc;
	while (n < MEMTRACK_LEAK_MAX_FRAMES) {
		/* A return address may be just past a noreturn call's end. */
		row = set ? mtr_unwind_lookup(set, pc - 1, fault) : NULL;
		if (*fault)
			break;
		if (!row) {
			if (!mtr_unwind_fp(&sp, &bp, &cfa, &ra))
				break;
		} else if (row->cfa == MEMTRACK_UNWIND_CFA_SP ||
			   row->cfa == MEMTRACK_UNWIND_CFA_BP) {
			cfa = (row->cfa == MEMTRACK_UNWIND_CFA_SP ? sp : bp) +
			      (long)row->cfa_off;
			if (!mtr_unwind_read(cfa + memtrack_unwind_ra_off(row),
					     &ra))
				break;
			if (row->bp_off &&
			    !mtr_unwind_read(cfa + (long)row->bp_off, &bp))
				break;
		} else {
			break;		/* outermost, or a rule we cannot follow */
		}
		if (cfa <= sp || !ra)
			break;
		frames[n++] = ra;
		pc = ra;
		sp = cfa;
	}
out:
	rcu_read_unlock();
	pagefault_enable();
	preempt_enable();
	return n;
}

/* ---- tables arriving (caller holds mtr_leak_lock) -------------------------- */

static bool mtr_unwind_row_ok(const struct memtrack_unwind_row *r,
			      const struct memtrack_unwind_row *prev)
{
	if (prev && r->addr <= prev->addr)
		return false;
	return memtrack_unwind_row_ok(r);
}

static void mtr_unwind_drop_pending(struct mtr_unwind *uw)
{
	if (uw->pending) {
		uw->bytes -= uw->pending->bytes;
		kvfree(uw->pending);
		uw->pending = NULL;
	}
	uw->filled = 0;
}

/* Start a table: check what the whole of it must satisfy, allocate it. */
static int mtr_unwind_begin(struct mtr_unwind *uw,
			    const struct mtr_unwind_chunk *c,
			    struct netlink_ext_ack *extack)
{
	struct mtr_unwind_map *m;
	size_t bytes;

	mtr_unwind_drop_pending(uw);
	if (c->eh_frame_hdr && c->eh_frame_hdr >= TASK_SIZE_MAX) {
		NL_SET_ERR_MSG(extack, "unwind: EH_FRAME_HDR outside user space");
		return -EINVAL;
	}
	if (c->start >= c->end || !PAGE_ALIGNED(c->start) ||
	    !PAGE_ALIGNED(c->end) || c->end > TASK_SIZE_MAX) {
		NL_SET_ERR_MSG(extack, "unwind: bad mapping range");
		return -EINVAL;
	}
	/* Rows hold 32-bit vaddrs: the whole mapping must have them. */
	if (c->bias > c->start || c->end - 1 - c->bias > U32_MAX) {
		NL_SET_ERR_MSG(extack, "unwind: bias puts the mapping outside 32-bit vaddrs");
		return -EINVAL;
	}
	if ((!c->eh_frame_hdr && !c->nr_rows) ||
	    c->nr_rows > MEMTRACK_UNWIND_MAX_ROWS) {
		NL_SET_ERR_MSG(extack, "unwind: NR_ROWS out of range");
		return -EINVAL;
	}
	bytes = struct_size(m, rows, c->nr_rows);
	if (uw->bytes + bytes > MEMTRACK_UNWIND_MAX_BYTES) {
		NL_SET_ERR_MSG(extack, "unwind: tables would exceed MEMTRACK_UNWIND_MAX_BYTES for this process");
		return -ENOSPC;
	}
	m = kvmalloc(bytes, GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->start = c->start;
	m->end = c->end;
	m->bias = c->bias;
	m->nr_rows = c->nr_rows;
	m->eh = (struct mtr_ehframe){ .hdr = c->eh_frame_hdr };
	m->bytes = bytes;
	uw->pending = m;
	uw->bytes += bytes;
	return 0;
}

/* The complete pending table replaces every table it overlaps. */
static int mtr_unwind_install(struct mtr_unwind *uw)
{
	struct mtr_unwind_set *old, *set;
	struct mtr_unwind_map *m = uw->pending, *o;
	unsigned int i, j = 0, nr_old;
	bool placed = false, replaced = false;

	old = rcu_dereference_protected(uw->set, 1);
	nr_old = old ? old->nr : 0;
	set = kmalloc(struct_size(set, maps, nr_old + 1), GFP_KERNEL);
	if (!set)
		return -ENOMEM;
	for (i = 0; i < nr_old; i++) {
		o = old->maps[i];
		if (o->start < m->end && m->start < o->end) {
			replaced = true;
			continue;
		}
		if (o->start > m->start && !placed) {
			set->maps[j++] = m;
			placed = true;
		}
		set->maps[j++] = o;
	}
	if (!placed)
		set->maps[j++] = m;
	set->nr = j;
	set->gen = atomic64_inc_return(&mtr_unwind_gen);
	uw->pending = NULL;
	uw->filled = 0;
	rcu_assign_pointer(uw->set, set);
	if (!old)
		return 0;
	/*
	 * An attach installs a table per object, one by one: only a table
	 * replaced (a mapping reused) makes it wait for the readers.
	 */
	if (!replaced) {
		kfree_rcu(old, rcu);
		return 0;
	}
	synchronize_rcu();
	for (i = 0; i < nr_old; i++) {
		o = old->maps[i];
		if (o->start < m->end && m->start < o->end) {
			uw->bytes -= o->bytes;
			kvfree(o);
		}
	}
	kfree(old);
	return 0;
}

/*
 * One LEAK_UNWIND chunk for session @s.  Chunks of a table come in order;
 * anything wrong drops the table being built and leaves the installed ones
 * as they were.
 */
int mtr_leak_unwind_add(struct mtr_leak_session *s,
			const struct mtr_unwind_chunk *c,
			struct netlink_ext_ack *extack)
{
	struct mtr_unwind *uw = s->unwind;
	struct mtr_unwind_map *m;
	const struct memtrack_unwind_row *prev;
	u32 i;
	int err;

	if (c->eh_frame_hdr && (c->nr || c->nr_rows || c->first_row)) {
		NL_SET_ERR_MSG(extack, "unwind: EH_FRAME_HDR goes without rows");
		return -EINVAL;
	}
	if (!c->eh_frame_hdr && (!c->nr || c->nr > MEMTRACK_UNWIND_MAX_CHUNK)) {
		NL_SET_ERR_MSG(extack, "unwind: ROWS must hold 1 to MEMTRACK_UNWIND_MAX_CHUNK whole rows");
		return -EINVAL;
	}
	if (!uw) {
		uw = kzalloc(sizeof(*uw), GFP_KERNEL);
		if (!uw)
			return -ENOMEM;
		/* Handlers read it without the mutex: publish it zeroed. */
		smp_store_release(&s->unwind, uw);
	}
	if (c->eh_frame_hdr) {
		err = mtr_unwind_begin(uw, c, extack);
		if (!err)
			err = mtr_unwind_install(uw);
		if (err)
			mtr_unwind_drop_pending(uw);
		return err;
	}
	if (!c->first_row) {
		err = mtr_unwind_begin(uw, c, extack);
		if (err)
			return err;
	} else if (!uw->pending || c->first_row != uw->filled ||
		   c->start != uw->pending->start || c->end != uw->pending->end ||
		   c->bias != uw->pending->bias ||
		   c->nr_rows != uw->pending->nr_rows) {
		mtr_unwind_drop_pending(uw);
		NL_SET_ERR_MSG(extack, "unwind: chunk does not continue the table being sent");
		return -EINVAL;
	}
	m = uw->pending;
	if (c->nr > m->nr_rows - uw->filled) {
		mtr_unwind_drop_pending(uw);
		NL_SET_ERR_MSG(extack, "unwind: more rows than NR_ROWS");
		return -EINVAL;
	}
	prev = uw->filled ? &m->rows[uw->filled - 1] : NULL;
	for (i = 0; i < c->nr; i++) {
		if (!mtr_unwind_row_ok(&c->rows[i], prev)) {
			mtr_unwind_drop_pending(uw);
			NL_SET_ERR_MSG(extack, "unwind: bad row (unsorted, unknown rule or offsets)");
			return -EINVAL;
		}
		m->rows[uw->filled + i] = c->rows[i];
		prev = &m->rows[uw->filled + i];
	}
	uw->filled += c->nr;
	if (uw->filled < m->nr_rows)
		return 0;
	err = mtr_unwind_install(uw);
	if (err)
		mtr_unwind_drop_pending(uw);
	return err;
}

/* When no handler can run any more (the session's probes are gone). */
void mtr_leak_unwind_free(struct mtr_leak_session *s)
{
	struct mtr_unwind *uw = s->unwind;
	struct mtr_unwind_set *set;
	unsigned int i;

	if (!uw)
		return;
	mtr_unwind_drop_pending(uw);
	set = rcu_dereference_protected(uw->set, 1);
	for (i = 0; set && i < set->nr; i++)
		kvfree(set->maps[i]);
	kfree(set);
	kfree(uw);
	s->unwind = NULL;
}
