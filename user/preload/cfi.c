// SPDX-License-Identifier: LGPL-2.1
/*
 * libmemtrack-preload's unwinder: call stacks of code built without frame
 * pointers, from the DWARF CFI the loaded objects carry in memory.
 *
 * For a pc, the object's .eh_frame_hdr table (PT_GNU_EH_FRAME) finds its
 * FDE by binary search; the CIE's and FDE's CFA programs are run up to the
 * pc and reduced to the compact rule memtrack's uprobe engine uses
 * (struct memtrack_unwind_row, memtrack_unwind.h): the CFA as RSP or RBP
 * plus an offset, where RBP was saved, the return address at
 * the CFA where the row says (cfa_rule_ra_off()), or "stop" (the
 * outermost frame, or a rule this walk does not follow, such as the PLT's
 * expression).  That is the slow path, a few microseconds; each thread
 * keeps the rules it found by pc, so a frame seen before costs a compare.
 *
 * It runs inside malloc: no allocation (the object table is static), no
 * system call and no lock on a hit; the object table is refreshed with
 * dl_iterate_phdr under a spinlock of its own when a pc falls in no known
 * object.  Objects are never dropped (a dlclose'd range keeps its entry; a
 * generation number retires the rules cached before a refresh), and stack
 * words are read only where a rule says a frame saved them, the CFA going
 * up at every step, so a stale rule gives a short stack, not a fault.
 */
#define _GNU_SOURCE
#include <link.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "cfa.h"
#include "cfi.h"

#define MAX_OBJECTS	512
#define GOLDEN		0x9e3779b97f4a7c15ULL
#define STACK_SPAN	(64ULL << 20)	/* how far above the start a frame may be */
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)


struct object {
	uint64_t lo, hi;		/* an executable segment */
	const uint8_t *hdr;		/* its .eh_frame_hdr, or NULL */
};

static struct object objects[MAX_OBJECTS];
static unsigned int nr_objects;		/* published with release */
static uint32_t table_lock;
static uint32_t table_gen;
static void (*object_cb)(const char *, uint64_t, uint64_t, uint64_t);


void pl_cfi_set_object_cb(void (*cb)(const char *path, uint64_t base,
				     uint64_t lo, uint64_t hi))
{
	object_cb = cb;
}

/* ---- the object table -------------------------------------------------------- */

static bool known(uint64_t lo, uint64_t hi)
{
	unsigned int i;

	for (i = 0; i < nr_objects; i++)
		if (objects[i].lo == lo && objects[i].hi == hi)
			return true;
	return false;
}

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	const uint8_t *hdr = NULL;
	int i;

	(void)size;
	(void)arg;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = (const uint8_t *)(info->dlpi_addr +
						info->dlpi_phdr[i].p_vaddr);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		uint64_t hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    known(lo, hi) || nr_objects == MAX_OBJECTS)
			continue;
		objects[nr_objects] = (struct object){ lo, hi, hdr };
		__atomic_store_n(&nr_objects, nr_objects + 1, __ATOMIC_RELEASE);
		if (object_cb)
			object_cb(info->dlpi_name, info->dlpi_addr, lo, hi);
	}
	return 0;
}

/*
 * The rules cached before are retired only if objects came: a pc in none
 * (JIT code, garbage past the outermost frame) is cached as "none" and
 * costs no second look.
 */
static void refresh(void)
{
	unsigned int before;

	while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();		/* rare: a holder may be preempted */
	before = nr_objects;
	dl_iterate_phdr(add_object, NULL);
	if (nr_objects != before)
		__atomic_store_n(&table_gen, table_gen + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
}

static const struct object *object_of(uint64_t pc)
{
	unsigned int n = __atomic_load_n(&nr_objects, __ATOMIC_ACQUIRE), i;

	for (i = 0; i < n; i++)
		if (pc >= objects[i].lo && pc < objects[i].hi)
			return &objects[i];
	return NULL;
}

/* The FDE of pc in the object's .eh_frame_hdr search table, or NULL. */
static const uint8_t *find_fde(const uint8_t *hdr, uint64_t pc)
{
	const uint8_t *p = hdr + 4;
	const int32_t *t;
	uint64_t ignored, count;
	size_t lo, hi, mid;

	/* version 1, table of (sdata4 datarel) pairs, as every linker writes */
	if (hdr[0] != 1 || hdr[3] != 0x3b ||
	    !cfa_encoded(&p, hdr[1], 0, (uint64_t)hdr, &ignored) ||
	    !cfa_encoded(&p, hdr[2], 0, (uint64_t)hdr, &count) || !count)
		return NULL;
	t = (const int32_t *)p;
	if ((uint64_t)hdr + t[0] > pc)
		return NULL;
	for (lo = 0, hi = count; hi - lo > 1;) {
		mid = (lo + hi) / 2;
		if ((uint64_t)hdr + t[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return hdr + t[2 * lo + 1];
}

/* The rule at pc (a return address less 1, or an exact pc), slowly. */
static struct cfa_rule lookup(uint64_t pc)
{
	struct cfa_rule none = { .kind = MEMTRACK_UNWIND_NONE };
	const struct object *o = object_of(pc);
	const uint8_t *fde;
	struct cfa_fde f;

	if (!o) {
		refresh();
		o = object_of(pc);
	}
	if (!o || !o->hdr || !(fde = find_fde(o->hdr, pc)) ||
	    !cfa_parse_fde(fde, 0, &f) || pc < f.start || pc >= f.end)
		return none;
	return cfa_rule_at(&f, pc);
}

#define BP_KEPT		((const uint64_t *)1)

/*
 * memo's r.gen: a CFA_SP rule whose CFA stays 8-aligned, the return address
 * just below it (the common one)
 */
#define MEMO_SP		1

/* A miss: the rule of the return address pc, slowly, into the memo. */
static __attribute__((noinline, cold)) const struct pl_memo_rule *
memo_fill(struct pl_memo_rule *m, uint64_t pc)
{
	m->r = lookup(pc - 1);
	m->r.gen = m->r.kind == MEMTRACK_UNWIND_CFA_SP && !(m->r.cfa_off & 7) &&
		   !m->r.ra_slot ? MEMO_SP : 0;
	m->pc = pc;
	return m;
}

/* One word the walk read, if it is recording. */
#define READ(w, addr) ({						\
	uint64_t a_ = (addr), v_ = *(const uint64_t *)a_;		\
	if (w) {							\
		(w)->word[(w)->nr].off = (int64_t)(a_ - start->sp);	\
		(w)->word[(w)->nr++].nval = ~v_;			\
	}								\
	v_;								\
})

/*
 * The walk, one copy for each combination pl_cfi_backtrace() passes: with
 * w or sps NULL (a constant) the loop keeps nothing of it.  Most frames'
 * rules are CFA = RSP + a multiple of 8 (MEMO_SP): as RSP is 8-aligned
 * and the offset at least 8 (cfa.c), such a CFA is above it and aligned,
 * and only the upper bound needs a check.
 */
static inline __attribute__((always_inline)) int
walk(const struct pl_regs *start, struct pl_cfi_memo *memo, uint64_t *pcs,
     int max, struct pl_walk *w, uint64_t *sps, uint64_t *hash)
{
	uint64_t pc = start->pc, sp = start->sp, bp = start->bp, cfa, h = 0;
	uint64_t top = start->sp + STACK_SPAN, *p = pcs, *end = pcs + max;
	/* where RBP was restored from: NULL, the start's; BP_KEPT: recorded */
	const uint64_t *bp_at = NULL;
	bool bp_used = false, lost = false;
	int nr_bp = 0;
	struct pl_memo_rule *mt = memo->e;
	const struct pl_memo_rule *m;
	uint32_t gen;

	gen = __atomic_load_n(&table_gen, __ATOMIC_ACQUIRE);
	if (unlikely(memo->gen != gen)) {
		memset(memo->e, 0, sizeof(memo->e));
		memo->gen = gen;
	}
	if (w) {
		w->valid = false;
		w->nr = 0;
	}
	if (p == end || !pc)
		goto out;
	for (;;) {
		if (sps)
			sps[p - pcs] = sp;
		*p++ = pc;
		h = (h ^ pc) * GOLDEN;
		m = &mt[(pc * GOLDEN) >> (64 - PL_MEMO_BITS)];
		if (unlikely(m->pc != pc))
			m = memo_fill((struct pl_memo_rule *)m, pc);
		if (likely(m->r.gen == MEMO_SP)) {
			cfa = sp + (int64_t)m->r.cfa_off;
			if (unlikely(cfa >= top))
				goto bound;
		} else {
			if (m->r.kind == MEMTRACK_UNWIND_CFA_BP ||
			    m->r.kind == MEMTRACK_UNWIND_NONE) {
				/*
				 * RBP is used: the start's, or the word it was
				 * restored from, is part of the walk now.
				 */
				if (!bp_at) {
					bp_used = true;
				} else if (w && bp_at != BP_KEPT) {
					if (nr_bp++ < PL_BP_WORDS) {
						w->word[w->nr].off = (int64_t)
							((uint64_t)bp_at -
							 start->sp);
						w->word[w->nr++].nval = ~bp;
					} else {
						lost = true;
					}
				}
				bp_at = BP_KEPT;
			}
			if (m->r.kind == MEMTRACK_UNWIND_CFA_BP) {
				cfa = bp + (int64_t)m->r.cfa_off;
			} else if (m->r.kind == MEMTRACK_UNWIND_NONE) {
				/* no CFI here: frame pointers, if RBP is one */
				if (bp < sp || (bp & 7) ||
				    bp >= top - MEMTRACK_UNWIND_FRAME_CFA)
					break;
				cfa = bp + MEMTRACK_UNWIND_FRAME_CFA;
			} else if (m->r.kind != MEMTRACK_UNWIND_CFA_SP) {
				break;	/* outermost, or a rule not followed */
			} else {
				cfa = sp + (int64_t)m->r.cfa_off;
			}
			if (cfa <= sp || cfa >= top || (cfa & 7))
				goto bound;
		}
		pc = READ(w, cfa + cfa_rule_ra_off(m->r));
		/*
		 * A frame's saved RBP is read, but recorded only once a later
		 * rule uses RBP: in code without frame pointers RBP is any
		 * register, its saved value changes from call to call, and
		 * no rule above may ever look at it.
		 */
		if (m->r.kind == MEMTRACK_UNWIND_NONE) {
			bp_at = (const uint64_t *)(cfa - MEMTRACK_UNWIND_FRAME_CFA);
			bp = *bp_at;
		} else if (m->r.bp_off) {
			bp_at = (const uint64_t *)(cfa + m->r.bp_off);
			bp = *bp_at;
		}
		sp = cfa;
		if (unlikely(!pc))
			break;
		if (unlikely(p == end))
			break;
	}
out:
	*hash = h;
	if (w) {
		w->valid = (p < end || !pc) && !lost;
		w->bp_used = bp_used;
		w->npc = ~start->pc;
		w->nsp = ~start->sp;
		w->nbp = bp_used ? ~start->bp : 0;
	}
	return (int)(p - pcs);
bound:
	/* ended by a bound: not a walk to reuse (w->valid stays false) */
	*hash = h;
	return (int)(p - pcs);
}

int pl_cfi_backtrace(const struct pl_regs *start, struct pl_cfi_memo *memo,
		     uint64_t *pcs, int max, struct pl_walk *w, uint64_t *sps,
		     uint64_t *hash)
{
	/* a return address a frame: at most PL_MAX_FRAMES words in w */
	if (max > PL_MAX_FRAMES)
		max = PL_MAX_FRAMES;
	if (sps)
		return walk(start, memo, pcs, max, w, sps, hash);
	if (w)
		return walk(start, memo, pcs, max, w, NULL, hash);
	return walk(start, memo, pcs, max, NULL, NULL, hash);
}
